"""Facts read straight from the raw corpus files, without ctxengine's importers: the first
user request and the files the session modified. The replay tests compare the engine's
output against these. The first request of Claude Code and Codex files skips bare
acknowledgements (``Can we continue from where we left off?``): they are never a goal
(:func:`ctxengine.summarizers.acknowledge.is_acknowledgement`).

A file counts as modified when a tool call names it as the target of a change and the
call's result does not report failure (``is_error``/``isError``, a non-zero exit code):

- Claude Code: ``Edit``/``MultiEdit``/``Write``/``NotebookEdit`` ``file_path``;
- Codex: ``*** Add/Update/Delete File:`` and ``*** Move to:`` headers of ``apply_patch``;
- pi: ``edit``/``write`` ``path``;
- SWE-agent: ``create`` (``create <path>`` or the function's ``filename``), ``edit`` and
  ``insert`` (on the file of the latest ``open``/``create``), and ``str_replace_editor``
  ``create``/``str_replace``/``insert`` ``path``;
- OpenHands: ``str_replace_editor`` as above (a call is the ``model_response`` tool call of
  an action, or an older event's ``run`` / ``edit`` action); a failed observation is an
  ``error``, a non-zero exit code or content starting with ``ERROR:``;
- Gemini CLI chat shares: ``write_file``/``replace`` ``file_path`` (a ``Tool Response``
  answers the oldest ``Tool Command`` of its name; it failed when it holds ``error``);
- aider: the paths of its ``> Applied edit to <path>`` lines (aider applies edits from the
  reply text; there are no tool calls);
- any shell command of any format: redirect targets (``> f``, ``>> f``), ``sed -i``
  operands and ``apply_patch`` headers (heredoc bodies, quoted strings, variables and
  globs are not looked into).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxengine.summarizers.acknowledge import is_acknowledgement

_PATCH_HEADER = re.compile(
    r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M
)
_REDIRECT = re.compile(r"(?<![0-9&<>=-])>>?\s*([^\s;&|<>()]+)")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n.*?(?:\n\1[ \t]*(?=\n|$)|\Z)", re.S)
_QUOTED = re.compile(r"'[^']*'|" + r'"(?:[^"\\]|\\.)*"', re.S)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_EXIT_CODE = re.compile(r"(?:Exit code|exit code|Process exited with code)[: ]+(-?\d+)")
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")
_SHELL_KEYS = ("command", "cmd")


@dataclass(slots=True)
class Call:
    """One tool call as the raw file records it."""

    id: str
    name: str
    args: dict[str, Any]
    failed: bool = False


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


def _loads(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        out = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


def _code_failed(text: str) -> bool:
    m = _RETURNCODE.search(text) or _EXIT_CODE.search(text[:300])
    return m is not None and int(m.group(1)) != 0


# ------------------------------------------------------------------ per format


def _claude(path: Path) -> tuple[str, list[Call]]:
    first = ""
    calls: dict[str, Call] = {}
    for d in _jsonl(path):
        msg = d.get("message") or {}
        content = msg.get("content")
        if d.get("type") == "user" and not (d.get("isMeta") or d.get("isCompactSummary")):
            blocks = content if isinstance(content, list) else []
            results = [c for c in blocks if isinstance(c, dict) and c.get("type") == "tool_result"]
            for r in results:
                if r.get("is_error") and r.get("tool_use_id") in calls:
                    calls[r["tool_use_id"]].failed = True
            text = _text_of(content)
            if (
                not first
                and not results
                and text.strip()
                and not _claude_injected(text)
                and not is_acknowledgement(text)
            ):
                first = text
        elif d.get("type") == "assistant":
            for c in content or []:
                if isinstance(c, dict) and c.get("type") == "tool_use":
                    calls[c["id"]] = Call(c["id"], c.get("name", ""), c.get("input") or {})
    return first, list(calls.values())


def _claude_injected(text: str) -> bool:
    """Text Claude Code writes into user lines itself (command echoes, caveats, reminders)."""
    return text.lstrip().startswith(
        ("<command-", "<local-command", "<system-reminder>", "Caveat:", "[Request interrupted")
    )


def _codex(path: Path) -> tuple[str, list[Call]]:
    first = ""
    calls: dict[str, Call] = {}
    for d in _jsonl(path):
        if d.get("type") != "response_item":
            continue
        p = d.get("payload") or {}
        kind = p.get("type")
        if kind == "message" and p.get("role") == "user":
            text = _text_of(p.get("content"))
            if (
                not first
                and text.strip()
                and not text.lstrip().startswith(_INJECTED)
                and not is_acknowledgement(text)
            ):
                first = text
        elif kind == "function_call":
            args = _loads(p.get("arguments"))
            command = args.get("command")
            if isinstance(command, list):  # ["bash", "-lc", script] or ["apply_patch", patch]
                args = {"command": command[-1] if command else ""}
            calls[p.get("call_id", "")] = Call(p.get("call_id", ""), p.get("name", ""), args)
        elif kind == "custom_tool_call":
            args = {"command": str(p.get("input") or "")}
            calls[p.get("call_id", "")] = Call(p.get("call_id", ""), p.get("name", ""), args)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            call = calls.get(p.get("call_id", ""))
            if call is not None:
                call.failed = _codex_failed(p.get("output"))
    return first, list(calls.values())


def _codex_failed(output: Any) -> bool:
    text = output if isinstance(output, str) else json.dumps(output)
    data = _loads(text)
    code = (data.get("metadata") or {}).get("exit_code") if data else None
    if isinstance(code, int):
        return code != 0
    return _code_failed(text)


def _pi(path: Path) -> tuple[str, list[Call]]:
    first = ""
    calls: dict[str, Call] = {}
    for d in _jsonl(path):
        if d.get("type") != "message":
            continue
        m = d.get("message") or {}
        role = m.get("role")
        if role == "user" and not first:
            first = _text_of(m.get("content"))
        elif role == "assistant":
            for c in m.get("content") or []:
                if isinstance(c, dict) and c.get("type") == "toolCall":
                    calls[c["id"]] = Call(c["id"], c.get("name", ""), c.get("arguments") or {})
        elif role == "toolResult" and m.get("toolCallId") in calls:
            calls[m["toolCallId"]].failed = bool(m.get("isError"))
    return first, list(calls.values())


def _swe_agent(path: Path) -> tuple[str, list[Call]]:
    history = json.loads(path.read_text(encoding="utf-8")).get("history") or []
    first = next(
        (
            _text_of(m.get("content"))
            for m in history
            if m.get("role") == "user" and not m.get("is_demo")
        ),
        "",
    )
    calls: list[Call] = []
    for i, m in enumerate(history):
        if m.get("role") != "assistant" or m.get("is_demo"):
            continue
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            calls.append(Call(tc.get("id", ""), fn.get("name", ""), _loads(fn.get("arguments"))))
        if not m.get("tool_calls") and isinstance(m.get("action"), str):
            calls.append(Call(f"action-{i}", "bash", {"command": m["action"]}))
    return first, calls


def _chat(path: Path) -> tuple[str, list[Call]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    messages = data["messages"] if isinstance(data, dict) else data
    first = next((_text_of(m.get("content")) for m in messages if m.get("role") == "user"), "")
    calls: dict[str, Call] = {}
    for m in messages:
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            calls[tc.get("id", "")] = Call(
                tc.get("id", ""), fn.get("name", ""), _loads(fn.get("arguments"))
            )
        if m.get("role") == "tool" and m.get("tool_call_id") in calls:
            calls[m["tool_call_id"]].failed = _code_failed(_text_of(m.get("content")))
    return first, list(calls.values())


def _openhands_events(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(run number, event)`` of an OpenHands file (one run per line of an evaluation
    output, else run 0)."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        for e in json.loads(text):
            yield 0, e
        return
    for n, line in enumerate(text.splitlines()):
        if line.strip():
            d = json.loads(line)
            for e in d["history"] if isinstance(d.get("history"), list) else [d]:
                yield n, e


def _openhands(path: Path) -> tuple[str, list[Call]]:
    first = ""
    calls: dict[str, Call] = {}
    by_event: dict[Any, Call] = {}
    for i, (run, e) in enumerate(_openhands_events(path)):
        args = e.get("args") if isinstance(e.get("args"), dict) else e
        if e.get("action") == "message" and e.get("source", "user") == "user" and not first:
            first = str(args.get("content") or e.get("content") or "")
        tcm = e.get("tool_call_metadata") or {}
        if "action" in e and tcm:
            message = (tcm.get("model_response") or {}).get("choices", [{}])[0].get("message", {})
            for tc in message.get("tool_calls") or []:
                fn = tc.get("function") or {}
                key = f"{run}:{tc['id']}"
                calls[key] = Call(key, fn.get("name", ""), _loads(fn.get("arguments")))
        elif e.get("action") in ("run", "edit", "write") and e.get("source") != "user":
            call = Call(
                f"event-{i}", e["action"], {k: v for k, v in args.items() if k != "thought"}
            )
            if call.name == "run":
                call.name = "bash"
            calls[call.id] = call
            by_event[(run, e.get("id", i))] = call
        elif "observation" in e:
            content = e.get("content")
            extras = e.get("extras") if isinstance(e.get("extras"), dict) else e
            code = (extras.get("metadata") or {}).get("exit_code", extras.get("exit_code"))
            failed = (
                e["observation"] == "error"
                or (isinstance(code, int) and code not in (0, -1))
                or (isinstance(content, str) and content.startswith("ERROR:"))
            )
            key = f"{run}:{tcm.get('tool_call_id', '')}"
            target = calls.get(key) if tcm else by_event.get((run, e.get("cause")))
            if target is not None and failed:
                target.failed = True
    return first, list(calls.values())


_GEMINI_HEADER = re.compile(r"^(?:\S+ )?## (USER|MODEL)(?: \S+)?$", re.M)
_GEMINI_BLOCK = re.compile(r"\*\*Tool (Command|Response)\*\*:\n```json\n(.*?)\n```", re.S)
_GEMINI_SETUP = re.compile(r"\A\s*This is the [^\n.]+\. We are setting up the context")


_GEMINI_GOAL = re.compile(r"<overall_goal>\s*(.*?)\s*</overall_goal>", re.S)
_GEMINI_ACK = "Got it. Thanks for the additional context"


def _gemini_share(path: Path) -> tuple[str, list[Call]]:
    """A share written after a compression starts with the summary (a USER section holding
    a ``<state_snapshot>``, answered by the model's acknowledgement): its overall goal is
    the task."""
    text = path.read_text(encoding="utf-8")
    heads = list(_GEMINI_HEADER.finditer(text))
    first = ""
    calls: list[Call] = []
    for k, h in enumerate(heads):
        end = heads[k + 1].start() - len("\n\n---\n\n") if k + 1 < len(heads) else len(text)
        body = text[h.end() + 2 : end]
        blocks = list(_GEMINI_BLOCK.finditer(body))
        after = text[heads[k + 1].end() + 2 :] if k + 1 < len(heads) else ""
        goal = _GEMINI_GOAL.search(body)
        if h.group(1) == "USER" and goal and after.startswith(_GEMINI_ACK):
            first = first or goal.group(1)
            continue
        if h.group(1) == "USER" and not blocks and not first and not _GEMINI_SETUP.match(body):
            first = body
        for b in blocks:
            value = json.loads(b.group(2))
            if b.group(1) == "Command":
                calls.append(Call(str(len(calls)), value["name"], value.get("args") or {}))
                continue
            open_call = next((c for c in calls if c.id != "done" and c.name == value["name"]), None)
            if open_call is not None:
                open_call.failed = "error" in (value.get("response") or {})
                open_call.id = "done"
    return first, calls


def _aider(path: Path) -> tuple[str, list[Call]]:
    lines = path.read_text(encoding="utf-8").split("\n")
    first = ""
    block: list[str] = []
    calls: list[Call] = []
    for line in [*lines, ""]:
        if line.startswith("#### ") or line == "####":
            block.append(line[5:].removesuffix("  "))
            continue
        text = "\n".join(block).strip()
        block = []
        if text and not first and not text.startswith("/"):
            first = text
        if line.startswith("> Applied edit to "):
            edited = line[len("> Applied edit to ") :].removesuffix("  ")
            calls.append(Call(str(len(calls)), "Edit", {"file_path": edited}))
    return first, calls


# ------------------------------------------------------------------ modified files


def modified_paths(calls: Iterable[Call]) -> list[str]:
    """Paths changed by successful ``calls``, in first-seen order (rules in the module
    docstring)."""
    out: list[str] = []
    current: str | None = None  # SWE-agent's open file
    for c in calls:
        a = c.args
        changed: list[str] = []
        if c.name in ("Edit", "MultiEdit", "Write", "NotebookEdit"):
            changed.append(str(a.get("file_path") or a.get("notebook_path") or ""))
        elif c.name in ("edit", "write") and "path" in a:  # pi
            changed.append(str(a["path"]))
        elif c.name in ("write_file", "replace"):  # Gemini CLI
            changed.append(str(a.get("file_path") or ""))
        elif c.name == "str_replace_editor":
            if a.get("command") in ("create", "str_replace", "insert"):
                changed.append(str(a.get("path") or ""))
        elif c.name == "open" and a.get("path"):
            current = str(a["path"])
        elif c.name == "create" and a.get("filename"):
            current = str(a["filename"])
            changed.append(current)
        elif c.name in ("edit", "insert") and current is not None:
            changed.append(current)
        command = next((a[k] for k in _SHELL_KEYS if isinstance(a.get(k), str)), None)
        if command is not None and c.name not in ("edit", "write"):
            current, shell = _swe_action(command, current)
            changed.extend(shell)
        if not c.failed:
            out.extend(changed)
    return list(dict.fromkeys(p for p in out if p))


def _swe_action(command: str, current: str | None) -> tuple[str | None, list[str]]:
    """SWE-agent's own commands (``open``, ``create``, ``edit``), else a plain shell line."""
    words = command.strip().split(maxsplit=2)
    head = words[0] if words else ""
    if head == "open" and len(words) > 1:
        return words[1].strip("\"'"), []
    if head == "create" and len(words) > 1:
        path = words[1].strip("\"'")
        return path, [path]
    if head in ("edit", "insert") and current is not None:
        return current, [current]
    return current, shell_writes(command)


def shell_writes(command: str) -> list[str]:
    """Files a shell command writes: ``apply_patch`` headers, redirect targets and
    ``sed -i`` operands."""
    if "*** Begin Patch" in command:
        return [(a or b).strip() for a, b in _PATCH_HEADER.findall(command)]
    bare = _QUOTED.sub(_placeholder, _HEREDOC.sub("\n", command))
    out: list[str] = []
    for segment in re.split(r"&&|\|\||;|\||\n", bare):
        for target in _REDIRECT.findall(segment):
            out.append(target)
        out.extend(_sed_targets(segment))
    return [p for p in out if _plain_path(p)]


def _placeholder(m: re.Match[str]) -> str:
    """A quoted string becomes ``''`` when empty, else ``'q'`` (its text is not parsed)."""
    return "''" if len(m.group(0)) == 2 else "'q'"


def _plain_path(p: str) -> bool:
    return (
        bool(p) and not p.startswith(("'", "/dev/", "&", "$")) and not any(ch in p for ch in "*?")
    )


def _sed_targets(segment: str) -> list[str]:
    try:
        words = shlex.split(segment)
    except ValueError:
        return []
    if "sed" not in words:
        return []
    words = words[words.index("sed") + 1 :]
    flags = [w for w in words if w.startswith("-")]
    if not any(w.startswith("-i") for w in flags):
        return []
    operands: list[str] = []
    script_given = any(w in ("-e", "-f") for w in flags)
    skip = False
    for k, w in enumerate(words):
        if skip:
            skip = False
        elif w in ("-e", "-f"):
            skip = True
        elif w == "-i" and k + 1 < len(words) and words[k + 1] == "":
            skip = True  # BSD sed: -i '' (no backup suffix)
        elif not w.startswith("-"):
            operands.append(w)
    files = operands if script_given else operands[1:]
    return [f for f in files if f != "q" and not set(f) & set("<>&|")]


# ------------------------------------------------------------------


READERS = {
    "claude-code": _claude,
    "codex": _codex,
    "pi": _pi,
    "swe-agent": _swe_agent,
    "openai-messages": _chat,
    "openhands": _openhands,
    "gemini-cli": _gemini_share,
    "aider": _aider,
}


def raw_facts(path: Path) -> tuple[str, list[str]]:
    """``(first user request, modified paths in first-seen order)`` of a corpus file, read
    from its raw JSON by the reader of its corpus directory."""
    first, calls = READERS[path.parent.name](path)
    return first, modified_paths(calls)
