"""Protocol checks of an OpenAI Chat Completions request body (used by ``validate``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ctxengine.projection._check_common import (
    check_declared,
    check_id,
    check_model,
    check_name,
    check_unique_names,
)

P = "openai"

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
_USER_PARTS = frozenset({"text", "image_url", "input_audio", "file"})
_TEXT_PARTS = frozenset({"text"})
_ASSISTANT_PARTS = frozenset({"text", "refusal"})


def _check_content(
    where: str, content: Any, allowed: frozenset[str], problems: list[str], *, optional: bool
) -> bool:
    """Check a content field; True when it carries something."""
    if content is None:
        if not optional:
            problems.append(f"{where}: content is missing")
        return False
    if isinstance(content, str):
        return bool(content)
    if not isinstance(content, list) or not content:
        problems.append(f"{where}: content must be a string or a non-empty list of parts")
        return False
    for k, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind not in allowed:
            problems.append(f"{where}.content[{k}]: part type {kind!r} not allowed here")
        elif kind == "text" and not isinstance(part.get("text"), str):
            problems.append(f"{where}.content[{k}]: text must be a string")
        elif kind == "image_url":
            image = part.get("image_url")
            if not isinstance(image, Mapping) or not isinstance(image.get("url"), str):
                problems.append(f"{where}.content[{k}]: image_url.url must be a string")
    return True


def _check_calls(
    where: str, calls: Any, problems: list[str], used: list[tuple[str, str]]
) -> list[str]:
    """Check ``tool_calls``; return their ids and add ``(where, name)`` of each to ``used``."""
    if not isinstance(calls, list) or not calls:
        problems.append(f"{where}: tool_calls must be a non-empty list")
        return []
    ids: list[str] = []
    for k, call in enumerate(calls):
        at = f"{where}.tool_calls[{k}]"
        if not isinstance(call, Mapping):
            problems.append(f"{at}: not an object")
            continue
        cid = call.get("id")
        if not isinstance(cid, str) or not cid:
            problems.append(f"{at}: id must be a non-empty string")
        elif cid in ids:
            problems.append(f"{at}: duplicate tool call id {cid!r}")
        else:
            check_id(at, "id", cid, P, problems)
            ids.append(cid)
        if call.get("type") != "function":
            problems.append(f"{at}: type must be 'function'")
        fn = call.get("function")
        if not isinstance(fn, Mapping):
            problems.append(f"{at}: function must be an object")
            continue
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            problems.append(f"{at}: function.name must be a non-empty string")
        else:
            check_name(at, "function.name", name, P, problems)
            used.append((at, name))
        if not isinstance(fn.get("arguments"), str):
            problems.append(f"{at}: function.arguments must be a string")
    return ids


class _Calls:
    """Calls of the nearest preceding assistant message, and which are answered."""

    def __init__(self) -> None:
        self.at = -1
        self.answered: dict[str, bool] = {}

    def close(self, problems: list[str], before: str) -> None:
        missing = [cid for cid, done in self.answered.items() if not done]
        if missing:
            problems.append(f"messages[{self.at}]: tool calls {missing} not answered {before}")
        self.at, self.answered = -1, {}


def _check_tool(where: str, msg: Mapping[str, Any], calls: _Calls, problems: list[str]) -> None:
    cid = msg.get("tool_call_id")
    if isinstance(cid, str) and cid:
        check_id(where, "tool_call_id", cid, P, problems)
        _answer(where, cid, calls, problems)
    else:
        problems.append(f"{where}: tool_call_id must be a non-empty string")
    _check_content(where, msg.get("content"), _TEXT_PARTS, problems, optional=False)


def _answer(where: str, cid: str, calls: _Calls, problems: list[str]) -> None:
    if calls.at < 0:
        problems.append(
            f"{where}: result for {cid!r} does not follow an assistant message with tool_calls"
        )
    elif cid not in calls.answered:
        problems.append(
            f"{where}: orphan result for {cid!r} (no such call in messages[{calls.at}])"
        )
    elif calls.answered[cid]:
        problems.append(f"{where}: duplicate result for {cid!r}")
    else:
        calls.answered[cid] = True


def check_openai(body: Any, strict: bool = False, known_ids: Collection[str] = ()) -> list[str]:
    """Problems of a Chat Completions body; see :func:`ctxengine.projection.validate.validate`
    (``known_ids`` is accepted for a uniform signature: ids need only be unique within one
    message)."""
    del known_ids
    if not isinstance(body, Mapping):
        return ["body is not a JSON object"]
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["messages must be a non-empty list"]
    problems: list[str] = []
    calls = _Calls()
    used: list[tuple[str, str]] = []
    users = 0
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        role = msg.get("role") if isinstance(msg, Mapping) else None
        if role not in _ROLES or not isinstance(msg, Mapping):
            problems.append(f"{where}: invalid role {role!r}")
            continue
        if role != "tool" and calls.at >= 0:
            calls.close(problems, f"before {where} ({role})")
        if role == "tool":
            _check_tool(where, msg, calls, problems)
        elif role == "assistant":
            has = _check_content(
                where, msg.get("content"), _ASSISTANT_PARTS, problems, optional=True
            )
            if msg.get("tool_calls") is not None:
                calls.at = i
                calls.answered = dict.fromkeys(
                    _check_calls(where, msg["tool_calls"], problems, used), False
                )
            elif not has:
                problems.append(f"{where}: assistant message has neither content nor tool_calls")
        else:
            users += role == "user"
            allowed = _USER_PARTS if role == "user" else _TEXT_PARTS
            _check_content(where, msg.get("content"), allowed, problems, optional=False)
    if calls.at >= 0:
        calls.close(problems, "(the request ends)")
    if not users:
        problems.append("no user message")
    declared = _check_tools(body.get("tools"), problems)
    if strict:
        check_model(body, problems)
        check_declared(used, declared, problems, needs_tools=False, what="tool_calls")
    return problems


def _check_tools(tools: Any, problems: list[str]) -> set[str] | None:
    """Check the tools list; return the function names it declares (``None`` without a
    list)."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        problems.append("tools must be a list")
        return None
    names: list[tuple[int, str]] = []
    for k, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, Mapping) else None
        if not isinstance(tool, Mapping) or tool.get("type") != "function":
            problems.append(f"tools[{k}]: type must be 'function'")
        elif not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"]:
            problems.append(f"tools[{k}]: function.name must be a non-empty string")
        else:
            names.append((k, fn["name"]))
            check_name(f"tools[{k}]", "function.name", fn["name"], P, problems)
    check_unique_names(names, problems)
    return {name for _, name in names}
