"""Durable state re-injected after every compaction, end to end through ``Session``: the
open todo list, the background tasks still running, the rules carried as injected user
messages, and the floor error when what every compaction keeps is over the trigger.

Every request checked is the first one after a compaction (what ``prepare()`` returns), and
its text is read from the Anthropic body as well as from the context.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
from engine_helpers import EST, call, filler, result

from ctxengine.engine import Session
from ctxengine.errors import CompactionError, ContextFloorError
from ctxengine.ladder.reinject import opening_items
from ctxengine.model import CompactionRecord, Message, TextPart
from ctxengine.policy import Policy
from ctxengine.projection.context import Context
from ctxengine.projection.injection import REPEATED_NOTE
from ctxengine.projection.render import render_anthropic
from ctxengine.summarizers.base import Summary, SummaryRequest
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.summarizers.extractive_state import minimum_state_tokens
from ctxengine.tokens.base import Estimator

#: Window 20,000 (default policy): reserve 4,000 (20 %), trigger 16,000.
WINDOW = 20_000
TRIGGER = 16_000
#: A rules file as Claude Code sends it: a ``<system-reminder>`` user message.
RULES = (
    "<system-reminder>\nAs you answer the user's questions, you can use the following "
    "context:\n# claudeMd\nCodebase and user instructions are shown below. Be sure to adhere "
    "to these instructions.\n\nContents of /repo/CLAUDE.md (project instructions, checked "
    "into the codebase):\n\nNever add a co-author trailer to commit messages.\n"
    "</system-reminder>"
)


def user(text: str) -> Message:
    return Message("user", (TextPart(text),))


def assistant(text: str) -> Message:
    return Message("assistant", (TextPart(text),))


def calling(cid: str, name: str, **args: Any) -> Message:
    return Message("assistant", (call(cid, name, **args),))


def chat(s: Session, turns: int, tokens: int = 996, label: str = "t") -> None:
    """``turns`` turns of a user message and an assistant reply of ``tokens`` + 4 each."""
    for i in range(turns):
        s.append(user(filler(f"{label}{i} user", tokens)))
        s.append(assistant(filler(f"{label}{i} reply", tokens)))


def compactions(s: Session) -> list[CompactionRecord]:
    return [e.body for e in s.entries if isinstance(e.body, CompactionRecord)]


def texts(ctx: Context) -> list[str]:
    return [m.text for m in ctx.messages]


def body_text(ctx: Context) -> str:
    """Every text block of the Anthropic request body, joined."""
    body = render_anthropic(ctx)
    out: list[str] = []
    for m in body["messages"]:
        content = m["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out.extend(b["text"] for b in content if b.get("type") == "text")
    return "\n".join(out)


def run_until_compacted(s: Session, *, label: str = "t") -> Context:
    """Chat one turn at a time, preparing after each, until a compaction happens; the
    request prepared then."""
    before = len(compactions(s))
    for i in range(100):
        chat(s, 1, label=f"{label}{i}-")
        ctx = s.prepare()
        if len(compactions(s)) > before:
            return ctx
    raise AssertionError("no compaction")


class TestTodoList:
    """43 items, 10 done: the 33 open ones come back, whole and in order, with their
    status."""

    STEPS: ClassVar[list[str]] = [
        f"Step {k:02d}: port module {k} of the parser and its tests" for k in range(43)
    ]

    def status(self, k: int, tool: str) -> str:
        if k < 10:
            return "cancelled" if tool == "write_todos" and k % 5 == 0 else "completed"
        return "in_progress" if k == 10 else "pending"

    def arguments(self, tool: str) -> dict[str, Any]:
        if tool == "update_plan":  # Codex
            plan = [{"step": t, "status": self.status(k, tool)} for k, t in enumerate(self.STEPS)]
            return {"explanation": "Port the parser", "plan": plan}
        key = "description" if tool == "write_todos" else "content"  # Gemini CLI / Claude Code
        todos = [{key: t, "status": self.status(k, tool)} for k, t in enumerate(self.STEPS)]
        if tool == "TodoWrite":
            for item in todos:
                item["activeForm"] = "Porting"
        return {"todos": todos}

    @pytest.mark.parametrize("tool", ["TodoWrite", "update_plan", "write_todos"])
    def test_the_open_items_are_in_the_first_request_after_compaction(self, tool: str) -> None:
        s = Session(WINDOW, estimator=EST)
        s.append(Message("system", (TextPart(filler("system", 16)),)))
        s.append(user("Port the parser to the new AST, module by module."))
        s.append(calling("todo1", tool, **self.arguments(tool)))
        s.append(result("todo1", "Todos have been modified successfully."))
        ctx = run_until_compacted(s)
        (record,) = compactions(s)
        assert record.first_kept_id is not None
        assert "todo1" not in {c.id for m in ctx.messages for c in m.tool_calls}
        expected = (
            f"The todo list (from the latest {tool} call before the compaction): 33 of 43 "
            f"items open; 10 done, not listed. Keep it up to date with {tool}:\n"
            f"- [in_progress] {self.STEPS[10]}\n"
            + "\n".join(f"- [pending] {t}" for t in self.STEPS[11:])
        )
        assert len(expected) > 2_000  # whole: a model summarizer's 2,000-character cut
        assert texts(ctx).count(expected) == 1
        assert record.reinjected == (expected,)
        sent = body_text(ctx)
        assert [t for t in self.STEPS if t in sent] == self.STEPS[10:]

    def test_a_newer_list_in_the_kept_tail_is_not_repeated_and_a_finished_one_is_dropped(
        self,
    ) -> None:
        s = Session(WINDOW, estimator=EST)
        s.append(user("Port the parser."))
        s.append(calling("todo1", "TodoWrite", **self.arguments("TodoWrite")))
        s.append(result("todo1", "ok"))
        chat(s, 14)
        done = {"todos": [{"content": t, "status": "completed"} for t in self.STEPS]}
        s.append(calling("todo2", "TodoWrite", **done))  # every item done
        s.append(result("todo2", "ok"))
        ctx = run_until_compacted(s)
        (record,) = compactions(s)
        assert record.reinjected is None
        assert not any(t.startswith("The todo list") for t in texts(ctx))


class TestBackgroundTasks:
    def history(self, s: Session) -> None:
        s.append(user("Start the dev server, run the tests and survey the data."))
        s.append(calling("c1", "Bash", command="npm run dev", run_in_background=True))
        s.append(
            result(
                "c1",
                "Command running in background with ID: bash_1. Output is being written "
                "to: /tmp/tasks/bash_1.output",
            )
        )
        s.append(calling("c2", "Bash", command="pytest -x", run_in_background=True))
        s.append(result("c2", "Command running in background with ID: b7b23b2."))
        s.append(calling("c3", "Bash", command="tail -f app.log", run_in_background=True))
        s.append(result("c3", "Command running in background with ID: c9d8e7f."))
        s.append(
            user(
                "<task-notification>\n<task-id>b7b23b2</task-id>\n<status>completed</status>\n"
                '<summary>Background command "pytest -x" completed (exit code 0)</summary>\n'
                "</task-notification>"
            )
        )
        s.append(calling("c4", "KillShell", shell_id="c9d8e7f"))
        s.append(result("c4", "Successfully killed shell: c9d8e7f (tail -f app.log)"))
        s.append(
            calling(
                "c5",
                "Agent",
                description="Survey the readings data",
                prompt="Count the readings per sensor.",
                subagent_type="general-purpose",
                run_in_background=True,
            )
        )
        s.append(
            result(
                "c5",
                "Async agent launched successfully.\nagentId: a73f6f8bdab2fbcaf (use it to "
                "read its output)",
            )
        )
        s.append(calling("c6", "Task", description="Explore the codebase", prompt="Explore."))
        s.append(result("c6", "The codebase has 3 modules.\nagentId: aa84377 (for resuming)"))
        s.append(calling("c7", "BashOutput", bash_id="bash_1"))
        s.append(result("c7", "<status>running</status>\n\n<stdout>ready on :3000</stdout>"))

    def test_running_shell_and_subagent_ids_are_in_the_first_request_after_compaction(
        self,
    ) -> None:
        s = Session(WINDOW, estimator=EST)
        self.history(s)
        ctx = run_until_compacted(s)
        (record,) = compactions(s)
        expected = (
            "Background tasks started before the compaction and not seen to finish; read "
            "their output or stop them by id:\n"
            "- shell bash_1 (Bash): npm run dev\n"
            "- subagent a73f6f8bdab2fbcaf (Agent): Survey the readings data"
        )
        assert record.reinjected == (expected,)
        assert texts(ctx).count(expected) == 1
        sent = body_text(ctx)
        assert "- shell bash_1 (Bash): npm run dev" in sent
        assert "- subagent a73f6f8bdab2fbcaf (Agent)" in sent
        # The finished shell, the killed one and the finished subagent are not listed.
        for gone in ("b7b23b2", "c9d8e7f", "aa84377"):
            assert gone not in expected

    def test_a_task_seen_to_finish_in_the_kept_tail_is_not_listed(self) -> None:
        s = Session(WINDOW, estimator=EST)
        self.history(s)
        chat(s, 7)
        s.append(calling("c8", "TaskOutput", task_id="a73f6f8bdab2fbcaf", block=True))
        s.append(result("c8", "<task_id>a73f6f8bdab2fbcaf</task_id>\n<status>completed</status>"))
        s.append(user(filler("go on", 1_600)))
        assert s.project().tokens >= TRIGGER
        ctx = s.prepare()
        (record,) = compactions(s)
        assert record.reinjected == (
            "Background tasks started before the compaction and not seen to finish; read "
            "their output or stop them by id:\n- shell bash_1 (Bash): npm run dev",
        )
        assert "c8" in {c.id for m in ctx.messages for c in m.tool_calls}  # in the tail


class TestRules:
    def test_a_rules_block_injected_once_survives_three_compactions_verbatim(self) -> None:
        s = Session(WINDOW, estimator=EST)
        s.append(Message("system", (TextPart(filler("system", 16)),)))
        s.append(user(RULES))
        s.append(user("Refactor the parser and commit each step."))
        requests = [run_until_compacted(s, label=f"e{n}") for n in range(3)]
        records = compactions(s)
        assert len(records) == 3
        for n, ctx in enumerate(requests):
            assert ctx.epoch == n + 1
            assert texts(ctx).count(RULES) == 1
            assert records[n].reinjected == (RULES,)
            assert body_text(ctx).count("Never add a co-author trailer to commit messages.") == 1

    def test_a_request_sent_in_the_same_message_as_the_rules_is_the_users_not_rules(
        self,
    ) -> None:
        # Claude Code's first prompt: one user message, the rules reminder in one text part
        # and the request in the next. The reminder part is rules (re-injected alone); the
        # request is the user's: the goal and the next step of the state, never system text.
        request = "Please refactor the billing module to use Decimal."
        s = Session(WINDOW, estimator=EST)
        s.append(Message("system", (TextPart(filler("system", 16)),)))
        s.append(Message("user", (TextPart(RULES), TextPart(request))))
        assert s.log.history.goal == request
        ctx = run_until_compacted(s)
        (record,) = compactions(s)
        assert record.reinjected == (RULES,)
        assert record.summary.startswith(f"## Goal\n{request}\n\n")
        assert "No user request in the history so far" not in record.summary
        assert [m.text for m in ctx.messages if m.meta.get("synthetic") == "reinjected"] == [RULES]
        # Sent with mid-conversation system messages: the request is in the state (a user
        # turn) once, in no system text.
        body = render_anthropic(ctx, system_messages=True)
        quoted = json.dumps(request)[1:-1]
        assert quoted not in json.dumps(body["system"])
        assert all(quoted not in json.dumps(m) for m in body["messages"] if m["role"] == "system")
        assert json.dumps(body).count(quoted) == 1
        assert quoted in json.dumps(body["messages"][0]) and body["messages"][0]["role"] == "user"

    def test_rules_the_harness_appends_again_are_shown_once(self) -> None:
        # A harness that re-appends its rules after every compaction: two copies in the
        # history, one in the request.
        s = Session(WINDOW, estimator=EST)
        s.append(user(RULES))
        s.append(user("Refactor the parser."))
        run_until_compacted(s, label="e0")
        s.append(user(RULES))
        # Within the epoch the copy is a one-line note after the re-injected rules.
        extended = s.prepare()  # the epoch's projection extended by the new entry
        shown = texts(extended)
        assert shown.count(RULES) == 1 and shown.index(RULES) < shown.index(REPEATED_NOTE)
        assert Session(WINDOW, estimator=EST, entries=s.entries).project() == extended
        ctx = run_until_compacted(s, label="e1")
        assert [e.message.text for e in s.entries if e.message is not None].count(RULES) == 2
        assert [c.reinjected for c in compactions(s)] == [(RULES,), (RULES,)]
        assert texts(ctx).count(RULES) == 1

    def test_rules_in_the_kept_tail_are_not_reinjected_beside_it(self) -> None:
        s = Session(WINDOW, estimator=EST)
        s.append(user(RULES))
        s.append(user("Refactor the parser."))
        chat(s, 7)
        s.append(user(RULES))  # the harness appends them again, just before the trigger
        s.append(user(filler("go on", 1_900)))
        assert s.project().tokens >= TRIGGER
        ctx = s.prepare()
        (record,) = compactions(s)
        assert record.reinjected is None
        kept = [m.text for m, src in zip(ctx.messages, ctx.sources, strict=True) if src]
        assert kept.count(RULES) == 1 and texts(ctx).count(RULES) == 1

    def test_rules_are_never_truncated_when_the_policy_reinjects_them(self) -> None:
        # Window 20,000: the truncate-at-source cap is 4,000 tokens. A 9,000-token rules
        # file stays whole (it is re-injected whole after a compaction, so it is shown whole
        # before one too); under a policy that does not re-inject rules it is cut like any
        # long message.
        long_rules = (
            "<system-reminder>\nContents of /repo/CLAUDE.md (project instructions):\n\n"
            + filler("Never add a co-author trailer", 9_000)
            + "\n</system-reminder>"
        )
        whole = Session(WINDOW, estimator=EST)
        cut = Session(WINDOW, estimator=EST, policy=Policy(reinject=("todos",)))
        for s in (whole, cut):
            s.append(user(long_rules))
            s.append(user("Refactor the parser."))
        assert texts(whole.project())[0] == long_rules and whole.project().truncations == ()
        (truncation,) = cut.project().truncations
        assert truncation.part == "user" and texts(cut.project())[0] != long_rules

    def test_a_directory_listing_naming_agents_md_is_not_a_rules_file(self) -> None:
        s = Session(WINDOW, estimator=EST)
        listing = "<system-reminder>\nFiles in the repository:\nAGENTS.md\nsrc/\n</system-reminder>"
        s.append(user(listing))
        s.append(user("Refactor the parser."))
        ctx = run_until_compacted(s)
        (record,) = compactions(s)
        assert record.reinjected is None
        assert listing not in texts(ctx)


class CountingSummarizer:
    """The extractive summarizer, counting its calls."""

    def __init__(self) -> None:
        self.inner = ExtractiveSummarizer(Policy().user_messages_budget_tokens)
        self.calls = 0

    @property
    def name(self) -> str:
        return "extractive"

    def summarize(self, request: SummaryRequest, estimator: Estimator) -> Summary:
        self.calls += 1
        return self.inner.summarize(request, estimator)


#: Tool schemas of about 3,000 tokens: one with a long description.
TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": "Bash",
        "description": filler("Run a shell command", 3_000),
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
)
#: A 30,000-token rules file (CLAUDE.md).
BIG_RULES = (
    "<system-reminder>\nContents of /repo/CLAUDE.md (project instructions, checked into the "
    "codebase):\n\n" + filler("Never add a co-author trailer", 30_000) + "\n</system-reminder>"
)


#: A 21,475-token CLAUDE.md in a <system-reminder> user message (Claude Code's shape).
LARGE_REMINDER = (
    "<system-reminder>\nContents of /home/u/proj/CLAUDE.md (project instructions, checked into "
    "the codebase):\n\n"
    + "\n".join(
        f"Rule {i}: always do thing {i} carefully in module_{i} with option --flag-{i}."
        for i in range(1100)
    )
    + "\n</system-reminder>"
)


class TestFloor:
    def test_a_floor_over_the_trigger_fails_once_before_any_summary(self) -> None:
        # Window 40,000: reserve 8,000, trigger 32,000. The rules (30,000 tokens) and the
        # tool schemas (~3,000) alone are over the trigger.
        summarizer = CountingSummarizer()
        s = Session(40_000, estimator=EST, tools=TOOLS, summarizer=summarizer)
        s.append(Message("system", (TextPart(filler("system", 16)),)))
        s.append(user(BIG_RULES))
        s.append(user("Refactor the parser."))
        s.append(assistant(filler("reply", 96)))
        s.append(user(filler("next", 96)))
        assert s.budget.trigger == 32_000
        with pytest.raises(ContextFloorError) as info:
            s.prepare()
        error = info.value
        rules_tokens = EST.message(user(BIG_RULES))
        tools_tokens = EST.tools(TOOLS)
        overhead = s.compactor.continuation_overhead
        assert rules_tokens == 4 + len(BIG_RULES) // 4 + 1 == 30_033
        assert tools_tokens == 3_029
        # The smallest state: "## Goal" and the request, a next step of 300 characters and
        # the closing note naming entries 5–5: 416 characters, 104 tokens.
        state = minimum_state_tokens("Refactor the parser.", EST, (5, 5))
        assert state == 104
        # The margin: 1 % of the window.
        # The newest user message ("next", 100 tokens) awaits its answer: kept whole.
        assert error.parts == (
            ("re-injected rules /repo/CLAUDE.md", rules_tokens),
            ("tool schemas", tools_tokens),
            ("margin", 400),
            ("continuation state", state),
            ("newest user message", 100),
            ("continuation message", overhead),
            ("system prompt", 20),
        )
        assert error.floor == rules_tokens + tools_tokens + 400 + state + 100 + overhead + 20
        assert (error.trigger, error.window, error.free) == (32_000, 40_000, 1_760)
        assert str(error) == (
            "no compaction can bring the context under the trigger of 32,000 tokens with "
            f"1,760 tokens to spare (window 40,000): what every compaction keeps is "
            f"{error.floor:,} tokens already (largest parts: re-injected rules "
            "/repo/CLAUDE.md 30,033, tool schemas 3,029, margin 400); shorten these (rules "
            "files, tool schemas, system prompt), re-inject less, or use a model with a "
            "larger window"
        )
        # One attempt, refused before the summarizer ran; nothing appended, no failure
        # counted towards the loop breaker.
        assert [e.step for e in s.events] == ["failure"]
        assert s.events[0].plan is not None and s.events[0].plan.floor == error.parts
        assert summarizer.calls == 0 and compactions(s) == [] and s.failures == 0

    @staticmethod
    def steps_with_a_large_reminder(window: int, calls: int) -> tuple[Session, list[str]]:
        """A 21,475-token CLAUDE.md sent as a ``<system-reminder>`` user message, then one
        Read of 396 tokens (call and result) per model call; the errors of each prepare."""
        s = Session(window, estimator=EST)
        s.append(Message("system", (TextPart("sys"),)))
        s.append(user(LARGE_REMINDER))
        s.append(user("Do the task."))
        errors: list[str] = []
        for i in range(calls):
            try:
                s.prepare()
            except CompactionError as exc:
                errors.append(type(exc).__name__)
            step = (TextPart(f"step {i}"), call(f"c{i}", "Read", file_path=f"/p/m{i}.py"))
            s.record(Message("assistant", step))
            s.append(result(f"c{i}", "def f(x):\n    return x*2\n" * 60))
        return s, errors

    def test_a_floor_just_under_the_trigger_fails_once_per_call_never_a_loop(self) -> None:
        # Window 29,000: trigger 23,200, headroom 12,760, 1,276 of it (10 %) kept free: the
        # floor may take 21,924. It takes 21,925: the rules, the 1 % margin, the smallest
        # state ("Do the task." and a 300-character next step: 103), the continuation
        # message and the system prompt. Every prepare over the trigger raises one
        # ContextFloorError before any summary, never a failed compaction nor a loop.
        s, errors = self.steps_with_a_large_reminder(29_000, 30)
        assert errors == ["ContextFloorError"] * 25
        assert {e.step for e in s.events} == {"failure"} and compactions(s) == []
        first = s.events[0]
        assert first.plan is not None
        overhead = s.compactor.continuation_overhead
        assert first.plan.floor == (
            ("re-injected rules /home/u/proj/CLAUDE.md", 21_475),
            ("margin", 290),
            ("continuation state", 103),
            ("continuation message", overhead),
            ("system prompt", 5),
        )
        assert overhead == 52
        assert (first.plan.floor_tokens, first.plan.floor_limit) == (21_925, 21_924)
        assert first.detail == (
            "no compaction can bring the context under the trigger of 23,200 tokens with 1,276 "
            "tokens to spare (window 29,000): what every compaction keeps is 21,925 tokens "
            "already (largest parts: re-injected rules /home/u/proj/CLAUDE.md 21,475, margin "
            "290, continuation state 103); shorten these (rules files, tool schemas, system "
            "prompt), re-inject less, or use a model with a larger window"
        )

    def test_a_window_just_above_the_floor_compacts_every_few_calls(self) -> None:
        # Window 29,020: the floor may take 21,940 ≥ 21,925. Each compaction lands about
        # 1,250 tokens under the 23,216 trigger: 4 calls of 396 tokens before the next.
        s, errors = self.steps_with_a_large_reminder(29_020, 30)
        assert errors == []
        events = [e for e in s.events if e.step == "compaction"]
        assert [e.at_entry for e in events] == [14, 23, 32, 41, 50, 59, 68]
        # Refilled within 4 calls each time: reported (not stopped: extractive summaries)
        # after every third compaction, naming the re-injected reminder first.
        refills = [e for e in s.events if e.step == "refill"]
        assert [e.at_entry for e in refills] == [40, 67]
        assert "Top contributors: re-injected rules /home/u/proj/CLAUDE.md: 21,475 tokens;" in (
            refills[0].detail
        )
        assert len(s.events) == 9
        assert [e.tokens_after for e in events[:3]] == [21_977, 21_981, 21_981]
        assert max(e.tokens_after for e in events) < s.budget.trigger == 23_216
        assert all(r.reinjected == (LARGE_REMINDER,) for r in compactions(s))

    def test_under_the_trigger_the_compacted_size_counts_the_reinjected_rules(self) -> None:
        # Window 48,000: reserve 9,600, trigger 38,400: the floor (about 33,200) fits, and
        # the compaction plans its summary and tail around the 30,033-token rules.
        summarizer = CountingSummarizer()
        s = Session(48_000, estimator=EST, tools=TOOLS, summarizer=summarizer)
        s.append(Message("system", (TextPart(filler("system", 16)),)))
        s.append(user(BIG_RULES))
        s.append(user("Refactor the parser."))
        assert s.budget.trigger == 38_400
        ctx = run_until_compacted(s)
        (record,) = compactions(s)
        assert record.reinjected == (BIG_RULES,) and summarizer.calls == 1
        plan = s.events[-1].plan
        assert plan is not None and plan.first is not None
        assert plan.first.reinjected_tokens == 30_033
        assert plan.expected_tokens >= plan.fixed_tokens + 30_033 + plan.first.summary_tokens
        assert plan.expected_tokens < s.budget.trigger
        assert record.tokens_after == ctx.tokens < s.budget.trigger
        assert texts(ctx).count(BIG_RULES) == 1

    def test_pinned_items_are_named_apart_in_the_floor(self) -> None:
        s = Session(WINDOW, estimator=EST)
        s.append(Message("system", (TextPart(filler("system", 16)),)))
        s.append(user("Refactor the parser."))
        chat(s, 3)
        s.pin("Keep the public API stable.", "the user said so")
        plan = s.plan()
        assert plan is not None
        pinned = s.log.pins_overhead()
        assert pinned > 0
        assert dict(plan.floor) == {
            "system prompt": 20,
            "continuation message": s.compactor.continuation_overhead,
            "pinned items": pinned,
            "continuation state": minimum_state_tokens(
                "Refactor the parser.", EST, (len(s.log.history), len(s.log.history))
            ),
            "margin": WINDOW // 100,
        }


class TestManualFloor:
    """A manual compaction runs whatever the floor; when the floor leaves its summary no
    room, it fails the way the automatic check does: naming the floor's largest parts."""

    @staticmethod
    def session() -> Session:
        s = Session(16_000, estimator=EST)
        s.append(user("Migrate every module."))
        todos = [
            {"content": f"Migrate module m{i:03d}.py " + "x" * 60, "status": "pending"}
            for i in range(600)
        ]
        s.record(calling("t1", "TodoWrite", todos=todos))
        s.append(result("t1", "Todos have been modified successfully."))
        for i in range(6):
            s.record(calling(f"r{i}", "Read", file_path=f"/p/m{i}.py"))
            s.append(result(f"r{i}", filler("code", 40)))
        return s

    def test_a_todo_list_over_the_window_is_named(self) -> None:
        s = self.session()
        before = s.entries
        with pytest.raises(ContextFloorError) as info:
            s.compact()
        error = info.value
        # 600 open items of 95 characters and the list's heading: 14,436 tokens
        assert error.parts == (
            ("re-injected todo list", 14_436),
            ("margin", 160),
            ("continuation state", 105),
            ("continuation message", 52),
        )
        assert (error.floor, error.free, error.trigger) == (14_753, 704, 12_800)
        assert str(error) == (
            "no compaction can bring the context under the trigger of 12,800 tokens with 704 "
            "tokens to spare (window 16,000): what every compaction keeps is 14,753 tokens "
            "already (largest parts: re-injected todo list 14,436, margin 160, continuation "
            "state 105); shorten these (rules files, tool schemas, system prompt), re-inject "
            "less, or use a model with a larger window"
        )
        # raised from the summarizer's refusal; nothing appended
        assert type(error.__cause__).__name__ == "SummaryRejected"
        assert s.entries == before
        assert [e.step for e in s.events] == ["failure"]
        assert s.events[0].detail == str(error)


