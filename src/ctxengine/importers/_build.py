"""Shared pieces for importers: reading JSON/JSONL with located errors, building a
parent-linked log, and disambiguating reused tool-call ids."""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from ctxengine.errors import TranscriptError
from ctxengine.importers.report import ImportReport
from ctxengine.model import Entry
from ctxengine.model.codec import HASH_PREFIX, wire
from ctxengine.model.entries import Body

if TYPE_CHECKING:
    from ctxengine.importers.base import ImportedSession

#: A UTF-8 byte order mark; accepted (and dropped) at the start of a file.
BOM = b"\xef\xbb\xbf"
#: Start of the ``ValueError`` Python raises for an integer string over its digit limit.
INT_LIMIT = "Exceeds the limit"


def too_complex(path: Path, exc: BaseException, *, line: int | None = None) -> TranscriptError:
    """The error for a value ctxengine cannot process, naming ``path`` and ``line``: nesting
    too deep (``RecursionError``, orjson's recursion limit) or an integer too long to convert
    (``ValueError`` "Exceeds the limit …")."""
    text = str(exc)
    if isinstance(exc, RecursionError) or "Recursion limit" in text:
        expected = "expected JSON nested less deeply (too deep to process)"
    elif text.startswith(INT_LIMIT):
        expected = f"expected shorter integers ({text.split('; ', 1)[0]})"
    else:
        expected = f"expected JSON values that can be encoded again ({text})"
    return TranscriptError(str(path), expected, line=line)


@contextmanager
def located(path: Path, line: int | None = None) -> Iterator[None]:
    """Turn a too deeply nested value or a too long integer met inside the block into
    :func:`too_complex`'s ``TranscriptError``."""
    try:
        yield
    except LOCATED as exc:
        raise relocated(path, exc, line) from None


#: The exceptions :func:`located` and :func:`relocated` look at.
LOCATED = (RecursionError, orjson.JSONEncodeError, ValueError)


def relocated(path: Path, exc: BaseException, line: int | None) -> BaseException:
    """What :func:`located` raises for ``exc`` met at ``line`` of ``path``: :func:`too_complex`'s
    ``TranscriptError`` for a too deep value or a too long integer, else ``exc`` itself. For
    hot loops, where one ``try`` around the loop costs less than a ``with`` per line."""
    if isinstance(exc, RecursionError | orjson.JSONEncodeError) or str(exc).startswith(INT_LIMIT):
        return too_complex(path, exc, line=line)
    return exc


