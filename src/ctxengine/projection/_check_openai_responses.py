"""Validator of OpenAI Responses request bodies (``"openai-responses"``).

Checked, on ``input`` (a string, or a list of items):
  - every item is an object with a ``type`` (a ``message`` may leave it out and give a
    ``role``); messages have the role ``user``, ``assistant``, ``system`` or ``developer``
    and a string or a non-empty list of content parts;
  - calls (``function_call``, ``custom_tool_call``) have a non-empty string ``call_id`` and
    ``name``, ``function_call`` arguments a string, ``custom_tool_call`` input a string; no
    call id is used twice;
  - every output (``function_call_output``, ``custom_tool_call_output``) answers a call of
    the same kind that comes before it, once; every call is answered (the API answers "No
    tool output found for function call …");
  - a ``reasoning`` item is followed by another item (the API rejects a trailing one);
  - function names match ``^[a-zA-Z0-9_-]{1,64}$``; no tool name is declared twice.

``strict=True`` adds a ``model`` and, when the input calls functions, a ``tools`` list
declaring them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ctxengine.projection._check_common import check_model, check_name, check_unique_names

PROVIDER = "openai"
_ROLES = frozenset({"user", "assistant", "system", "developer"})
#: Call item type → the output item type that answers it.
_ANSWERS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output"}
_OUTPUTS = {v: k for k, v in _ANSWERS.items()}


def _check_message(where: str, item: Mapping[str, Any], problems: list[str]) -> None:
    role = item.get("role")
    if role not in _ROLES:
        problems.append(f"{where}: role {role!r} is not one of {sorted(_ROLES)}")
    content = item.get("content")
    if isinstance(content, str):
        return
    if not isinstance(content, list) or not content:
        problems.append(f"{where}: content must be a string or a non-empty list of parts")
        return
    for k, part in enumerate(content):
        if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
            problems.append(f"{where}.content[{k}]: a content part needs a string type")


def _check_call(
    where: str, kind: str, item: Mapping[str, Any], calls: dict[str, str], problems: list[str]
) -> None:
    call_id, name = item.get("call_id"), item.get("name")
    if not isinstance(call_id, str) or not call_id:
        problems.append(f"{where}: {kind} needs a non-empty string call_id")
        return
    if not isinstance(name, str) or not name:
        problems.append(f"{where}: {kind} needs a non-empty string name")
    elif kind == "function_call":
        check_name(where, "name", name, PROVIDER, problems)
    field = "arguments" if kind == "function_call" else "input"
    if not isinstance(item.get(field), str):
        problems.append(f"{where}: {kind} {field} must be a string")
    if call_id in calls:
        problems.append(f"{where}: call_id {call_id!r} is used by two calls")
    calls[call_id] = kind


def check_openai_responses(
    body: Any, strict: bool = False, known_ids: Collection[str] = ()
) -> list[str]:
    """Problems of a Responses body (see the module docstring); ``known_ids`` are call ids of
    items before ``body``'s, answered there."""
    if not isinstance(body, Mapping):
        return ["body must be a JSON object"]
    problems: list[str] = []
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    if not isinstance(items, list):
        return [*problems, "input must be a string or a list of items"]
    calls: dict[str, str] = dict.fromkeys(known_ids, "")
    open_calls: dict[str, str] = {}
    answered: set[str] = set()
    used_names: list[str] = []
    for i, item in enumerate(items):
        where = f"input[{i}]"
        if not isinstance(item, Mapping):
            problems.append(f"{where}: an item must be an object")
            continue
        kind = item.get("type", "message" if "role" in item else None)
        if not isinstance(kind, str):
            problems.append(f"{where}: an item needs a string type")
            continue
        if kind == "message":
            _check_message(where, item, problems)
        elif kind in _ANSWERS:
            _check_call(where, kind, item, calls, problems)
            if isinstance(item.get("call_id"), str):
                open_calls[item["call_id"]] = where
            if isinstance(item.get("name"), str):
                used_names.append(item["name"])
        elif kind in _OUTPUTS:
            call_id = item.get("call_id")
            if not isinstance(call_id, str) or not call_id:
                problems.append(f"{where}: {kind} needs a non-empty string call_id")
            elif call_id in answered:
                problems.append(f"{where}: call {call_id!r} is answered twice")
            elif call_id not in calls or (calls[call_id] and calls[call_id] != _OUTPUTS[kind]):
                problems.append(f"{where}: {kind} answers no {_OUTPUTS[kind]} before it")
            else:
                answered.add(call_id)
                open_calls.pop(call_id, None)
        elif kind == "reasoning" and i == len(items) - 1:
            problems.append(f"{where}: a reasoning item must be followed by another item")
    for call_id, where in open_calls.items():
        problems.append(f"{where}: call {call_id!r} has no output")
    declared = _check_tools(body.get("tools"), problems)
    if strict:
        check_model(body, problems)
        missing = sorted({n for n in used_names if declared is None or n not in declared})
        if missing:
            problems.append(f"tools: called but not declared: {', '.join(missing)}")
    return problems


def _check_tools(tools: Any, problems: list[str]) -> set[str] | None:
    """Names declared in ``tools`` (``None`` when absent); reports a malformed list."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        problems.append("tools must be a list")
        return None
    names: list[tuple[int, str]] = []
    for k, tool in enumerate(tools):
        if not isinstance(tool, Mapping) or not isinstance(tool.get("type"), str):
            problems.append(f"tools[{k}]: a tool needs a string type")
            continue
        name = tool.get("name")
        if isinstance(name, str):
            names.append((k, name))
            if tool["type"] == "function":
                check_name(f"tools[{k}]", "name", name, PROVIDER, problems)
    check_unique_names(names, problems)
    return {n for _, n in names}
