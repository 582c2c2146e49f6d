"""Shared pieces for importers: reading JSON/JSONL with located errors, building a
parent-linked log, and disambiguating reused tool-call ids."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from ctxengine.errors import TranscriptError
from ctxengine.model import Entry
from ctxengine.model.codec import body_hash
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
    except RecursionError as exc:
        raise too_complex(path, exc, line=line) from None
    except orjson.JSONEncodeError as exc:
        raise too_complex(path, exc, line=line) from None
    except ValueError as exc:
        if str(exc).startswith(INT_LIMIT):
            raise too_complex(path, exc, line=line) from None
        raise


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file (1-based).
    A UTF-8 byte order mark before the first line is dropped.

    Raises:
        TranscriptError: a line is not valid JSON, too deeply nested, or not a JSON object
            (names the line).
    """
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise TranscriptError(str(path), f"cannot read file: {exc.strerror}") from exc
    with fh:
        for number, raw in enumerate(fh, start=1):
            if number == 1:
                raw = raw.removeprefix(BOM)
            if not raw.strip():
                continue
            try:
                with located(path, number):
                    value = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise TranscriptError(
                    str(path), f"expected a JSON object, got invalid JSON ({exc})", line=number
                ) from None
            if not isinstance(value, dict):
                raise TranscriptError(
                    str(path), f"expected a JSON object, got {type(value).__name__}", line=number
                )
            yield number, value


def load_json(path: Path) -> Any:
    """Parse a whole JSON file (a leading UTF-8 byte order mark is dropped).

    Raises:
        TranscriptError: unreadable, invalid or too deeply nested JSON.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TranscriptError(str(path), f"cannot read file: {exc.strerror}") from exc
    try:
        with located(path):
            return orjson.loads(data.removeprefix(BOM))
    except orjson.JSONDecodeError as exc:
        raise TranscriptError(str(path), f"expected a JSON document ({exc})") from None


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


class LogBuilder:
    """Appends bodies as parent-linked entries with ``seq`` 0..n-1.

    The entry id is the source id when given and not yet used in this session, else a
    content hash chained to the parent (:func:`ctxengine.model.codec.body_hash`), so a
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
        parent = self.entries[-1].id if self.entries else None
        entry_id = source_id if source_id and source_id not in self._ids else None
        if entry_id is None:
            entry_id = body_hash(body, parent)
            n = 2
            base = entry_id
            while entry_id in self._ids:
                entry_id = f"{base}#{n}"
                n += 1
        self._ids.add(entry_id)
        entry = Entry(
            id=entry_id,
            session_id=self.session_id,
            seq=len(self.entries),
            body=body,
            parent_id=parent,
            created_at=created_at,
            meta=dict(meta) if meta else {},
        )
        self.entries.append(entry)
        return entry


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

    def result(self, source_id: str) -> str:
        """The unique id of the call a result with ``source_id`` answers (the oldest
        still-open call with that id; an unknown id is returned unchanged)."""
        pending = self._open.get(source_id)
        if pending:
            return pending.pop(0)
        return self._last.get(source_id, source_id)


class LineReader(Protocol):
    """A stateful reader of one JSONL transcript, fed line by line."""

    def feed(self, line: int, obj: dict[str, Any]) -> None:
        """Take the object on 1-based ``line``; raises ``TranscriptError`` naming it."""
        ...

    def finish(self) -> ImportedSession:
        """The session read so far."""
        ...


def read_jsonl(path: Path, reader: LineReader) -> ImportedSession:
    """Feed every object of the JSONL file ``path`` to ``reader`` and return its session;
    an error while a line is read names that line (:func:`located`).

    Raises:
        TranscriptError: unreadable file, invalid JSON, or a record the reader rejects.
    """
    for number, obj in iter_jsonl(path):
        with located(path, number):
            reader.feed(number, obj)
    return reader.finish()
