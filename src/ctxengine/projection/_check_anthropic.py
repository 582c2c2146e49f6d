"""Protocol checks of an Anthropic Messages request body (used by ``validate``).

Besides the roles, blocks and tool pairing (the first message is a user message, or an
assistant message opening with a ``compaction`` block; a compaction block opens its
message, before any thinking): mid-conversation system messages (``role:
"system"`` inside ``messages``, taken by Claude Opus 4.8 and later) only after the first
user or assistant message, with text blocks only, each run of them before an assistant
message or at the end; and at most :data:`MAX_CACHE_BREAKPOINTS` ``cache_control`` markers
in ``tools``, ``system`` and ``messages`` together.
"""

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

P = "anthropic"
#: Most ``cache_control`` markers one request may carry.
MAX_CACHE_BREAKPOINTS = 4

_USER_BLOCKS = frozenset({"text", "image", "document", "tool_result"})
_ASSISTANT_BLOCKS = frozenset({"text", "thinking", "redacted_thinking", "tool_use", "compaction"})
_RESULT_BLOCKS = frozenset({"text", "image", "document"})
_THINKING = frozenset({"thinking", "redacted_thinking"})
_TOOL_BLOCKS = frozenset({"tool_use", "tool_result"})


def _nonblank(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _check_source(at: str, block: Mapping[str, Any], problems: list[str]) -> None:
    source = block.get("source")
    kind = source.get("type") if isinstance(source, Mapping) else None
    if kind == "base64" or kind == "text":
        assert isinstance(source, Mapping)
        if not isinstance(source.get("data"), str) or not _nonblank(source.get("media_type")):
            problems.append(f"{at}: {kind} source needs media_type and data")
    elif kind == "url":
        assert isinstance(source, Mapping)
        if not _nonblank(source.get("url")):
            problems.append(f"{at}: url source needs a url")
    else:
        problems.append(f"{at}: source type {kind!r} not allowed")


def _check_block(at: str, block: Mapping[str, Any], problems: list[str]) -> None:
    """Field checks of one block whose type is already known to be allowed."""
    kind = block["type"]
    if kind == "text" and not _nonblank(block.get("text")):
        problems.append(f"{at}: empty text block")
    elif kind in ("image", "document"):
        _check_source(at, block, problems)
    elif kind == "thinking":
        if not _nonblank(block.get("signature")):
            problems.append(f"{at}: thinking block without a signature")
        if not isinstance(block.get("thinking"), str):
            problems.append(f"{at}: thinking must be a string")
    elif kind == "redacted_thinking" and not _nonblank(block.get("data")):
        problems.append(f"{at}: redacted_thinking block without data")
    elif kind == "tool_use":
        uid, name = block.get("id"), block.get("name")
        if not _nonblank(uid) or not _nonblank(name):
            problems.append(f"{at}: tool_use needs an id and a name")
        if isinstance(uid, str) and uid:
            check_id(at, "tool_use id", uid, P, problems)
        if isinstance(name, str) and name:
            check_name(at, "tool name", name, P, problems)
        if not isinstance(block.get("input"), Mapping):
            problems.append(f"{at}: tool_use input must be an object")
    elif kind == "tool_result":
        _check_result(at, block, problems)


def _check_result(at: str, block: Mapping[str, Any], problems: list[str]) -> None:
    uid = block.get("tool_use_id")
    if not _nonblank(uid):
        problems.append(f"{at}: tool_result needs a tool_use_id")
    if isinstance(uid, str) and uid:
        check_id(at, "tool_use_id", uid, P, problems)
    if "is_error" in block and not isinstance(block["is_error"], bool):
        problems.append(f"{at}: is_error must be a boolean")
    content = block.get("content")
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        problems.append(f"{at}: tool_result content must be a string or a list")
        return
    for k, inner in enumerate(content):
        kind = inner.get("type") if isinstance(inner, Mapping) else None
        if kind not in _RESULT_BLOCKS or not isinstance(inner, Mapping):
            problems.append(f"{at}.content[{k}]: block type {kind!r} not allowed in tool_result")
        else:
            _check_block(f"{at}.content[{k}]", inner, problems)


def _blocks(where: str, content: Any, problems: list[str]) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        if not content.strip():
            problems.append(f"{where}: empty content")
        return []
    if not isinstance(content, list) or not content:
        problems.append(f"{where}: content must be a non-blank string or a non-empty list")
        return []
    out: list[Mapping[str, Any]] = []
    for k, block in enumerate(content):
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            problems.append(f"{where}.content[{k}]: block without a type")
        else:
            out.append(block)
    return out


def _check_message(
    where: str, role: str, blocks: list[Mapping[str, Any]], problems: list[str]
) -> None:
    allowed = _ASSISTANT_BLOCKS if role == "assistant" else _USER_BLOCKS
    seen_other = False
    for k, block in enumerate(blocks):
        at = f"{where}.content[{k}]"
        kind = block["type"]
        if kind not in allowed:
            problems.append(f"{at}: {kind} block not allowed in a {role} message")
            continue
        if kind == "compaction" and k > 0:
            problems.append(f"{at}: a compaction block must open its message")
        lead = kind in _THINKING if role == "assistant" else kind == "tool_result"
        opens = lead or kind == "compaction"
        if lead and seen_other:
            what = "thinking blocks" if role == "assistant" else "tool_result blocks"
            problems.append(f"{at}: {what} must come before every other block")
        seen_other = seen_other or not opens
        _check_block(at, block, problems)


def _check_pairing(
    where: str, blocks: list[Mapping[str, Any]], open_uses: list[str], problems: list[str]
) -> None:
    """Results in this user message must answer exactly the previous message's tool_use ids."""
    seen: set[str] = set()
    for k, block in enumerate(blocks):
        if block["type"] != "tool_result":
            continue
        uid = block.get("tool_use_id")
        if not isinstance(uid, str):
            continue
        if uid in seen:
            problems.append(f"{where}.content[{k}]: duplicate tool_result for {uid!r}")
        elif uid not in open_uses:
            problems.append(f"{where}.content[{k}]: orphan tool_result for {uid!r}")
        seen.add(uid)
    missing = [uid for uid in open_uses if uid not in seen]
    if missing:
        problems.append(f"{where}: tool_use {missing} of the previous message not answered")


def check_anthropic(body: Any, strict: bool = False, known_ids: Collection[str] = ()) -> list[str]:
    """Problems of a Messages API body; see :func:`ctxengine.projection.validate.validate`
    (``known_ids``: ``tool_use`` ids sent earlier in the same request)."""
    if not isinstance(body, Mapping):
        return ["body is not a JSON object"]
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["messages must be a non-empty list"]
    problems: list[str] = []
    _check_system(body.get("system"), problems)
    use_ids: set[str] = set(known_ids)
    used: list[tuple[str, str]] = []
    tool_blocks = False
    open_uses: list[str] = []
    prev_role: Any = None
    system_run: int | None = None  # index of the first system message of the current run
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        role = msg.get("role") if isinstance(msg, Mapping) else None
        if role == "system" and isinstance(msg, Mapping):
            _check_system_message(where, msg, first=prev_role is None, problems=problems)
            if prev_role is not None and system_run is None:
                system_run = i
            continue
        if system_run is not None and role != "assistant":
            problems.append(
                f"messages[{system_run}]: a system message must precede an assistant "
                "message or end the request"
            )
        system_run = None
        if role not in ("user", "assistant") or not isinstance(msg, Mapping):
            problems.append(f"{where}: invalid role {role!r} (system goes in the top-level field)")
            prev_role, open_uses = role, []
            continue
        if prev_role is None and role != "user" and not _opens_with_compaction(msg):
            problems.append(f"{where}: the first message must be a user message")
        if role == prev_role:
            problems.append(f"{where}: two {role} messages in a row (roles must alternate)")
        blocks = _blocks(where, msg.get("content"), problems)
        _check_message(where, role, blocks, problems)
        if role == "user":
            _check_pairing(where, blocks, open_uses, problems)
        elif open_uses:
            problems.append(f"messages[{i - 1}]: tool_use {open_uses} not answered")
        open_uses = []
        tool_blocks = tool_blocks or any(b["type"] in _TOOL_BLOCKS for b in blocks)
        if role == "assistant":
            for k, block in enumerate(blocks):
                uid, name = block.get("id"), block.get("name")
                if block["type"] == "tool_use" and isinstance(name, str):
                    used.append((f"{where}.content[{k}]", name))
                if block["type"] == "tool_use" and isinstance(uid, str):
                    if uid in use_ids:
                        problems.append(f"{where}: tool_use id {uid!r} used twice in the request")
                    use_ids.add(uid)
                    open_uses.append(uid)
        prev_role = role
    if open_uses:
        problems.append(f"messages[{len(messages) - 1}]: tool_use {open_uses} not answered")
    declared = _check_tools(body.get("tools"), problems)
    _check_max_tokens(body, problems, required=strict)
    marks = cache_control_paths(body)
    if len(marks) > MAX_CACHE_BREAKPOINTS:
        problems.append(
            f"{len(marks)} cache_control markers (at most {MAX_CACHE_BREAKPOINTS}): "
            + ", ".join(marks)
        )
    if strict:
        check_model(body, problems)
        if (
            messages
            and isinstance(messages[-1], Mapping)
            and messages[-1].get("role") == "assistant"
        ):
            # Newer models reject a trailing assistant turn ("does not support assistant
            # message prefill"): a body sent as is ends with the user's turn.
            problems.append(
                f"messages[{len(messages) - 1}]: the request ends with an assistant turn "
                "(prefill); append the next user message"
            )
        what = "tool_use or tool_result blocks"
        check_declared(used, declared, problems, needs_tools=tool_blocks, what=what)
    return problems


def _opens_with_compaction(msg: Mapping[str, Any]) -> bool:
    """The message's first block is a ``compaction`` block: the API takes it first in
    ``messages``, in place of the messages it summarizes."""
    content = msg.get("content")
    first = content[0] if isinstance(content, list) and content else None
    return isinstance(first, Mapping) and first.get("type") == "compaction"


def _check_system_message(
    where: str, msg: Mapping[str, Any], *, first: bool, problems: list[str]
) -> None:
    """A mid-conversation system message: after the first user or assistant message, text
    only."""
    if first:
        problems.append(
            f"{where}: a system message before the first user or assistant message (the "
            "initial system prompt goes in the top-level field)"
        )
    for k, block in enumerate(_blocks(where, msg.get("content"), problems)):
        if block["type"] != "text":
            problems.append(
                f"{where}.content[{k}]: {block['type']} block not allowed in a system message"
            )
        else:
            _check_block(f"{where}.content[{k}]", block, problems)


def cache_control_paths(body: Mapping[str, Any]) -> list[str]:
    """JSON paths of the ``cache_control`` markers of ``tools``, ``system`` and ``messages``
    (blocks, and blocks inside tool results), in request order: ``tools[3]``, ``system[0]``,
    ``messages[2].content[1]``, ``messages[4].content[0].content[1]``."""
    found: list[str] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, Mapping):
            if "cache_control" in value:
                found.append(path)
            if isinstance(value.get("content"), list):
                walk(value["content"], f"{path}.content")
        elif isinstance(value, list):
            for k, item in enumerate(value):
                walk(item, f"{path}[{k}]")

    for key in ("tools", "system", "messages"):
        if isinstance(body.get(key), list):
            walk(body[key], key)
    return found


