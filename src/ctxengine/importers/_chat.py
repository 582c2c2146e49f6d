"""OpenAI chat-completions messages to our messages; shared by the chat-completions and
SWE-agent importers.

Mapping (one source message → one :class:`~ctxengine.model.Message`):

- ``content``: a string, ``null`` or a list of parts (``text``, ``image_url`` → image with
  media type, byte size and pixel size for ``data:`` URLs, ``file`` → document, ``refusal``).
- ``reasoning_content`` (DeepSeek, litellm) or litellm ``thinking_blocks`` (with signatures)
  → reasoning parts, placed first.
- ``tool_calls`` → tool calls (ids made unique with :class:`CallIds`); legacy
  ``function_call`` → one tool call with a synthetic id ``"function-<n>"`` (n counts from 1).
- ``tool`` messages → a tool result for ``tool_call_id``; legacy ``function`` messages → a
  result for the oldest unanswered ``function_call``.
- ``usage`` on the message, or mini-swe-agent's ``extra.response.usage`` → :class:`Usage`
  with ``input = prompt_tokens − cached_tokens``; ``finish_reason`` → stop reason.
- mini-swe-agent ``extra``: ``timestamp`` → ``created_at``; a tool result with a non-zero
  ``returncode`` or an ``exception_info`` is an error result.

Tolerated drift (counted in the :class:`~ctxengine.importers.report.ImportReport` with its
JSON path, refused in strict mode): a message that is not an object or has an unknown role,
and a content part of an unknown type, are skipped; ``content`` that is one part object
instead of a list is read as a list of it; a tool call without ``id`` gets
``"call_gen_<n>"`` (n counts from 1), ``null`` arguments become ``{}``, and a ``tool``
message without ``tool_call_id`` answers the oldest unanswered call.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import CallIds
from ctxengine.importers._calls import arguments_text, json_text
from ctxengine.importers._images import image_from_url
from ctxengine.importers.report import ImportReport
from ctxengine.model import (
    DocumentPart,
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)

#: Roles of chat-completions messages that we import (``function`` is the legacy tool role).
CHAT_ROLES: tuple[str, ...] = ("system", "developer", "user", "assistant", "tool", "function")

#: ``finish_reason`` → our normalised stop reason.
FINISH_REASONS: Mapping[str, str] = {
    "stop": "stop",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "length",
    "content_filter": "error",
}

#: Longest session title, in characters.
TITLE_CHARS = 80

Content = TextPart | ImagePart | DocumentPart

_MODELED = frozenset(
    {"role", "content", "tool_calls", "tool_call_id", "function_call", "reasoning_content",
     "thinking_blocks", "refusal", "usage", "model", "finish_reason", "extra",
     "provider_specific_fields"}
)  # fmt: skip


def iso_time(value: Any) -> str | None:
    """An epoch-seconds number as an ISO-8601 UTC string; a string is returned unchanged."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, UTC).isoformat()  # positional: cheaper
    return None


def openai_usage(raw: Any) -> Usage | None:
    """OpenAI-style usage (``prompt_tokens`` includes cached tokens) as :class:`Usage`."""
    if not isinstance(raw, dict) or not isinstance(raw.get("prompt_tokens"), int):
        return None
    details = raw.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if not isinstance(cached, int):
        cached = raw.get("prompt_cache_hit_tokens", 0)  # DeepSeek
    cached = cached if isinstance(cached, int) else 0
    output = raw.get("completion_tokens")
    return Usage(
        input_tokens=max(0, raw["prompt_tokens"] - cached),
        output_tokens=output if isinstance(output, int) else 0,
        cache_read_tokens=cached,
    )


def title_from(messages: list[Message]) -> str | None:
    """First line of the first user text that is more than a markup tag, cut to
    :data:`TITLE_CHARS`; ``None`` when there is none."""
    for msg in messages:
        if msg.role != "user":
            continue
        for line in msg.text.splitlines():
            line = line.strip()
            if line and not (line.startswith("<") and line.endswith(">")):
                return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"
    return None