REMINDER = (
    "<system-reminder>\nAs you answer the user's questions, you can use the following "
    "context:\n# currentDate\nToday's date is 2026-12-01.\n</system-reminder>\n\n"
)
AGENT_TYPES = "Available agent types for the Agent tool:\n- Explore: read-only search agent"
ENVIRONMENT = "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"


class TestOpening:
    def test_the_opening_texts_are_the_harness_parts_before_the_first_reply(self) -> None:
        messages = [
            Message("system", (TextPart("You are an agent."),)),
            Message("user", (TextPart(REMINDER), TextPart("Fix the parser."))),
            Message("system", (TextPart(AGENT_TYPES),)),
            Message("user", (TextPart(ENVIRONMENT),)),
            Message("assistant", (TextPart("On it."),)),
            Message("system", (TextPart("later system note"),)),
            Message("user", (TextPart("<system-reminder>later</system-reminder>"),)),
        ]
        # The head (leading system message) is kept by every projection; the person's own
        # text is the goal; after the first reply nothing belongs to the opening.
        assert opening_items(messages) == [REMINDER, AGENT_TYPES, ENVIRONMENT]
        kept = [Message("system", (TextPart(AGENT_TYPES),))]
        assert opening_items(messages, kept) == [REMINDER, ENVIRONMENT]

    def test_a_compaction_re_injects_the_opening_verbatim_and_counts_it_required(self) -> None:
        policy = Policy(reinject=("opening",))
        s = Session(8_000, policy=policy, estimator=EST)
        s.append(Message("system", (TextPart("You are an agent."),)))
        s.append(Message("user", (TextPart(REMINDER), TextPart("Fix the parser."))))
        s.append(Message("system", (TextPart(AGENT_TYPES),)))
        for i in range(30):
            s.append(Message("assistant", (call(f"c{i}", "read", path=f"f{i}.py"),)))
            s.append(result(f"c{i}", filler(f"out{i}", 300)))
        ctx = s.prepare()
        assert ctx.epoch == 1
        (record,) = compactions(s)
        assert record.reinjected == (REMINDER, AGENT_TYPES)
        texts = [m.text for m in ctx.messages]
        at = texts.index(REMINDER)
        assert texts[at + 1] == AGENT_TYPES and texts[at - 1].startswith("The earlier part")
        items = s.compactor.durable(record.first_kept_id)
        assert [(i.kind, i.required) for i in items] == [("opening", True), ("opening", True)]
