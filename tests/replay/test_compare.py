"""Policies side by side: exact accounting on small constructed sessions."""

from __future__ import annotations

import gc

import pytest

from ctxengine.cost import CacheRules, ModelPrice, PriceTable, shipped_price_table
from ctxengine.model import Entry, Message, ToolCallPart, assistant, system, tool_result, user
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.policy.presets import preset
from ctxengine.projection.context import Context
from ctxengine.replay import CacheSetup, replay
from ctxengine.replay.compare import Comparison, compare, recorded_model
from ctxengine.replay.survival import SessionFacts, session_facts, survival
from ctxengine.summarizers.prompts import SYSTEM_PROMPT, TEMPLATE, VERIFY
from hand_estimator import HandEstimator

RULES = CacheRules(
    provider="toy",
    mode="automatic",
    min_prefix_tokens=1,
    granularity_tokens=1,
    max_breakpoints=0,
    lookback_blocks=0,
    ttl_s=300,
    long_ttl_s=3600,
)
TOY = ModelPrice("toy-1", "toy", input=1.0, cached_input=0.1, cache_write=1.0,
                 cache_write_long=2.0, output=2.0)  # fmt: skip
TABLE = PriceTable({"toy": RULES}, {"toy-1": TOY}, {"toy": "toy-1"})


def log(messages: list[Message], *, step_s: int = 10) -> list[Entry]:
    return [
        Entry(f"e{i}", "s", i, m, created_at=f"2026-01-01T00:{i * step_s // 60:02d}:"
              f"{i * step_s % 60:02d}Z")
        for i, m in enumerate(messages)
    ]  # fmt: skip


def test_two_calls_read_the_first_request_and_price_every_token() -> None:
    # Rendered (OpenAI) and sized with the hand estimator: 4 per message plus len // 4 + 1
    # per text; no tools. Call 1 sends system (15) + user (25) = 40; call 2 adds the first
    # reply (35) and a user message (15): 90, reading the 40 of call 1.
    entries = log(
        [system("x" * 40), user("y" * 80), assistant("z" * 120), user("w" * 40),
         assistant("v" * 200)]
    )  # fmt: skip
    c = compare(
        entries,
        [("default", DEFAULT_POLICY)],
        window=100_000,
        prices=TABLE,
        model="toy-1",
        estimator=HandEstimator(),
    )
    run = c.runs[0]
    assert [(s.cache.prompt, s.cache.read, s.cache.write) for s in run.steps if s.cache] == [
        (40, 0, 40),
        (90, 40, 50),
    ]
    assert (run.billed_input, run.cache_read, run.cache_write, run.uncached) == (130, 40, 90, 0)
    assert run.output_tokens == 35 + 55
    assert run.cost == pytest.approx((40 * 0.1 + 90 * 1.0 + 90 * 2.0) / 1e6)
    assert (run.peak_context, run.mean_context, run.breaks, run.overflow_call) == (
        run.steps[1].tokens,
        (run.steps[0].tokens + run.steps[1].tokens) // 2,
        {},
        None,
    )
    assert c.to_dict()["policies"][0]["input_tokens"] == {
        "billed": 130,
        "uncached": 0,
        "cache_read": 40,
        "cache_write": 90,
    }
    assert c.notes == ["prices of toy-1 (, checked )"]
    assert (c.tokenizer, c.to_dict()["tokenizer"]) == ("HandEstimator", "HandEstimator")


def test_a_pause_past_the_lifetime_is_an_expired_break() -> None:
    entries = log(
        [system("x" * 40), user("y" * 80), assistant("z" * 120), user("w" * 40),
         assistant("v" * 200)],
        step_s=200,
    )  # fmt: skip
    result = replay(entries, window=100_000, estimator=HandEstimator(), cache=CacheSetup(RULES))
    second = result.steps[1]
    assert second.cache is not None
    assert (second.cache.read, second.cache.expected, second.cause) == (0, 40, "expired")


def _long_session(rounds: int) -> list[Message]:
    out: list[Message] = [system("You are terse."), user("Fix the parser in src/p.py")]
    for i in range(rounds):
        out.append(assistant("", ToolCallPart(f"c{i}", "Read", '{"path": "src/p.py"}')))
        out.append(tool_result(f"c{i}", f"line {i} " * 60))
    out.append(assistant("done"))
    return out