def as_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty dict."""
    return value if isinstance(value, dict) else {}


class ChatReader:
    """Converts the chat messages of one file; what it skips and repairs is counted in
    ``report`` with its JSON path, and errors name ``path`` and a JSON path."""

    def __init__(
        self, path: Path, calls: CallIds | None = None, report: ImportReport | None = None
    ) -> None:
        self.path = path
        self.calls = calls or CallIds()
        self.report = report if report is not None else ImportReport(path)
        self._legacy_open: list[str] = []
        self._legacy_count = 0
        self._generated = 0
        #: ``(source id, unique id)`` of every call, in order, and the answered unique ids.
        self.order: list[tuple[str, str]] = []
        self.answered: set[str] = set()

    def skip(self, kind: str, json_path: str, expected: str) -> None:
        """``report.skip`` at ``json_path``."""
        self.report.skip(kind, expected, json_path=json_path)

    def new_call(self, source_id: Any, jp: str, what: str) -> str:
        """The unique id of a new call whose source id is ``source_id``; a missing id is
        repaired with ``"call_gen_<n>"``."""
        if not isinstance(source_id, str) or not source_id:
            self._generated += 1
            source_id = f"call_gen_{self._generated}"
            self.report.repair(
                f"{what} without id", f"expected a string `id` on a {what}", json_path=jp
            )
        unique = self.calls.call(source_id)
        self.order.append((source_id, unique))
        return unique

    def answer(self, source_id: Any, jp: str, what: str) -> str | None:
        """The unique id of the call a result answers: by ``source_id``, else (repaired) the
        oldest unanswered call; ``None`` (skipped) when there is none."""
        if isinstance(source_id, str) and source_id:
            unique = self.calls.result(source_id)
        else:
            pending = next(((s, u) for s, u in self.order if u not in self.answered), None)
            expected = f"expected a string call id on a {what}"
            if pending is None:
                self.skip(f"{what} without a call", jp, expected)
                return None
            self.report.repair(f"{what} without call id", expected, json_path=jp)
            source_id, unique = pending
            self.calls.answer(source_id, unique)
        self.answered.add(unique)
        return unique

    def arguments(self, value: Any, jp: str) -> Any:
        """Tool-call arguments; ``null`` is repaired to ``{}``."""
        if value is None:
            self.report.repair(
                "null arguments", "expected tool-call arguments, got null", json_path=jp
            )
            return {}
        return value

    def fail(self, json_path: str, expected: str) -> TranscriptError:
        """The error to raise for ``expected`` at ``json_path``."""
        return TranscriptError(str(self.path), expected, json_path=json_path)

    def string(self, obj: dict[str, Any], key: str, jp: str) -> str:
        """``obj[key]`` when it is a string, else raise naming ``jp.key``."""
        value = obj.get(key)
        if not isinstance(value, str):
            raise self.fail(f"{jp}.{key}", f"expected a string `{key}`")
        return value

    # -- content ------------------------------------------------------------------------

    def content(self, value: Any, jp: str) -> list[Content]:
        """``content`` (string, ``null`` or list of parts) as parts; ``""`` gives none. Parts
        not understood are skipped."""
        if value is None:
            return []
        if isinstance(value, str):
            return [TextPart(value)] if value else []
        if isinstance(value, dict) and "type" in value:
            self.report.repair(
                "structured content",
                "expected `content` to be a string, null or a list of parts, got one part object",
                json_path=jp,
            )
            value = [value]
        if not isinstance(value, list):
            self.skip(
                "malformed content",
                jp,
                "expected `content` to be a string, null or a list of parts",
            )
            return []
        found = (self._content_part(p, f"{jp}[{i}]") for i, p in enumerate(value))
        return [p for p in found if p is not None]

    def _content_part(self, part: Any, jp: str) -> Content | None:
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            self.skip(
                "malformed content part", jp, "expected a content part object with a string `type`"
            )
            return None
        kind = part["type"]
        extra = {k: v for k, v in part.items() if k not in ("type", kind, "text")}
        if kind in ("text", "input_text", "output_text"):
            return TextPart(self.string(part, "text", jp), meta=extra)
        if kind == "refusal":
            return TextPart(self.string(part, "refusal", jp), meta={"refusal": True})
        if kind == "image_url":
            ref = part.get("image_url")
            url = ref.get("url") if isinstance(ref, dict) else ref
            if not isinstance(url, str):
                raise self.fail(f"{jp}.image_url", "expected an image URL string or {url}")
            meta = {k: v for k, v in ref.items() if k != "url"} if isinstance(ref, dict) else {}
            return image_from_url(url, meta)
        if kind == "file":
            return self._file(part.get("file"), f"{jp}.file")
        self.skip(
            f"content part {kind}",
            f"{jp}.type",
            f"expected a text, image_url or file part, got {kind!r}",
        )
        return None

    def _file(self, ref: Any, jp: str) -> DocumentPart:
        if not isinstance(ref, dict):
            raise self.fail(jp, "expected a file object")
        title = ref.get("filename") if isinstance(ref.get("filename"), str) else None
        data = ref.get("file_data")
        if isinstance(data, str) and data.startswith("data:") and "," in data:
            header, _, payload = data.partition(",")
            media = header[5:].split(";", 1)[0] or "application/octet-stream"
            return DocumentPart(media, title=title, data=payload, byte_size=len(payload) * 3 // 4)
        file_id = ref.get("file_id")
        return DocumentPart("application/octet-stream", title=title, meta={"file_id": file_id})

    # -- messages -----------------------------------------------------------------------

    def message(self, m: Any, jp: str) -> Message | None:
        """One chat message as a :class:`Message`; ``None`` (skipped) for a message that is
        not an object, has an unknown role or answers no call.

        Raises:
            TranscriptError: a malformed field (JSON path); in strict mode any skip or repair.
        """
        if not isinstance(m, dict):
            self.skip("malformed message", jp, "expected a message object")
            return None
        role = m.get("role")
        if role not in CHAT_ROLES:
            self.skip(
                f"message role {role}" if isinstance(role, str) else "message without role",
                f"{jp}.role",
                "expected one of " + ", ".join(CHAT_ROLES),
            )
            return None
        meta = {k: v for k, v in m.items() if k not in _MODELED}
        extra = as_object(m.get("extra"))
        if role == "tool":
            call_id = self.answer(m.get("tool_call_id"), f"{jp}.tool_call_id", "tool message")
            return None if call_id is None else self.result(call_id, m, jp, extra, meta)
        if role == "function":
            name = self.string(m, "name", jp)
            call_id = self._legacy_open.pop(0) if self._legacy_open else self._legacy_id()
            return self.result(call_id, m, jp, extra, meta, name=name)
        parts: list[Part] = []
        if role == "assistant":
            parts.extend(self.reasoning(m, jp))
        content = m.get("content")
        if isinstance(content, str):
            if content:
                parts.append(TextPart(content))
        elif content is not None:
            parts.extend(self.content(content, f"{jp}.content"))
        if isinstance(m.get("refusal"), str) and m["refusal"]:
            parts.append(TextPart(m["refusal"], meta={"refusal": True}))
        if role != "assistant":
            return Message(role, tuple(parts), meta=meta)
        calls = m.get("tool_calls")
        if calls is not None:
            parts.extend(self.tool_calls(calls, f"{jp}.tool_calls"))
        if m.get("function_call") is not None:
            parts.extend(self._function_call(m["function_call"], jp))
        return self._assistant(m, tuple(parts), extra, meta)

    def result(
        self,
        call_id: str,
        m: dict[str, Any],
        jp: str,
        extra: Mapping[str, Any],
        meta: dict[str, Any],
        *,
        name: str | None = None,
    ) -> Message:
        """A ``tool`` message holding the result for ``call_id``."""
        content = tuple(self.content(m.get("content"), f"{jp}.content")) or (TextPart(""),)
        code = extra.get("returncode")
        failed = (isinstance(code, int) and code != 0) or bool(extra.get("exception_info"))
        if code is not None:
            meta["returncode"] = code
        if name is None and isinstance(meta.get("name"), str):
            name = meta.pop("name")
        part = ToolResultPart(call_id, content, is_error=failed, name=name)
        return Message("tool", (part,), meta=meta)

    def reasoning(self, m: dict[str, Any], jp: str) -> list[ReasoningPart]:
        """``thinking_blocks`` (litellm, signed) or ``reasoning_content`` as reasoning parts."""
        blocks = m.get("thinking_blocks")
        if isinstance(blocks, list) and blocks:
            found: list[ReasoningPart] = []
            for i, b in enumerate(blocks):
                if not isinstance(b, dict):
                    raise self.fail(f"{jp}.thinking_blocks[{i}]", "expected a thinking block")
                if b.get("type") == "redacted_thinking":
                    found.append(ReasoningPart("", signature=b.get("data"), redacted=True))
                else:
                    text = b.get("thinking")
                    sig = b.get("signature")
                    found.append(
                        ReasoningPart(
                            text if isinstance(text, str) else "",
                            signature=sig if isinstance(sig, str) else None,
                        )
                    )
            return found
        text = m.get("reasoning_content")
        return [ReasoningPart(text)] if isinstance(text, str) and text else []

    def tool_calls(self, value: Any, jp: str) -> list[ToolCallPart]:
        """``tool_calls`` (``null`` or a list) as tool calls with unique ids."""
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(jp, "expected `tool_calls` to be a list")
        found: list[ToolCallPart] = []
        for i, call in enumerate(value):
            if not isinstance(call, dict):
                raise self.fail(f"{jp}[{i}]", "expected a tool call object")
            kind = call.get("type", "function")
            fn = call.get(kind) if kind in ("function", "custom") else None
            if not isinstance(fn, dict):
                raise self.fail(
                    f"{jp}[{i}].function", "expected a function object {name, arguments}"
                )
            name = fn.get("name")
            if not isinstance(name, str):
                name = self.string(fn, "name", f"{jp}[{i}].{kind}")
            key = "arguments" if "arguments" in fn or "input" not in fn else "input"
            args = fn.get(key, "")
            if args is None:
                args = self.arguments(args, f"{jp}[{i}].{kind}")
            meta = {"type": kind} if kind != "function" else {}
            source = call.get("id")
            if isinstance(source, str) and source:
                unique = self.calls.call(source)
                self.order.append((source, unique))
            else:
                unique = self.new_call(source, f"{jp}[{i}].id", "tool call")
            if kind == "function":
                text = arguments_text(args, self.report, key, json_path=f"{jp}[{i}].{kind}.{key}")
            else:  # a custom tool's input is free text
                text = json_text(args)
            found.append(ToolCallPart(unique, name, text, meta))
        return found

    def _function_call(self, value: Any, jp: str) -> list[ToolCallPart]:
        if value is None:
            return []
        if not isinstance(value, dict):
            raise self.fail(f"{jp}.function_call", "expected a function_call object or null")
        name = self.string(value, "name", f"{jp}.function_call")
        call_id = self._legacy_id()
        self._legacy_open.append(call_id)
        args = arguments_text(
            value.get("arguments", ""),
            self.report,
            "arguments",
            json_path=f"{jp}.function_call.arguments",
        )
        return [ToolCallPart(call_id, name, args, meta={"legacy": "function_call"})]

    def _legacy_id(self) -> str:
        self._legacy_count += 1
        return f"function-{self._legacy_count}"

    def _assistant(
        self,
        m: dict[str, Any],
        parts: tuple[Part, ...],
        extra: Mapping[str, Any],
        meta: dict[str, Any],
    ) -> Message:
        response = as_object(extra.get("response"))
        usage = openai_usage(m.get("usage")) or openai_usage(response.get("usage"))
        model = m.get("model") or response.get("model")
        finish = m.get("finish_reason")
        choices = response.get("choices")
        if finish is None and isinstance(choices, list) and choices:
            first = choices[0]
            finish = first.get("finish_reason") if isinstance(first, dict) else None
        stop = FINISH_REASONS.get(finish, finish) if isinstance(finish, str) else None
        if isinstance(response.get("id"), str):
            meta["response_id"] = response["id"]
        return Message(
            "assistant",
            parts,
            usage=usage,
            model=model if isinstance(model, str) else None,
            stop_reason=stop,
            meta=meta,
        )
