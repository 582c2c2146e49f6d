"""Property tests over generated histories: parallel calls, reasoning with signatures,
images, pending calls, broken source pairs, prune and compaction records."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from projection_helpers import EST, log

from ctxengine.model import (
    CompactionRecord,
    Entry,
    ImagePart,
    Message,
    Part,
    PruneRecord,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    system,
)
from ctxengine.model.codec import entry_from_dict, entry_to_dict
from ctxengine.model.entries import Body
from ctxengine.projection import Context, ProjectionSettings, project
from ctxengine.projection.render import render_anthropic, render_openai
from ctxengine.projection.validate import validate

SETTINGS = ProjectionSettings(truncate_tokens=60, truncate_max_chars=400, truncate_head_ratio=0.6)
IMAGE = ImagePart("image/png", data="iVBORw0KGgo=", width=640, height=480)
REASONING = st.sampled_from(
    [
        None,
        ReasoningPart("thinking it over", signature="sig=="),
        ReasoningPart("", signature="REDACTED", redacted=True),
        ReasoningPart("plain thoughts"),
    ]
)
FATES = st.sampled_from(["ok", "ok", "ok", "long", "error", "image", "missing", "dup", "late"])


class _Builder:
    def __init__(self) -> None:
        self.bodies: list[Body] = []
        self.calls: list[str] = []
        self.late: list[ToolResultPart] = []
        self.n = 0

    def call(self) -> ToolCallPart:
        self.n += 1
        cid = f"c{self.n}"
        self.calls.append(cid)
        return ToolCallPart(cid, "bash", f'{{"cmd": "step {self.n}"}}')


def _result(cid: str, fate: str) -> ToolResultPart:
    if fate == "long":
        text = "".join(f"line {i:03d} of {cid}\n" for i in range(60))
        return ToolResultPart(cid, (TextPart(text),))
    if fate == "image":
        return ToolResultPart(cid, (TextPart("screenshot"), IMAGE))
    return ToolResultPart(cid, (TextPart(f"out {cid}"),), is_error=fate == "error")


@st.composite
def _exchange(draw: st.DrawFn, b: _Builder) -> None:
    parts: list[Part] = []
    reasoning = draw(REASONING)
    if reasoning is not None:
        parts.append(reasoning)
    if draw(st.booleans()):
        parts.append(TextPart("working"))
    calls = [b.call() for _ in range(draw(st.integers(0, 3)))]
    parts.extend(calls)
    if not parts:
        parts.append(TextPart("hm"))
    b.bodies.append(Message("assistant", tuple(parts)))
    results: list[ToolResultPart] = []
    for c in calls:
        fate = draw(FATES)
        if fate == "missing":
            continue
        res = _result(c.id, fate)
        if fate == "late":
            b.late.append(res)
            continue
        results.append(res)
        if fate == "dup":
            results.append(res)
    results = draw(st.permutations(results))
    if draw(st.booleans()):
        b.bodies.extend(Message("tool", (r,)) for r in results)
    elif results:
        b.bodies.append(Message("tool", tuple(results)))
    if draw(st.integers(0, 9)) == 0:
        b.bodies.append(Message("tool", (_result("ghost", "ok"),)))


@st.composite
def histories(draw: st.DrawFn) -> list[Entry]:
    b = _Builder()
    if draw(st.booleans()):
        b.bodies.append(system("You are a coding agent."))
    for t in range(draw(st.integers(1, 4))):
        parts: list[Part] = [TextPart(f"request {t}")]
        if draw(st.integers(0, 4)) == 0:
            parts.append(IMAGE)
        b.bodies.append(Message("user", tuple(parts)))
        if b.late and draw(st.booleans()):
            b.bodies.append(Message("tool", tuple(b.late)))
            b.late = []
        for _ in range(draw(st.integers(0, 3))):
            draw(_exchange(b))
    if draw(st.booleans()):
        pending = [b.call() for _ in range(draw(st.integers(1, 2)))]
        b.bodies.append(Message("assistant", tuple(pending)))
    _add_records(draw, b)
    return log(*b.bodies)


def _add_records(draw: st.DrawFn, b: _Builder) -> None:
    if b.calls and draw(st.booleans()):
        chosen = draw(st.lists(st.sampled_from(b.calls), max_size=4, unique=True))
        at = draw(st.integers(0, len(b.bodies)))
        b.bodies.insert(at, PruneRecord(tuple(chosen), 100, "default"))
    if len(b.bodies) > 2 and draw(st.booleans()):
        at = draw(st.integers(1, len(b.bodies)))
        kept = draw(st.one_of(st.none(), st.integers(0, at - 1)))
        first = None if kept is None else f"e{kept}"
        cap = draw(st.sampled_from([None, 30]))
        record = CompactionRecord(
            "summary", first, 900, 100, "default", "extractive", truncate_tokens=cap
        )
        b.bodies.insert(at, record)


def _pending(ctx: Context) -> bool:
    """The context ends with calls of its last assistant message still waiting for results."""
    answered: set[str] = set()
    for msg in reversed(ctx.messages):
        if msg.role == "tool":
            answered.update(r.call_id for r in msg.tool_results)
            continue
        return msg.role == "assistant" and any(c.id not in answered for c in msg.tool_calls)
    return False


def _check_valid(ctx: Context) -> None:
    for provider, render in (("openai", render_openai), ("anthropic", render_anthropic)):
        problems = validate(render(ctx), provider)
        if _pending(ctx):
            assert problems and all("not answered" in p for p in problems), problems
        else:
            assert problems == [], (provider, problems)


def _call_points(entries: Sequence[Entry]) -> list[int]:
    """Where a live agent calls the model: before each response, i.e. before an assistant
    message that does not directly follow another one (a reply written in pieces is one
    call), and at the end of the log."""
    points: list[int] = []
    previous = None
    for k, entry in enumerate(entries):
        if entry.message is None:
            continue
        if entry.message.role == "assistant" and previous != "assistant":
            points.append(k)
        previous = entry.message.role
    return [*points, len(entries)]


PROPS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class TestProjectionProperties:
    @PROPS
    @given(histories())
    def test_every_request_before_every_reply_validates_for_both_providers(
        self, entries: list[Entry]
    ) -> None:
        for k in _call_points(entries):
            _check_valid(project(entries[:k], SETTINGS, EST))

    @PROPS
    @given(histories())
    def test_reprojecting_an_equal_log_gives_an_identical_context(
        self, entries: list[Entry]
    ) -> None:
        copy = [entry_from_dict(entry_to_dict(e)) for e in entries]
        assert project(copy, SETTINGS, EST) == project(entries, SETTINGS, EST)

    @PROPS
    @given(histories())
    def test_within_an_epoch_the_context_only_grows_at_its_tail(self, entries: list[Entry]) -> None:
        previous: Context | None = None
        last_records = -1
        for k in _call_points(entries):
            records = sum(1 for e in entries[:k] if e.message is None)
            ctx = project(entries[:k], SETTINGS, EST)
            if previous is not None and records == last_records:
                n = len(previous.messages)
                assert ctx.messages[:n] == previous.messages
                assert ctx.sources[:n] == previous.sources
            previous, last_records = ctx, records

    @PROPS
    @given(histories())
    def test_no_result_is_shown_twice_and_every_shown_text_respects_the_cap(
        self, entries: list[Entry]
    ) -> None:
        ctx = project(entries, SETTINGS, EST)
        shown = [r.call_id for m in ctx.messages for r in m.tool_results]
        assert len(shown) == len(set(shown))
        for m in ctx.messages:
            for r in m.tool_results:
                assert len(r.text) <= SETTINGS.truncate_max_chars + 120
