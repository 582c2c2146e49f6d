"""Property tests at the engine level: generated histories (parallel calls, replies written
in pieces, reasoning with signatures, images, pending calls, broken source pairs: missing,
duplicate, late and orphan results) appended message by message to a :class:`Session` with a
2,000-token window, so that prunes and compactions happen, with ``prepare()`` before every
model call as a live agent does.

Checked on every run:

- every prepared context renders to an OpenAI and an Anthropic body that validate (a
  context whose newest reply still waits for results reports exactly that, and nothing else);
- re-projecting the same log (read back through the codec, in a new session) gives an
  identical context;
- within an epoch (same compaction, same prunes) each prepared context extends the previous
  one at its tail.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine_helpers import EST, filler
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxengine.engine import Session
from ctxengine.model import (
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
from ctxengine.projection import Context
from ctxengine.projection.render import render_anthropic, render_openai
from ctxengine.projection.validate import validate

WINDOW = 2_000
IMAGE = ImagePart("image/png", data="iVBORw0KGgo=", width=640, height=480)
REASONING = st.sampled_from(
    [
        None,
        ReasoningPart("thinking it over", signature="c2lnbmF0dXJl"),
        ReasoningPart("", signature="REDACTED", redacted=True),
        ReasoningPart("plain thoughts"),
    ]
)
FATES = st.sampled_from(["ok", "ok", "ok", "long", "error", "image", "missing", "dup", "late"])


@dataclass
class _History:
    bodies: list[Message] = field(default_factory=list)
    late: list[ToolResultPart] = field(default_factory=list)
    n: int = 0

    def call(self) -> ToolCallPart:
        self.n += 1
        return ToolCallPart(f"c{self.n}", "bash", f'{{"command": "step {self.n}"}}')


def _result(cid: str, fate: str, size: int) -> ToolResultPart:
    if fate == "long":
        return ToolResultPart(cid, (TextPart(filler(f"log of {cid}", 900)),))
    if fate == "image":
        return ToolResultPart(cid, (TextPart("screenshot"), IMAGE))
    text = filler(f"out {cid}", size)
    return ToolResultPart(cid, (TextPart(text),), is_error=fate == "error")


@st.composite
def _reply(draw: st.DrawFn, h: _History) -> None:
    reasoning = draw(REASONING)
    text = [TextPart(filler("working", draw(st.integers(3, 60))))] if draw(st.booleans()) else []
    calls = [h.call() for _ in range(draw(st.integers(0, 3)))]
    head: list[Part] = [reasoning] if reasoning is not None else []
    if calls and draw(st.integers(0, 3)) == 0:  # written in pieces: one message per call
        h.bodies.append(Message("assistant", (*head, *text, calls[0])))
        h.bodies.extend(Message("assistant", (c,)) for c in calls[1:])
    else:
        h.bodies.append(Message("assistant", (*head, *text, *calls) or (TextPart("hm"),)))
    results: list[ToolResultPart] = []
    for c in calls:
        fate = draw(FATES)
        if fate == "missing":
            continue
        res = _result(c.id, fate, draw(st.integers(3, 200)))
        if fate == "late":
            h.late.append(res)
            continue
        results.append(res)
        if fate == "dup":
            results.append(res)
    results = draw(st.permutations(results))
    if draw(st.booleans()):
        h.bodies.extend(Message("tool", (r,)) for r in results)
    elif results:
        h.bodies.append(Message("tool", tuple(results)))
    if draw(st.integers(0, 9)) == 0:
        h.bodies.append(Message("tool", (_result("ghost", "ok", 5),)))


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    h = _History()
    if draw(st.booleans()):
        h.bodies.append(system(filler("You are a coding agent", draw(st.integers(5, 150)))))
    for t in range(draw(st.integers(2, 9))):
        parts: list[Part] = [TextPart(filler(f"request {t}", draw(st.integers(5, 120))))]
        if draw(st.integers(0, 4)) == 0:
            parts.append(IMAGE)
        h.bodies.append(Message("user", tuple(parts)))
        if h.late and draw(st.booleans()):
            h.bodies.append(Message("tool", tuple(h.late)))
            h.late = []
        for _ in range(draw(st.integers(0, 4))):
            draw(_reply(h))
    if draw(st.booleans()):  # a reply still waiting for its results
        h.bodies.append(
            Message("assistant", tuple(h.call() for _ in range(draw(st.integers(1, 2)))))
        )
    return h.bodies


def _pending(ctx: Context) -> set[str]:
    """Calls of the context's newest reply that nothing after it answers."""
    answered: set[str] = set()
    calls: set[str] = set()
    for msg in reversed(ctx.messages):
        if msg.role == "tool":
            answered.update(r.call_id for r in msg.tool_results)
        elif msg.role == "assistant":
            calls.update(c.id for c in msg.tool_calls)
        else:
            break
    return calls - answered


def _check_valid(ctx: Context) -> None:
    pending = _pending(ctx)
    bodies = [
        ("openai", render_openai(ctx)),
        ("anthropic", render_anthropic(ctx)),
        # With prompt-cache breakpoints (at most 4) and the state as mid-conversation
        # system messages (only where the API takes them).
        ("anthropic", render_anthropic(ctx, cache=True, system_messages=True)),
    ]
    for provider, body in bodies:
        problems = validate(body, provider)
        if pending:
            assert problems and all("not answered" in p for p in problems), problems
        else:
            assert problems == [], (provider, problems)


@dataclass
class _Run:
    session: Session
    contexts: list[tuple[Context, int]]


def _live(bodies: list[Message]) -> _Run:
    """Append ``bodies`` one by one, preparing a context before each model call (an
    assistant message that does not continue a reply) and at the end."""
    s = Session(WINDOW, estimator=EST)
    out: list[tuple[Context, int]] = []
    previous = ""
    for body in bodies:
        if body.role == "assistant" and previous != "assistant":
            out.append((s.prepare(), _prunes(s)))
        s.append(body)
        previous = body.role
    out.append((s.prepare(), _prunes(s)))
    return _Run(s, out)


def _prunes(s: Session) -> int:
    return sum(isinstance(e.body, PruneRecord) for e in s.entries)


PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class TestEngineProperties:
    @PROPS
    @given(histories())
    def test_every_prepared_context_validates_for_both_providers(
        self, bodies: list[Message]
    ) -> None:
        run = _live(bodies)
        for ctx, _ in run.contexts:
            _check_valid(ctx)

    @PROPS
    @given(histories())
    def test_reprojecting_the_same_log_gives_an_identical_context(
        self, bodies: list[Message]
    ) -> None:
        run = _live(bodies)
        copy = [entry_from_dict(entry_to_dict(e)) for e in run.session.entries]
        reopened = Session(WINDOW, estimator=EST, entries=copy)
        assert reopened.project() == run.session.project()
        assert reopened.project() == reopened.project()

    @PROPS
    @given(histories())
    def test_within_an_epoch_the_prepared_context_only_grows_at_its_tail(
        self, bodies: list[Message]
    ) -> None:
        run = _live(bodies)
        for (prev, prev_prunes), (cur, cur_prunes) in zip(
            run.contexts, run.contexts[1:], strict=False
        ):
            if cur.compaction_id != prev.compaction_id or cur_prunes != prev_prunes:
                continue
            n = len(prev.messages)
            assert cur.messages[:n] == prev.messages
            assert cur.sources[:n] == prev.sources
