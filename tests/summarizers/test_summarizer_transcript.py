"""The labelled transcript handed to an LLM summarizer: exact text for each mode."""

from __future__ import annotations

import pytest
from summarizer_helpers import call, calls

from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    NativeCompactionPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.summarizers.transcript import head_tail, serialize_transcript


def _history() -> tuple[Message, ...]:
    return (
        Message("system", (TextPart("You are terse."),)),
        Message(
            "user",
            (
                TextPart("What is in this screenshot?"),
                ImagePart("image/png", data="iVBOR", width=1920, height=1080, byte_size=245_760),
                DocumentPart("application/pdf", title="spec.pdf", byte_size=1_024),
            ),
        ),
        Message(
            "assistant",
            (
                ReasoningPart("secret chain of thought", signature="sig"),
                TextPart("Let me look."),
                ToolCallPart("c1", "Read", '{"file_path": "a.py"}'),
                ToolCallPart("c2", "Bash", "not json"),
            ),
        ),
        Message(
            "tool",
            (
                ToolResultPart("c1", (TextPart("0123456789" * 3),)),
                ToolResultPart("c2", (TextPart("boom"),), is_error=True),
            ),
        ),
        Message("assistant", (NativeCompactionPart("anthropic", "{}"),)),
        Message("assistant", (ReasoningPart("only thinking"),)),
    )


def test_full_mode_exact_text() -> None:
    assert serialize_transcript(_history(), tool_result_max_chars=20) == (
        "[system instructions]\nYou are terse.\n\n"
        "[user wrote]\nWhat is in this screenshot?\n"
        "[image: image/png, 1920×1080 px, 245,760 bytes]\n"
        '[document: application/pdf, "spec.pdf", 1,024 bytes]\n\n'
        "[assistant wrote]\nLet me look.\n\n"
        '[assistant called] Read(file_path="a.py")\n\n'
        "[assistant called] Bash(not json)\n\n"
        "[Read returned]\n0123456789\n[… 10 characters omitted …]\n0123456789\n\n"
        "[Bash failed]\nboom\n\n"
        "[assistant wrote]\n[provider compaction item: anthropic]"
    )


def test_tool_head_tail_mode_cuts_results_to_a_quarter() -> None:
    text = serialize_transcript(_history(), tool_result_max_chars=40, mode="tool_head_tail")
    assert "[Read returned]\n01234\n[… 20 characters omitted …]\n56789\n\n" in text
    full = serialize_transcript(_history(), tool_result_max_chars=40)
    assert "[Read returned]\n" + "0123456789" * 3 + "\n\n" in full


def test_no_tool_output_mode_states_sizes_and_caps_arguments() -> None:
    msgs = (
        calls(call("w", "Write", file_path="a.py", content="x" * 400)),
        Message("tool", (ToolResultPart("w", (TextPart("y" * 1234),)),)),
    )
    inner = 'file_path="a.py", content="' + "x" * 400 + '"'
    assert serialize_transcript(msgs, mode="no_tool_output") == (
        f"[assistant called] Write({inner[:100]}\n[… 228 characters omitted …]\n{inner[-100:]})"
        "\n\n[Write returned 1,234 characters, not shown]"
    )


def test_user_only_mode_keeps_only_user_text() -> None:
    assert serialize_transcript(_history(), mode="user_only") == (
        "[user wrote]\nWhat is in this screenshot?\n"
        "[image: image/png, 1920×1080 px, 245,760 bytes]\n"
        '[document: application/pdf, "spec.pdf", 1,024 bytes]'
    )


def test_result_names_come_from_the_result_then_the_call() -> None:
    msgs = (
        Message("tool", (ToolResultPart("zz", (TextPart("x"),), name="grep"),)),
        Message("tool", (ToolResultPart("yy", (TextPart("x"),)),)),
    )
    assert serialize_transcript(msgs) == "[grep returned]\nx\n\n[tool returned]\nx"


def test_head_tail_and_bad_arguments() -> None:
    assert head_tail("abcdef", 6) == "abcdef"
    assert head_tail("abcdefg", 4) == "ab\n[… 3 characters omitted …]\nfg"
    assert serialize_transcript(()) == ""
    with pytest.raises(ValueError, match="unknown transcript mode"):
        serialize_transcript((), mode="everything")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="≥ 1"):
        serialize_transcript((), tool_result_max_chars=0)
