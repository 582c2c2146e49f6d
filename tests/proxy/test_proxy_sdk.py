"""The official ``openai`` and ``anthropic`` SDK clients pointed at the proxy, in front of a
scripted upstream on 127.0.0.1: 200-turn tool-using conversations at a 16,000-token window,
every other request streamed; an upstream overflow recovered once; conversations stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from harness import (
    ProxyServer,
    ToolModel,
    drive_anthropic,
    drive_chat,
    drive_responses,
    request_tokens,
    upstream_with,
)
from typer.testing import CliRunner

from ctxengine.cli.app import app
from ctxengine.policy import DEFAULT_POLICY
from ctxengine.proxy.core import ProxyCore
from ctxengine.proxy.record import Recorder
from ctxengine.stores.sqlite import SQLiteStore

WINDOW = 16_000
TURNS = 200


def _key(api: str) -> str:
    return "sk-ant-secret-key" if api == "anthropic" else "sk-secret-key"


def _client(api: str, url: str) -> Any:
    if api == "anthropic":
        return anthropic.Anthropic(base_url=url, api_key=_key(api), max_retries=0)
    return openai.OpenAI(base_url=url + "/v1", api_key=_key(api), max_retries=0)


DRIVERS = {"chat": drive_chat, "responses": drive_responses, "anthropic": drive_anthropic}


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_two_hundred_turns_at_a_16k_window_every_request_valid_and_within_it(
    api: str, tmp_path: Path
) -> None:
    model = ToolModel()
    db = tmp_path / "store.db"
    recorder = Recorder(SQLiteStore(db))
    core = ProxyCore(window=WINDOW, recorder=recorder)
    with upstream_with(model) as upstream, ProxyServer(core, upstream.url) as proxy:
        requests = DRIVERS[api](_client(api, proxy.url), TURNS)
    recorder.close()
    # Two model calls per turn (the tool call, then the answer), every other one streamed.
    assert requests == 2 * TURNS
    assert len(model.seen) == 2 * TURNS
    assert upstream.unexpected == []
    assert [(n, s.problems) for n, s in enumerate(model.seen) if s.problems] == []
    budget = DEFAULT_POLICY.resolve(WINDOW)
    too_big = [(n, s.tokens) for n, s in enumerate(model.seen) if s.tokens > budget.trigger]
    assert too_big == []
    # The history passed the window many times; each time the proxy compacted it.
    compacted = [line for line in proxy.lines if " compacted " in line]
    passed = [line for line in proxy.lines if " passed " in line]
    assert len(compacted) + len(passed) == 2 * TURNS
    epochs = {int(line.split("epoch ")[1].split(")")[0]) for line in compacted}
    assert max(epochs) >= 5
    assert sum(line.endswith(" stream") for line in proxy.lines) == TURNS
    # Until the first compaction the upstream received the client's very bytes.
    first = next(n for n, line in enumerate(proxy.lines) if " compacted " in line)
    assert first > 0
    for received in upstream.received[:first]:
        assert received.raw == json.dumps(received.body, separators=(",", ":")).encode() or (
            json.loads(received.raw) == received.body
        )
    # Keys are passed on, never logged.
    assert all("secret" not in line for line in proxy.lines)
    sent = [r.headers.get("authorization", r.headers.get("x-api-key")) for r in upstream.received]
    assert {s.removeprefix("Bearer ") for s in sent if s} == {_key(api)}
    # The conversation is stored: messages and the compaction records.
    with SQLiteStore(db, read_only=True) as store:
        (info,) = store.sessions()
        entries = store.entries(info.id)
    assert info.format == "proxy" and info.id.startswith("proxy-")
    kinds = [e.kind for e in entries]
    assert kinds.count("compaction") == max(epochs)
    assert kinds.count("message") == _messages_sent(api, model.seen[-1].body, TURNS)
    history = max(
        int(line.split("tokens ")[1].split(" ->")[0].replace(",", "")) for line in compacted
    )
    print(
        f"sdk {api}:",
        json.dumps(
            {
                "requests": len(model.seen),
                "invalid": sum(bool(s.problems) for s in model.seen),
                "largest": max(s.tokens for s in model.seen),
                "trigger": budget.trigger,
                "compactions": max(epochs),
                "history_tokens": history,
            }
        ),
    )


@pytest.mark.parametrize("ratio", [0.7, 1.3])
@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
def test_an_upstream_counting_otherwise_is_believed_every_request_forwarded(
    api: str, ratio: float
) -> None:
    """The upstream reports ``ratio`` times ctxengine's estimate: the proxy measures the
    context as the ladder does (the usage anchor plus the corrected estimate of what follows
    it), compacts at the trigger by that measure and never refuses a request the upstream
    would take. At 0.7 the plain estimate of many forwarded requests is past the window
    (before, the proxy refused them: "needs 16,563 tokens after compaction")."""
    model = ToolModel(usage_ratio=ratio)
    core = ProxyCore(window=WINDOW)
    with upstream_with(model) as upstream, ProxyServer(core, upstream.url) as proxy:
        requests = DRIVERS[api](_client(api, proxy.url), TURNS)
    assert requests == len(model.seen) == 2 * TURNS
    assert [(n, s.problems) for n, s in enumerate(model.seen) if s.problems] == []
    assert not any("refused" in line for line in proxy.lines)
    reported = [model.reported(s) for s in model.seen]
    budget = DEFAULT_POLICY.resolve(WINDOW)
    # Within the window by the upstream's own count; the ladder aims under the trigger by
    # the corrected measure, which overshoots it by at most the correction's lag.
    assert max(reported) <= WINDOW
    assert sum(r > budget.trigger for r in reported) <= 1
    over = sum(s.tokens > WINDOW for s in model.seen)
    if ratio < 1:
        assert over > 100  # estimated past the window, counted under it: forwarded
    else:
        assert over == 0 and max(s.tokens for s in model.seen) < budget.trigger / ratio + 100
    epochs = [int(line.split("epoch ")[1].split(")")[0]) for line in proxy.lines]
    assert max(epochs) >= (3 if ratio < 1 else 20)
    print(
        f"sdk {api} usage x{ratio}:",
        json.dumps(
            {
                "requests": len(model.seen),
                "largest_reported": max(reported),
                "largest_estimated": max(s.tokens for s in model.seen),
                "estimated_over_window": over,
                "compactions": max(epochs),
            }
        ),
    )


def _messages_sent(api: str, last_body: dict[str, Any], turns: int) -> int:
    """Messages of the whole conversation as the proxy reads it: the system prompt, and per
    turn the user message, the tool call, its result and the answer (the answer to the last
    request is never sent back)."""
    del api, last_body
    return 1 + 4 * turns - 1


@pytest.mark.parametrize("api", ["chat", "responses", "anthropic"])
@pytest.mark.parametrize("stream_every", [1, 1_000])
def test_an_upstream_overflow_is_answered_by_one_compaction_and_one_retry(
    api: str, stream_every: int
) -> None:
    model = ToolModel(overflow_at={7})
    core = ProxyCore(window=WINDOW)
    with upstream_with(model) as upstream, ProxyServer(core, upstream.url) as proxy:
        requests = DRIVERS[api](_client(api, proxy.url), 4, stream_every=stream_every)
    # The client never saw the error: 8 calls, 9 upstream requests.
    assert requests == 8
    assert model.errors_sent == 1
    assert len(model.seen) == 9
    rejected, retried = model.seen[6], model.seen[7]
    assert retried.tokens < rejected.tokens
    assert retried.problems == []
    (line,) = [line for line in proxy.lines if "recovered-overflow" in line]
    assert " 200 compacted " in line and "steps=compaction" in line and "epoch 1" in line
    # Before the overflow nothing was compacted: the client's bytes went through.
    assert all(" passed " in line for line in proxy.lines[:6])


@pytest.mark.parametrize("api", ["chat", "anthropic"])
def test_the_retry_overflowing_again_passes_the_upstream_error_back(api: str) -> None:
    model = ToolModel(overflow_at={3, 4})
    core = ProxyCore(window=WINDOW)
    with upstream_with(model) as upstream, ProxyServer(core, upstream.url) as proxy:
        client = _client(api, proxy.url)
        with pytest.raises((openai.BadRequestError, anthropic.BadRequestError)) as caught:
            DRIVERS[api](client, 3, stream_every=1_000)
    assert caught.value.status_code == 400
    error = caught.value.body
    assert isinstance(error, dict)
    if api == "anthropic":  # the SDK keeps the whole body; OpenAI's keeps its ``error``
        assert error["type"] == "error"
        assert error["error"]["message"] == "prompt is too long: 17000 tokens > 16000 maximum"
    else:
        assert error["code"] == "context_length_exceeded"
        assert error["message"].startswith("This model's maximum context length is 16000")
    # One retry, no more: the third call is the request that failed twice.
    assert len(model.seen) == 4 and model.errors_sent == 2
    assert model.seen[3].tokens < model.seen[2].tokens
    assert "recovered-overflow" in proxy.lines[-1] and " 400 compacted " in proxy.lines[-1]


def test_a_proxied_conversation_is_listed_by_sessions_and_inspected(tmp_path: Path) -> None:
    model = ToolModel()
    db = tmp_path / "store.db"
    recorder = Recorder(SQLiteStore(db))
    core = ProxyCore(window=6_000, recorder=recorder)
    with upstream_with(model) as upstream, ProxyServer(core, upstream.url) as proxy:
        drive_chat(_client("chat", proxy.url), 20)
    recorder.close()
    runner = CliRunner()
    listed = runner.invoke(app, ["sessions", "--db", str(db), "--json"])
    assert listed.exit_code == 0, listed.output
    (row,) = json.loads(listed.stdout)["sessions"]
    assert row["format"] == "proxy"
    assert row["title"].startswith("Turn 0: please read src/module_0.py")
    assert row["entries"] > 80
    shown = runner.invoke(app, ["inspect", row["id"], "--db", str(db), "--json"])
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.stdout)
    assert (doc["session_id"], doc["format"]) == (row["id"], "proxy")
    compactions = [e for e in doc["epochs"] if e["closed_by"] is not None]
    assert len(compactions) == sum(
        " compacted " in line and "steps=compaction" in line for line in proxy.lines
    )
    assert compactions and {e["closed_by"]["reason"] for e in compactions} == {"threshold"}
    replayed = runner.invoke(app, ["replay", row["id"], "--db", str(db), "--window", "6000"])
    assert replayed.exit_code == 0, replayed.output


def test_request_tokens_of_the_harness_match_the_proxy_log() -> None:
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hello"}],
    }
    model = ToolModel()
    with upstream_with(model) as upstream, ProxyServer(ProxyCore(window=WINDOW), upstream.url) as p:
        openai.OpenAI(base_url=p.url + "/v1", api_key="k", max_retries=0).chat.completions.create(
            model="gpt-4o", messages=body["messages"]
        )
    tokens = request_tokens("chat", body)
    assert f"passed tokens {tokens:,} -> {tokens:,}" in p.lines[0]
