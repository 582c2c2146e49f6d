"""History recall: search every entry a session logged, compacted or not, and return exact
excerpts with entry references within a token budget.

The log keeps everything, so what a compaction took out of the context can still be read
word for word: the exact error message, the command output, the code an agent wrote before
the cut (Amp's ``read_thread``, Codex's history search, Cursor's history files).

A :class:`HistoryIndex` holds one searchable *document* per piece of an entry: a message's
text, each tool call (``name`` and its arguments), each tool result (named by its call's
tool) and a compaction's continuation state. It is built incrementally
(:meth:`HistoryIndex.update` indexes only the entries it has not seen), keeps a lower-cased
copy of each text for case-insensitive search, and answers a :class:`RecallQuery` newest
first: every document that matches all given filters, each shown as the lines around its
matches (:data:`~ctxengine.policy.defaults.RECALL_CONTEXT_LINES` either side), until the
budget is spent; the rest are counted, not shown.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

import orjson

from ctxengine.errors import ConfigError
from ctxengine.model import CompactionRecord, Entry, TextPart
from ctxengine.policy.defaults import (
    RECALL_BUDGET_TOKENS,
    RECALL_CONTEXT_LINES,
    RECALL_LINE_MAX_CHARS,
    RECALL_MAX_MATCH_LINES,
    RECALL_TOOL_NAME,
)
from ctxengine.tokens.base import Estimator

#: What a document is.
DocKind: TypeAlias = Literal["message", "tool_call", "tool_result", "summary"]


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """What to look for. Every filter given must hold; at least one must be given.

    Attributes:
        text: the text to find (a substring; with ``regex``, a Python regular expression).
        regex: ``text`` is a regular expression.
        case_sensitive: match case exactly (default: case-insensitive).
        path: a file path: tool calls whose arguments name it, their results, and any
            other text that names it.
        tool: a tool name: its calls and their results.
        first_seq / last_seq: only entries with ``first_seq <= seq <= last_seq``.
        role: only documents of messages with this role (``user``, ``assistant``,
            ``tool``, ``system``).
        summaries: search the continuation states of the compactions too (by default only
            the original entries: a state restates what they hold, and the newest one is
            in the context already).
        entry_id: only this entry (the id a truncation or prune note names): its documents
            are shown whole, from ``from_line`` on, within the budget.
        from_line: the first line shown of a document shown whole (1-based).
    """

    text: str = ""
    regex: bool = False
    case_sensitive: bool = False
    path: str | None = None
    tool: str | None = None
    first_seq: int | None = None
    last_seq: int | None = None
    role: str | None = None
    summaries: bool = False
    entry_id: str | None = None
    from_line: int = 1

    @property
    def whole(self) -> bool:
        """Documents are shown whole (from :attr:`from_line`): a query by entry id or by
        entry range without a text."""
        ranged = self.first_seq is not None or self.last_seq is not None
        return not self.text and (self.entry_id is not None or ranged)

    def describe(self) -> str:
        """The query in words (for the result's first line)."""
        parts: list[str] = []
        if self.text:
            parts.append(f"/{self.text}/" if self.regex else repr(self.text))
        if self.path:
            parts.append(f"path {self.path}")
        if self.tool:
            parts.append(f"tool {self.tool}")
        if self.role:
            parts.append(f"role {self.role}")
        if self.entry_id:
            parts.append(f"entry {self.entry_id}")
        if self.first_seq is not None or self.last_seq is not None:
            lo = "" if self.first_seq is None else str(self.first_seq)
            hi = "" if self.last_seq is None else str(self.last_seq)
            parts.append(f"entries {lo}..{hi}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One matching document, as shown.

    Attributes:
        entry_id / seq: the entry it belongs to.
        kind: :data:`DocKind`.
        role: the message's role (``"summary"`` for a continuation state).
        tool: the tool's name, for a tool call or result; else ``None``.
        call_id: the call's id, for a tool call or result; else ``None``.
        line: the 1-based line of the first match (1 when the query has no text).
        excerpt: the lines shown, each prefixed with its number (``"12: …"``), gaps marked
            ``"…"``.
        tokens: the excerpt's size, in tokens.
        next_line: for a document shown whole and cut to the budget, its first line not
            shown (ask again with it as ``from_line`` to go on); else ``None``.
    """

    entry_id: str
    seq: int
    kind: DocKind
    role: str
    tool: str | None
    call_id: str | None
    line: int
    excerpt: str
    tokens: int
    next_line: int | None = None

    def label(self) -> str:
        """``e41 · seq 41 · tool result of Bash`` (what the hit is, in words)."""
        what = {
            "message": f"{self.role} message",
            "tool_call": f"call of {self.tool}",
            "tool_result": f"tool result of {self.tool or 'an unknown tool'}",
            "summary": "continuation state of a compaction",
        }[self.kind]
        return f"{self.entry_id} · seq {self.seq} · {what}"


@dataclass(frozen=True, slots=True)
class RecallResult:
    """The answer to a query.

    Attributes:
        query: the query.
        hits: the documents shown, newest first (or oldest first, as asked).
        matched: every document that matched, shown or not.
        budget: the token budget the excerpts were fitted into.
        tokens: the excerpts' total, in tokens.
        newest_first: the order of ``hits``.
    """

    query: RecallQuery
    hits: tuple[RecallHit, ...]
    matched: int
    budget: int
    tokens: int
    newest_first: bool = True

    @property
    def more(self) -> int:
        """Matches not shown (over the budget)."""
        return self.matched - len(self.hits)


@dataclass(frozen=True, slots=True)
class _Doc:
    entry_id: str
    seq: int
    kind: DocKind
    role: str
    tool: str | None
    call_id: str | None
    text: str
    lower: str
    paths: str  # lower-cased arguments of the call (for a call and its result)


class HistoryIndex:
    """The searchable documents of a session's entries (see the module docstring).

    Args:
        estimator: sizes the excerpts, in tokens.
    """

    def __init__(self, estimator: Estimator) -> None:
        self._estimator = estimator
        self._docs: list[_Doc] = []
        self._seen = 0
        self._calls: dict[str, tuple[str, str]] = {}  # call id → (tool name, arguments)

    def __len__(self) -> int:
        """Documents indexed."""
        return len(self._docs)

    @property
    def entries_seen(self) -> int:
        """How many leading entries of the log were indexed."""
        return self._seen

    def update(self, entries: Sequence[Entry], hidden: Collection[int] = ()) -> int:
        """Index ``entries[entries_seen:]`` (the log as it stands: earlier entries were
        indexed before and never change); positions in ``hidden`` (entries withdrawn from
        the log) are skipped. Returns the documents added."""
        before = len(self._docs)
        for i in range(self._seen, len(entries)):
            if i not in hidden:
                self._docs.extend(self._documents(entries[i]))
        self._seen = max(self._seen, len(entries))
        return len(self._docs) - before

    def _documents(self, entry: Entry) -> Iterator[_Doc]:
        body = entry.body
        if isinstance(body, CompactionRecord):
            yield _doc(entry, "summary", "summary", None, None, body.summary, "")
            return
        message = entry.message
        if message is None:
            return
        role = message.role
        texts = [p.text for p in message.parts if isinstance(p, TextPart) and p.text]
        if texts:
            yield _doc(entry, "message", role, None, None, "\n".join(texts), "")
        for call in message.tool_calls:
            self._calls[call.id] = (call.name, call.arguments)
            if call.name == RECALL_TOOL_NAME:
                continue  # its own calls and answers would be found again by every recall
            text = call_text(call.name, call.arguments)
            yield _doc(entry, "tool_call", role, call.name, call.id, text, call.arguments)
        for result in message.tool_results:
            name, arguments = self._calls.get(result.call_id, (result.name or None, ""))
            if name == RECALL_TOOL_NAME:
                continue
            text = "\n".join(p.text for p in result.content if isinstance(p, TextPart))
            yield _doc(entry, "tool_result", role, name, result.call_id, text, arguments)

    def search(
        self,
        query: RecallQuery,
        *,
        budget: int = RECALL_BUDGET_TOKENS,
        context_lines: int = RECALL_CONTEXT_LINES,
        newest_first: bool = True,
    ) -> RecallResult:
        """The documents matching ``query``, shown within ``budget`` tokens.

        Args:
            query: the filters (:class:`RecallQuery`).
            budget: tokens the excerpts may take in all; the first hit is always shown
                (cut to the budget when it alone exceeds it).
            context_lines: lines shown either side of each matching line.
            newest_first: order of the hits (default newest first).

        Returns:
            The :class:`RecallResult`.

        Raises:
            ConfigError: no filter given, an invalid regular expression, or a negative
                budget or ``context_lines``.
        """
        if budget < 1 or context_lines < 0:
            raise ConfigError("recall: the budget must be at least 1 token, context_lines >= 0")
        if query.from_line < 1:
            raise ConfigError("recall: from_line must be at least 1")
        lo, hi = query.first_seq, query.last_seq
        if lo is not None and hi is not None and lo > hi:
            raise ConfigError(
                f"recall: the entry range {query.first_seq}..{query.last_seq} is empty "
                "(from_seq is after to_seq)"
            )
        find = _matcher(query)
        path = query.path.lower() if query.path else None
        tool = query.tool
        lo, hi = query.first_seq, query.last_seq
        docs = reversed(self._docs) if newest_first else iter(self._docs)
        hits: list[RecallHit] = []
        matched = spent = 0
        for d in docs:
            if (lo is not None and d.seq < lo) or (hi is not None and d.seq > hi):
                continue
            if query.role is not None and d.role != query.role:
                continue
            if d.kind == "summary" and not query.summaries:
                continue
            if query.entry_id is not None and d.entry_id != query.entry_id:
                continue
            if tool is not None and d.tool != tool:
                continue
            if path is not None and path not in d.paths and path not in d.lower:
                continue
            spans = find(d) if find is not None else [(0, 0)]
            if not spans:
                continue
            matched += 1
            if spent >= budget and hits:
                continue
            if query.whole:
                excerpt, line = _numbered(d.text, query.from_line), query.from_line
            else:
                excerpt, line = _excerpt(d.text, spans, context_lines)
            tokens = self._estimator.text(excerpt)
            next_line = None
            if hits and spent + tokens > budget:
                spent = budget  # no later hit is shown either: the order stays exact
                continue
            if not hits and tokens > budget:
                excerpt = _cut_to(excerpt, budget, self._estimator)
                if query.whole:
                    excerpt, next_line = _with_rest(excerpt, d.text)
                tokens = self._estimator.text(excerpt)
            hits.append(
                RecallHit(
                    d.entry_id,
                    d.seq,
                    d.kind,
                    d.role,
                    d.tool,
                    d.call_id,
                    line,
                    excerpt,
                    tokens,
                    next_line,
                )
            )
            spent += tokens
        total = sum(h.tokens for h in hits)
        return RecallResult(query, tuple(hits), matched, budget, total, newest_first)


def call_text(name: str, arguments: str) -> str:
    """A tool call as searchable text: its name on the first line, then one line per
    argument (``key: value``; a string value with line breaks on the lines after ``key:``,
    as written, so code passed to an edit is found and shown line by line). Arguments that
    are not a JSON object stay as written after the name."""
    try:
        parsed = orjson.loads(arguments) if arguments else {}
    except orjson.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        return f"{name} {arguments}"
    lines = [name]
    for key, value in parsed.items():
        if isinstance(value, str):
            lines.append(f"{key}:\n{value}" if "\n" in value else f"{key}: {value}")
        else:
            lines.append(f"{key}: {orjson.dumps(value).decode()}")
    return "\n".join(lines)


def _doc(
    entry: Entry,
    kind: DocKind,
    role: str,
    tool: str | None,
    call_id: str | None,
    text: str,
    arguments: str,
) -> _Doc:
    return _Doc(
        entry.id, entry.seq, kind, role, tool, call_id, text, text.lower(), arguments.lower()
    )


#: Gives the match spans ``(start, end)`` of a document's text.
Matcher: TypeAlias = Callable[[_Doc], list[tuple[int, int]]]


def _matcher(query: RecallQuery) -> Matcher | None:
    """A function giving the match spans of a document's text (at most
    :data:`RECALL_MAX_MATCH_LINES` lines' worth), or ``None`` when the query has no text.

    Raises:
        ConfigError: no filter at all, or an invalid regular expression.
    """
    text = query.text
    if not text:
        ranged = query.first_seq is not None or query.last_seq is not None
        if not (query.path or query.tool or query.role or ranged or query.entry_id):
            raise ConfigError("recall: give a text, a path, a tool, a role, an entry or a range")
        return None
    if query.regex:
        try:
            pattern = re.compile(text, 0 if query.case_sensitive else re.IGNORECASE)
        except (re.error, OverflowError, RecursionError) as exc:
            raise ConfigError(f"recall: invalid regular expression {text!r}: {exc}") from exc

        def by_regex(d: _Doc) -> list[tuple[int, int]]:
            out: list[tuple[int, int]] = []
            for m in pattern.finditer(d.text):
                out.append(m.span())
                if len(out) == RECALL_MAX_MATCH_LINES:
                    break
            return out

        return by_regex
    needle = text if query.case_sensitive else text.lower()

    def by_text(d: _Doc) -> list[tuple[int, int]]:
        hay = d.text if query.case_sensitive else d.lower
        out: list[tuple[int, int]] = []
        at = hay.find(needle)
        while at >= 0 and len(out) < RECALL_MAX_MATCH_LINES:
            out.append((at, at + len(needle)))
            at = hay.find(needle, at + max(1, len(needle)))
        return out

    return by_text


def _excerpt(text: str, spans: Sequence[tuple[int, int]], context: int) -> tuple[str, int]:
    """The lines around the matches in ``spans`` (``context`` either side), numbered, with
    ``…`` for the gaps; and the 1-based line of the first match."""
    starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    lines = text.split("\n")
    wanted: set[int] = set()
    first = None
    for begin, _end in spans:
        line = _line_of(starts, begin)
        first = line if first is None else first
        wanted.update(range(max(0, line - context), min(len(lines), line + context + 1)))
    out: list[str] = []
    previous = -1
    for n in sorted(wanted):
        if previous >= 0 and n != previous + 1:
            out.append("…")
        out.append(f"{n + 1}: {_clip(lines[n], spans, starts[n])}")
        previous = n
    return "\n".join(out), (first or 0) + 1


def whole_lines(text: str) -> list[str]:
    """The lines of ``text`` as a whole-entry read numbers them: each line of the text, one
    longer than :data:`~ctxengine.policy.defaults.RECALL_LINE_MAX_CHARS` characters in
    pieces of that many (the last shorter), so that every character can be read, a page at
    a time, and the pieces joined give the line back."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= RECALL_LINE_MAX_CHARS:
            out.append(line)
        else:
            out += [
                line[i : i + RECALL_LINE_MAX_CHARS]
                for i in range(0, len(line), RECALL_LINE_MAX_CHARS)
            ]
    return out


def _numbered(text: str, first: int) -> str:
    """The lines of ``text`` (:func:`whole_lines`) from line ``first`` (1-based) on,
    numbered; a note when ``first`` is past the end."""
    lines = whole_lines(text)
    if first > len(lines):
        return f"(the document has {len(lines)} lines)"
    return "\n".join(f"{n}: {lines[n - 1]}" for n in range(first, len(lines) + 1))


def _with_rest(excerpt: str, text: str) -> tuple[str, int | None]:
    """``excerpt`` (numbered lines cut to a budget) and, when lines of ``text`` follow it, a
    line saying where to go on; with the first line not shown (``None``: none follows)."""
    last = excerpt.rsplit("\n", 1)[-1].split(":", 1)[0]
    total = len(whole_lines(text))
    if not last.isdigit() or int(last) >= total:
        return excerpt, None
    n = int(last)
    return (
        f"{excerpt}\n… lines {n + 1}–{total} not shown: ask again with from_line {n + 1}",
        n + 1,
    )


def _line_of(starts: Sequence[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _clip(line: str, spans: Sequence[tuple[int, int]], start: int) -> str:
    """``line`` cut to :data:`RECALL_LINE_MAX_CHARS` around its first match (if any)."""
    if len(line) <= RECALL_LINE_MAX_CHARS:
        return line
    at = next((b - start for b, _ in spans if start <= b < start + len(line)), 0)
    half = RECALL_LINE_MAX_CHARS // 2
    lo = max(0, min(at - half, len(line) - RECALL_LINE_MAX_CHARS))
    hi = lo + RECALL_LINE_MAX_CHARS
    return ("…" if lo else "") + line[lo:hi] + ("…" if hi < len(line) else "")


def _cut_to(text: str, budget: int, estimator: Estimator) -> str:
    """``text`` cut at a line end so that it costs at most ``budget`` tokens (at least its
    first line, clipped)."""
    lines = text.split("\n")
    while len(lines) > 1 and estimator.text("\n".join(lines)) > budget:
        lines.pop()
    return "\n".join(lines)