def test_a_compaction_is_a_cache_break_and_a_model_summarizer_is_estimated() -> None:
    entries = log(_long_session(90), step_s=1)
    policies = [("default", DEFAULT_POLICY), ("llm", Policy(name="llm", summarizer="llm"))]
    hand = HandEstimator()
    c = compare(entries, policies, window=4_000, prices=TABLE, model="toy-1", estimator=hand)
    default, llm = c.runs
    assert default.result.compactions >= 2
    causes = [s.cause for s in default.steps if s.cause is not None]
    assert causes.count("compaction") == default.result.compactions
    assert default.breaks["compaction"] == default.result.compactions
    assert (default.summary.calls, default.summary.stand_in, default.summary_cost) == (0, False, 0)
    # The stand-in writes the same states: the same requests, and one model call per
    # compaction, estimated from the context before and after and the state written.
    assert [s.tokens for s in llm.steps] == [s.tokens for s in default.steps]
    assert llm.summary.calls == llm.result.compactions
    session = llm.result.session
    assert session is not None
    written = {e.id: hand.text(e.body.summary) for e in session.entries if e.kind == "compaction"}  # type: ignore[union-attr]
    prompt = hand.text(SYSTEM_PROMPT) + hand.text(TEMPLATE)
    events = [e for s in llm.steps for e in s.events if e.step == "compaction"]
    assert llm.summary.input_tokens == sum(
        e.tokens_before - e.tokens_after + written[e.entry_id or ""] + prompt for e in events
    )
    assert llm.summary.output_tokens == sum(written.values())
    assert llm.summary_cost == pytest.approx(
        (llm.summary.input_tokens * 1.0 + llm.summary.output_tokens * 2.0) / 1e6
    )
    assert c.notes[-1] == (
        f"llm: the llm summarizer needs a model; offline the extractive one wrote its "
        f"{llm.summary.calls} continuation states and the model calls are estimated"
    )


def test_policies_replayed_in_worker_processes_give_the_same_comparison() -> None:
    entries = log(_long_session(90), step_s=1)
    policies = [
        ("default", DEFAULT_POLICY),
        ("llm", Policy(name="llm", summarizer="llm")),
        ("pi", preset("pi")),
    ]
    told: list[tuple[str, int]] = []
    one = compare(entries, policies, window=4_000, prices=TABLE, model="toy-1")
    two = compare(
        entries,
        policies,
        window=4_000,
        prices=TABLE,
        model="toy-1",
        jobs=2,
        on_step=lambda name, step: told.append((name, step.call)),
    )

    def timeless(c: Comparison) -> dict[str, object]:
        doc = c.to_dict(steps=True)
        for run in doc["policies"]:  # type: ignore[attr-defined]
            run.pop("seconds")
        return doc

    assert timeless(two) == timeless(one)
    assert (
        [r.trigger for r in two.runs]
        == [r.trigger for r in one.runs]
        == [
            r.result.session.budget.trigger  # type: ignore[union-attr]
            for r in one.runs
        ]
    )
    # A worker's session stays behind; every call is still told of, per policy in order.
    assert [r.result.session for r in two.runs] == [None, None, None]
    assert sorted(told) == sorted((r.name, s.call) for r in one.runs for s in r.steps)
    for name, _ in policies:
        calls = [c for n, c in told if n == name]
        assert calls == list(range(1, len(calls) + 1))


def test_the_recorded_model_prices_the_replay_and_an_unknown_one_says_so() -> None:
    messages = [user("hi"), assistant("a"), user("b"), assistant("c")]
    messages[1] = Message("assistant", messages[1].parts, model="claude-sonnet-4-5-20250929")
    assert recorded_model(log(messages)) == "claude-sonnet-4-5-20250929"
    c = compare(log(messages), [("default", DEFAULT_POLICY)], window=100_000,
                prices=shipped_price_table())  # fmt: skip
    assert (c.price.price.name, c.price.rules.provider) == ("claude-sonnet-4-5", "anthropic")
    c = compare(log(messages), [("default", DEFAULT_POLICY)], window=100_000,
                prices=shipped_price_table(), model="mystery")  # fmt: skip
    assert c.notes[0] == "no prices for 'mystery': prices of gpt-5 used"


def test_survival_counts_the_facts_the_final_context_holds() -> None:
    facts = SessionFacts(
        first_request="Fix   the parser\nin src/p.py please",
        constraints=("never use tabs", "run ruff before committing"),
        modified_files=("src/p.py", "tests/test_p.py"),
        last_error="ValueError: bad token",
    )
    final = Context(
        messages=(
            user("Fix the parser in src/p.py please"),
            assistant("", ToolCallPart("c1", "Edit", '{"path": "src/p.py"}')),
            tool_result("c1", "ok; never use tabs"),
        ),
        sources=(None, None, None),
    )
    kept = survival(facts, final)
    assert kept.to_dict() == {
        "first_request": True,
        "constraints": [1, 2],
        "modified_files": [1, 2],
        "last_error": False,
    }
    assert survival(facts, None).first_request is False
    empty = SessionFacts(None, (), (), None)
    assert survival(empty, final).to_dict() == {
        "first_request": None,
        "constraints": [0, 0],
        "modified_files": [0, 0],
        "last_error": None,
    }


