"""The projection of a native compaction, by hand: its item first with the locally written
state standing in for it, sizes that count the item and not the stand-in, each renderer
sending what its API should, and the item left out once a later compaction replaces it."""

from __future__ import annotations

from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    NativeCompactionPart,
    TextPart,
    assistant,
    system,
    user,
)
from ctxengine.model.carriage import NATIVE_LEAD, STAND_IN
from ctxengine.projection import project
from ctxengine.projection.render import (
    render_anthropic,
    render_openai,
    render_openai_responses,
)
from ctxengine.projection.settings import ProjectionSettings
from ctxengine.projection.validate import validate
from hand_estimator import HandEstimator

EST = HandEstimator()
SETTINGS = ProjectionSettings(
    truncate_tokens=10_000, truncate_max_chars=50_000, truncate_head_ratio=0.6
)
BLOCK = '{"type":"compaction","content":"what happened so far"}'


def entries(*bodies: object) -> list[Entry]:
    return [Entry(f"e{n}", "s", n, body) for n, body in enumerate(bodies)]  # type: ignore[arg-type]


def lead() -> Message:
    parts = (NativeCompactionPart("anthropic", BLOCK), TextPart("tests written"))
    return Message("assistant", parts, meta={NATIVE_LEAD: "anthropic"})


def native_record(lead_id: str) -> CompactionRecord:
    return CompactionRecord(
        "## Goal\nbuild a parser", None, 900, 40, "default", "extractive",
        native="anthropic", lead_ids=(lead_id,),
    )  # fmt: skip


def test_the_item_leads_and_the_stand_in_is_left_out_of_its_own_request() -> None:
    log = entries(
        system("Be terse."),
        user("build a parser"),
        assistant("skeleton"),
        user("now the tests"),
        native_record("e5"),
        lead(),
        user("and the docs"),
    )
    ctx = project(log, SETTINGS, EST)
    roles = [(m.role, STAND_IN in m.meta) for m in ctx.messages]
    assert roles == [("system", False), ("user", True), ("assistant", False), ("user", False)]
    assert ctx.sources == ("e0", None, "e5", "e6")
    assert ctx.preamble == 2  # the item's entry is conversation, not preamble
    # Sizes count the item and not the stand-in.
    counted = [ctx.messages[k] for k in (0, 2, 3)]
    assert ctx.tokens == sum(EST.message(m) for m in counted)
    body = render_anthropic(ctx)
    assert body["system"] == "Be terse."
    assert body["messages"] == [
        {
            "role": "assistant",
            "content": [
                {"type": "compaction", "content": "what happened so far"},
                {"type": "text", "text": "tests written"},
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": "and the docs"}]},
    ]
    assert validate(body, "anthropic") == []
    chat = render_openai(ctx)
    assert [m["role"] for m in chat["messages"]] == ["system", "user", "assistant", "user"]
    assert "## Goal\nbuild a parser" in chat["messages"][1]["content"]
    assert validate(chat, "openai") == []
    responses = render_openai_responses(ctx)
    assert [i.get("role") for i in responses["input"]] == ["system", "user", "assistant", "user"]
    assert validate(responses, "openai-responses") == []


def test_a_later_compaction_leaves_the_item_out_of_the_message_it_was_in() -> None:
    later = CompactionRecord(
        "## Goal\nbuild a parser, docs", "e3", 500, 300, "default", "extractive"
    )
    log = entries(
        system("Be terse."),
        user("build a parser"),
        native_record("e3"),
        lead(),
        user("and the docs"),
        later,
    )
    ctx = project(log, SETTINGS, EST)
    assert ctx.sources == ("e0", None, "e3", "e4")
    assert ctx.messages[2].parts == (TextPart("tests written"),)
    assert all(STAND_IN not in m.meta for m in ctx.messages)
    body = render_anthropic(ctx)
    assert "compaction" not in str(body)
    assert validate(body, "anthropic") == []


def test_an_openai_item_priced_at_nothing_leaves_its_stand_in_counted() -> None:
    item = '{"type":"compaction","encrypted_content":"gAAAA"}'
    lead_message = Message(
        "assistant", (NativeCompactionPart("openai", item),), meta={NATIVE_LEAD: "openai"}
    )
    record = CompactionRecord(
        "## Goal\nbuild a parser", None, 900, 40, "default", "extractive",
        native="openai", lead_ids=("e3",),
    )  # fmt: skip
    log = entries(system("Be terse."), user("build a parser"), record, lead_message, user("go"))
    ctx = project(log, SETTINGS, EST)
    assert [STAND_IN in m.meta for m in ctx.messages] == [False, True, False, False]
    assert ctx.tokens == sum(EST.message(m) for m in ctx.messages)
    responses = render_openai_responses(ctx)
    assert responses["instructions"] == "Be terse."
    assert responses["input"][0] == {"type": "compaction", "encrypted_content": "gAAAA"}
    assert len(responses["input"]) == 2
