"""The heuristic estimator: exact counts for prose, code, CJK, base64, parts and schemas."""

from __future__ import annotations

import base64
import json
from typing import Any

from ctxengine.model import (
    DocumentPart,
    Message,
    NativeCompactionPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    assistant,
    system,
    tool_result,
    user,
)
from ctxengine.tokens import Estimator, HeuristicEstimator

EST = HeuristicEstimator()

SENTENCES = (
    "The agent reads the failing test before it edits any file.",
    "When the build breaks, it runs the linter and reports the exact error line.",
    "Every change is small, reviewed, and described in plain words.",
    "If a command times out, the agent retries once and then asks the user what to do.",
    "Keep the public interface stable, and document each decision that a reader might question.",
)
PROSE = " ".join(SENTENCES)
CHINESE = "我们需要在不改变历史记录的前提下压缩上下文，并且保证每一个工具调用都有对应的结果。"


def english(chars: int) -> str:
    return ((PROSE + " ") * (chars // len(PROSE) + 1))[:chars]


def shell_tool(i: int) -> dict[str, Any]:
    return {
        "name": f"tool_{i:03d}",
        "description": "Run a shell command in the workspace and return stdout, stderr and "
        "the exit code. " * 3,
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line to run."},
                "timeout": {
                    "type": "integer",
                    "description": "Seconds before the command is stopped.",
                    "minimum": 1,
                },
                "cwd": {
                    "type": "string",
                    "description": "Working directory, relative to the workspace root.",
                },
            },
            "required": ["command"],
        },
    }


class TestText:
    def test_is_an_estimator(self) -> None:
        assert isinstance(EST, Estimator)

    def test_english_prose_runs_at_four_chars_per_token(self) -> None:
        assert len(PROSE) == 370
        assert EST.text(PROSE) == 93

    def test_a_15k_token_system_prompt_is_counted(self) -> None:
        prompt = english(60_000)
        assert EST.text(prompt) == 15_000
        assert EST.message(system(prompt)) == 15_004
        assert 13_000 <= EST.message(system(prompt)) <= 17_000

    def test_3000_chinese_characters_cost_about_one_token_each(self) -> None:
        text = (CHINESE * 80)[:3000]
        assert EST.text(text) == 3000
        assert 3000 / 1.5 <= EST.text(text) <= 3000 * 1.5

    def test_json_runs_at_three_chars_per_token(self) -> None:
        doc = json.dumps([{"name": "alpha", "kind": "beta", "ok": True}] * 30)
        assert (len(doc), EST.text(doc)) == (1_410, 470)

    def test_json_with_paths_and_numbers(self) -> None:
        doc = json.dumps({"files": [{"path": f"src/m{i}.py", "lines": i} for i in range(50)]})
        # 1,841 chars, 180 of them digits (½ token each); 100 path separators among 1,641
        # non-space chars (6.1 %) move the code rate 3 a sixth of the way to 2.5 (2.92):
        # 1,661 / 2.922 + 90 = 658.5
        assert (len(doc), EST.text(doc)) == (1_841, 659)

    def test_digits_cost_half_a_token_each(self) -> None:
        assert EST.text("1234567890" * 100) == 500
        text = "The build took 1500 ms and used 2048 MB. " * 10
        assert (len(text), EST.text(text)) == (410, 123)  # 330 chars at 4 + 80 digits / 2

    def test_path_lists_run_at_two_and_a_half_chars_per_token(self) -> None:
        files = "".join(
            f"src/ctxengine/{module}/{name}.py\n"
            for module in ("tokens", "model", "engine", "summarizers")
            for name in ("base", "estimate", "codec", "anchor", "sections")
        )
        # 80 separators among 624 non-space chars: 12.8 %, at or above 12 %
        assert (len(files), EST.text(files)) == (644, 258)

    def test_path_separator_share_between_interpolates(self) -> None:
        text = (
            "## Files modified\n- src/auth/login.py\n- src/auth/session.py\n\n"
            "## Next step\nRun the tests and fix the remaining failure in the login flow.\n"
        )
        # punctuation 13 of 114 (11.4 %): 3.36 chars/token; separators 9 of 114 (7.9 %) move
        # it 41 % of the way to 2.5: 3.004, and 137 / 3.004 = 45.6
        assert (len(text), EST.text(text)) == (137, 46)

    def test_code_runs_at_three_chars_per_token(self) -> None:
        code = "def add(a: int, b: int) -> int:\n    return a + b\n\n" * 20
        assert (len(code), EST.text(code)) == (1_000, 334)

    def test_punctuation_share_between_prose_and_code_interpolates(self) -> None:
        text = "alpha beta gamma (delta) epsilon, zeta " * 10  # 3 of 33: 3.59 chars/token
        assert (len(text), EST.text(text)) == (390, 109)

    def test_other_scripts(self) -> None:
        assert EST.text("Привет мир " * 100) == 500  # Cyrillic at 2 chars/token
        assert EST.text("café " * 100) == 150
        assert EST.text("😀" * 10) == 20

    def test_never_zero_for_non_empty_text(self) -> None:
        assert EST.text("") == 0
        assert [EST.text(s) for s in ("a", " ", "\n", "中", "\x00")] == [1, 1, 1, 1, 1]


