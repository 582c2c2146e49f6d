"""Model values and their wire codec."""

from ctxengine.model import (
    CompactionRecord,
    Entry,
    ImagePart,
    Ledgers,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from ctxengine.model.codec import body_hash, entry_from_dict, entry_to_dict


class TestCodecRoundTrip:
    def test_message_with_every_part_kind_round_trips(self) -> None:
        msg = Message(
            "assistant",
            (
                ReasoningPart("think", signature="sig==", meta={"x": 1}),
                TextPart("hi"),
                ToolCallPart("c1", "read", '{"path": "a.py"}'),
            ),
            usage=Usage(10, 5, 100, 0),
            model="m",
            stop_reason="tool_use",
        )
        entry = Entry("e1", "s1", 0, msg, parent_id=None, created_at="2026-01-01T00:00:00Z")
        assert entry_from_dict(entry_to_dict(entry)) == entry

    def test_tool_result_with_image_round_trips(self) -> None:
        body = Message(
            "tool",
            (
                ToolResultPart(
                    "c1",
                    (TextPart("ok"), ImagePart("image/png", data="AAAA", width=10, height=20)),
                    True,
                ),
            ),
        )
        entry = Entry("e2", "s1", 1, body, parent_id="e1")
        assert entry_from_dict(entry_to_dict(entry)) == entry

    def test_compaction_record_round_trips_with_ledgers(self) -> None:
        rec = CompactionRecord(
            "state",
            "e5",
            1000,
            200,
            "default",
            "extractive",
            ledgers=Ledgers(goal="g", files_modified=("a.py",), constraints=("never x",)),
        )
        entry = Entry("c", "s1", 9, rec)
        back = entry_from_dict(entry_to_dict(entry))
        assert back == entry
        assert back.kind == "compaction"

    def test_compaction_record_without_a_kept_tail_round_trips(self) -> None:
        rec = CompactionRecord("state", None, 1000, 200, "default", "extractive")
        entry = Entry("c", "s1", 9, rec)
        assert entry_from_dict(entry_to_dict(entry)) == entry


class TestBodyHash:
    def test_same_body_after_different_parent_gets_different_id(self) -> None:
        m = Message("user", (TextPart("yes"),))
        assert body_hash(m, "a") != body_hash(m, "b")
        assert body_hash(m, "a") == body_hash(m, "a")
        assert body_hash(m, "a").startswith("b2:")


class TestLedgers:
    def test_merge_only_grows_and_moves_read_to_modified(self) -> None:
        old = Ledgers(goal="g", files_read=("a.py", "b.py"), constraints=("never push",))
        new = Ledgers(goal="other", files_read=("c.py",), files_modified=("a.py",))
        merged = old.merge(new)
        assert merged.goal == "g"
        assert merged.files_read == ("b.py", "c.py")
        assert merged.files_modified == ("a.py",)
        assert merged.constraints == ("never push",)

    def test_usage_context_tokens(self) -> None:
        u = Usage(input_tokens=10, output_tokens=5, cache_read_tokens=100, cache_write_tokens=7)
        assert u.prompt_tokens == 117
        assert u.context_tokens == 122


class TestEquality:
    """``==`` on messages and parts compares every field, ``meta`` included; ``hash`` leaves
    ``meta`` out (a dict cannot be hashed), so equal values still hash alike."""

    def test_meta_counts_in_equality(self) -> None:
        call = ToolCallPart("c1", "bash", "{}")
        assert call == ToolCallPart("c1", "bash", "{}", meta={})
        assert call != ToolCallPart("c1", "bash", "{}", meta={"freeform": True})
        text = Message("user", (TextPart("hi"),))
        assert text != Message("user", (TextPart("hi"),), meta={"isMeta": True})
        assert text != Message("user", (TextPart("hi", meta={"cache_control": {}}),))
        result = ToolResultPart("c1", (TextPart("out", meta={"n": 1}),))
        assert result != ToolResultPart("c1", (TextPart("out", meta={"n": 2}),))

    def test_hash_leaves_meta_out(self) -> None:
        plain = Message("user", (TextPart("hi"),))
        flagged = Message("user", (TextPart("hi", meta={"k": [1]}),), meta={"isMeta": True})
        assert hash(plain) == hash(flagged)
        assert len({plain, flagged, Message("user", (TextPart("hi"),))}) == 2
