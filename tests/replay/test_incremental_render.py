"""Incremental rendering and validation find exactly what rendering and validating the whole
request finds: on constructed broken tails, on random sequences of contexts, and on corpus
replays (whose joined requests hash to the golden record of whole requests)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpus import CORPUS, require_corpus
from ctxengine.engine import Session
from ctxengine.importers import read_transcript
from ctxengine.model import Message, ToolCallPart, assistant, system, tool_result, user
from ctxengine.projection.context import Context
from ctxengine.projection.validate import validate
from ctxengine.replay import RENDERERS, RenderedRequest, source_messages
from ctxengine.tokens import HeuristicEstimator

PROVIDERS = ("openai", "anthropic")


def call(call_id: str, name: str = "Read") -> ToolCallPart:
    return ToolCallPart(call_id, name, '{"path": "a.py"}')


def ctx(messages: Sequence[Message]) -> Context:
    return Context(messages=tuple(messages), sources=(None,) * len(messages))


PREFIX = [
    system("be brief"),
    user("fix it"),
    assistant("looking", call("c1")),
    tool_result("c1", "print(1)"),
]
#: Tails appended to PREFIX, and the problems validating the whole request finds.
TAILS: dict[str, tuple[list[Message], dict[str, list[str]]]] = {
    "orphan result": (
        [assistant("ok"), tool_result("zz", "x")],
        {
            "openai": [
                "messages[5]: result for 'zz' does not follow an assistant message with tool_calls"
            ],
            "anthropic": ["messages[4].content[0]: orphan tool_result for 'zz'"],
        },
    ),
    "unanswered call": (
        [assistant("", call("c2")), user("next")],
        {
            "openai": ["messages[4]: tool calls ['c2'] not answered before messages[5] (user)"],
            "anthropic": ["messages[4]: tool_use ['c2'] of the previous message not answered"],
        },
    ),
    "id of the prefix used again": (
        [assistant("", call("c1")), tool_result("c1", "again")],
        {"openai": [], "anthropic": ["messages[3]: tool_use id 'c1' used twice in the request"]},
    ),
    "late result for a prefix call": (
        [assistant("", call("c3")), tool_result("c3", "y"), tool_result("c1", "late")],
        {
            "openai": ["messages[6]: orphan result for 'c1' (no such call in messages[4])"],
            "anthropic": ["messages[4].content[1]: orphan tool_result for 'c1'"],
        },
    ),
    "call followed by another reply": (
        [assistant("", call("c4")), assistant("more")],
        {
            "openai": [
                "messages[4]: tool calls ['c4'] not answered before messages[5] (assistant)"
            ],
            "anthropic": ["messages[3]: tool_use ['c4'] not answered"],
        },
    ),
    "valid, with a system message": (
        [assistant("", call("c6")), tool_result("c6", "z"), system("note"), user("and?")],
        {"openai": [], "anthropic": []},
    ),
}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", sorted(TAILS))
def test_a_broken_tail_is_caught_as_the_whole_request_catches_it(name: str, provider: str) -> None:
    tail, expected = TAILS[name]
    whole = ctx(PREFIX + tail)
    rendered = RenderedRequest(provider, HeuristicEstimator())
    first = rendered.update(ctx(PREFIX))
    update = rendered.update(whole)
    assert (first.checked, first.problems) == ("full", [])
    assert update.checked == "tail"
    assert update.problems == validate(RENDERERS[provider](whole), provider)
    assert update.problems == expected[provider]
    assert rendered.body() == RENDERERS[provider](whole)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_after_a_broken_request_the_next_one_is_checked_in_full(provider: str) -> None:
    tail, _ = TAILS["unanswered call"]
    rendered = RenderedRequest(provider, HeuristicEstimator())
    rendered.update(ctx(PREFIX))
    rendered.update(ctx(PREFIX + tail))
    more = [*PREFIX, *tail, assistant("done")]
    update = rendered.update(ctx(more))
    assert update.checked == "full"
    assert update.problems == validate(RENDERERS[provider](ctx(more)), provider)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_changed_prefix_is_checked_in_full_once_then_tails_again(provider: str) -> None:
    rendered = RenderedRequest(provider, HeuristicEstimator())
    rendered.update(ctx([*PREFIX, assistant("a"), user("b")]))
    compacted = [PREFIX[0], user("summary"), assistant("a"), user("b")]
    assert rendered.update(ctx(compacted)).checked == "full"
    grown = [*compacted, assistant("c"), user("d")]
    assert rendered.update(ctx(grown)).checked == "tail"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_tail_that_does_not_open_with_a_reply_is_checked_in_full(provider: str) -> None:
    rendered = RenderedRequest(provider, HeuristicEstimator())
    rendered.update(ctx(PREFIX))
    assert rendered.update(ctx([*PREFIX, user("more")])).checked == "full"


def test_blocks_name_the_head_and_one_block_per_rendered_message() -> None:
    rendered = RenderedRequest("anthropic", HeuristicEstimator(), blocks=True)
    first = rendered.update(ctx(PREFIX))
    tail, _ = TAILS["valid, with a system message"]
    grown = rendered.update(ctx(PREFIX + tail))
    # Anthropic: tools and the system prompt, then user / assistant / user(result) turns.
    assert (len(first.blocks), first.head_blocks, first.reuse) == (5, 2, 0)
    # The tail adds a system message, which the renderer moves to the system prompt: the head
    # changed, so nothing is known to be reused.
    assert (len(grown.blocks), grown.head_blocks, grown.reuse) == (7, 2, 0)
    assert grown.blocks[0] == first.blocks[0] and grown.blocks[1] != first.blocks[1]
    assert grown.blocks[2:5] == first.blocks[2:5]
    openai = RenderedRequest("openai", HeuristicEstimator(), blocks=True)
    openai.update(ctx(PREFIX))
    grown = openai.update(ctx(PREFIX + tail))
    # OpenAI: tools, the leading system message, then one block per message.
    assert (len(grown.blocks), grown.head_blocks, grown.reuse) == (9, 2, 5)


def _message(kind: str, n: int, ids: list[str]) -> Message:
    if kind == "user":
        return user(f"u{n}")
    if kind == "system":
        return system(f"s{n}")
    if kind == "reply":
        return assistant(f"a{n}")
    if kind == "call":
        ids.append(f"k{n}")
        return assistant("", call(f"k{n}"))
    if kind == "reuse" and ids:
        return assistant("", call(ids[n % len(ids)]))
    if kind == "result" and ids:
        return tool_result(ids[n % len(ids)], f"r{n}")
    return tool_result(f"none{n}", "orphan")


@given(
    steps=st.lists(
        st.tuples(
            st.lists(
                st.sampled_from(["user", "system", "reply", "call", "reuse", "result", "orphan"]),
                min_size=0,
                max_size=5,
            ),
            st.booleans(),
        ),
        min_size=1,
        max_size=12,
    )
)
@settings(max_examples=200, deadline=None)
def test_random_growth_finds_what_the_whole_request_finds(
    steps: list[tuple[list[str], bool]],
) -> None:
    renders = {p: RenderedRequest(p, HeuristicEstimator()) for p in PROVIDERS}
    messages: list[Message] = [user("start")]
    ids: list[str] = []
    for n, (kinds, opens_with_reply) in enumerate(steps):
        if opens_with_reply:
            kinds = ["call", "result", *kinds]
        messages.extend(_message(k, n * 10 + j, ids) for j, k in enumerate(kinds))
        if n % 5 == 4:
            messages = [messages[0], user("summary"), *messages[len(messages) // 2 :]]
        context = ctx(messages)
        for provider, rendered in renders.items():
            update = rendered.update(context)
            whole = RENDERERS[provider](context)
            assert update.problems == validate(whole, provider)
            assert rendered.body() == whole


def _hash(body: dict[str, object]) -> str:
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


#: The golden record of whole requests (``tests/engine/test_replay_golden.py``).
GOLDEN = Path(__file__).resolve().parents[1] / "engine" / "golden" / "replay_hashes.json"
#: Corpus files whose replays at 8,000 and 32,000 tokens are rendered from their tails and
#: compared with the golden record of whole requests (tests/engine/golden).
CORPUS_FILES = (
    "claude-code/spotter-long-dov-subagent-a2898e3.jsonl",
    "codex/codex-cpolar-connect-2025-09-16-a.jsonl",
    "openai-messages/mini-swe-agent-deepseek-chat-django-13265.traj.json",
    "openhands/openhands-traj-vue-todo-gui.json",
    "pi/pi-mono-large-session.jsonl",
    "swe-agent/swe-agent-marshmallow-1867-function-calling.traj",
)


@pytest.mark.parametrize("window", [8_000, 32_000])
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_requests_joined_from_tails_are_the_recorded_whole_requests(
    name: str, window: int
) -> None:
    require_corpus(name)
    golden = orjson.loads(GOLDEN.read_bytes())
    steps = golden[f"{name}@{window}"]["steps"]
    session = Session(window)
    renders = {p: RenderedRequest(p, HeuristicEstimator()) for p in PROVIDERS}
    hashes: list[dict[str, str]] = []
    checked: list[str] = []
    seen_user, previous = False, ""
    for message in source_messages(read_transcript(CORPUS / name).entries):
        if message.role == "assistant" and previous != "assistant" and seen_user:
            context = session.prepare()
            step: dict[str, str] = {}
            for provider, rendered in renders.items():
                update = rendered.update(context)
                assert update.problems == []
                checked.append(update.checked)
                step[provider] = _hash(rendered.body())
            hashes.append(step)
        seen_user = seen_user or message.role == "user"
        previous = message.role
        session.append(message)
    assert hashes == steps
    assert checked.count("tail") > checked.count("full")
