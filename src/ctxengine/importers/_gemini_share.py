"""Gemini CLI chat shares (``/chat share file.md`` and ``file.json``) to messages.

Both hold the chat history Gemini CLI sends to the model, a list of ``Content``
(``{"role": "user" | "model", "parts": [...]}``). The JSON share is that list. The Markdown
share writes each content as a header line (``🧑‍💻 ## USER`` / ``✨ ## MODEL`` in older
versions, ``## USER 🧑‍💻`` / ``## MODEL ✨`` in newer ones), a blank line and its parts
concatenated: text as it is, a function call as ``**Tool Command**:`` and a fenced JSON block
of ``{name, args[, id]}``, a function response as ``**Tool Response**:`` and a fenced JSON
block of ``{id, name, response}``; contents are joined by ``\\n\\n---\\n\\n``.
:func:`parse_markdown` reverses that: a header counts only at the start of the file or after
that separator, and a JSON block ends at the first line that is a closing fence (JSON text
never holds a raw newline).

Mapping (:class:`ContentReader`): a model content is one assistant message (``thought``
text → reasoning; calls in order). Function calls of older Gemini API versions carry no id;
their response carries the id Gemini CLI gave the call, so a response answers the call with
its id, else the oldest unanswered call of the same name without an id. A user content is a
``tool`` message for its responses and a user message for the rest; the text parts that
follow responses in the same content are tool output (``read_many_files`` appends the files
read) and are marked ``meta["synthetic"] = "function_response_parts"``. Gemini CLI's
environment context is marked ``meta["synthetic"] = "setup_context"``.

Tolerated drift (counted, refused in strict mode): a section with another role (skipped), a
JSON block that is not JSON (skipped) or is cut at the end of the file (``"partial last
block"``, skipped), a response without an id (paired by name, repaired) or without a call
(skipped), ``null`` arguments (repaired), a non-string ``output`` (repaired), lone surrogate
escapes and bytes that are not UTF-8 (repaired).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ctxengine.importers._build import parse_json
from ctxengine.importers._gemini_parts import Content, GeminiParts, Where, tool_result, user_meta
from ctxengine.importers._parts import SYNTHETIC, opt_str
from ctxengine.importers.report import ImportReport
from ctxengine.model import Message, Part, ReasoningPart, TextPart, ToolCallPart, ToolResultPart

_ICON = r"(?:🧑\u200d?💻|✨)"
#: A content header: ``[icon ]## ROLE[ icon]``.
HEADER = re.compile(rf"^(?:{_ICON} )?## ([A-Z][A-Z_]*)(?: {_ICON})?[ \t]*$", re.M)
SEPARATOR = "\n\n---\n\n"
_HEADER_B = re.compile(
    rb"(?:(?:\xf0\x9f\xa7\x91(?:\xe2\x80\x8d)?\xf0\x9f\x92\xbb|\xe2\x9c\xa8) )?## ([A-Z][A-Z_]*)"
    rb"(?: (?:\xf0\x9f\xa7\x91(?:\xe2\x80\x8d)?\xf0\x9f\x92\xbb|\xe2\x9c\xa8))?[ \t]*(?:\r?\n|\Z)"
)
_SEPARATOR_B = SEPARATOR.encode()
_BLOCK_B = re.compile(rb"\*\*Tool (Command|Response)\*\*:\n```json\n")
_FENCE_B = b"\n```"
#: The separator and the closing fence, searched with these (faster than ``bytes.find`` for
#: them).
_SEPARATOR_RE = re.compile(re.escape(_SEPARATOR_B))
_FENCE_RE = re.compile(re.escape(_FENCE_B))
_LEADING_NEWLINES = re.compile(rb"\n*")
_dumps = orjson.dumps
#: Roles of a share.
ROLES = ("USER", "MODEL")
#: Their header bytes, decoded once.
_ROLE_NAMES = {r.encode(): r for r in ROLES}
#: ``meta["synthetic"]`` of text that follows function responses in a user content.
RESPONSE_PARTS = "function_response_parts"


@dataclass(slots=True)
class Turn:
    """One content of a share: its role, its parts (Gemini ``Part`` objects) and where each
    part is (report locations)."""

    role: str
    where: Where
    parts: list[Any] = field(default_factory=list)
    wheres: list[Where] = field(default_factory=list)


class _Lines:
    """1-based line numbers of byte offsets in ``raw``, counted when asked (a location is only
    read when something is reported there), from the nearest offset asked before."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self.offsets = [0]
        self.lines = [1]

    def at(self, pos: int) -> int:
        """The line of ``raw[pos]``."""
        k = bisect_right(self.offsets, pos) - 1
        line = self.lines[k] + self.raw.count(b"\n", self.offsets[k], pos)
        if pos > self.offsets[-1]:
            self.offsets.append(pos)
            self.lines.append(line)
        return line


