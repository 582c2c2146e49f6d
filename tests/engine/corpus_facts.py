"""Facts read straight from the raw corpus files, without ctxengine's importers: the first
user request and the files the session modified, per format. The replay tests compare the
engine's output against these.

"Modified" means named as the target of a file-editing tool call:

- Claude Code: ``Edit``/``MultiEdit``/``Write``/``NotebookEdit`` ``file_path``;
- Codex: ``*** Add/Update/Delete File:`` and ``*** Move to:`` headers of ``apply_patch``;
- pi: ``edit``/``write`` ``path``;
- SWE-agent: ``create`` (``create <path>`` or the function's ``filename``), ``edit`` and
  ``insert`` (on the file of the latest ``open``/``create``), and ``str_replace_editor``
  ``create``/``str_replace``/``insert`` ``path``;
- chat-completions logs (mini-swe-agent, shell only): redirect targets (``> f``, ``>> f``)
  and ``sed -i`` operands.

A call whose result reports failure (``is_error``/``isError``) modifies nothing.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_CLAUDE_EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
_PATCH_HEADER = re.compile(
    r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M
)
_REDIRECT = re.compile(r"(?<![0-9&<>])>>?\s*([^\s;&|<>()]+)")
_HEREDOC = re.compile(r"<<-?\s*'?\"?(\w+)'?\"?[^\n]*\n.*?\n\1\s*(?:\n|$)", re.S)
_QUOTED = re.compile(r"'[^']*'|" + r'"(?:[^"\\]|\\.)*"', re.S)
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _text_of(content: Any, kinds: tuple[str, ...] = ("text", "input_text")) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        c.get("text", "") for c in content or [] if isinstance(c, dict) and c.get("type") in kinds
    )


# ------------------------------------------------------------------ Claude Code


def _claude(path: Path) -> tuple[str, list[str]]:
    first = ""
    calls: dict[str, str] = {}
    failed: set[str] = set()
    for d in _jsonl(path):
        msg = d.get("message") or {}
        if d.get("type") == "user" and not (d.get("isMeta") or d.get("isCompactSummary")):
            content = msg.get("content")
            has_result = isinstance(content, list) and any(
                c.get("type") == "tool_result" for c in content if isinstance(c, dict)
            )
            for c in content if isinstance(content, list) else []:
                if isinstance(c, dict) and c.get("type") == "tool_result" and c.get("is_error"):
                    failed.add(c.get("tool_use_id", ""))
            text = _text_of(content)
            if not first and not has_result and text.strip() and not _claude_injected(text):
                first = text
        if d.get("type") == "assistant":
            for c in msg.get("content") or []:
                if c.get("type") == "tool_use" and c.get("name") in _CLAUDE_EDIT_TOOLS:
                    fp = (c.get("input") or {}).get("file_path") or (c.get("input") or {}).get(
                        "notebook_path"
                    )
                    if fp:
                        calls[c["id"]] = fp
    return first, _ordered(p for cid, p in calls.items() if cid not in failed)


def _claude_injected(text: str) -> bool:
    """Text Claude Code writes into user lines itself (command echoes, caveats, reminders)."""
    return text.lstrip().startswith(
        ("<command-", "<local-command", "<system-reminder>", "Caveat:", "[Request interrupted")
    )


# ------------------------------------------------------------------ Codex


def _codex(path: Path) -> tuple[str, list[str]]:
    first = ""
    patches: dict[str, list[str]] = {}
    ok: set[str] = set()
    for d in _jsonl(path):
        if d.get("type") != "response_item":
            continue
        p = d.get("payload") or {}
        kind = p.get("type")
        if kind == "message" and p.get("role") == "user":
            text = _text_of(p.get("content"))
            if not first and text.strip() and not text.lstrip().startswith(_INJECTED):
                first = text
        elif kind in ("function_call", "custom_tool_call"):
            raw = p.get("arguments") if kind == "function_call" else p.get("input")
            text = raw if isinstance(raw, str) else json.dumps(raw)
            if kind == "function_call":
                try:
                    args = json.loads(text)
                    cmd = args.get("command") if isinstance(args, dict) else None
                    text = "\n".join(cmd) if isinstance(cmd, list) else text
                except ValueError:
                    pass
            paths = [a or b for a, b in _PATCH_HEADER.findall(text)]
            if paths:
                patches[p.get("call_id", "")] = [x.strip() for x in paths]
        elif kind in ("function_call_output", "custom_tool_call_output"):
            out = p.get("output")
            if _codex_ok(out):
                ok.add(p.get("call_id", ""))
    return first, _ordered(x for cid, ps in patches.items() if cid in ok for x in ps)


def _codex_ok(output: Any) -> bool:
    text = output if isinstance(output, str) else json.dumps(output)
    try:
        data = json.loads(text)
    except ValueError:
        return "Success" in text or "exit code: 0" in text.lower()
    if isinstance(data, dict):
        code = (data.get("metadata") or {}).get("exit_code")
        return code == 0
    return True


# ------------------------------------------------------------------ pi


def _pi(path: Path) -> tuple[str, list[str]]:
    first = ""
    calls: dict[str, str] = {}
    failed: set[str] = set()
    for d in _jsonl(path):
        if d.get("type") != "message":
            continue
        m = d.get("message") or {}
        role = m.get("role")
        if role == "user" and not first:
            first = _text_of(m.get("content"))
        elif role == "assistant":
            for c in m.get("content") or []:
                if c.get("type") == "toolCall" and c.get("name") in ("edit", "write"):
                    target = (c.get("arguments") or {}).get("path")
                    if target:
                        calls[c["id"]] = target
        elif role == "toolResult" and m.get("isError"):
            failed.add(m.get("toolCallId", ""))
    return first, _ordered(p for cid, p in calls.items() if cid not in failed)


# ------------------------------------------------------------------ SWE-agent


def _swe_agent(path: Path) -> tuple[str, list[str]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    history = data.get("history") or []
    first = next(
        (
            _text_of(m.get("content"))
            for m in history
            if m.get("role") == "user" and not m.get("is_demo")
        ),
        "",
    )
    modified: list[str] = []
    current: str | None = None
    for m in history:
        if m.get("role") != "assistant" or m.get("is_demo"):
            continue
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            args = _loads(fn.get("arguments"))
            name = fn.get("name")
            if name == "str_replace_editor":
                if args.get("command") in ("create", "str_replace", "insert") and args.get("path"):
                    modified.append(args["path"])
            elif name == "open" and args.get("path"):
                current = args["path"]
            elif name == "create" and args.get("filename"):
                current = args["filename"]
                modified.append(current)
            elif name in ("edit", "insert") and current is not None:
                modified.append(current)
            elif name == "bash":
                current = _swe_action(str(args.get("command") or ""), current, modified)
        if not m.get("tool_calls"):
            current = _swe_action(str(m.get("action") or ""), current, modified)
    return first, _ordered(modified)


def _swe_action(action: str, current: str | None, modified: list[str]) -> str | None:
    words = action.strip().split(maxsplit=2)
    if not words:
        return current
    if words[0] == "open" and len(words) > 1:
        return words[1].strip("\"'")
    if words[0] == "create" and len(words) > 1:
        modified.append(words[1].strip("\"'"))
        return words[1].strip("\"'")
    if words[0] == "edit" and current is not None:
        modified.append(current)
    return current


def _loads(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        out = json.loads(raw or "{}")
    except ValueError:
        return {}
    return out if isinstance(out, dict) else {}


# ------------------------------------------------------------------ chat completions


def _chat(path: Path) -> tuple[str, list[str]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    messages = data["messages"] if isinstance(data, dict) else data
    first = next((_text_of(m.get("content")) for m in messages if m.get("role") == "user"), "")
    modified: list[str] = []
    for m in messages:
        for tc in m.get("tool_calls") or []:
            cmd = _loads((tc.get("function") or {}).get("arguments")).get("command")
            if isinstance(cmd, str):
                modified.extend(shell_writes(cmd))
    return first, _ordered(modified)


def shell_writes(command: str) -> list[str]:
    """Files a shell command writes: redirect targets and ``sed -i`` operands (heredoc
    bodies and quoted strings are not looked into)."""
    bare = _QUOTED.sub("''", _HEREDOC.sub("\n", command))
    out: list[str] = []
    for segment in re.split(r"&&|\|\||;|\n", bare):
        for target in _REDIRECT.findall(segment):
            if not target.startswith(("/dev/", "&")) and target != "''":
                out.append(target)
        out.extend(_sed_targets(segment))
    return out


def _sed_targets(segment: str) -> list[str]:
    try:
        words = shlex.split(segment)
    except ValueError:
        return []
    if "sed" not in words:
        return []
    words = words[words.index("sed") + 1 :]
    if not any(w == "-i" or w.startswith("-i") for w in words):
        return []
    operands: list[str] = []
    script_seen = False
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w in ("-e", "-f"):
            script_seen, skip = True, True
            continue
        if w.startswith("-"):
            continue
        if not script_seen:
            script_seen = True
            continue
        operands.append(w)
    return [w for w in operands if not set(w) & set("|<>")]


# ------------------------------------------------------------------


def _ordered(paths: Iterator[str] | list[str]) -> list[str]:
    return list(dict.fromkeys(p for p in paths if p))


READERS = {
    "claude-code": _claude,
    "codex": _codex,
    "pi": _pi,
    "swe-agent": _swe_agent,
    "openai-messages": _chat,
}


def raw_facts(path: Path) -> tuple[str, list[str]]:
    """``(first user request, modified paths in first-seen order)`` of a corpus file, read
    from its raw JSON by the reader of its corpus directory."""
    return READERS[path.parent.name](path)
