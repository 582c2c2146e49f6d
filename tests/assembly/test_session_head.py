"""A ``Session`` with a ``ContextAssembler``: the head first in every context and counted like
a system prompt, byte-identical within an epoch (property), cache breaks recorded as events,
path-scoped rules loaded after a matching read, rules present after compactions, and compact
instructions passed to the summarizer."""

from __future__ import annotations

import json
from contextlib import suppress
from itertools import pairwise
from typing import Literal

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxengine.assembly import ContextAssembler, Environment, RuleFile
from ctxengine.engine import LadderEvent, Session
from ctxengine.errors import ConfigError, ContextFloorError, NothingToCompact, SummaryRejected
from ctxengine.model import Message, TextPart, ToolCallPart, ToolResultPart, assistant, system, user
from ctxengine.projection.render import render_anthropic
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.tokens.base import Estimator
from hand_estimator import HandEstimator

EST = HandEstimator()
READ = {"name": "read", "description": "Read a file", "parameters": {"type": "object"}}
GREP = {"name": "grep", "description": "Search", "parameters": {"type": "object"}}
RULE = "Never add a co-author trailer."
API = RuleFile(
    ".claude/rules/api.md",
    "Validate every request body.",
    kind="claude",
    level="root",
    activation="scoped",
    scope=("src/api/**",),
    base="/repo",
)


def read_step(cid: str, path: str) -> list[Message]:
    call = ToolCallPart(cid, "Read", json.dumps({"file_path": path}))
    result = Message("tool", (ToolResultPart(cid, (TextPart("x = 1"),)),))
    return [Message("assistant", (call,)), result]


def turns(s: Session, n: int, first: int = 0) -> None:
    for k in range(first, first + n):
        s.append(user(f"request {k}: " + "word " * 40))
        s.append(assistant(f"answer {k}: " + "done " * 60))


def test_the_head_opens_the_context_and_counts_like_a_system_prompt() -> None:
    head = ContextAssembler(base="Be brief.", tools=[READ])
    with_head = Session(8_000, estimator=EST, head=head)
    with_head.append(user("hello"))
    ctx = with_head.prepare()
    assert [m.role for m in ctx.messages] == ["system", "user"]
    assert ctx.sources == (None, ctx.sources[1])
    assert ctx.messages[0].text == "Be brief."
    assert ctx.tools == (READ,)
    # system 4 + 3, user 4 + 2, the tool's sorted JSON 80 chars → 21.
    assert ctx.tokens == 7 + 6 + 21 == 34
    plain = Session(8_000, estimator=EST, tools=[READ])
    plain.append(system("Be brief."))
    plain.append(user("hello"))
    assert plain.prepare().tokens == ctx.tokens
    assert with_head.last_head is not None and with_head.last_head.tokens == 28
    assert with_head.tools == (READ,)


def test_tools_given_to_both_the_session_and_the_head_are_refused() -> None:
    with pytest.raises(ConfigError, match="given to both the Session and its ContextAssembler"):
        Session(8_000, tools=[READ], head=ContextAssembler(tools=[GREP]))
    s = Session(8_000, estimator=EST, tools=[READ], head=ContextAssembler(base="b"))
    assert s.head is not None and s.head.tools == (READ,)


def test_a_tool_change_within_an_epoch_is_recorded_as_a_cache_break() -> None:
    s = Session(8_000, estimator=EST, head=ContextAssembler(base="b", tools=[READ]))
    s.append(user("hello"))
    s.prepare()
    s.prepare(tools=[READ, GREP])
    s.prepare(tools=[GREP, READ])  # the same tools in another order: no break
    # Head tokens: 4 + 1 (base) + 21 (read) = 26, then + 19 (grep) = 45.
    assert s.events == [
        LadderEvent(
            "cache_break", None, 26, 45, "tool definitions changed mid-epoch: added 'grep'", 1
        )
    ]
    assert [t["name"] for t in s.prepare().tools] == ["grep", "read"]


ATTACHED = (
    "<system-reminder>\nContents of .claude/rules/api.md (path-scoped rules for files matching "
    "src/api/**; loaded because src/api/users.py was touched):\n\nValidate every request "
    "body.\n</system-reminder>"
)


def test_a_path_scoped_rule_is_attached_after_the_first_matching_read() -> None:
    rules = [RuleFile("CLAUDE.md", RULE, kind="claude", level="root"), API]
    s = Session(8_000, estimator=EST, head=ContextAssembler(rules=rules, cwd="/repo"))
    s.append(user("fix the page"))
    for m in read_step("c1", "src/web/page.py"):
        s.append(m)
    first = s.prepare()
    assert "Validate every request body." not in first.messages[0].text
    for m in read_step("c2", "src/api/users.py"):
        s.append(m)
    for m in read_step("c3", "src/api/groups.py"):  # a second match: not attached again
        s.append(m)
    second = s.prepare()
    # The head and every earlier message are unchanged (no cache break); the rule follows
    # the result of the read that touched the matching file.
    assert second.messages[: len(first.messages)] == first.messages
    assert [m.role for m in second.messages[len(first.messages) :]] == [
        "assistant",
        "tool",
        "user",
        "assistant",
        "tool",
    ]
    assert second.messages[len(first.messages) + 2].text == ATTACHED
    assert [e.step for e in s.events] == []
    # It is history now: it survives three compactions verbatim (re-injected as rules).
    for k in range(3):
        turns(s, 4, first=4 * k)
        ctx = s.compact().context
        assert sum(m.text == ATTACHED for m in ctx.messages) == 1
        assert "Validate every request body." not in ctx.messages[0].text
    assert [e.step for e in s.events] == ["compaction"] * 3


