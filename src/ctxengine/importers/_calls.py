"""Tool-call ids and call/result pairing for the agent importers, with drift counted.

:class:`Calls` wraps :class:`~ctxengine.importers._build.CallIds` (reused ids made unique) and
adds what each importer otherwise repeats: a call without an id gets the id its importer
generates (repaired, unless the format never records call ids), and a result without an id
answers the oldest call still unanswered (repaired; skipped when none is left).

It also holds the one way the importers write a value as JSON text (:func:`json_text`) and
tool-call arguments (:func:`arguments_text`, which counts arguments text that is not JSON).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from ctxengine.importers._build import CallIds
from ctxengine.importers.report import ImportReport
from ctxengine.model.json_depth import exceeds_depth

#: Report kind of tool-call arguments given as a string that is not JSON (kept verbatim).
ARGUMENTS_NOT_JSON = "tool call arguments not JSON (kept as text)"
#: Deepest nesting orjson parses (its documented limit: 1,024 arrays and objects); text
#: nested deeper is not checked (no parser here reads it without a recursion that deep).
_ORJSON_DEPTH = 1024


def json_text(value: Any) -> str:
    """``value`` as JSON text: a string verbatim, anything else serialised compactly with its
    key order kept (UTF-8, no ASCII escaping). For values that may be plain text (tool
    output); tool-call arguments go through :func:`arguments_text`."""
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def arguments_text(
    value: Any,
    report: ImportReport,
    field: str,
    *,
    line: int | None = None,
    json_path: str | None = None,
) -> str:
    """Tool-call arguments as JSON text: anything but a string serialised as by
    :func:`json_text`; a string kept verbatim (it is history: never rewritten), and checked.

    Any JSON value is accepted (not only an object: ``"[1]"`` and ``"null"`` are JSON text),
    and so are the empty string and whitespace (no arguments). A string that is not JSON (a
    model can emit broken JSON) is counted in ``report`` as repaired,
    :data:`ARGUMENTS_NOT_JSON`, at ``line`` / ``json_path``. "JSON" is RFC 8259's grammar:
    what orjson reads, and what it refuses that the grammar allows (a lone surrogate, escaped
    or not; a number past a double's range, ``1e400``) read again by :func:`json.loads`
    (``NaN`` and ``Infinity`` refused); a string costs one ``orjson.loads`` (about 2 µs per
    KB of arguments text), one that is not JSON a ``json.loads`` more. Text nested deeper
    than orjson reads (1,024 levels) is not checked: it passes, kept as the text it is (the
    renderers carry it as opaque text, :mod:`ctxengine.model.json_depth`).

    Args:
        value: the arguments as the transcript holds them (a string, an object …).
        report: the file's report.
        field: the field as the format names it (``"arguments"``, ``"function.arguments"``),
            for the ``expected`` text.
        line, json_path: where the call is (1-based line, or JSON path of the field).

    Raises:
        TranscriptError: in strict mode, for a string that is not JSON: ``path:line:
            expected `<field>` to be JSON text, got text that is not JSON (kept as text)``.
    """
    if not isinstance(value, str):
        return orjson.dumps(value).decode()
    try:
        # orjson reads an ASCII str in place; any other it would encode to UTF-8 and cache
        # the copy on the str (held as long as the entry is): bytes, freed at once, instead
        orjson.loads(value if value.isascii() else value.encode(errors="surrogatepass"))
    except orjson.JSONDecodeError:
        if value.strip() and not _json_by_grammar(value):
            report.repair(
                ARGUMENTS_NOT_JSON,
                f"expected `{field}` to be JSON text, got text that is not JSON (kept as text)",
                line=line,
                json_path=json_path,
            )
    return value


def _not_a_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_by_grammar(text: str) -> bool:
    """True when ``text`` is JSON by RFC 8259's grammar (what orjson refuses of it: a lone
    surrogate, escaped or not; a number past a double's range), or nested too deep to check
    (deeper than ``_ORJSON_DEPTH``)."""
    if exceeds_depth(text, _ORJSON_DEPTH):
        return True
    try:
        json.loads(text, parse_constant=_not_a_constant)
    except (ValueError, RecursionError):  # json.JSONDecodeError is a ValueError
        return False
    return True


class Calls:
    """The calls of one session and the results that answer them.

    Args:
        report: where repairs and skips are counted.
    """

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.ids = CallIds()
        #: ``(source id, unique id)`` of every call, in order.
        self.order: list[tuple[str, str]] = []
        self.answered: set[str] = set()
        self.names: dict[str, str] = {}
        self._sources: set[str] = set()
        #: index in :attr:`order` before which every call is answered.
        self._oldest = 0

    def call(
        self,
        source_id: Any,
        name: str,
        generated: str,
        *,
        what: str = "tool call",
        line: int | None = None,
        json_path: str | None = None,
        repair: bool = True,
    ) -> str:
        """The unique id of a new call named ``name``; a missing ``source_id`` becomes
        ``generated`` (counted as ``"<what> without id"`` unless ``repair`` is false, for
        formats that never record call ids).

        Raises:
            TranscriptError: in strict mode, for a call without an id (when ``repair``).
        """
        if not isinstance(source_id, str) or not source_id:
            if repair:
                self.report.repair(
                    f"{what} without id",
                    f"expected a string id on a {what}",
                    line=line,
                    json_path=json_path,
                )
            source_id = generated
        unique = self.ids.call(source_id)
        self.order.append((source_id, unique))
        self._sources.add(source_id)
        self.names[unique] = name
        return unique

    def known(self, source_id: Any) -> bool:
        """True when a call with ``source_id`` was seen."""
        return isinstance(source_id, str) and source_id in self._sources

    def pending(self) -> tuple[str, str] | None:
        """``(source id, unique id)`` of the oldest call not yet answered, or ``None``."""
        while self._oldest < len(self.order) and self.order[self._oldest][1] in self.answered:
            self._oldest += 1
        return self.order[self._oldest] if self._oldest < len(self.order) else None

    def result(
        self,
        source_id: Any,
        *,
        what: str = "tool result",
        line: int | None = None,
        json_path: str | None = None,
        repair: bool = True,
    ) -> str | None:
        """The unique id of the call a result answers: by ``source_id``, else the oldest
        unanswered call (counted as ``"<what> without call id"`` unless ``repair`` is false);
        ``None`` when there is no call left to answer (counted as ``"<what> without a
        call"``, skipped).

        Raises:
            TranscriptError: in strict mode, for a result paired or skipped that way.
        """
        if isinstance(source_id, str) and source_id:
            unique = self.ids.result(source_id)
        else:
            found = self.pending()
            expected = f"expected a string call id on a {what}"
            if found is None:
                self.report.skip(f"{what} without a call", expected, line=line, json_path=json_path)
                return None
            if repair:
                self.report.repair(
                    f"{what} without call id", expected, line=line, json_path=json_path
                )
            source_id, unique = found
            self.ids.answer(source_id, unique)
        self.answered.add(unique)
        return unique

    def name_of(self, unique: str) -> str | None:
        """The tool name of the call ``unique``, when known."""
        return self.names.get(unique)