class _At(Mapping[str, Any]):
    """The location ``{"line": n}`` of a byte offset, its line counted when read (plus
    ``shift``: see :func:`_sections`)."""

    __slots__ = ("_lines", "_pos", "_shift")

    def __init__(self, lines: _Lines, pos: int, shift: int = 0) -> None:
        self._lines = lines
        self._pos = pos
        self._shift = shift

    def __getitem__(self, key: str) -> int:
        if key != "line":
            raise KeyError(key)
        return self._lines.at(self._pos) + self._shift

    def __iter__(self) -> Iterator[str]:
        return iter(("line",))

    def __len__(self) -> int:
        return 1


def _sections(raw: bytes) -> Iterator[tuple[str, int, int, int, int]]:
    """``(role, header offset, body start, body end, shift)`` (offsets into ``raw``) of each
    content of a Markdown share. The file is cut at the separator; a piece that does not open
    with a header line belongs to the body before it (a separator written inside a message),
    so a body is the bytes from its header to the next piece that opens with one (less the
    separator before that piece). The body's locations are those of its bytes, plus
    ``shift`` = 1 when the header line is the whole piece (the body, made of later pieces,
    starts on the header's line, but its lines have been counted from the next one)."""
    role: str | None = None
    header = body = shift = 0
    lead = _LEADING_NEWLINES.match(raw)
    pos = lead.end() if lead else 0
    stop = len(raw)
    while True:
        found = _SEPARATOR_RE.search(raw, pos)
        cut = found.start() if found else -1
        end = stop if cut < 0 else cut
        m = _HEADER_B.match(raw, pos, end)
        if m is not None:
            if role is not None:
                yield role, header, body, pos - len(_SEPARATOR_B), shift
            name = m.group(1)
            role = _ROLE_NAMES.get(name) or name.decode()
            header = pos
            body = m.end() + raw.startswith(b"\n", m.end(), end)
            shift = raw[m.end() - 1] != 0x0A
        if cut < 0:
            break
        pos = cut + len(_SEPARATOR_B)
    if role is not None:
        yield role, header, body, stop, shift


def _text(chunk: bytes, at: _At, report: ImportReport) -> str:
    """A text part: UTF-8, or (repaired at its line) with U+FFFD for the bytes that are not."""
    try:
        return chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        report.repair(
            "invalid UTF-8",
            "expected UTF-8 text (bytes that are not UTF-8 found)",
            line=at["line"] + chunk.count(b"\n", 0, exc.start),
        )
        return chunk.decode("utf-8", errors="replace")


def parse_markdown(raw: bytes, report: ImportReport) -> Iterator[Turn]:
    """The contents of a Markdown share, with 1-based line locations, each yielded once its
    parts are read (a caller that converts it before asking for the next keeps no more than
    one content's parsed JSON). Read as bytes, in place: JSON blocks go to the JSON parser as
    they are, only text parts are decoded, and lines are counted only for what is reported.

    Raises:
        TranscriptError: in strict mode, the first skipped or repaired block.
    """
    lines = _Lines(raw)
    for role, header, pos, stop, shift in _sections(raw):
        parts: list[Any] = []
        wheres: list[Where] = []
        turn = Turn(role, _At(lines, header), parts, wheres)
        while pos < stop:
            m = _BLOCK_B.search(raw, pos, stop)
            end = m.start() if m else stop
            if end > pos:
                at = _At(lines, pos, shift)
                parts.append({"text": _text(raw[pos:end], at, report)})
                wheres.append(at)
            if m is None:
                break
            block_where = _At(lines, end, shift)
            fence = _FENCE_RE.search(raw, m.end(), stop)
            if fence is None:
                report.skip(
                    "partial last block",
                    "expected a complete fenced JSON block, got one cut short",
                    **block_where,
                )
                break
            close = fence.start()
            block = raw[m.end() : close]
            try:
                value, error = orjson.loads(block), None
            except orjson.JSONDecodeError:  # read again, with repairs
                value, error = parse_json(block, report, line=block_where["line"])
            if error is not None or not isinstance(value, dict):
                report.skip(
                    "invalid JSON block",
                    f"expected a JSON object in the Tool {m.group(1).decode()} block",
                    **block_where,
                )
            else:
                key = "functionCall" if m.group(1) == b"Command" else "functionResponse"
                parts.append({key: value})
                wheres.append(block_where)
            pos = close + len(_FENCE_B)
        yield turn


def json_turns(data: Any, report: ImportReport) -> list[Turn]:
    """The contents of a JSON share (a list of ``{role, parts}``) with JSON-path locations;
    an item that is not such an object is skipped."""
    turns: list[Turn] = []
    for i, item in enumerate(data if isinstance(data, list) else ()):
        where: Where = {"json_path": f"$[{i}]"}
        parts = item.get("parts") if isinstance(item, dict) else None
        role = item.get("role") if isinstance(item, dict) else None
        if not isinstance(role, str) or not isinstance(parts, list):
            report.skip(
                "malformed content",
                "expected a content object with a string `role` and a `parts` list",
                **where,
            )
            continue
        turn = Turn(role.upper(), where, list(parts))
        turn.wheres = [{"json_path": f"$[{i}].parts[{k}]"} for k in range(len(parts))]
        turns.append(turn)
    return turns


