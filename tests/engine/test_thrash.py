"""Thrash detection: automatic compaction stops with one clear error when the context refills
to the trigger within a few model calls of each of the last compactions, naming what refills
it (re-injected or re-appended parts first, tool results by tool, pinned items)."""

from __future__ import annotations

import json

import pytest
from engine_helpers import EST, filler

from ctxengine import Session
from ctxengine.errors import ThrashError
from ctxengine.ladder.thrash import refill_calls
from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.policy import Policy
from ctxengine.projection.injection import REPEATED_NOTE

ALWAYS = Policy(thrash_guard="always")
#: The harness scenarios as measured: ctxengine re-injects nothing, so only the harness brings
#: its rules back after a compaction (and the rules are truncated at source like any text).
HARNESS_ONLY = Policy(thrash_guard="always", reinject=())
#: Where the default guard reports the refills of the 7,900-token reads (entries).
REFILL_AT = 39
ADVICE_END = (
    "Or use a model with a larger window. A manual compaction lets automatic compaction go "
    'on; policy.thrash_guard="off" turns this check off.'
)
#: A rules file a harness injects as a user-role block: 6,435 tokens once truncated at the
#: 6,400-token cap of a 32,000-token window.
RULES = "# AGENTS.md instructions for /repo\n\n" + filler("Never add a co-author trailer", 7_890)


def text(role: str, body: str) -> Message:
    return Message(role, (TextPart(body),))  # type: ignore[arg-type]


def step(s: Session, n: int, tool: str, results: int, tokens: int) -> None:
    """One model call answered by ``results`` calls of ``tool``, each ``tokens`` tokens."""
    calls = tuple(
        ToolCallPart(f"c{n}_{k}", tool, json.dumps({"path": f"src/m{n}_{k}.py"}))
        for k in range(results)
    )
    s.record(Message("assistant", calls))
    s.append(
        Message(
            "tool",
            tuple(ToolResultPart(c.id, (TextPart(filler(f"out{n}", tokens)),)) for c in calls),
        )
    )


def compactions(s: Session) -> int:
    return sum(e.step == "compaction" for e in s.events)


def run_rules_harness(s: Session, *, reappend: bool, calls: int) -> int:
    """A harness that sends its rules file first and, with ``reappend``, again after every
    compaction; each call reads a 4,500-token result. Returns the calls made."""
    s.append(text("system", "You are a coding agent."))
    s.append(text("user", RULES))
    s.append(text("user", "Fix the failing tests."))
    epoch = 0
    for n in range(calls):
        ctx = s.prepare()
        if ctx.epoch != epoch:
            epoch = ctx.epoch
            if reappend:
                s.append(text("user", RULES))
        step(s, n, "bash", 1, 4_500)
    return calls


