"""JSON Schemas (draft 2020-12) of the ``--json`` documents, one per command:
``import.json``, ``sessions.json``, ``inspect.json``, ``recall.json``, ``compact.json``,
``revert.json``, ``handoff.json``, ``replay.json``, ``report.json``, ``export.json``,
``bench.json`` and ``migrate.json`` beside this file."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

import orjson

#: Commands with a ``--json`` document, each with ``<command>.json`` here.
COMMANDS: tuple[str, ...] = (
    "import",
    "sessions",
    "inspect",
    "recall",
    "compact",
    "revert",
    "handoff",
    "replay",
    "report",
    "export",
    "bench",
    "migrate",
)


def schema(command: str) -> dict[str, Any]:
    """The JSON Schema of ``command``'s ``--json`` document.

    Raises:
        KeyError: ``command`` is not one of :data:`COMMANDS`.
    """
    if command not in COMMANDS:
        raise KeyError(f"no JSON schema for {command!r}; known: {', '.join(COMMANDS)}")
    found: dict[str, Any] = orjson.loads(files(__name__).joinpath(f"{command}.json").read_bytes())
    return found
