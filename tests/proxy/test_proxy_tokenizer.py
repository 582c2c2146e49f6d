"""The proxy estimates each request for its model's tokenizer: a GPT-4o request with o200k_base's
calibration, a Claude request with the default estimate, so the same CJK history fits one
window for GPT-4o and is compacted for Claude."""

from __future__ import annotations

import json
from typing import Any

import httpx2
from harness import ProxyServer
from servers import ScriptedServer, Step

from ctxengine.engine.stateless import PrefixCache
from ctxengine.policy.defaults import DEFAULT_IMAGE_TOKENS
from ctxengine.proxy.app import Upstreams
from ctxengine.proxy.core import ProxyCore
from ctxengine.proxy.wire import ConversationReader
from ctxengine.tokens import HeuristicEstimator

CJK = "代理在修改任何文件之前先阅读失败的测试。"
#: Window of the proxy (tokens): the default policy compacts past 3,200.
WINDOW = 4_000
#: Seven exchanges and the next request, each message 200 wide characters: 214 tokens by
#: the default estimate, 152 by the one for o200k_base (the rates of tokens/constants.py).
HISTORY = [{"role": "user" if n % 2 == 0 else "assistant", "content": CJK * 10} for n in range(15)]
DEFAULT_SIZE, O200K_SIZE = 15 * 214, 15 * 152  # 3,210 (over the trigger) and 2,280 (under)


def test_the_sizes_are_those_of_each_calibration() -> None:
    messages = ConversationReader("chat").read({"messages": HISTORY}).messages
    default = HeuristicEstimator(image_tokens=DEFAULT_IMAGE_TOKENS)
    o200k = HeuristicEstimator(image_tokens=DEFAULT_IMAGE_TOKENS, encoding="o200k_base")
    assert sum(default.message(m) for m in messages) == DEFAULT_SIZE
    assert sum(o200k.message(m) for m in messages) == O200K_SIZE
    core = ProxyCore()
    assert core.estimator_for("gpt-4o") is core.estimator_for("gpt-5.2")  # one per family
    assert repr(core.estimator_for("gpt-4o")) == (
        "HeuristicEstimator(encoding='o200k_base', image_tokens=3000)"
    )
    assert core.estimator_for("gpt-4-0613").encoding == "cl100k_base"
    assert core.estimator_for("claude-sonnet-4-5").encoding is None
    assert core.estimator_for("no-such-model").encoding is None
    assert core.estimator_for(None).encoding is None


def test_gpt_4o_passes_and_claude_is_compacted_over_http() -> None:
    chat: dict[str, Any] = {"model": "gpt-4o", "messages": HISTORY}
    claude: dict[str, Any] = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": HISTORY}
    with (
        ScriptedServer() as openai_up,
        ScriptedServer() as anthropic_up,
        ProxyServer(
            ProxyCore(window=WINDOW), Upstreams(openai_up.url + "/v1", anthropic_up.url)
        ) as proxy,
        httpx2.Client(timeout=30) as client,
    ):
        openai_up.push(Step(200, {"choices": [], "usage": None}))
        anthropic_up.push(Step(200, {"type": "message", "content": [], "usage": None}))
        raw = json.dumps(chat).encode()
        sent_chat = client.post(proxy.url + "/v1/chat/completions", content=raw)
        sent_claude = client.post(proxy.url + "/v1/messages", json=claude)
    assert (sent_chat.status_code, sent_claude.status_code) == (200, 200)
    # GPT-4o: 2,280 tokens by o200k_base's calibration, under the 3,200 trigger: sent as is.
    (to_openai,) = openai_up.received
    assert to_openai.raw == raw
    assert proxy.lines[0].startswith(
        f"chat {_key(proxy.lines[0])} gpt-4o 200 passed tokens 2,280 -> 2,280 "
        "(window 4,000, epoch 0) "
    )
    # Claude: 3,210 by the default estimate, over the trigger: compacted, to the size the
    # stateless cache gives the same messages under the same policy.
    expected = (
        PrefixCache()
        .serve(
            ConversationReader("anthropic").read(claude).messages,
            window=WINDOW,
            policy=ProxyCore().policy,
        )
        .context
    )
    assert expected.epoch == 1 and expected.tokens < 3_200
    (to_anthropic,) = anthropic_up.received
    assert len(to_anthropic.body["messages"]) < len(HISTORY)
    assert proxy.lines[1].startswith(
        f"anthropic {_key(proxy.lines[1])} claude-sonnet-4-5 200 compacted tokens 3,210 -> "
        f"{expected.tokens:,} (window 4,000, epoch 1) steps="
    )


def _key(line: str) -> str:
    """The conversation key a log line names (its second word)."""
    return line.split()[1]