def test_session_facts_are_those_the_last_call_could_see() -> None:
    entries = log(
        [
            system("You are a coding agent."),
            user("continue"),
            user("Add retries to the fetcher in /w/src/fetch.py; never use sleep()."),
            assistant("", ToolCallPart("c1", "Edit", '{"file_path": "/w/src/fetch.py"}')),
            tool_result("c1", "The file /w/src/fetch.py has been updated."),
            assistant("Done."),
            user("run it"),
            assistant("", ToolCallPart("c2", "Bash", '{"command": "python x.py"}')),
            tool_result("c2", "Traceback (most recent call last):\nKeyError: 'k'", is_error=True),
        ]
    )
    facts = session_facts(entries)
    # The acknowledgement is no first request; the error comes after the last call.
    assert facts.first_request == (
        "Add retries to the fetcher in /w/src/fetch.py; never use sleep()."
    )
    assert (facts.modified_files, facts.last_error) == (("/w/src/fetch.py",), None)
    # A modified file counts as kept by its path relative to the working directory too.
    with_cwd = SessionFacts(None, (), ("/w/src/fetch.py", "/w/src/other.py"), None, cwd="/w")
    final = Context(messages=(user("*** Update File: src/fetch.py"),), sources=(None,))
    assert survival(with_cwd, final).modified_files == (1, 2)


def test_a_verifying_policy_makes_two_summary_calls_per_compaction() -> None:
    entries = log(_long_session(90), step_s=1)
    llm = Policy(name="llm", summarizer="llm")
    checked = llm.model_copy(update={"name": "checked", "summary_verify": True})
    hand = HandEstimator()
    c = compare(
        entries, [("llm", llm), ("checked", checked)], window=4_000, prices=TABLE,
        model="toy-1", estimator=hand,
    )  # fmt: skip
    once, twice = c.runs
    assert once.result.compactions >= 2
    assert twice.summary.calls == 2 * once.summary.calls == 2 * once.result.compactions
    session = once.result.session
    assert session is not None
    written = sum(hand.text(e.body.summary) for e in session.entries if e.kind == "compaction")  # type: ignore[union-attr]
    extra = once.summary.input_tokens + written + once.result.compactions * hand.text(VERIFY)
    assert twice.summary.input_tokens == once.summary.input_tokens + extra
    assert twice.summary.output_tokens == 2 * once.summary.output_tokens == 2 * written
    # The note counts the states written, one per compaction, not the calls.
    states = twice.result.compactions
    assert c.notes[-1] == (
        f"checked: the llm summarizer needs a model; offline the extractive one wrote its "
        f"{states} continuation states and the model calls are estimated"
    )


def test_a_policy_that_never_compacts_has_no_summarizer_and_no_trigger() -> None:
    entries = log(_long_session(20), step_s=1)
    c = compare(entries, [("none", preset("none"))], window=4_000, prices=TABLE, model="toy-1")
    (run,) = c.runs
    assert (run.summary.name, run.summary.calls, run.trigger) == ("none", 0, None)


def test_the_collector_thresholds_are_restored_after_a_comparison() -> None:
    before = gc.get_threshold()
    compare(log(_long_session(20), step_s=1), [("default", DEFAULT_POLICY)], window=4_000,
            prices=TABLE, model="toy-1")  # fmt: skip
    assert gc.get_threshold() == before


def test_the_report_counts_the_prefix_changing_steps_on_a_cold_cache() -> None:
    from corpus import CORPUS, require_corpus
    from ctxengine.importers import read_transcript

    require_corpus()
    # The transcript's agent sat idle 679 s and 4,144 s before two of its 104 calls.
    entries = read_transcript(CORPUS / "openhands/openhands-multi-swe-bench-ponyc-3runs.jsonl")
    aware = DEFAULT_POLICY.model_copy(
        update={
            "prune_when": "always",
            "prune_cache_cold_only": True,
            "idle_compact_seconds": 300.0,
        }
    )
    result = compare(
        entries.entries,
        [("default", DEFAULT_POLICY), ("cache-aware", aware)],
        # as in tests/engine/test_cache_timing.py: at 16,000 the context at call 24 is under
        # the idle floor and no idle compaction runs
        window=15_800,
        prices=TABLE,
        model="toy-1",
    )
    report = result.to_dict(steps=True)
    assert report["cache"]["ttl_s"] == 300
    assert [p["prefix_changes"] for p in report["policies"]] == [
        {"steps": 6, "on_cold_cache": 0},
        {"steps": 6, "on_cold_cache": 2},
    ]
    idle = [s["idle_s"] for s in report["policies"][1]["steps"] if s["call"] in (24, 57)]
    assert [round(x) for x in idle] == [679, 4_144]