def test_in_the_head_a_path_scoped_rule_loads_only_after_a_matching_file_is_read() -> None:
    rules = [RuleFile("CLAUDE.md", RULE, kind="claude", level="root"), API]
    head = ContextAssembler(rules=rules, cwd="/repo", scoped_rules="head")
    s = Session(8_000, estimator=EST, head=head)
    s.append(user("fix the page"))
    for m in read_step("c1", "src/web/page.py"):
        s.append(m)
    first = s.prepare()
    assert "Validate every request body." not in first.messages[0].text
    for m in read_step("c2", "src/api/users.py"):
        s.append(m)
    second = s.prepare()
    assert second.messages[0].text == (
        "# Rules\n\nContents of CLAUDE.md:\n\nNever add a co-author trailer.\n\n"
        "Contents of .claude/rules/api.md (applies to files matching src/api/**):\n\n"
        "Validate every request body."
    )
    assert second.messages[1:4] == first.messages[1:]
    assert [(e.step, e.detail) for e in s.events] == [
        (
            "cache_break",
            "rules changed mid-epoch: added '.claude/rules/api.md' (path-scoped to src/api/**; "
            "'src/api/users.py' was touched)",
        )
    ]


def test_the_rules_and_tools_survive_three_compactions() -> None:
    head = ContextAssembler(
        base="b", tools=[READ], rules=[RuleFile("CLAUDE.md", RULE, kind="claude", level="root")]
    )
    s = Session(8_000, estimator=EST, head=head)
    before = s.project()
    for k in range(3):
        turns(s, 4, first=4 * k)
        outcome = s.compact()
        ctx = outcome.context
        assert ctx.messages[0] == before.messages[0]
        assert RULE in ctx.messages[0].text
        assert ctx.tools == before.tools == (READ,)
    assert [e.step for e in s.events] == ["compaction"] * 3


def test_volatile_sections_are_read_again_at_each_compaction_only() -> None:
    day = [1]

    def env() -> Environment:
        return Environment(f"2026-03-{day[0]:02d}", "/repo", "linux")

    s = Session(8_000, estimator=EST, head=ContextAssembler(environment=env, git_status="## main"))
    turns(s, 4)
    first = s.prepare()
    day[0] = 2
    turns(s, 1, first=4)
    assert s.prepare().messages[0] == first.messages[0]
    assert "Date: 2026-03-01" in first.messages[0].text
    after = s.compact().context
    assert "Date: 2026-03-02" in after.messages[0].text
    assert s.events[-1].step == "compaction"
    # The head's own size is in the compaction's measured size.
    assert after.tokens == sum(EST.message(m) for m in after.messages)


class Recording:
    """The extractive summarizer, recording each request."""

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []
        self.inner = ExtractiveSummarizer(user_messages_budget=2_000)

    @property
    def name(self) -> str:
        return "recording"

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        self.requests.append(request)
        return self.inner.summarize(request, estimator)


def test_compact_instructions_of_the_rules_reach_the_summarizer() -> None:
    rule = RuleFile("AGENTS.md", "Use tabs.", instructions="Keep every test name.")
    rec = Recording()
    s = Session(8_000, estimator=EST, summarizer=rec, head=ContextAssembler(rules=[rule]))
    turns(s, 4)
    s.compact()
    assert [r.instructions for r in rec.requests] == ["Keep every test name."]
    plain = Recording()
    s = Session(8_000, estimator=EST, summarizer=plain)
    turns(s, 4)
    s.compact()
    assert [r.instructions for r in plain.requests] == [None]


# ---------------------------------------------------------------------------------------
# Property: across all requests of an epoch the head bytes are identical, unless a stable
# section changed (here: a path-scoped rule loaded by a read), which is a recorded cache break.

Op = tuple[str, int]
ops = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(1, 3)),
        st.tuples(st.just("tick"), st.integers(0, 9)),
        st.tuples(st.just("read"), st.integers(0, 3)),
        st.tuples(st.just("compact"), st.just(0)),
        st.tuples(st.just("prepare"), st.just(0)),
    ),
    min_size=4,
    max_size=30,
)
FILES = ("src/api/a.py", "src/web/b.py", "docs/c.md", "src/api/d/e.py")