class TestScenarios:
    def test_a_rules_file_appended_again_after_every_compaction_is_named_first(self) -> None:
        s = Session(32_000, policy=HARNESS_ONLY, estimator=EST)
        with pytest.raises(ThrashError) as err:
            run_rules_harness(s, reappend=True, calls=40)
        assert compactions(s) == 3
        e = err.value
        assert (e.compactions, e.calls, e.tokens, e.trigger) == (3, (4, 4, 4), 29_148, 25_600)
        assert e.contributors == (
            (
                "user block /repo/AGENTS.md appended again after the compaction (1 copy)",
                6_435,
            ),
            ("tool results of bash (5 results)", 22_505),
        )
        assert str(e) == (
            "automatic compaction stopped: the context refilled to the trigger (25,600 tokens) "
            "within 4, 4, 4 model calls of each of the last 3 compactions; it is now 29,148 "
            "tokens. Top contributors: user block /repo/AGENTS.md appended again after the "
            "compaction (1 copy): 6,435 tokens; tool results of bash "
            "(5 results): 22,505 tokens. Stop appending the same block again after each "
            "compaction: keep it once in the system prompt, or let ctxengine carry it "
            "(policy.reinject, Session.pin). Make bash return less per call (smaller reads, "
            "paging), or lower the truncation cap (policy.truncate_max_chars, "
            f"truncate_max_window_ratio). {ADVICE_END}"
        )
        assert s.events[-1].step == "thrash"
        assert s.events[-1].detail == str(e)

    def test_with_the_default_guard_and_summarizer_the_refills_are_reported_not_stopped(
        self,
    ) -> None:
        # The extractive summarizer costs no model call: the same finding is a "refill"
        # event (once per 3 rapid compactions), and compaction goes on.
        s = Session(32_000, policy=Policy(reinject=()), estimator=EST)
        assert run_rules_harness(s, reappend=True, calls=40) == 40
        refills = [e for e in s.events if e.step == "refill"]
        assert [e.at_entry for e in refills] == [43, 73]
        assert compactions(s) == 9
        assert refills[0].detail == (
            "the context refilled to the trigger within 4, 4, 4 model calls of each of the "
            "last 3 compactions (automatic compaction goes on: the summarizer calls no model; "
            'policy.thrash_guard="always" stops it). Top contributors: user block '
            "/repo/AGENTS.md appended again after the compaction (1 copy): 6,435 tokens; "
            "tool results of bash (5 results): 22,505 tokens. Stop appending the same block "
            "again after each compaction: keep it once in the system prompt, or let "
            "ctxengine carry it (policy.reinject, Session.pin). Make bash return less per "
            "call (smaller reads, paging), or lower the truncation cap "
            "(policy.truncate_max_chars, truncate_max_window_ratio)."
        )

    def test_without_the_appended_block_the_same_session_does_not_thrash(self) -> None:
        s = Session(32_000, policy=HARNESS_ONLY, estimator=EST)
        assert run_rules_harness(s, reappend=False, calls=40) == 40
        # A compaction every 11 entries: 5 calls (2 entries each) between them, never 4.
        at = [e.at_entry for e in s.events if e.step == "compaction"]
        assert at == [14, 25, 36, 47, 58, 69, 80]

    def test_rules_reinjected_by_ctxengine_are_named_first_and_the_harness_copy_is_a_note(
        self,
    ) -> None:
        # The default re-injects the rules whole (7,903 tokens, never truncated) after every
        # compaction; the copy the harness appends again is shown as a one-line note. The
        # rules take a third of the 25,600-token trigger: 4,500 tokens a call refill it
        # within 3 calls, and the error names the re-injected file first.
        s = Session(32_000, policy=ALWAYS, estimator=EST)
        with pytest.raises(ThrashError) as err:
            run_rules_harness(s, reappend=True, calls=40)
        e = err.value
        assert (e.compactions, e.calls, e.tokens, e.trigger) == (3, (3, 3, 3), 26_120, 25_600)
        assert e.contributors == (
            ("re-injected rules /repo/AGENTS.md", 7_903),
            (
                "user block '[The same text as the re-injected durable state above; not …' "
                "appended again after the compaction (1 copy)",
                23,
            ),
            ("tool results of bash (4 results)", 18_004),
        )
        texts = [m.text for m in s.project().messages]
        assert texts.count(RULES) == 1 and texts.count(REPEATED_NOTE) == 1

    def test_results_just_under_the_truncation_cap_name_the_tool(self) -> None:
        # 5 results of 7,900 tokens a call (31,596 characters: under the 32,000-character
        # cap) refill a 200,000-token window every 4 calls.
        s = Session(200_000, policy=ALWAYS, estimator=EST)
        s.append(text("system", "You are a coding agent."))
        s.append(text("user", "Read the whole codebase and port it."))
        with pytest.raises(ThrashError) as err:
            for n in range(60):
                s.prepare()
                step(s, n, "read_file", 5, 7_900)
        assert compactions(s) == 3
        e = err.value
        assert (e.calls, e.tokens, e.trigger) == ((4, 4, 4), 198_158, 167_000)
        assert e.contributors == (("tool results of read_file (25 results)", 197_525),)
        assert str(e) == (
            "automatic compaction stopped: the context refilled to the trigger (167,000 "
            "tokens) within 4, 4, 4 model calls of each of the last 3 compactions; it is now "
            "198,158 tokens. Top contributors: tool results of read_file (25 results): "
            "197,525 tokens. Make read_file return less per call (smaller reads, paging), or "
            "lower the truncation cap (policy.truncate_max_chars, truncate_max_window_ratio). "
            f"{ADVICE_END}"
        )

    def test_the_error_stays_until_a_manual_compaction(self) -> None:
        s = Session(200_000, policy=ALWAYS, estimator=EST)
        s.append(text("system", "sys"))
        s.append(text("user", "Port it."))
        n = 0
        with pytest.raises(ThrashError):
            for n in range(60):
                s.prepare()
                step(s, n, "read_file", 5, 7_900)
        stopped = s.prepare()  # nothing new: nothing compacted, the context as it was
        assert (stopped.epoch, stopped.tokens) == (3, 198_146)
        step(s, 60, "read_file", 1, 100)
        with pytest.raises(ThrashError):
            s.prepare()  # still stopped
        assert compactions(s) == 3
        s.compact()
        s.prepare()  # the manual compaction ended the streak
        assert compactions(s) == 4

    def test_pinned_items_are_named_last(self) -> None:
        s = Session(200_000, policy=ALWAYS, estimator=EST)
        s.append(text("system", "sys"))
        s.append(text("user", "Port it."))
        s.pin("Never add a co-author trailer.", reason="house rule")
        with pytest.raises(ThrashError) as err:
            for n in range(60):
                s.prepare()
                step(s, n, "read_file", 5, 7_900)
        labels = [label for label, _ in err.value.contributors]
        assert labels == ["tool results of read_file (25 results)", "pinned items"]
        assert err.value.contributors[-1] == ("pinned items", 49)
        assert "Unpin items or lower policy.pins_max_tokens." in str(err.value)

    def test_off_and_the_default_guard_with_the_extractive_summarizer_never_stop(self) -> None:
        for policy in (Policy(thrash_guard="off"), Policy()):
            s = Session(200_000, policy=policy, estimator=EST)
            s.append(text("system", "sys"))
            s.append(text("user", "Port it."))
            for n in range(20):
                s.prepare()
                step(s, n, "read_file", 5, 7_900)
            assert compactions(s) == 4
            refills = [e.at_entry for e in s.events if e.step == "refill"]
            assert refills == ([] if policy.thrash_guard == "off" else [REFILL_AT])


