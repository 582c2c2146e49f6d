"""The seeded session generator: determinism, planted positions, ground truth, protocol."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ctxengine.bench.drive import replay_to_end
from ctxengine.bench.generator import INJECTION, TEMPLATES, generate, verify
from ctxengine.bench.generator.worlds import PY, TS
from ctxengine.bench.text import has_token, is_acknowledgement, message_texts
from ctxengine.model import Message, TextPart
from ctxengine.policy import DEFAULT_POLICY
from ctxengine.tokens import HeuristicEstimator

#: Every planted fact, in planting order.
FACT_IDS = [
    "rule-1",
    "rule-old",
    "rule-2",
    "rule-i18n",
    "ticket",
    "rule-cjk",
    "edit-1",
    "decision-user",
    "error-1",
    "sed",
    "port",
    "release",
    "edit-2",
    "sha",
    "write",
    "symbol",
    "script",
    "rule-new",
    "failed-write",
    "decision-agent",
    "format",
    "error-2",
    "patch",
    "failed-push",
    "next-step",
]
#: (seed, template) giving each dialect (read from the generator's own choice).
DIALECT_SEEDS = {"mini": (0, "debug"), "claude": (0, "feature"), "generic": (1, "refactor")}


def _text(message: Message) -> str:
    return "\n".join(message_texts(message))


def test_the_same_seed_gives_the_same_session_byte_for_byte() -> None:
    a = generate(7, template="ci_fix", tokens=20_000)
    b = generate(7, template="ci_fix", tokens=20_000)
    assert a.messages == b.messages
    assert a.facts == b.facts
    assert (a.modified, a.not_modified, a.injection, a.meta) == (
        b.modified,
        b.not_modified,
        b.injection,
        b.meta,
    )
    assert [_text(m) for m in a.messages] == [_text(m) for m in b.messages]
    c = generate(8, template="ci_fix", tokens=20_000)
    assert [_text(m) for m in c.messages] != [_text(m) for m in a.messages]


def test_every_fact_is_planted_in_its_message_in_a_fixed_order() -> None:
    s = generate(0, template="debug", tokens=20_000)
    assert [f.id for f in s.facts] == FACT_IDS
    positions = [f.message for f in s.facts]
    assert positions == sorted(positions)
    for f in s.facts:
        text = _text(s.messages[f.message])
        if f.kind in ("identifier", "identifier_cjk"):
            assert has_token(text, f.surface), f.id
        elif f.kind == "file_modified":
            assert f.surface in text, f.id
        else:
            assert f.surface in text, f.id


def test_facts_come_from_the_role_their_variant_names() -> None:
    s = generate(2, template="refactor", tokens=20_000)
    roles = {f.id: s.messages[f.message].role for f in s.facts}
    assert roles["ticket"] == roles["port"] == roles["release"] == "user"
    assert roles["sha"] == roles["error-1"] == roles["error-2"] == "tool"
    assert roles["symbol"] == roles["decision-agent"] == "assistant"
    assert roles["rule-1"] == roles["rule-cjk"] == roles["next-step"] == "user"
    assert roles["edit-1"] == roles["write"] == roles["sed"] == "assistant"
    assert roles["script"] == roles["format"] == roles["patch"] == "tool"
    assert roles["failed-write"] == roles["failed-push"] == "tool"


def test_verify_rejects_a_fact_found_in_a_second_message() -> None:
    s = generate(0, template="debug", tokens=20_000)
    ticket = s.fact("ticket")
    echo = Message("assistant", (TextPart(f"Branch name will use {ticket.surface}."),))
    broken = dataclasses.replace(s, messages=(*s.messages[:-1], echo, s.messages[-1]))
    with pytest.raises(AssertionError, match=f"ticket also in message {len(s.messages) - 1}"):
        verify(broken)


def test_verify_rejects_a_fact_missing_from_its_message() -> None:
    s = generate(0, template="debug", tokens=20_000)
    moved = tuple(
        dataclasses.replace(f, message=f.message + 1) if f.id == "port" else f for f in s.facts
    )
    with pytest.raises(AssertionError, match="port not in message"):
        verify(dataclasses.replace(s, facts=moved))


@pytest.mark.parametrize("seed,template", [(0, "debug"), (0, "feature"), (1, "refactor")])
def test_modified_files_include_indirect_edits_and_exclude_scratch_files(
    seed: int, template: str
) -> None:
    s = generate(seed, template=template, tokens=20_000)
    w = PY if s.meta["world"] == PY.name else TS
    assert s.modified == {
        *w.edit_files,
        w.new_file[0],
        w.sed_edit[0],
        w.script_edit[0],
        w.format_edit,
        w.patch_edit[0],
    }
    assert s.not_modified == {
        w.backup[1],
        w.script_edit[1],
        w.patch_edit[1],
        "/tmp/test-run.log",
        w.failed_edit,
        w.failed_write,
    }
    assert s.modified.isdisjoint(s.not_modified)
    assert w.near_miss not in s.modified
    files = {f.surface: f for f in s.facts if f.kind == "file_modified"}
    assert set(files) == s.modified
    indirect = {p for p, f in files.items() if f.variant == "indirect"}
    assert indirect == {w.script_edit[0], w.format_edit, w.patch_edit[0]}
    for path in indirect:
        f = files[path]
        result = s.messages[f.message]
        call = s.messages[f.message - 1]
        assert result.role == "tool" and result.tool_results[0].call_id == f.call_id
        assert path in _text(result)
        assert path not in "\n".join(c.arguments for c in call.tool_calls)  # named only by output


def test_the_session_ends_with_acknowledgements_after_the_latest_next_step() -> None:
    s = generate(3, template="ci_fix", tokens=20_000)
    last = s.messages[-1]
    assert last.role == "user" and is_acknowledgement(last.text)
    step = s.fact("next-step").message
    later = [m for m in s.messages[step + 1 :] if m.role == "user"]
    assert len(later) == 3
    assert all(is_acknowledgement(m.text) for m in later)
    earlier = s.earlier_next_steps[0]
    assert earlier.message < step and s.messages[earlier.message].role == "user"


def test_odd_seeds_carry_the_adversarial_output_and_only_there() -> None:
    injected = generate(1, template="feature", tokens=20_000)
    assert injected.injection is not None
    assert injected.injection_text == INJECTION
    holder = injected.messages[injected.injection]
    assert holder.role == "tool" and INJECTION in _text(holder)
    assert {f.variant for f in injected.facts if f.id in ("rule-1", "rule-2", "rule-cjk")} == {
        "adversarial"
    }
    assert injected.injection > max(f.message for f in injected.facts if f.variant == "adversarial")
    clean = generate(2, template="feature", tokens=20_000)
    assert clean.injection is None
    assert all(INJECTION not in _text(m) for m in clean.messages)


def test_distractors_are_planted_in_other_messages() -> None:
    s = generate(5, template="debug", tokens=20_000)
    for f in s.facts:
        for d in f.distractors:
            holders = [i for i, m in enumerate(s.messages) if d in _text(m)]
            assert holders and f.message not in holders, (f.id, d)


def test_size_reaches_the_target_without_overshooting_one_block() -> None:
    estimator = HeuristicEstimator()
    for tokens in (20_000, 60_000):
        s = generate(4, template="refactor", tokens=tokens)
        size = sum(estimator.message(m) for m in s.messages)
        assert tokens <= size < tokens + 10_000


def test_goals_and_unknown_templates() -> None:
    for template in TEMPLATES:
        s = generate(0, template=template, tokens=20_000)
        w = PY if s.meta["world"] == PY.name else TS
        assert s.messages[1].text == w.goals[template]
        assert s.messages[0].role == "system"
    with pytest.raises(ValueError, match="unknown template 'review'"):
        generate(0, template="review", tokens=20_000)


@pytest.mark.parametrize("dialect", sorted(DIALECT_SEEDS))
def test_every_dialect_gives_valid_requests(dialect: str) -> None:
    seed, template = DIALECT_SEEDS[dialect]
    s = generate(seed, template=template, tokens=20_000)
    assert s.meta["dialect"] == dialect
    replayed = replay_to_end(s.name, s.messages, 400_000, DEFAULT_POLICY)
    assert replayed.compactions == 0
    assert all(not any(step.problems.values()) for step in replayed.steps)
    assert len(replayed.context.messages) == len(s.messages)
    calls = [c for m in s.messages for c in m.tool_calls]
    assert len({c.id for c in calls}) == len(calls)
    for c in calls:
        json.loads(c.arguments)


@pytest.mark.parametrize("dialect", sorted(DIALECT_SEEDS))
def test_failed_outcomes_are_a_copy_without_source_and_a_rejected_push(dialect: str) -> None:
    seed, template = DIALECT_SEEDS[dialect]
    s = generate(seed, template=template, tokens=20_000)
    assert s.meta["dialect"] == dialect
    w = PY if s.meta["world"] == PY.name else TS
    write, push = s.fact("failed-write"), s.fact("failed-push")
    assert (write.kind, write.variant, push.kind, push.variant) == (
        "failed_outcome",
        "write",
        "failed_outcome",
        "push",
    )
    assert write.keys == (
        f"cp hotfix/{w.failed_write.rsplit('/', 1)[1]} {w.failed_write}",
        w.failed_write,
    )
    assert push.keys == ("git push origin main",)
    (result,) = s.messages[push.message].tool_results
    # a chat-completions log states no exit code and flags nothing; the others do
    assert result.is_error is (dialect == "claude")
    assert (
        "[exit code" in result.text or "Exit code" in result.text or "<returncode>1" in result.text
    ) is (dialect != "generic")