def run(
    operations: list[Op], scoped: Literal["attach", "head"] = "head"
) -> list[tuple[str | None, bytes, int]]:
    """Drive a session; per request sent: its epoch, its head bytes (the rendered system
    prompt and tools) and the number of cache breaks recorded so far. ``scoped``: where
    the path-scoped rule goes."""
    clock = {"day": 1, "git": 0}

    def env() -> Environment:
        return Environment(f"2026-04-{clock['day']:02d}", "/repo", "linux")

    def git() -> str:
        return f"## main\n M file{clock['git']}.py"

    head = ContextAssembler(
        base="Agent.",
        tools=[READ, GREP],
        rules=[RuleFile("AGENTS.md", RULE), API],
        environment=env,
        git_status=git,
        cwd="/repo",
        scoped_rules=scoped,
    )
    s = Session(6_000, estimator=EST, head=head)
    sent: list[tuple[str | None, bytes, int]] = []
    n = 0
    for name, arg in operations:
        if name == "turn":
            turns(s, arg, first=n)
            n += arg
        elif name == "tick":
            clock["day"] = 1 + arg
            clock["git"] += 1
        elif name == "read":
            s.append(user(f"look at {FILES[arg]}"))
            for m in read_step(f"r{n}", FILES[arg]):
                s.append(m)
            n += 1
        elif name == "compact":
            with suppress(NothingToCompact, SummaryRejected):
                s.compact()
        else:
            if not any(e.message is not None for e in s.entries):
                continue
            ctx = s.prepare()
            body = render_anthropic(ctx)
            raw = orjson.dumps([body["system"], body.get("tools")])
            breaks = sum(e.step == "cache_break" for e in s.events)
            sent.append((ctx.compaction_id, raw, breaks))
    return sent


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_head_bytes_are_identical_across_all_requests_of_an_epoch(operations: list[Op]) -> None:
    sent = run(operations)
    for (e1, raw1, n1), (e2, raw2, n2) in pairwise(sent):
        if e1 == e2:
            assert (raw1 == raw2) == (n1 == n2), (e1, n1, n2)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_with_attached_scoped_rules_the_head_never_breaks_within_an_epoch(
    operations: list[Op],
) -> None:
    sent = run(operations, scoped="attach")
    assert all(n == 0 for _, _, n in sent)
    for (e1, raw1, _), (e2, raw2, _) in pairwise(sent):
        if e1 == e2:
            assert raw1 == raw2


def test_the_property_sees_epochs_and_changing_volatile_values() -> None:
    """The property's driver does compact, and the date and git status do change between
    epochs: a fixed run with two compactions and a tick between them gives three epochs with
    three different heads."""
    sent = run(
        [
            *[("turn", 3), ("prepare", 0), ("tick", 4), ("prepare", 0), ("compact", 0)],
            *[("turn", 3), ("prepare", 0), ("tick", 5), ("compact", 0), ("turn", 1)],
            ("prepare", 0),
        ]
    )
    epochs = [e for e, _, _ in sent]
    assert len(sent) == 4 and len(set(epochs)) == 3 and epochs[0] is None
    assert len({raw for _, raw, _ in sent}) == 3
    assert b"2026-04-01" in sent[0][1] and b"2026-04-05" in sent[2][1]
    assert b"2026-04-06" in sent[3][1]
    assert [n for _, _, n in sent] == [0, 0, 0, 0]
    # A read of a file under src/api loads the scoped rule: one break, a new head.
    read = run([("turn", 1), ("prepare", 0), ("tick", 3), ("read", 0), ("prepare", 0)])
    assert [(n, b"Validate every request body." in raw) for _, raw, n in read] == [
        (0, False),
        (1, True),
    ]
    assert b"2026-04-01" in read[1][1]  # the tick waits for the next epoch
    # Attached instead (the default), the rule leaves the head alone: no break.
    attached = run([("turn", 1), ("prepare", 0), ("read", 0), ("prepare", 0)], scoped="attach")
    assert [n for _, _, n in attached] == [0, 0]
    assert attached[0][1] == attached[1][1]


def test_a_head_over_the_floor_names_its_rules_file_and_every_later_call_refuses() -> None:
    big = RuleFile("CLAUDE.md", "Always check twice. " * 1_500, kind="claude", level="root")
    head = ContextAssembler(base="Be brief.", tools=[READ], rules=[big])
    s = Session(8_000, estimator=EST, head=head)
    s.append(user("Do the task."))
    with pytest.raises(ContextFloorError) as first:
        s.prepare()
    rules = next(x for x in s.last_head.sections if x.name == "rules").tokens  # type: ignore[union-attr]
    assert first.value.parts[0] == ("rules CLAUDE.md", rules)
    assert rules == EST.text("# Rules\n\nContents of CLAUDE.md:\n\n" + big.text) == 7_509
    assert "(largest parts: rules CLAUDE.md 7,509, " in str(first.value)
    # No new entry: the ladder does not run again, but the context still cannot be sent.
    for _ in range(2):
        with pytest.raises(ContextFloorError) as again:
            s.prepare()
        assert again.value is first.value
    assert [e.step for e in s.events] == ["failure"]