#: A lone UTF-16 surrogate code point (what ``json`` decodes a ``"\\ud83d"`` escape without its
#: pair into).
_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: A ``\\uD800``-``\\uDFFF`` escape in JSON text not part of a high+low pair.
_LONE_ESCAPE = re.compile(
    rb"(?<!\\)\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
#: The replacement character lone surrogates become.
REPLACEMENT = "\ufffd"


def _scrub(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys included) replaced by
    U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    return False


def parse_json(
    raw: bytes, report: ImportReport, *, line: int | None = None
) -> tuple[Any, orjson.JSONDecodeError | None]:
    """``(value, None)`` for JSON text ``raw``, or ``(None, error)`` when it is not JSON.

    Text orjson refuses is decoded once more, leniently: bytes that are not UTF-8 become
    U+FFFD (``report.repair("invalid UTF-8", …)``) and lone UTF-16 surrogate escapes
    (``"\\ud83d"``, written by Node-based agents that cut a string inside an emoji) become
    U+FFFD (``report.repair("lone surrogate", …)``).

    Raises:
        TranscriptError: in strict mode, for a repair.
        RecursionError, ValueError: nesting too deep, integers too long (see :func:`located`).
    """
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError as exc:
        first = exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        bad_utf8 = True
    else:
        bad_utf8 = False
        if _LONE_ESCAPE.search(raw) is None:
            return None, first
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None, first
    if bad_utf8:
        report.repair(
            "invalid UTF-8", "expected UTF-8 text (bytes that are not UTF-8 found)", line=line
        )
    if _has_surrogate(value):
        report.repair(
            "lone surrogate",
            "expected paired UTF-16 surrogate escapes (a lone surrogate such as \\ud83d found)",
            line=line if line is not None else _surrogate_line(raw),
        )
        value = _scrub(value)
    return value, None


def _surrogate_line(raw: bytes) -> int | None:
    """1-based line of the first lone surrogate escape in a multi-line document."""
    match = _LONE_ESCAPE.search(raw)
    return raw.count(b"\n", 0, match.start()) + 1 if match else None


def iter_jsonl(
    path: Path, report: ImportReport, data: bytes | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """An iterator of ``(line_number, object)`` for each non-blank line of a JSONL file
    (1-based). A UTF-8 byte order mark before the first line is dropped. ``data``: the
    file's bytes when the caller has already read them (``path`` is then only named in
    errors).

    Tolerated (and counted in ``report``): a last line without its newline that is not valid
    JSON (``"partial last line"``: a live session still being written), any other line that
    is not JSON (``"invalid JSON line"``) or not an object (``"non-object line"``), bytes that
    are not UTF-8 and lone surrogate escapes (:func:`parse_json`).

    Raises:
        TranscriptError: the file cannot be read (raised by the call); while iterating, a
            line nested too deeply or with an integer too long to convert (names the line),
            and in strict mode the first line that is skipped or repaired.
    """
    if data is None:
        # read whole: iterating a file's lines costs about six times as much as iterating
        # the lines of its bytes in memory
        data = read_file(path)
    # the reading generator itself, not one that delegates to it: a line costs one resume
    return _jsonl_objects(path, io.BytesIO(data), report)


def _jsonl_objects(
    path: Path, lines: Iterable[bytes], report: ImportReport
) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`iter_jsonl` over ``lines`` (each with its newline, the last one perhaps
    without)."""
    loads = orjson.loads
    for number, raw in enumerate(lines, start=1):
        if number == 1:
            raw = raw.removeprefix(BOM)
        if not raw or raw.isspace():
            continue
        try:  # the common case, a JSON object; anything else is read again below
            value = loads(raw)
        except (ValueError, RecursionError):
            value = None
        if type(value) is dict:
            yield number, value
            continue
        try:
            value, error = parse_json(raw, report, line=number)
        except LOCATED as exc:
            raise relocated(path, exc, number) from None
        if not is_object_line(raw, number, value, error, report):
            continue
        yield number, value


def is_object_line(
    raw: bytes, number: int, value: Any, error: Exception | None, report: ImportReport
) -> bool:
    """True when line ``number`` (its bytes ``raw``) parsed to a JSON object; otherwise the
    line is reported skipped: ``"partial last line"`` (no newline: still being written),
    ``"invalid JSON line"`` or ``"non-object line"``. ``value``/``error``: what
    :func:`parse_json` returned. Raises TranscriptError under a strict report."""
    if error is not None:
        if not raw.endswith(b"\n"):
            report.skip(
                "partial last line",
                f"expected a complete JSON object, got a line cut short ({error})",
                line=number,
            )
        else:
            report.skip(
                "invalid JSON line",
                f"expected a JSON object, got invalid JSON ({error})",
                line=number,
            )
        return False
    if not isinstance(value, dict):
        report.skip(
            "non-object line", f"expected a JSON object, got {type(value).__name__}", line=number
        )
        return False
    return True


def read_file(path: Path) -> bytes:
    """The bytes of the file ``path``, read once (a reader that needs them twice, to parse
    and to hash, keeps them).

    Raises:
        TranscriptError: the file cannot be read (``"cannot read file: <reason>"``).
    """
    try:
        return path.read_bytes()
    except OSError as exc:
        raise TranscriptError(str(path), f"cannot read file: {exc.strerror}") from exc


def load_json(path: Path, report: ImportReport, data: bytes | None = None) -> Any:
    """Parse a whole JSON file (a leading UTF-8 byte order mark is dropped); bytes that are
    not UTF-8 and lone surrogate escapes are repaired (:func:`parse_json`). ``data``: the
    file's bytes when the caller has already read them.

    Raises:
        NotJSON: the text is not JSON (a document cut short).
        TranscriptError: unreadable or too deeply nested JSON; in strict mode a repair.
    """
    if data is None:
        data = read_file(path)
    with located(path):
        value, error = parse_json(data.removeprefix(BOM), report)
    if error is not None:
        raise NotJSON(str(path), str(error))
    return value


class NotJSON(TranscriptError):
    """A JSON transcript that does not parse (cut short while being written, or invalid):
    ``expected a JSON document (<detail>)``; :func:`~ctxengine.importers.read_transcript`
    names the format the start of the file looked like.

    Attributes:
        detail: the parser's message (``unexpected end of data: line 17 column 161 …``).
    """

    def __init__(self, path: str, detail: str) -> None:
        self.detail = detail
        super().__init__(path, f"expected a JSON document ({detail})")


def file_digest(path: Path) -> str:
    """A stable session id for formats without one: ``"f:"`` + blake2b-64 hex of the file bytes."""
    h = hashlib.blake2b(digest_size=8)
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return "f:" + h.hexdigest()


def expect(
    path: Path, cond: bool, expected: str, *, line: int | None = None, json_path: str | None = None
) -> None:
    """Raise ``TranscriptError(path, expected, line=…, json_path=…)`` unless ``cond``."""
    if not cond:
        raise TranscriptError(str(path), expected, line=line, json_path=json_path)


_blake2b = hashlib.blake2b

#: ``orjson.dumps`` options of :func:`body_hash`: canonical JSON (sorted keys) with every
#: dataclass handed to :func:`~ctxengine.model.codec.wire` (orjson's own form would keep
#: ``None`` fields).
_HASH_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS


def body_hash(body: Body, parent_id: str | None = None) -> str:
    """:func:`ctxengine.model.codec.body_hash` (the same id: ``"b2:"`` + blake2b-128 of the
    canonical JSON of ``{"parent", "body"}``), faster: orjson walks the body itself and asks
    :func:`~ctxengine.model.codec.wire` only for the dict of each dataclass (a part, usage,
    the message), whose fields are read by a function generated once per type."""
    data = orjson.dumps({"parent": parent_id, "body": body}, default=wire, option=_HASH_OPTIONS)
    return HASH_PREFIX + hashlib.blake2b(data, digest_size=16).hexdigest()


class LogBuilder:
    """Appends bodies as parent-linked entries with ``seq`` 0..n-1.

    The entry id is the source id when given and not yet used in this session, else a
    content hash chained to the parent (:func:`body_hash`), so a
    re-import of the same file yields the same ids.
    """

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.entries: list[Entry] = []
        self._ids: set[str] = set()

    def add(
        self,
        body: Body,
        *,
        source_id: str | None = None,
        created_at: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Entry:
        """Append ``body``; returns the new entry."""
        entries, ids = self.entries, self._ids
        parent = entries[-1].id if entries else None
        if source_id and source_id not in ids:
            entry_id = source_id
        else:
            entry_id = base = body_hash(body, parent)
            n = 2
            while entry_id in ids:
                entry_id = f"{base}#{n}"
                n += 1
        ids.add(entry_id)
        # positional: id, session_id, seq, body, parent_id, created_at, meta
        entry = Entry(
            entry_id,
            self.session_id,
            len(entries),
            body,
            parent,
            created_at,
            dict(meta) if meta else {},
        )
        entries.append(entry)
        return entry

    def add_keyed(
        self,
        body: Body,
        digest: bytes,
        *,
        created_at: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Entry:
        """Append ``body`` made from a source identified by ``digest``: the 16-byte digest of
        its line or lines, or of its canonical JSON (:class:`~ctxengine.importers._log.Rows`),
        or other bytes that name it stably (OpenHands: an event's place and identity). Its id
        is ``"b2:"`` + blake2b-128 of the previous entry's id, a NUL byte and ``digest``, as
        stable across re-imports as a hash of the body and cheaper (an id already taken
        falls back to the body hash, as in :meth:`add`)."""
        entries = self.entries
        parent: str | None = None
        key = b"\0" + digest
        if entries:
            last_id = entries[-1].id
            parent, key = last_id, last_id.encode() + key
        entry_id = HASH_PREFIX + _blake2b(key, digest_size=16).hexdigest()
        ids = self._ids
        if entry_id in ids:
            return self.add(body, source_id=entry_id, created_at=created_at, meta=meta)
        ids.add(entry_id)
        # positional: id, session_id, seq, body, parent_id, created_at, meta
        entry = Entry(
            entry_id,
            self.session_id,
            len(entries),
            body,
            parent,
            created_at,
            dict(meta) if meta else {},
        )
        entries.append(entry)
        return entry

    def extend_keyed(self, rows: Iterable[tuple[Body, str | None, bytes]]) -> None:
        """:meth:`add_keyed` for each ``(body, created_at, digest)`` of ``rows`` in turn (the
        same entries and ids), with no ``meta``; one call for a whole log."""
        entries, ids, session_id = self.entries, self._ids, self.session_id
        append, blake = entries.append, _blake2b
        last_id = entries[-1].id if entries else None
        for body, created_at, digest in rows:
            if last_id is None:
                entry_id = HASH_PREFIX + blake(b"\0" + digest, digest_size=16).hexdigest()
            else:
                key = last_id.encode() + b"\0" + digest
                entry_id = HASH_PREFIX + blake(key, digest_size=16).hexdigest()
            if entry_id in ids:
                entry = self.add(body, source_id=entry_id, created_at=created_at)
            else:
                ids.add(entry_id)
                # positional: id, session_id, seq, body, parent_id, created_at, meta
                entry = Entry(entry_id, session_id, len(entries), body, last_id, created_at, {})
                append(entry)
            last_id = entry.id


class CallIds:
    """Makes tool-call ids unique within a session without breaking pairing.

    Real logs reuse ids across turns (a SWE-agent trajectory reuses one id four times). A call
    whose id was already used gets ``"<id>#<n>"``; a result is paired with the most recent
    call of its original id that has no result yet (else the most recent call of that id).
    """

    def __init__(self) -> None:
        self._count: dict[str, int] = {}
        self._open: dict[str, list[str]] = {}
        self._last: dict[str, str] = {}

    def call(self, source_id: str) -> str:
        """The unique id for a new call whose source id is ``source_id``."""
        n = self._count.get(source_id, 0) + 1
        self._count[source_id] = n
        unique = source_id if n == 1 else f"{source_id}#{n}"
        self._open.setdefault(source_id, []).append(unique)
        self._last[source_id] = unique
        return unique

    def known(self, source_id: str) -> bool:
        """True when a call with ``source_id`` was seen."""
        return source_id in self._count

    def result(self, source_id: str) -> str:
        """The unique id of the call a result with ``source_id`` answers (the oldest
        still-open call with that id; an unknown id is returned unchanged)."""
        pending = self._open.get(source_id)
        if pending:
            return pending.pop(0)
        return self._last.get(source_id, source_id)

    def answer(self, source_id: str, unique: str) -> None:
        """Mark the call ``unique`` (source id ``source_id``) answered by a result paired to it
        by other means than its id (a result that carries none)."""
        pending = self._open.get(source_id)
        if pending and unique in pending:
            pending.remove(unique)


class LineReader(Protocol):
    """A stateful reader of one JSONL transcript, fed line by line."""

    def feed(self, line: int, obj: dict[str, Any]) -> None:
        """Take the object on 1-based ``line``; raises ``TranscriptError`` naming it."""
        ...

    def finish(self) -> ImportedSession:
        """The session read so far."""
        ...


def read_jsonl(path: Path, reader: LineReader, report: ImportReport) -> ImportedSession:
    """Feed every object of the JSONL file ``path`` to ``reader`` and return its session;
    an error while a line is read names that line (:func:`located`). Lines that are not
    JSON objects are skipped into ``report`` (:func:`iter_jsonl`).

    Raises:
        TranscriptError: unreadable file, or a record the reader rejects (in strict mode
            also the first skipped or repaired line).
    """
    number = 0
    try:
        for number, obj in iter_jsonl(path, report):
            reader.feed(number, obj)
    except LOCATED as exc:
        raise relocated(path, exc, number) from None
    return reader.finish()