def entry(n: int, body: Message | CompactionRecord) -> Entry:
    return Entry(f"e{n}", "s", n, body)


def comp(reason: str) -> CompactionRecord:
    return CompactionRecord("state", None, 10, 5, "default", "extractive", reason=reason)


REPLY = Message("assistant", (TextPart("ok"),))
ASK = Message("user", (TextPart("go"),))


class TestRefillCalls:
    def test_calls_between_the_latest_automatic_compactions_oldest_first(self) -> None:
        bodies: list[Message | CompactionRecord] = [
            ASK, REPLY, REPLY, REPLY, REPLY, REPLY,  # 5 calls: before the run
            comp("threshold"), REPLY, REPLY, ASK,
            comp("overflow"), REPLY, REPLY, REPLY,
            comp("threshold"), REPLY,
        ]  # fmt: skip
        entries = [entry(i, b) for i, b in enumerate(bodies)]
        assert refill_calls(entries, limit=3, within=4) == (2, 3, 1)
        assert refill_calls(entries, limit=2, within=4) == (3, 1)
        # A refill of 3 calls is not within 2: the run is the newest compaction only.
        assert refill_calls(entries, limit=3, within=2) == (1,)

    def test_a_manual_compaction_ends_the_run(self) -> None:
        bodies: list[Message | CompactionRecord] = [
            comp("threshold"), REPLY, comp("manual"), REPLY, comp("threshold"), REPLY,
        ]  # fmt: skip
        entries = [entry(i, b) for i, b in enumerate(bodies)]
        assert refill_calls(entries, limit=3, within=4) == (1,)

    def test_more_calls_than_within_since_the_newest_compaction_is_no_run(self) -> None:
        entries = [entry(i, b) for i, b in enumerate([comp("threshold"), REPLY, REPLY])]
        assert refill_calls(entries, limit=3, within=1) == ()
