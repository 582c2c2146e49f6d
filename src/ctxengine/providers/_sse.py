"""Server-sent events read from the raw lines of a streamed HTTP reply (the WHATWG event
stream format: ``event:`` and ``data:`` fields, a blank line ends an event, ``:`` starts a
comment), each event's data parsed as JSON with its key order kept. The providers read
streams this way rather than through the SDKs' event models, so that items they store
(compaction blocks and items) are exactly what the provider sent."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import orjson


def events(lines: Iterable[str]) -> Iterator[tuple[str | None, str]]:
    """``(event name or None, data)`` of each event in ``lines`` (without their line
    endings); multi-line data is joined by newlines; events without data are skipped."""
    name: str | None = None
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield name, "\n".join(data)
            name, data = None, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    if data:
        yield name, "\n".join(data)


def json_events(lines: Iterable[str]) -> Iterator[tuple[str | None, Any]]:
    """:func:`events` with each data parsed as JSON (``[DONE]`` and other non-JSON data
    skipped)."""
    for name, data in events(lines):
        try:
            yield name, orjson.loads(data)
        except orjson.JSONDecodeError:
            continue
