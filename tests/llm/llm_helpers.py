"""Builders for the LLM summarizer tests: summary texts, histories, summarizers pointed at the
scripted server, stream events, and a simple exact estimator."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from servers import ScriptedServer, SleepRecorder, Step, chat_stream

from ctxengine.model import Message, Part, TextPart, ToolCallPart, ToolResultPart
from ctxengine.providers import AnthropicProvider, OpenAIProvider, RetrySettings
from ctxengine.summarizers.llm import LLMSummarizer

ONE_ATTEMPT = RetrySettings(max_attempts=1)

SECTIONS: dict[str, str] = {
    "Goal": "Migrate module X to the new storage API.",
    "Constraints and preferences": "- never push to main",
    "Progress": "",
    "Done": "- Read src/x.py.",
    "In progress": "- Editing src/x.py.",
    "Blocked": "(none)",
    "Key decisions": "- Kept the old API as a shim, so callers keep working.",
    "Files and code": "- src/x.py: load() and save().",
    "Errors and fixes": "(none)",
    "User requests": "- Task A: migrate module X (in progress)",
    "Next step": "Finish the edit of src/x.py.",
}
SUBSECTIONS = ("Done", "In progress", "Blocked")


def summary_text(**overrides: str) -> str:
    """A summary with every required heading; keyword arguments replace section bodies
    (spaces for underscores: ``Next_step=…``); a value of ``"-"`` drops the section."""
    bodies = dict(SECTIONS)
    for key, value in overrides.items():
        bodies[key.replace("_", " ")] = value
    lines: list[str] = []
    for heading, body in bodies.items():
        if body == "-":
            continue
        level = "###" if heading in SUBSECTIONS else "##"
        lines.append(f"{level} {heading}")
        if body:
            lines.append(body)
    return "\n".join(lines)


GOOD = summary_text()

#: Ways a model writes "nothing here", and what each normalises to.
EMPTY_VARIANTS: tuple[tuple[str, str], ...] = (
    ("(none)", "none"),
    ("None.", "none"),
    ("(none).", "none"),
    ("*None*", "none"),
    ("_(none)_", "none"),
    ("`(none)`", "none"),
    ("**None.**", "none"),
    ("Nothing to report.", "nothing to report"),
    ("N/A", "n/a"),
    ("-", ""),
    ("—", ""),
    ("- None yet.", "none yet"),
    ("> nothing so far", "nothing so far"),
)


def every_section(body: str) -> str:
    """A reply with every required heading, each followed by ``body``."""
    lines: list[str] = []
    for heading in SECTIONS:
        level = "###" if heading in SUBSECTIONS else "##"
        lines += [f"{level} {heading}", body]
    return "\n".join(lines)


class QuarterEstimator:
    """One token per started 4 characters, 4 per message: easy to compute by hand."""

    def text(self, text: str) -> int:
        return (len(text) + 3) // 4

    def part(self, part: Part) -> int:
        if isinstance(part, ToolResultPart):
            return sum(self.part(p) for p in part.content)
        if isinstance(part, ToolCallPart):
            return self.text(part.name + part.arguments)
        return self.text(getattr(part, "text", "") or "")

    def message(self, message: Message) -> int:
        return 4 + sum(self.part(p) for p in message.parts)

    def tools(self, schemas: Sequence[Mapping[str, Any]]) -> int:
        return self.text(json.dumps(list(schemas)))


def call(call_id: str, name: str, **arguments: Any) -> ToolCallPart:
    """A tool call with the keyword arguments as JSON."""
    return ToolCallPart(call_id, name, json.dumps(arguments))


def calls(*parts: ToolCallPart, text: str = "") -> Message:
    head: tuple[Part, ...] = (TextPart(text),) if text else ()
    return Message("assistant", head + parts)


def result(call_id: str, text: str, *, is_error: bool = False) -> Message:
    return Message("tool", (ToolResultPart(call_id, (TextPart(text),), is_error=is_error),))


def openai_summarizer(
    server: ScriptedServer,
    sleeps: SleepRecorder,
    *,
    retry: RetrySettings = ONE_ATTEMPT,
    window: int = 16_000,
    max_output_tokens: int = 2_000,
    **kwargs: Any,
) -> LLMSummarizer:
    """An LLM summarizer on Chat Completions against ``server``."""
    provider = OpenAIProvider("gpt-test", base_url=server.url + "/v1", retry=retry, sleep=sleeps)
    return LLMSummarizer(provider, max_output_tokens=max_output_tokens, window=window, **kwargs)


def anthropic_provider(
    server: ScriptedServer, sleeps: SleepRecorder, *, retry: RetrySettings = ONE_ATTEMPT
) -> AnthropicProvider:
    return AnthropicProvider(
        "claude-test", api_key="test-key", base_url=server.url, retry=retry, sleep=sleeps
    )


def stream(text: str, *, finish: str = "stop", prompt_tokens: int = 900) -> Step:
    """A streamed Chat Completions reply of ``text`` (in 40-character pieces)."""
    pieces = [text[i : i + 40] for i in range(0, len(text), 40)] or [""]
    return Step(events=chat_stream(pieces, finish=finish, prompt_tokens=prompt_tokens))


def stream_tool_call(name: str, arguments: str) -> Step:
    """A streamed Chat Completions reply that only calls a tool."""

    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-tool",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": "gpt-test",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    fn = {"name": name, "arguments": arguments}
    frag = {"index": 0, "id": "call_x", "type": "function", "function": fn}
    events: list[tuple[str | None, Any]] = [
        (None, chunk({"role": "assistant", "tool_calls": [frag]}, None)),
        (None, chunk({}, "tool_calls")),
        (None, "[DONE]"),
    ]
    return Step(events=events)


def user_prompt(body: Mapping[str, Any]) -> str:
    """The user message text of a Chat Completions summary request body."""
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"], messages
    content = messages[1]["content"]
    assert isinstance(content, str)
    return content


def history_text(body: Mapping[str, Any]) -> str:
    """The transcript inside ``<history …>`` of a summary request."""
    prompt = user_prompt(body)
    start = prompt.index(">", prompt.index("<history")) + 1
    return prompt[start : prompt.index("</history>")].strip("\n")


def new_session(
    summarizer: Any = None,
    *,
    window: int = 4_000,
    messages: Sequence[Message] = (),
    **policy: Any,
) -> Any:
    """A session with a small window (trigger 3,500 tokens), no pruning, a 300-token tail and
    the exact estimator; ``messages`` appended."""
    from ctxengine.engine import Session
    from ctxengine.policy import Policy

    settings: dict[str, Any] = {
        "prune_enabled": False,
        "reserve_tokens": 500,
        "keep_recent_tokens": 300,
        **policy,
    }
    s = Session(
        window, policy=Policy(**settings), estimator=QuarterEstimator(), summarizer=summarizer
    )
    for m in messages:
        s.append(m)
    return s


def exchange(k: int, chars: int = 1_200) -> list[Message]:
    """An assistant step reading ``src/m{k}.py`` and its result of about ``chars`` characters."""
    return [
        calls(call(f"c{k}", "Read", file_path=f"src/m{k}.py"), text=f"step {k}"),
        result(f"c{k}", f"line {k}\n" * (chars // 7)),
    ]


def work_history(task: str, steps: int, *, first: int = 0) -> list[Message]:
    """``task`` as a user message (when given) followed by ``steps`` exchanges."""
    out: list[Message] = [Message("user", (TextPart(task),))] if task else []
    for k in range(first, first + steps):
        out += exchange(k)
    return out
