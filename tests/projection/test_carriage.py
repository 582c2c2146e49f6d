"""One definition of what a request carries: the renderers (summary requests included, which
the providers render with the same renderers) emit a reasoning or native compaction part
exactly when ``carries`` says so, and the estimate prices exactly those."""

from __future__ import annotations

import itertools
import json

import pytest

from ctxengine.model import Message, NativeCompactionPart, Part, ReasoningPart, TextPart, user
from ctxengine.model.carriage import carried_anywhere, carries
from ctxengine.projection import Context
from ctxengine.projection.render import render_anthropic, render_openai, render_openai_responses
from ctxengine.tokens import HeuristicEstimator

EST = HeuristicEstimator()
COMPACTION = json.dumps({"type": "compaction", "content": "summary of earlier turns"})


def reasoning_variants() -> list[ReasoningPart]:
    out = []
    for text, signature, redacted, provider in itertools.product(
        ("", "thinking it over"),
        (None, "", "sig-1"),
        (False, True),
        (None, "anthropic", "openai", "deepseek"),
    ):
        meta = {} if provider is None else {"provider": provider}
        out.append(ReasoningPart(text, signature=signature, redacted=redacted, meta=meta))
    return out


def native_variants() -> list[NativeCompactionPart]:
    return [
        NativeCompactionPart(provider, payload)
        for provider in ("anthropic", "openai")
        for payload in (COMPACTION, "not json", "[1, 2]")
    ]


PARTS: list[Part] = [*reasoning_variants(), *native_variants()]


def context(part: Part) -> Context:
    messages = (user("go"), Message("assistant", (part, TextPart("done"))), user("next"))
    return Context(messages=messages, sources=(None,) * 3)


def test_there_are_carried_and_dropped_variants() -> None:
    # Anthropic: signature "sig-1" × Anthropic's own (no provider, "anthropic") × 2 texts ×
    # redacted or not = 8 reasoning parts, plus its compaction item with an object payload.
    assert sum(carries("anthropic", p) for p in PARTS) == 9
    assert sum(carries("openai", p) for p in PARTS) == 0
    # Responses: signature "sig-1" × "openai" × 2 texts, not redacted; plus OpenAI's own
    # compaction item with an object payload.
    assert sum(carries("openai-responses", p) for p in PARTS) == 3


@pytest.mark.parametrize("part", PARTS, ids=repr)
def test_the_anthropic_renderer_follows_carries(part: Part) -> None:
    body = render_anthropic(context(part))
    blocks = body["messages"][1]["content"]
    assert (len(blocks) == 2) == carries("anthropic", part)
    assert blocks[-1] == {"type": "text", "text": "done"}


@pytest.mark.parametrize("part", PARTS, ids=repr)
def test_the_openai_renderer_follows_carries(part: Part) -> None:
    body = render_openai(context(part))
    assert body["messages"][1] == {"role": "assistant", "content": "done"}
    assert not carries("openai", part)


@pytest.mark.parametrize("part", PARTS, ids=repr)
def test_the_responses_renderer_follows_carries(part: Part) -> None:
    items = render_openai_responses(context(part))["input"]
    assert (len(items) == 4) == carries("openai-responses", part)
    kind = "compaction" if isinstance(part, NativeCompactionPart) else "reasoning"
    assert (items[1]["type"] == kind) == carries("openai-responses", part)
    if kind == "compaction" and carries("openai-responses", part):
        assert items[1] == json.loads(COMPACTION)
    assert items[-2] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "done"}],
    }


@pytest.mark.parametrize("part", PARTS, ids=repr)
def test_the_estimate_prices_what_some_request_carries(part: Part) -> None:
    assert (EST.part(part) > 0) == carried_anywhere(part)
    assert carried_anywhere(part) == (carries("openai", part) or carries("anthropic", part))
