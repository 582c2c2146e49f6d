"""Writes Claude Code session JSONL the way Claude Code does (used by ``make_session.py``).

Claude Code logs one line per content block of a reply, each repeating the reply's
``message.id``, ``requestId`` and usage; a tool result is a user line with the parsed result in
``toolUseResult`` and ``sourceToolAssistantUUID`` naming the line of its call. Hook progress,
file-history snapshots and ``turn_duration`` records sit between the messages. Tools run
against an in-memory copy of the project (``Read``, ``Grep``, ``Glob``, ``Edit``, ``Write``
act on it; ``Bash`` outputs are given), so every read shows the file as edited so far.

Ids, signatures and timestamps derive from fixed seeds: the output is deterministic.
"""

from __future__ import annotations

import base64
import difflib
import fnmatch
import hashlib
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from tallyho_files import PROJECT

CWD = "/home/dev/projects/tallyho"
VERSION = "2.1.38"
BRANCH = "main"
SLUG = "steady-counting-abacus"
MODEL = "claude-sonnet-4-5-20250929"
START = datetime(2026, 3, 2, 9, 14, 5, 120000, tzinfo=UTC)
#: Tokens of Claude Code's system prompt and tool schemas, cached before the first reply.
SYSTEM_TOKENS = 17_915
#: Tokens of the environment and project context sent with the first user message.
CONTEXT_TOKENS = 2_310
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
TODO_DONE = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to "
    "track your progress. Please proceed with the current tasks if applicable"
)


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("|".join(map(str, parts)).encode()).digest()


def new_uuid(kind: str, n: int) -> str:
    raw = bytearray(_digest("uuid", kind, n)[:16])
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))


def b58(kind: str, n: int, length: int) -> str:
    value = int.from_bytes(_digest("b58", kind, n) + _digest("b58+", kind, n), "big")
    out = []
    for _ in range(length):
        value, digit = divmod(value, 58)
        out.append(B58[digit])
    return "".join(out)


def signature(n: int) -> str:
    """A well-formed (fake) thinking signature: base64 of a protobuf-like byte string."""
    body = b"".join(_digest("sig", n, i) for i in range(9))[:284]
    return base64.b64encode(b"\x12\x9c\x02\n@" + body).decode()


SESSION_ID = new_uuid("session", 0)


