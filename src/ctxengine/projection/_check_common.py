"""Checks shared by both providers' validators: ids and names, and the ``strict`` checks of a
body meant to be sent as is (``model``, tool declarations)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxengine.projection.render.ids import id_problem, name_problem


def check_id(at: str, field: str, value: str, provider: str, problems: list[str]) -> None:
    """Report ``value`` (a tool-call id in ``field``) when ``provider`` rejects it."""
    problem = id_problem(value, provider)
    if problem is not None:
        problems.append(f"{at}: {field} {value!r} {problem}")


def check_name(at: str, field: str, value: str, provider: str, problems: list[str]) -> None:
    """Report ``value`` (a tool name in ``field``) when ``provider`` rejects it."""
    problem = name_problem(value, provider)
    if problem is not None:
        problems.append(f"{at}: {field} {value!r} {problem}")


def check_unique_names(names: Sequence[tuple[int, str]], problems: list[str]) -> None:
    """Report every ``(index in tools, name)`` whose name an earlier tool already has."""
    seen: set[str] = set()
    for k, name in names:
        if name in seen:
            problems.append(f"tools[{k}]: tool name {name!r} declared twice")
        seen.add(name)


def check_model(body: Mapping[str, Any], problems: list[str]) -> None:
    """``model`` must be a non-empty string."""
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        problems.append("model must be a non-empty string (required)")


def check_declared(
    used: Sequence[tuple[str, str]],
    declared: set[str] | None,
    problems: list[str],
    *,
    needs_tools: bool,
    what: str,
) -> None:
    """Every tool the messages use must be declared in ``tools``.

    Args:
        used: ``(where, name)`` of every tool call, in order.
        declared: the names ``tools`` declares; ``None`` when the body has no tools list.
        needs_tools: the messages hold tool blocks of any kind (calls or results).
        what: the kind of tool blocks, for the message (``"tool_use or tool_result
            blocks"``).
    """
    if declared is None or not declared:
        if needs_tools or used:
            problems.append(f"tools must be a non-empty list when messages hold {what}")
        return
    reported: set[str] = set()
    for where, name in used:
        if name not in declared and name not in reported:
            problems.append(f"{where}: tool {name!r} is not declared in tools")
            reported.add(name)
