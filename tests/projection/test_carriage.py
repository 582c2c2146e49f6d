"""One definition of what a request carries: the renderers emit a reasoning or native
compaction part exactly when ``carries`` says so, and the estimate prices exactly those."""

from __future__ import annotations

import itertools
import json

import pytest

from ctxengine.model import Message, NativeCompactionPart, Part, ReasoningPart, TextPart, user
from ctxengine.model.carriage import carried_anywhere, carries
from ctxengine.projection import Context
from ctxengine.projection.render import render_anthropic, render_openai
from ctxengine.providers._wire import anthropic_messages, openai_responses_input
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
    # Responses: signature "sig-1" × "openai" × 2 texts, not redacted.
    assert sum(carries("openai-responses", p) for p in PARTS) == 2


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


@pytest.mark.parametrize("part", reasoning_variants(), ids=repr)
def test_the_summary_request_mappings_follow_carries(part: ReasoningPart) -> None:
    msg = Message("assistant", (part, TextPart("done")))
    _, messages = anthropic_messages([msg])
    assert (len(messages[0]["content"]) == 2) == carries("anthropic", part)
    items = openai_responses_input([msg])
    assert (items[0]["type"] == "reasoning") == carries("openai-responses", part)


@pytest.mark.parametrize("part", PARTS, ids=repr)
def test_the_estimate_prices_what_some_request_carries(part: Part) -> None:
    assert (EST.part(part) > 0) == carried_anywhere(part)
    assert carried_anywhere(part) == (carries("openai", part) or carries("anthropic", part))