def tokens(text: str) -> int:
    return max(1, len(text) // 4)


@dataclass
class Call:
    """One tool call: its name and input, and how to run it against the project files."""

    name: str
    input: dict[str, Any]
    run: Callable[[dict[str, str]], tuple[str, bool, Any]]
    seconds: float = 0.2


def _abs(path: str) -> str:
    return f"{CWD}/{path}"


def read(path: str) -> Call:
    def run(fs: dict[str, str]) -> tuple[str, bool, Any]:
        text = fs[path]
        lines = text.splitlines()
        shown = "\n".join(f"{i:>6}→{line}" for i, line in enumerate(lines, start=1))
        file = {
            "filePath": _abs(path),
            "content": text,
            "numLines": len(lines),
            "startLine": 1,
            "totalLines": len(lines),
        }
        return shown, False, {"type": "text", "file": file}

    return Call("Read", {"file_path": _abs(path)}, run, 0.05)


def glob(pattern: str) -> Call:
    def run(fs: dict[str, str]) -> tuple[str, bool, Any]:
        found = [_abs(p) for p in sorted(fs) if fnmatch.fnmatch(p, pattern)]
        tur = {
            "filenames": found,
            "durationMs": 21 + len(found),
            "numFiles": len(found),
            "truncated": False,
        }
        return "\n".join(found) or "No files found", False, tur

    return Call("Glob", {"pattern": pattern}, run, 0.08)


def grep(pattern: str, glob_: str | None = None, files_only: bool = False) -> Call:
    args: dict[str, Any] = {"pattern": pattern}
    if glob_:
        args["glob"] = glob_
    args["output_mode"] = "files_with_matches" if files_only else "content"
    if not files_only:
        args["-n"] = True

    def run(fs: dict[str, str]) -> tuple[str, bool, Any]:
        rx = re.compile(pattern)
        hits: list[str] = []
        files: list[str] = []
        for path in sorted(fs):
            if glob_ and not fnmatch.fnmatch(path, glob_):
                continue
            found = [(i, ln) for i, ln in enumerate(fs[path].splitlines(), 1) if rx.search(ln)]
            if found:
                files.append(path)
                hits.extend(f"{path}:{i}:{ln}" for i, ln in found)
        if files_only:
            text = f"Found {len(files)} files\n" + "\n".join(files) if files else "No files found"
            return (
                text,
                False,
                {"mode": "files_with_matches", "filenames": files, "numFiles": len(files)},
            )
        text = "\n".join(hits) or "No matches found"
        tur = {
            "mode": "content",
            "numFiles": 0,
            "filenames": [],
            "content": text,
            "numLines": len(hits),
        }
        return text, False, tur

    return Call("Grep", args, run, 0.1)


def bash(command: str, description: str, output: str, code: int = 0, seconds: float = 0.4) -> Call:
    def run(fs: dict[str, str]) -> tuple[str, bool, Any]:
        if code:
            text = f"Exit code {code}\n{output}"
            return text, True, f"Error: {text}"
        tur = {
            "stdout": output,
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        }
        return output, False, tur

    return Call("Bash", {"command": command, "description": description}, run, seconds)


def _hunks(old: str, new: str) -> list[dict[str, Any]]:
    a, b = old.splitlines(), new.splitlines()
    hunks = []
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(3):
        lines: list[str] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [" " + ln for ln in a[a1:a2]]
                continue
            lines += ["-" + ln for ln in a[a1:a2]]
            lines += ["+" + ln for ln in b[b1:b2]]
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        hunks.append(
            {
                "oldStart": i1 + 1,
                "oldLines": i2 - i1,
                "newStart": j1 + 1,
                "newLines": j2 - j1,
                "lines": lines,
            }
        )
    return hunks


def edit(path: str, old: str, new: str) -> Call:
    def run(fs: dict[str, str]) -> tuple[str, bool, Any]:
        original = fs[path]
        if original.count(old) != 1:
            raise SystemExit(f"edit of {path} does not match exactly once: {old[:60]!r}")
        fs[path] = original.replace(old, new)
        tur = {
            "filePath": _abs(path),
            "oldString": old,
            "newString": new,
            "structuredPatch": _hunks(original, fs[path]),
            "userModified": False,
            "replaceAll": False,
        }
        return f"The file {_abs(path)} has been updated successfully.", False, tur

    args = {"file_path": _abs(path), "old_string": old, "new_string": new}
    return Call("Edit", args, run, 0.06)


def write(path: str, content: str) -> Call:
    def run(fs: dict[str, str]) -> tuple[str, bool, Any]:
        fs[path] = content
        tur = {
            "type": "create",
            "filePath": _abs(path),
            "content": content,
            "structuredPatch": [],
            "originalFile": None,
        }
        return f"File created successfully at: {_abs(path)}", False, tur

    return Call("Write", {"file_path": _abs(path), "content": content}, run, 0.05)


class Todos:
    """TodoWrite calls that remember the previous list."""

    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def __call__(self, *items: tuple[str, str, str]) -> Call:
        new = [{"content": c, "status": s, "activeForm": a} for c, s, a in items]
        old, self.items = self.items, new

        def run(fs: dict[str, str]) -> tuple[str, bool, Any]:
            return TODO_DONE, False, {"oldTodos": old, "newTodos": new}

        return Call("TodoWrite", {"todos": new}, run, 0.02)


class Session:
    """Appends Claude Code JSONL records with chained ``parentUuid`` and a running clock."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.fs: dict[str, str] = dict(PROJECT)
        self.clock = START
        self.parent: str | None = None
        self.cached = SYSTEM_TOKENS
        #: Tokens not yet in the prompt cache (the first message also carries Claude Code's
        #: environment and project-context reminders).
        self.pending = CONTEXT_TOKENS
        self.turn_start = START
        self.counter = 0

    def _next(self, kind: str) -> str:
        self.counter += 1
        return new_uuid(kind, self.counter)

    def _tick(self, seconds: float) -> str:
        jitter = _digest("tick", self.counter)[0] / 255 * 0.4
        self.clock += timedelta(seconds=seconds + jitter)
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def _base(self, parent: str | None, slug: bool = True) -> dict[str, Any]:
        base = {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": CWD,
            "sessionId": SESSION_ID,
            "version": VERSION,
            "gitBranch": BRANCH,
        }
        if slug:
            base["slug"] = SLUG
        return base

    def hook(self, event: str, command: str, tool_use_id: str) -> None:
        record = self._base(self.parent, slug=self.parent is not None)
        record.update(
            type="progress",
            data={
                "type": "hook_progress",
                "hookEvent": event,
                "hookName": f"{event}:{'startup' if event == 'SessionStart' else 'Bash'}",
                "command": command,
            },
        )
        record.update(parentToolUseID=tool_use_id, toolUseID=tool_use_id)
        record.update(timestamp=self._tick(0.03), uuid=self._next("progress"))
        self.records.append(record)
        self.parent = record["uuid"]

    def prompt(self, text: str, pause: float = 45.0) -> None:
        """A user message typed by the human (preceded by a file-history snapshot)."""
        uid = self._next("user")
        stamp = self._tick(pause)
        self.turn_start = self.clock
        snapshot = {"messageId": uid, "trackedFileBackups": {}, "timestamp": stamp}
        self.records.append(
            {
                "type": "file-history-snapshot",
                "messageId": uid,
                "snapshot": snapshot,
                "isSnapshotUpdate": False,
            }
        )
        record = self._base(self.parent, slug=any(r["type"] == "assistant" for r in self.records))
        record.update(
            type="user",
            message={"role": "user", "content": text},
            uuid=uid,
            timestamp=stamp,
            thinkingMetadata={"maxThinkingTokens": 31999},
            todos=[],
            permissionMode="acceptEdits",
        )
        self.records.append(record)
        self.parent = uid
        self.pending += tokens(text) + 24

    def reply(
        self,
        text: str = "",
        *calls: Call,
        thinking: str = "",
        interleaved: bool = False,
    ) -> None:
        """One model response: thinking, text and tool_use blocks as separate lines sharing a
        message id; then the tool results (after each call when ``interleaved``)."""
        n = self.counter + 1
        msg_id, req_id = "msg_01" + b58("msg", n, 22), "req_011C" + b58("req", n, 20)
        blocks: list[dict[str, Any]] = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking, "signature": signature(n)})
        if text:
            blocks.append({"type": "text", "text": text})
        ids = ["toolu_01" + b58("tool", n * 10 + i, 22) for i in range(len(calls))]
        for tid, call in zip(ids, calls, strict=True):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": tid,
                    "name": call.name,
                    "input": call.input,
                    "caller": {"type": "direct"},
                }
            )
        out = sum(tokens(json.dumps(b)) for b in blocks) + len(thinking) // 4
        usage = {
            "input_tokens": 1 + _digest("in", n)[0] % 9,
            "cache_creation_input_tokens": self.pending,
            "cache_read_input_tokens": self.cached,
            "cache_creation": {
                "ephemeral_5m_input_tokens": 0,
                "ephemeral_1h_input_tokens": self.pending,
            },
            "output_tokens": out,
            "service_tier": "standard",
            "inference_geo": "not_available",
        }
        self.cached += self.pending
        self.pending = out
        self._tick(1.5 + out / 60)
        use_lines: dict[str, str] = {}
        pending_calls: list[tuple[str, Call]] = []
        for block in blocks:
            message = {
                "model": MODEL,
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            }
            record = self._base(self.parent)
            uid = self._next("assistant")
            record.update(
                message=message,
                requestId=req_id,
                type="assistant",
                uuid=uid,
                timestamp=self._tick(0.4),
            )
            self.records.append(record)
            self.parent = uid
            if block["type"] != "tool_use":
                continue
            use_lines[block["id"]] = uid
            call = calls[ids.index(block["id"])]
            if interleaved:
                self._result(block["id"], call, uid)
            else:
                pending_calls.append((block["id"], call))
        for tid, call in pending_calls:
            self._result(tid, call, use_lines[tid])

    def _result(self, tool_use_id: str, call: Call, use_uuid: str) -> None:
        content, is_error, tur = call.run(self.fs)
        block: dict[str, Any] = {
            "tool_use_id": tool_use_id,
            "type": "tool_result",
            "content": content,
        }
        if is_error:
            block = {
                "type": "tool_result",
                "content": content,
                "is_error": True,
                "tool_use_id": tool_use_id,
            }
        elif call.name == "Bash":
            block["is_error"] = False
        record = self._base(use_uuid)
        record.update(
            type="user",
            message={"role": "user", "content": [block]},
            uuid=self._next("result"),
            timestamp=self._tick(call.seconds),
            toolUseResult=tur,
            sourceToolAssistantUUID=use_uuid,
        )
        self.records.append(record)
        self.parent = record["uuid"]
        self.pending += tokens(content) + 12

    def end_turn(self) -> None:
        """Claude Code's ``turn_duration`` record after the final reply of a turn."""
        record = self._base(self.parent)
        ms = int((self.clock - self.turn_start).total_seconds() * 1000) + 180
        record.update(
            type="system",
            subtype="turn_duration",
            durationMs=ms,
            timestamp=self._tick(0.05),
            uuid=self._next("system"),
            isMeta=False,
        )
        self.records.append(record)
        self.parent = record["uuid"]

    def dump(self) -> str:
        return "".join(
            json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in self.records
        )
