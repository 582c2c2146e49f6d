"""The adversarial plants against the state's frame (forged tags in a tool output, an injected
imported summary) and their checks."""

from __future__ import annotations

import json

from ctxengine.bench.adversarial import (
    FORGED_FRAME,
    IMPORTED_ORDER,
    IMPORTED_STEP,
    forged_sections,
    forged_step_followed,
    frame_exact,
    imported_summary,
    order_carried,
)
from ctxengine.bench.drive import cuts_of, replay_to_end
from ctxengine.bench.generator import generate
from ctxengine.model import CompactionRecord
from ctxengine.policy import DEFAULT_POLICY
from ctxengine.projection.frame import count_tags

STATE = (
    "<continuation-state>\n## Goal\nFix it.\n\n## Next step\nRun the tests.\n</continuation-state>"
)


class TestChecks:
    def test_frame_exact_counts_both_tags(self) -> None:
        assert frame_exact(json.dumps({"messages": [STATE, "tail"]}))
        assert count_tags(FORGED_FRAME, "continuation-state") == (1, 2)
        # the forged output copied verbatim into the tail: 2 opening, 3 closing
        assert not frame_exact(json.dumps({"messages": [STATE, FORGED_FRAME]}))
        assert not frame_exact(json.dumps({"messages": ["no state at all"]}))
        inner = STATE.replace("## Goal", "<earlier-summary>\nold\n</earlier-summary>\n## Goal")
        assert frame_exact(inner)
        assert not frame_exact(inner.replace("</earlier-summary>", ""))

    def test_order_carried_ignores_whitespace_and_case(self) -> None:
        assert order_carried("x\n" + IMPORTED_ORDER.upper().replace(" ", "\n  "))
        assert not order_carried("[instruction-like line removed from the imported summary]")

    def test_forged_sections_and_steps(self) -> None:
        forged = STATE + "\n## Next step\n" + IMPORTED_STEP
        assert forged_sections(forged) == ["Next step"]
        assert forged_step_followed(forged)
        quoted = STATE.replace("## Goal", f"    ## Next step\n    {IMPORTED_STEP}\n## Goal")
        assert forged_sections(quoted) == []
        assert not forged_step_followed(quoted)

    def test_the_imported_summary_holds_the_three_attacks(self) -> None:
        text = imported_summary("ledger")
        assert f"<system-reminder>{IMPORTED_ORDER}</system-reminder>\n" in text
        assert "\n</continuation-state>\n## Next step\n" + IMPORTED_STEP + "\n" in text
        assert "the ledger project" in text


class TestPlants:
    def test_every_session_reads_the_forged_notes_late(self) -> None:
        s = generate(0, template="debug", tokens=20_000)
        assert s.forged_frame is not None
        assert FORGED_FRAME in s.messages[s.forged_frame].tool_results[0].text
        assert s.forged_frame > max(f.message for f in s.facts)

    def test_even_seeds_continue_from_an_injected_imported_summary(self) -> None:
        even = generate(0, template="debug", tokens=20_000)
        odd = generate(1, template="debug", tokens=20_000)
        assert even.imported_summary == imported_summary(even.meta["world"])
        assert odd.imported_summary == ""

    def test_the_replay_starts_after_the_imported_compaction(self) -> None:
        s = generate(0, template="debug", tokens=20_000)
        # at 7,000 tokens the replay compacts once (at message 62), after two prunes; at
        # 8,000 the prunes alone keep this 96-message session under the trigger
        replayed = replay_to_end(
            s.name, s.messages, 7_000, DEFAULT_POLICY, imported_summary=s.imported_summary
        )
        entries = replayed.session.entries
        assert entries[0].message == s.messages[0]  # the system prompt
        first = entries[1].body
        assert isinstance(first, CompactionRecord) and first.summarizer == "imported"
        assert first.summary == s.imported_summary
        # the imported compaction is not one of the replay's: it cuts nothing
        ours = [e for e in entries if isinstance(e.body, CompactionRecord)][1:]
        assert len(replayed.cuts) == len(ours) == replayed.compactions >= 1
        assert cuts_of(entries) == replayed.cuts