class ContentReader:
    """Turns share contents into messages (the mapping is in the module docstring)."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.parts = GeminiParts(report)
        #: unanswered calls with their source id (``None`` when the call had none).
        self.open: list[tuple[ToolCallPart, str | None]] = []
        self.unnamed = 0

    def turn(self, turn: Turn) -> list[Message]:
        """The messages of one content; ``[]`` (skipped) for a role other than user and
        model."""
        if turn.role == "MODEL":
            return self._model(turn)
        if turn.role == "USER":
            return self._user(turn)
        self.report.skip(
            f"section:{turn.role}", f"expected a USER or MODEL content, got {turn.role}",
            **turn.where,
        )  # fmt: skip
        return []

    def _model(self, turn: Turn) -> list[Message]:
        parts: list[Part] = []
        calls = False
        for part, where in zip(turn.parts, turn.wheres, strict=True):
            fc = part.get("functionCall") if type(part) is dict else None
            if type(fc) is dict:
                call = self._call(fc, where)
                if call is not None:
                    parts.append(call)
                    calls = True
                continue
            found = self.parts.content(part, where)
            if found is None or (type(found) is TextPart and not found.text):
                continue
            parts.append(found)
        if not parts:
            return []
        return [Message("assistant", tuple(parts), stop_reason="tool_use" if calls else "stop")]

    def _call(self, fc: dict[str, Any], where: Where) -> ToolCallPart | None:
        source = fc.get("id")
        name, args = fc.get("name"), fc.get("args")
        if type(source) is str and source and type(name) is str and name and type(args) is dict:
            # the usual call (an id, a name, an args object): what GeminiParts.call gives
            made = ToolCallPart(self.parts.calls.call(source), name, _dumps(args).decode(), {})
            self.open.append((made, source))
            return made
        if type(source) is not str:
            self.unnamed += 1
            source = None
        call = self.parts.call(
            name,
            args,
            f"gemini_call_{self.unnamed}" if source is None else source,
            where,
            {},
        )
        if call is not None:
            self.open.append((call, source))
        return call

    def _answer(self, fr: dict[str, Any], where: Where) -> ToolCallPart | None:
        """The open call ``fr`` answers (see the module docstring); ``None`` (skipped) when
        there is none."""
        rid, name = opt_str(fr, "id"), opt_str(fr, "name")
        if rid:
            for k, (call, source) in enumerate(self.open):
                if source == rid:
                    del self.open[k]
                    return call
        for k, (call, source) in enumerate(self.open):
            if source is None and call.name == name:
                if rid is None:
                    self.report.repair(
                        "function response without id",
                        "expected a string `id` on a function response",
                        **where,
                    )
                del self.open[k]
                return call
        self.report.skip(
            "function response without a call",
            f"expected a function response to answer an earlier call (id {rid!r})",
            **where,
        )
        return None

    def _user(self, turn: Turn) -> list[Message]:
        out: list[Message] = []
        results: list[ToolResultPart] = []
        texts: list[Content] = []
        answered = False
        for part, where in zip(turn.parts, turn.wheres, strict=True):
            fr = part.get("functionResponse") if type(part) is dict else None
            if type(fr) is dict:
                call = self._answer(fr, where)
                if call is None:
                    continue
                if texts:
                    out.append(self._texts(texts, answered))
                    texts = []
                rid = fr.get("id")
                meta = {"response_id": rid} if type(rid) is str else {}
                resp = fr.get("response")
                output = resp.get("output") if type(resp) is dict and len(resp) == 1 else None
                if type(output) is str and "parts" not in fr:
                    # the usual response, ``{"output": text}``: what GeminiParts.response
                    # and tool_result give for it
                    result = (TextPart(output),)
                    results.append(ToolResultPart(call.id, result, False, call.name, meta))
                else:
                    content, error = self.parts.response(fr, where)
                    results.append(tool_result(call, content, error, meta))
                answered = True
                continue
            if results:
                out.append(Message("tool", tuple(results)))
                results = []
            found = self.parts.content(part, where)
            if isinstance(found, ReasoningPart):
                found = TextPart(found.text)
            if found is not None and not (type(found) is TextPart and not found.text):
                texts.append(found)
        if results:
            out.append(Message("tool", tuple(results)))
        if texts:
            out.append(self._texts(texts, answered))
        return out

    @staticmethod
    def _texts(texts: list[Content], answered: bool) -> Message:
        """The user message of ``texts``: the parts that follow function responses in the
        same content, or the user's own (Gemini CLI's environment context marked)."""
        meta = {SYNTHETIC: RESPONSE_PARTS} if answered else user_meta(list(texts))
        return Message("user", tuple(texts), meta=meta)
