"""Kimi CLI ``context.jsonl``: one kosong message per line plus ``_system_prompt``,
``_checkpoint`` and ``_usage`` records (MoonshotAI/kimi-cli ``soul/context.py``).

Mapping, in file order:

* ``_system_prompt`` → a system message.
* ``user`` / ``system`` messages → messages of that role. The ``CHECKPOINT <n>`` user message
  kimi-cli writes after a checkpoint (the model sees it, so D-Mail can name it) is marked
  ``meta["synthetic"] = "checkpoint"``. The user message that opens a compacted file
  (``<system>Previous context has been compacted. …</system>`` then the summary) becomes a
  compaction record with that summary; the messages kimi-cli preserved follow it.
* ``assistant`` messages → ``think`` parts as reasoning, text, and OpenAI-shaped
  ``tool_calls`` as tool calls; ``tool`` messages → a result for ``tool_call_id`` (an error
  when the output starts with ``<system>ERROR``).
* ``_checkpoint`` records are revert points, not context: ignored.
* ``_usage``: kimi-cli writes ``usage.input`` (the prompt size of the step) before the
  assistant message of that step, and (some versions) ``usage.total`` after it. The first
  becomes the message's usage as input tokens (cache reads are not split out), the second
  adds ``total − input`` as output tokens.

Tolerated drift (counted in the report, refused in strict mode): a tool call without ``id``
(``"call_gen_<line>_<n>"``), ``null`` arguments (``{}``), a tool message without
``tool_call_id`` (answers the oldest unanswered call), unknown roles and parts.
"""

from __future__ import annotations

from typing import Any

from ctxengine.importers._calls import Calls, arguments_text
from ctxengine.importers._kimi_parts import content_parts, unwrap_system
from ctxengine.importers._log import Cut, Rows
from ctxengine.importers._parts import SYNTHETIC, opt_dict, opt_str
from ctxengine.importers.report import ImportReport
from ctxengine.model import ImagePart, Message, Part, TextPart, ToolCallPart, ToolResultPart, Usage

COMPACTED = "Previous context has been compacted"
_CHECKPOINT = "CHECKPOINT "


class ContextReader:
    """Reads the lines of one ``context.jsonl`` into :attr:`rows`."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.rows = Rows()
        self.calls = Calls(report)
        self.pending_input: int | None = None
        #: row of the assistant message whose ``usage.total`` may follow.
        self.awaiting_total: int | None = None
        #: the line being read (the source of the rows it adds).
        self.current = b""

    def feed(self, line: int, obj: dict[str, Any], raw: bytes) -> None:
        self.current = raw
        role = obj.get("role")
        if role == "_system_prompt":
            text = opt_str(obj, "content")
            if text is not None:
                self._add(Message("system", (TextPart(text),)))
                return
        elif role == "_checkpoint":
            self.report.ignore("_checkpoint", line=line)
            return
        elif role == "_usage":
            self._usage(line, obj.get("token_count"))
            return
        elif role in ("user", "system"):
            self._plain(line, role, obj)
            return
        elif role == "assistant":
            self._assistant(line, obj)
            return
        elif role == "tool":
            self._tool(line, obj)
            return
        self.report.skip(
            f"role {role}" if isinstance(role, str) else "line without role",
            "expected a `role` of user, assistant, tool, system, _system_prompt, _checkpoint "
            "or _usage",
            line=line,
        )

    def _add(self, msg: Message) -> int:
        self.awaiting_total = None
        return self.rows.add(msg, key=self.current)

    def _plain(self, line: int, role: str, obj: dict[str, Any]) -> None:
        parts = content_parts(obj.get("content"), self.report, line)
        if parts is None:
            return
        texts = [p.text for p in parts if isinstance(p, TextPart)]
        first = unwrap_system(texts[0]) if texts else None
        if role == "user" and first is not None and first.startswith(COMPACTED):
            summary = "\n".join(texts[1:])
            self.rows.add(Cut(summary=summary, policy="kimi-cli"))
            self.awaiting_total = None
            return
        meta: dict[str, Any] = {}
        if role == "user" and first is not None and first.startswith(_CHECKPOINT):
            meta[SYNTHETIC] = "checkpoint"
        content = tuple(p for p in parts if isinstance(p, TextPart | ImagePart))
        self._add(Message("user" if role == "user" else "system", content, meta=meta))

    def _assistant(self, line: int, obj: dict[str, Any]) -> None:
        parts: list[Part] = list(content_parts(obj.get("content"), self.report, line) or ())
        calls = obj.get("tool_calls")
        for n, call in enumerate(calls if isinstance(calls, list) else ()):
            fn = opt_dict(call, "function") if isinstance(call, dict) else {}
            name = opt_str(fn, "name")
            if name is None:
                self.report.skip(
                    "tool call without name",
                    "expected a tool call with a `function.name`",
                    line=line,
                )
                continue
            assert isinstance(call, dict)
            arguments = fn.get("arguments")
            if arguments is None:
                self.report.repair(
                    "null arguments", "expected `function.arguments` on a tool call", line=line
                )
                arguments = "{}"
            unique = self.calls.call(call.get("id"), name, f"call_gen_{line}_{n}", line=line)
            parts.append(
                ToolCallPart(
                    unique,
                    name,
                    arguments_text(arguments, self.report, "function.arguments", line=line),
                )
            )
        has_calls = any(isinstance(p, ToolCallPart) for p in parts)
        usage = None
        if self.pending_input is not None:
            usage = Usage(input_tokens=self.pending_input)
            self.pending_input = None
        msg = Message(
            "assistant", tuple(parts), usage=usage, stop_reason="tool_use" if has_calls else None
        )
        row = self._add(msg)
        self.awaiting_total = row if usage is not None else None

    def _tool(self, line: int, obj: dict[str, Any]) -> None:
        unique = self.calls.result(obj.get("tool_call_id"), what="tool message", line=line)
        if unique is None:
            return
        parts = content_parts(obj.get("content"), self.report, line) or []
        content = tuple(p for p in parts if isinstance(p, TextPart | ImagePart))
        text = "\n".join(p.text for p in content if isinstance(p, TextPart))
        result = ToolResultPart(
            unique,
            content or (TextPart(""),),
            is_error=text.lstrip().startswith("<system>ERROR"),
            name=self.calls.name_of(unique),
        )
        self._add(Message("tool", (result,)))

    def _usage(self, line: int, count: Any) -> None:
        self.report.ignore("_usage", line=line)
        if not isinstance(count, int) or isinstance(count, bool):
            return
        row = self.awaiting_total
        if row is not None:
            msg = self.rows.rows[row].body
            assert isinstance(msg, Message) and msg.usage is not None
            output = count - msg.usage.input_tokens
            if output >= 0:
                usage = Usage(input_tokens=msg.usage.input_tokens, output_tokens=output)
                self.rows.replace(
                    row, Message(msg.role, msg.parts, usage, msg.model, msg.stop_reason, msg.meta)
                )
            self.awaiting_total = None
            return
        self.pending_input = count