def _check_max_tokens(body: Mapping[str, Any], problems: list[str], *, required: bool) -> None:
    value = body.get("max_tokens")
    if value is None:
        if required:
            problems.append("max_tokens is missing (required)")
    elif not isinstance(value, int) or isinstance(value, bool) or value < 1:
        problems.append("max_tokens must be a positive integer")


def _check_system(system: Any, problems: list[str]) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        problems.append("system must be a string or a list of text blocks")
        return
    for k, block in enumerate(system):
        if not isinstance(block, Mapping) or block.get("type") != "text":
            problems.append(f"system[{k}]: only text blocks are allowed")
        elif not _nonblank(block.get("text")):
            problems.append(f"system[{k}]: empty text block")


def _check_tools(tools: Any, problems: list[str]) -> set[str] | None:
    """Check the tools list; return the names it declares (``None`` without a list)."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        problems.append("tools must be a list")
        return None
    names: list[tuple[int, str]] = []
    for k, tool in enumerate(tools):
        if not isinstance(tool, Mapping) or not _nonblank(tool.get("name")):
            problems.append(f"tools[{k}]: name must be a non-empty string")
            continue
        names.append((k, tool["name"]))
        check_name(f"tools[{k}]", "name", tool["name"], P, problems)
        if "type" not in tool and not isinstance(tool.get("input_schema"), Mapping):
            problems.append(f"tools[{k}]: input_schema must be an object")
    check_unique_names(names, problems)
    return {name for _, name in names}
