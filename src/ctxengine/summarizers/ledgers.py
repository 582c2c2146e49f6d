"""Deterministic ledgers from a range of messages: files read, modified and scratch, completed
steps, user rules, errors with their status, identifiers, decisions, and commands, from the tool
vocabularies of Claude Code, Codex, pi, OpenHands, SWE-agent and shell commands in general.

A step counts only when its tool result is present among the same messages and did not fail
(:mod:`ctxengine.summarizers.walk`): a failed or unanswered edit modifies nothing and is not
done. Modified = edited ∪ written ∪ created ∪ deleted ∪ moved ∪ formatted ∪ patched ∪
written by a script the session ran ∪ shown changed by ``git diff``/``git status``, less the
scratch files (:func:`~ctxengine.summarizers.paths.scratch_reason`); read excludes modified.
Search tools (Grep, Glob, ``find_file`` …) are not reads: only explicit reads count.

Every path takes one normalised form (:mod:`ctxengine.summarizers.paths`) against the
session's working directory: the one given, else the one the messages state or suggest.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxengine.model import Ledgers, Message, ToolCallPart, ToolResultPart
from ctxengine.model.facts import mark_earlier
from ctxengine.model.messages import APPLIED_EDITS
from ctxengine.model.roles import is_real_user_message, user_text
from ctxengine.summarizers.decisions import decision_facts
from ctxengine.summarizers.identifiers import Source, identifiers
from ctxengine.summarizers.paths import guessed_cwd, stated_cwd
from ctxengine.summarizers.rules import rule_facts
from ctxengine.summarizers.shell import FileEffect
from ctxengine.summarizers.signals import exit_code
from ctxengine.summarizers.tools import PATH_KEYS, arguments, call_effects, shell_command
from ctxengine.summarizers.walk import Walk

__all__ = ["call_effects", "done_steps", "extract_ledgers", "session_cwd", "shell_command"]


def _dedup(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def session_cwd(messages: Sequence[Message]) -> str:
    """The working directory of the session these messages come from: the one they state
    (:func:`~ctxengine.summarizers.paths.stated_cwd`), else the one their shell commands and
    paths suggest (:func:`~ctxengine.summarizers.paths.guessed_cwd`), else ``""``."""
    stated = stated_cwd(messages)
    if stated:
        return stated
    commands: list[str] = []
    paths: list[str] = []
    for message in messages:
        for part in message.parts:
            if not isinstance(part, ToolCallPart):
                continue
            command = shell_command(part)
            if command is not None:
                commands.append(command)
                paths += [e.path for e in call_effects(part) if e.path]
            else:
                args = arguments(part) or {}
                paths += [args[k] for k in PATH_KEYS if isinstance(args.get(k), str)]
    return guessed_cwd(commands, paths)


def _walk(
    messages: Sequence[Message], cwd: str, start: int, earlier_done: Sequence[str] = ()
) -> Walk:
    """Every tool call of ``messages`` walked with its result (looked up among the same
    messages), the task notifications of its user messages, and the files an assistant
    message's ``meta["applied_edits"]`` names; the background commands ``earlier_done``
    says were started are known (:meth:`Walk.seed`)."""
    owner: dict[str, tuple[ToolResultPart, int]] = {}
    for index, message in enumerate(messages):
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                owner[part.call_id] = (part, index)
    statuses = any(
        result.is_error or exit_code(result.text) is not None for result, _ in owner.values()
    )
    walk = Walk(cwd=cwd, start=start, statuses=statuses)
    walk.seed(earlier_done)
    for index, message in enumerate(messages):
        if message.role == "user" and not message.tool_results:
            walk.notification(message.text, index)
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                found = owner.get(part.id)
                walk.call(part, found[0] if found else None, found[1] if found else index)
        applied = message.meta.get(APPLIED_EDITS) if message.role == "assistant" else None
        for path in applied if isinstance(applied, list) else ():
            if isinstance(path, str) and path:
                walk.effect(FileEffect("edited", path), index)
    return walk


def done_steps(messages: Sequence[Message], *, cwd: str = "") -> tuple[str, ...]:
    """``extract_ledgers(messages, cwd=cwd).done`` without the other ledgers: one line per
    successful change or test/build/lint/commit command, in first-seen order."""
    return _dedup(_walk(messages, cwd or session_cwd(messages), 0).done)


def extract_ledgers(
    messages: Sequence[Message],
    goal: str = "",
    *,
    cwd: str = "",
    start: int = 0,
    earlier_done: Sequence[str] = (),
) -> Ledgers:
    """Ledgers of ``messages`` alone (merge with the previous compaction's ledgers with
    :meth:`Ledgers.merge`, which also fixes older open errors this range's runs fixed).

    Args:
        messages: a range of history in order; tool results are looked up by call id among
            these same messages (a call without its result counts as not done).
        goal: stored in ``Ledgers.goal`` unchanged.
        cwd: the session's working directory when the caller knows it (a previous
            compaction's ``Ledgers.cwd``, the transcript's metadata); else found by
            :func:`session_cwd`.
        start: index of ``messages[0]`` in the session, added to every fact's ``source``.
        earlier_done: the done steps of earlier ranges (the previous compaction's
            ``Ledgers.done``): a command they say was started in the background and that
            ends in ``messages`` gets its outcome here.

    Returns:
        Typed facts (``error_facts``, ``files``, ``identifiers``, ``rules``, ``decisions``,
        ``passed``, ``cwd``) and the plain lists derived from them: ``files_read`` and
        ``files_modified`` (normalised paths, scratch files in neither), ``done`` (one line
        per successful change: ``"edited src/app.py"``, ``"created t.py"``, ``"moved a to
        b"``; per successful test/build/lint/commit command: ``"ran `pytest -q`
        (succeeded)"``; per command started in the background and not seen to end with an
        exit code: ``"started `npm run dev` in the background (id bash_1)"``), the files an
        assistant message's ``meta["applied_edits"]`` names counting as edited
        (:data:`~ctxengine.model.messages.APPLIED_EDITS`: aider),
        ``constraints`` (rule texts, superseded ones included), ``errors`` (the exact lines
        of the error facts), ``commands`` (shell commands, ``apply_patch`` excluded), each in
        first-seen order.
    """
    cwd = cwd or session_cwd(messages)
    walk = _walk(messages, cwd, start, earlier_done)
    users: list[Source] = []
    for index, message in enumerate(messages):
        if is_real_user_message(message):
            users.append(Source(start + index, "user", user_text(message)))
        elif message.role == "assistant" and message.text.strip():
            users.append(Source(start + index, "assistant", message.text))
    files = walk.file_facts()
    rules = rule_facts(messages, start)
    sources = sorted([*users, *walk.sources], key=lambda s: s.index)
    return Ledgers(
        goal=goal,
        files_read=tuple(f.path for f in files if f.status == "read"),
        files_modified=tuple(f.path for f in files if f.status == "modified"),
        constraints=tuple(r.text for r in rules),
        errors=_dedup([e.text for e in walk.errors]),
        commands=_dedup(walk.commands),
        done=_dedup(walk.done),
        error_facts=tuple(walk.errors),
        files=files,
        identifiers=mark_earlier(identifiers(sources), rules),
        rules=rules,
        cwd=cwd,
        passed=_dedup(walk.passed),
        decisions=decision_facts(messages, start),
    )
