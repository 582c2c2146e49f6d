"""The proxy's decisions without HTTP: stored conversations and their branches, the usage
anchor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from ctxengine.model import Usage
from ctxengine.proxy.core import ProxyCore
from ctxengine.proxy.record import Recorder
from ctxengine.proxy.refusal import Refused, error_body
from ctxengine.proxy.wire import Api
from ctxengine.stores.sqlite import SQLiteStore


def _body(turns: int, *, first: str = "Fix the bug in parser.py") -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for t in range(turns):
        messages.append({"role": "user", "content": first if t == 0 else f"And step {t}."})
        messages.append({"role": "assistant", "content": f"Done {t}."})
    messages.append({"role": "user", "content": "Next."})
    return {"model": "gpt-4o", "messages": messages}


def test_a_conversation_is_stored_once_and_a_branch_apart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
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
    # A branch is a stored session of its own (a stored log is linear), and the log says so.
    assert [(r.name, r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "ctxengine.proxy",
            "WARNING",
            f"conversation {first.key} stored as {first.key}-2: this request does not continue "
            "its stored log (an earlier message differs)",
        )
    ]


def test_a_named_conversation_keeps_its_name_and_its_variants_are_numbered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = Recorder(SQLiteStore(tmp_path / "s.db"))
    core = ProxyCore(window=64_000, recorder=recorder)
    base = _body(3)["messages"][:5]
    for k in range(3):  # variants of one named conversation, diverging at the same point
        body = {"model": "gpt-4o", "messages": [*base, {"role": "user", "content": f"v{k}"}]}
        core.prepare("chat", orjson.dumps(body), {"x-ctxengine-session": "conc-var"})
    recorder.close()
    with SQLiteStore(tmp_path / "s.db", read_only=True) as store:
        counts = {s.id: s.entry_count for s in store.sessions()}
    assert counts == {"conc-var": 6, "conc-var-2": 6, "conc-var-3": 6}
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [
        "conversation conc-var stored as conc-var-2",
        "conversation conc-var stored as conc-var-3",
    ]


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


LINE = "value = compute(alpha, beta)  # note\n"


def test_an_upstream_that_counts_fewer_tokens_is_believed_and_compacted_at_its_trigger() -> None:
    """The upstream reports 60 % of ctxengine's estimate: the ladder's measure (the usage
    anchor plus the corrected estimate of what follows) decides both the trigger and the
    refusal, so a request whose plain estimate is past the window is forwarded whole, and
    the first compaction comes when the measure reaches the trigger (3,200 at 4,000)."""
    core = ProxyCore(window=4_000)
    body: dict[str, Any] = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "Be brief."}],
    }
    lines = []
    prepared = []
    for t in range(22):
        body["messages"].append({"role": "user", "content": f"step {t}: " + LINE * 20})
        p = core.prepare("chat", orjson.dumps(body), {})
        core.observe(p, (("text", f"ok {t}"), Usage(p.tokens_after * 6 // 10, 3)))
        body["messages"].append({"role": "assistant", "content": f"ok {t}"})
        lines.append(p.log_line(200, ms=1.0))
        prepared.append(p)
    # Turns 13-16: estimated past the 4,000-token window, measured under the trigger:
    # forwarded as sent (before, refused as "16,441 tokens after compaction").
    assert [(p.tokens_before, p.measured, p.changed) for p in prepared[13:17]] == [
        (4_138, 2_543, False),
        (4_435, 2_719, False),
        (4_732, 2_895, False),
        (5_029, 3_071, False),
    ]
    assert lines[14].endswith(
        "200 passed tokens 4,435 -> 4,435 (measured 2,719, window 4,000, epoch 0) 1.0 ms"
    )
    # Turn 17: measured 3,248 (3,071 + the new turn, corrected), over the trigger: compacted.
    (event,) = prepared[17].events
    assert (event.step, event.tokens_before) == ("compaction", 3_248)
    assert (prepared[17].epoch, prepared[17].measured, prepared[17].tokens_after) == (
        1,
        1_285,
        1_635,
    )
    assert prepared[18].events == () and prepared[18].epoch == 1


def test_a_stateful_responses_request_passes_untouched() -> None:
    core = ProxyCore(window=4_000)
    for field in ("previous_response_id", "conversation"):
        body = {
            "model": "gpt-5",
            field: "resp_1" if field == "previous_response_id" else "conv_1",
            "input": [{"type": "function_call_output", "call_id": "c9", "output": "done"}],
        }
        raw = orjson.dumps(body)
        p = core.prepare("responses", raw, {"x-ctxengine-session": "s"})
        assert (p.raw, p.changed, p.stateful, p.served) == (raw, False, field, None)
        assert p.log_line(200, ms=2.0) == f"responses s gpt-5 200 passed (stateful: {field}) 2.0 ms"
        # Its history is on the upstream: an overflow there is not the proxy's to recover.
        error = {"error": {"message": "too long", "code": "context_length_exceeded"}}
        assert core.recover(p, 400, error) is None


def test_a_lone_orphan_tool_result_goes_as_sent_and_the_log_says_so() -> None:
    core = ProxyCore(window=4_000)
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "x1", "content": "orphan"},
        ],
    }
    raw = orjson.dumps(body)
    p = core.prepare("chat", raw, {"x-ctxengine-session": "s"})
    assert (p.raw, p.changed) == (raw, False)
    assert p.log_line(200, ms=1.0) == (
        "chat s gpt-4o 200 passed tokens 5 -> 5 (window 4,000, epoch 0) sent as is: 1 orphan "
        "tool result 1.0 ms"
    )


@pytest.mark.parametrize(
    ("api", "body", "param", "expected"),
    [
        ("chat", {"messages": [{"role": "wizard", "content": "x"}]}, "$.messages[0].role",
         "system, developer, user, assistant, tool or function"),
        ("anthropic", {"messages": [{"role": "user", "content": "x"}, {"role": "wizard",
         "content": "x"}]}, "$.messages[1].role", "user, assistant or system"),
        ("responses", {"input": [{"role": "wizard", "content": "x"}]}, "$.input[0].role",
         "user, assistant, system or developer"),
    ],
)  # fmt: skip
def test_an_unknown_role_is_refused_naming_it_and_its_path(
    api: Api, body: dict[str, Any], param: str, expected: str
) -> None:
    core = ProxyCore(window=4_000)
    with pytest.raises(Refused) as caught:
        core.prepare(api, orjson.dumps({"model": "m1", **body}), {"x-ctxengine-session": "s"})
    refused = caught.value
    assert (refused.status, refused.kind, refused.param) == (400, "invalid_request", param)
    assert (refused.key, refused.model) == ("s", "m1")
    assert str(refused) == f"unknown role 'wizard' (expected {expected})"


def test_the_window_follows_the_1m_context_beta_where_the_profile_has_one() -> None:
    core = ProxyCore()
    beta = {"anthropic-beta": "claude-code-20250219,context-1m-2025-08-07"}
    assert core.window_for("claude-opus-4-8", beta) == 1_000_000
    assert core.window_for("claude-opus-4-8", {}) == 200_000
    assert core.window_for("claude-sonnet-4-5-20250929", beta) == 1_000_000
    assert core.window_for("claude-opus-5", beta) == 200_000  # no 1M window in its profile
    assert core.window_for("gpt-4o", beta) == 128_000
    assert ProxyCore(window=40_000).window_for("claude-opus-4-8", beta) == 40_000


PASTE = "Please review this log:\n" + "x = compute(1, 2, 3)  # filler\n" * 400


def test_a_long_user_message_is_forwarded_whole_at_any_age() -> None:
    """A 7,035-token user message at a 16,000-token window (trigger 12,800): sent as the
    client wrote it while the conversation fits, and after the compactions either whole
    (in the verbatim tail) or summarized with the prefix: never cut in place."""
    core = ProxyCore(window=16_000)
    body: dict[str, Any] = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": PASTE}],
    }
    raw = orjson.dumps(body)
    first = core.prepare("chat", raw, {"x-ctxengine-session": "paste"})
    assert (first.raw, first.changed) == (raw, False)
    assert first.log_line(200, ms=1.0) == (
        "chat paste gpt-4o 200 passed tokens 7,035 -> 7,035 (window 16,000, epoch 0) 1.0 ms"
    )
    shown = []
    for t in range(30):
        call = {"id": f"c{t}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        body["messages"] += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            # 110 lines: 1,541 tokens, under the prune minimum at this window (1,600), so
            # the conversation compacts rather than prunes
            {"role": "tool", "tool_call_id": f"c{t}", "content": LINE * 110},
            {"role": "assistant", "content": f"done {t}"},
            {"role": "user", "content": f"next {t}"},
        ]
        p = core.prepare("chat", orjson.dumps(body), {"x-ctxengine-session": "paste"})
        texts = [m.get("content") for m in orjson.loads(p.raw)["messages"] if m["role"] == "user"]
        assert not any(isinstance(x, str) and "[… truncated" in x for x in texts)
        shown.append((p.epoch, PASTE in texts))
    # Whole for 3 more requests; the first compaction summarized it with the prefix (the
    # state quotes a person's messages newest first within its budget), 5 more followed.
    assert shown[:4] == [(0, True)] * 3 + [(1, False)]
    epochs = [0] * 3 + [1] * 5 + [2] * 5 + [3] * 5 + [4] * 5 + [5] * 5 + [6] * 2
    assert [e for e, _ in shown] == epochs
    assert not any(whole for _, whole in shown[3:])


def test_a_newest_user_message_that_cannot_fit_is_refused_naming_its_size() -> None:
    core = ProxyCore(window=16_000)
    text = "Summarize: " + "lorem ipsum dolor sit amet " * 8_000
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}],
    }
    with pytest.raises(Refused) as caught:
        core.prepare("chat", orjson.dumps(body), {"x-ctxengine-session": "huge"})
    refused = caught.value
    assert (refused.status, refused.kind, refused.tokens, refused.limit) == (
        400,
        "context_length",
        37_283,
        12_096,  # the trigger less the room a compaction leaves free
    )
    assert str(refused).startswith(
        "no compaction can bring the context under the trigger of 12,800 tokens with 704 "
        "tokens to spare (window 16,000): what every compaction keeps is 37,283 tokens "
        "already (largest parts: newest user message 36,909, continuation state 167, margin "
        "160); the newest user message is never cut nor summarized before it is answered"
    )
    assert error_body("anthropic", refused)["error"]["message"].startswith(
        "prompt is too long: 37283 tokens > 12096 maximum (no compaction can bring"
    )
    assert error_body("chat", refused)["error"]["code"] == "context_length_exceeded"
