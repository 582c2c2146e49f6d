"""The proxy's decisions without HTTP: stored conversations and their branches, the usage
anchor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ctxengine.model import Usage
from ctxengine.proxy.core import ProxyCore
from ctxengine.proxy.record import Recorder
from ctxengine.stores.sqlite import SQLiteStore


def _body(turns: int, *, first: str = "Fix the bug in parser.py") -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for t in range(turns):
        messages.append({"role": "user", "content": first if t == 0 else f"And step {t}."})
        messages.append({"role": "assistant", "content": f"Done {t}."})
    messages.append({"role": "user", "content": "Next."})
    return {"model": "gpt-4o", "messages": messages}


def test_a_conversation_is_stored_once_and_a_branch_apart(tmp_path: Path) -> None:
    recorder = Recorder(SQLiteStore(tmp_path / "s.db"))
    core = ProxyCore(window=64_000, recorder=recorder)
    body = _body(2)
    first = core.prepare("chat", orjson.dumps(body), {})
    body["messages"] += [{"role": "assistant", "content": "Done 2."},
                         {"role": "user", "content": "Then?"}]  # fmt: skip
    core.prepare("chat", orjson.dumps(body), {})
    edited = orjson.loads(orjson.dumps(body))
    edited["messages"][2]["content"] = "Done 0, differently."
    branch = core.prepare("chat", orjson.dumps(edited), {})
    named = core.prepare("chat", orjson.dumps(_body(1)), {"x-ctxengine-session": "mine"})
    recorder.close()
    assert branch.key == first.key and named.key == "mine"
    with SQLiteStore(tmp_path / "s.db", read_only=True) as store:
        counts = {s.id: s.entry_count for s in store.sessions()}
    # The conversation (8 messages), its edited branch whole (8), the named one (4).
    assert counts == {first.key: 8, f"{first.key}-2": 8, "mine": 4}


def test_the_upstream_usage_is_the_anchor_of_the_reply_sent_back() -> None:
    core = ProxyCore(window=64_000)
    body = _body(1)
    first = core.prepare("chat", orjson.dumps(body), {})
    core.observe(first, (("text", "Reply one."), Usage(900, 40)))
    body["messages"] += [{"role": "assistant", "content": "Reply one."},
                         {"role": "user", "content": "More."}]  # fmt: skip
    second = core.prepare("chat", orjson.dumps(body), {})
    reply = second.conversation.messages[-2]
    assert (reply.text, reply.usage) == ("Reply one.", Usage(900, 40))
    assert not second.changed and second.raw == orjson.dumps(body)