class TestBase64:
    BLOB = base64.b64encode(bytes(range(256)) * 12).decode()

    def test_a_base64_run_costs_a_fixed_16_tokens(self) -> None:
        assert len(self.BLOB) == 4_096
        assert EST.text(self.BLOB) == 16
        assert EST.text(f"{PROSE} {self.BLOB} {PROSE}") == 93 + 16 + 93

    def test_a_data_url_payload_is_not_text(self) -> None:
        url = f"data:image/png;base64,{self.BLOB}"
        assert EST.text(url) == 24  # 16 + the 22-char header at 3 chars/token
        short = "data:text/plain;base64,aGVsbG8="
        assert EST.text(short) == 11  # under 64 chars in all: priced as text

    def test_hex_digests_and_long_words_stay_text(self) -> None:
        digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
        assert EST.text(digest) == 26  # priced as text: 26 letters at 4 + 38 digits at 2
        assert EST.text(digest * 4) == 102
        assert EST.text("a" * 400) == 100


class TestParts:
    def test_tool_call_is_name_plus_arguments(self) -> None:
        call = ToolCallPart("c1", "bash", json.dumps({"command": "pytest -q tests/"}))
        assert EST.part(call) == 8 + 1 + 11

    def test_tool_result_is_its_content(self) -> None:
        msg = tool_result("c1", PROSE)
        assert EST.part(msg.parts[0]) == 4 + 93
        assert EST.message(msg) == 4 + 4 + 93

    def test_reasoning_text_plus_a_fixed_signature_cost(self) -> None:
        signed = ReasoningPart(PROSE, signature="EqQBCkgIARABGAIiQL" * 40)
        assert EST.part(signed) == 2 + 93 + 16
        # Unsigned reasoning text is sent by neither rendered request.
        assert EST.part(ReasoningPart(PROSE)) == 0

    def test_encrypted_reasoning_costs_the_text_it_hides(self) -> None:
        redacted = ReasoningPart("", signature="x" * 6_000, redacted=True)
        assert EST.part(redacted) == 2 + 1_000
        assert EST.part(ReasoningPart("", signature="short")) == 2 + 16
        assert EST.part(ReasoningPart("")) == 0

    def test_reasoning_no_request_carries_costs_nothing(self) -> None:
        openai = {"provider": "openai"}
        assert EST.part(ReasoningPart("", signature="x" * 20_812, meta=openai)) == 0
        assert EST.part(ReasoningPart(PROSE, signature="x" * 600, meta=openai)) == 0
        assert EST.part(ReasoningPart(PROSE, signature="s", meta={"provider": "anthropic"})) == (
            2 + 93 + 16
        )

    def test_native_compaction_payload(self) -> None:
        payload = json.dumps({"type": "compaction", "content": "e" * 563})
        assert len(payload) == 600
        assert EST.part(NativeCompactionPart("anthropic", payload)) == 2 + 100
        # OpenAI's items exist only in the Responses API; a payload that is not a JSON
        # object is never sent.
        assert EST.part(NativeCompactionPart("openai", "e" * 600)) == 0
        assert EST.part(NativeCompactionPart("anthropic", "e" * 600)) == 0

    def test_documents(self) -> None:
        assert EST.part(DocumentPart("text/plain", title="notes", text=PROSE)) == 2 + 2 + 93
        assert EST.part(DocumentPart("application/pdf", byte_size=50_000)) == 2 + 3_125
        assert EST.part(DocumentPart("application/pdf", data="QUJD" * 1_000)) == 2 + 188
        assert EST.part(DocumentPart("text/markdown", byte_size=4_000)) == 2 + 1_000
        assert EST.part(DocumentPart("application/pdf", url="https://x.test/a.pdf")) == 2 + 3_000

    def test_result_with_an_image_inside(self) -> None:
        from ctxengine.model import ImagePart

        part = ToolResultPart(
            "c1", (TextPart("shot"), ImagePart("image/png", width=200, height=200))
        )
        assert EST.part(part) == 4 + 1 + 2 + 54


class TestMessagesAndTools:
    def test_every_message_adds_four_tokens(self) -> None:
        assert EST.message(user(PROSE)) == 97
        assert EST.message(Message("assistant", ())) == 4
        call = ToolCallPart("c1", "read", '{"path":"a.py"}')
        # the arguments: 15 chars at 2.88 (code rate, one separator in 15 non-space chars)
        assert EST.message(assistant("ok", call)) == 4 + 1 + 8 + 1 + 6

    def test_26k_tokens_of_tool_schemas_are_counted(self) -> None:
        schemas = [shell_tool(i) for i in range(124)]
        one = json.dumps(schemas[0], separators=(",", ":"))
        assert (len(one), EST.text(one)) == (607, 203)
        assert EST.tools(schemas) == 300 + 124 * (8 + 203) == 26_464
        assert EST.tools([]) == 0

    def test_schemas_that_are_not_json_are_priced_from_their_text(self) -> None:
        assert EST.tools([{"name": "x", "default": object()}]) > 300
        cyclic: dict[str, Any] = {"name": "loop"}
        cyclic["self"] = cyclic
        assert EST.tools([cyclic]) == 300 + 8 + EST.text(str(cyclic))
