"""The ``recall`` tool: its definition (sent with the agent's tools), its arguments read
into a :class:`~ctxengine.recall.search.RecallQuery`, and its answer as the text of a tool
result. Pure: the caller hands in the :class:`~ctxengine.recall.search.HistoryIndex`
(``Session.recall`` keeps one up to date).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ctxengine.errors import ConfigError
from ctxengine.policy.defaults import RECALL_BUDGET_TOKENS, RECALL_TOOL_NAME

from .search import HistoryIndex, RecallQuery, RecallResult

#: The tool definition (provider-neutral: ``name``, ``description``, JSON-schema
#: ``parameters``), for the agent's tool list.
RECALL_TOOL: Mapping[str, Any] = {
    "name": RECALL_TOOL_NAME,
    "description": (
        "Search the whole history of this session, including what earlier compactions "
        "summarized away, and get exact excerpts with their entry ids: an exact error "
        "message, a command's output, code written or read before. Give a text (or a "
        "regular expression), a file path, a tool name, or an entry range; the newest "
        "matches come first. To read one entry whole (an output shown truncated or pruned "
        "names its entry id), give its id as entry, and from_line to go on where an answer "
        "stopped."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Text to find (case-insensitive)."},
            "regex": {"type": "boolean", "description": "query is a regular expression."},
            "path": {"type": "string", "description": "A file path the entries name."},
            "tool": {"type": "string", "description": "Only calls of this tool and results."},
            "from_seq": {
                "type": "integer",
                "description": "First entry number (each session's own, after a hand-off).",
            },
            "to_seq": {"type": "integer", "description": "Last entry number."},
            "summaries": {
                "type": "boolean",
                "description": "Search earlier continuation states too.",
            },
            "entry": {"type": "string", "description": "One entry id: shown whole."},
            "from_line": {
                "type": "integer",
                "minimum": 1,
                "description": "First line shown of an entry read whole.",
            },
            "max_tokens": {
                "type": "integer",
                "minimum": 1,
                "maximum": RECALL_BUDGET_TOKENS,
                "description": f"Budget of the answer (at most {RECALL_BUDGET_TOKENS:,}).",
            },
        },
        "additionalProperties": False,
    },
}

_FIELDS: Mapping[str, tuple[type, ...]] = {
    "query": (str,),
    "regex": (bool,),
    "path": (str,),
    "tool": (str,),
    "from_seq": (int,),
    "to_seq": (int,),
    "summaries": (bool,),
    "entry": (str,),
    "from_line": (int,),
    "max_tokens": (int,),
}


def query_from_arguments(arguments: str | Mapping[str, Any]) -> tuple[RecallQuery, int]:
    """The query and token budget a ``recall`` call asks for.

    Args:
        arguments: the call's arguments, as JSON text or already parsed.

    Returns:
        ``(query, budget)``; the budget is ``max_tokens`` or
        :data:`~ctxengine.policy.defaults.RECALL_BUDGET_TOKENS`, whichever is smaller (the
        schema says so: ``maximum``).

    Raises:
        ConfigError: arguments that are not a JSON object, an unknown field, a field of
            the wrong type (named, with the type expected), ``max_tokens`` or
            ``from_line`` under 1, or no filter at all.
    """
    if isinstance(arguments, str):
        try:
            parsed = orjson.loads(arguments or "{}")
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"recall: arguments are not JSON: {exc}") from exc
    else:
        parsed = arguments
    if not isinstance(parsed, Mapping):
        raise ConfigError("recall: arguments must be a JSON object")
    for key, value in parsed.items():
        expected = _FIELDS.get(key)
        if expected is None:
            raise ConfigError(f"recall: unknown field {key!r}; expected one of {sorted(_FIELDS)}")
        if value is not None and (
            not isinstance(value, expected) or (expected == (int,) and isinstance(value, bool))
        ):
            name = expected[0].__name__
            raise ConfigError(f"recall: field {key!r} must be {name}, got {value!r}")
    query = RecallQuery(
        text=parsed.get("query") or "",
        regex=bool(parsed.get("regex")),
        path=parsed.get("path") or None,
        tool=parsed.get("tool") or None,
        first_seq=parsed.get("from_seq"),
        last_seq=parsed.get("to_seq"),
        summaries=bool(parsed.get("summaries")),
        entry_id=parsed.get("entry") or None,
        from_line=1 if parsed.get("from_line") is None else parsed["from_line"],
    )
    if not (query.text or query.path or query.tool or query.entry_id) and (
        query.first_seq is None and query.last_seq is None
    ):
        raise ConfigError("recall: give a query, a path, a tool, an entry or an entry range")
    asked = parsed.get("max_tokens")
    if asked is not None and asked < 1:
        raise ConfigError(f"recall: field 'max_tokens' must be at least 1, got {asked}")
    if query.from_line < 1:
        raise ConfigError(f"recall: field 'from_line' must be at least 1, got {query.from_line}")
    budget = RECALL_BUDGET_TOKENS if asked is None else min(asked, RECALL_BUDGET_TOKENS)
    return query, budget


def format_result(result: RecallResult, from_line: str = "from_line") -> str:
    """The answer as text: a first line with the counts, then one block per hit (its label
    and line, then the numbered excerpt), then what was left out and how to narrow it.
    ``from_line``: what the line after an entry cut to the budget tells to ask again with
    (the tool's field; the command line's ``--from-line``)."""
    q = result.query.describe()
    if not result.matched:
        return f"No entry of the history matches {q}."
    shown = len(result.hits)
    order = "newest" if result.newest_first else "oldest"
    head = (
        f"{result.matched} match{'es' if result.matched != 1 else ''} for {q} "
        f"({order} first; {shown} shown, {result.tokens:,} tokens):"
    )
    blocks = [head]
    for hit in result.hits:
        excerpt = hit.excerpt
        if hit.next_line is not None and from_line != "from_line":
            said = f"ask again with from_line {hit.next_line}"
            if excerpt.endswith(said):
                excerpt = f"{excerpt[: -len(said)]}ask again with {from_line} {hit.next_line}"
        blocks.append(f"[{hit.label()}] line {hit.line}:\n{excerpt}")
    if result.more:
        blocks.append(
            f"{result.more} more not shown (budget {result.budget:,} tokens): narrow the "
            "query (a longer text, a regex, a path, a tool or an entry range)."
        )
    return "\n\n".join(blocks)


def run_recall_tool(index: HistoryIndex, arguments: str | Mapping[str, Any]) -> tuple[str, bool]:
    """Answer one ``recall`` call from ``index``: ``(text, is_error)``. Invalid arguments
    give the error in words (naming the field) with ``is_error`` set, for the agent to
    correct its call."""
    try:
        query, budget = query_from_arguments(arguments)
        result = index.search(query, budget=budget)
    except ConfigError as exc:
        return str(exc), True
    return format_result(result), False
