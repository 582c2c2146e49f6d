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
from dataclasses import dataclass, replace

from ctxengine.model import ErrorFact, Ledgers, Message, ToolCallPart, ToolResultPart
from ctxengine.model.facts import mark_earlier, settle_errors
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

__all__ = [
    "LaterEvidence",
    "call_effects",
    "done_steps",
    "extract_ledgers",
    "ledgers_and_evidence",
    "session_cwd",
    "shell_command",
]


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


def _results(messages: Sequence[Message]) -> dict[str, tuple[ToolResultPart, int]]:
    """Each tool result of ``messages`` by its call id, with the position of its message."""
    owner: dict[str, tuple[ToolResultPart, int]] = {}
    for index, message in enumerate(messages):
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                owner[part.call_id] = (part, index)
    return owner


def _states_outcomes(owner: dict[str, tuple[ToolResultPart, int]]) -> bool:
    """Some result is flagged as an error or states an exit code (:attr:`Walk.statuses`)."""
    return any(
        result.is_error or exit_code(result.text) is not None for result, _ in owner.values()
    )


def _fold(
    walk: Walk,
    messages: Sequence[Message],
    owner: dict[str, tuple[ToolResultPart, int]],
    offset: int = 0,
) -> None:
    """Walk every tool call of ``messages`` with its result (``owner``: :func:`_results` of
    the same messages), the task notifications of its user messages, the files an assistant
    message's ``meta["applied_edits"]`` names, and the turns its real user messages open;
    message ``k`` is at position ``offset + k`` of the walk."""
    for index, message in enumerate(messages):
        at = offset + index
        if is_real_user_message(message):
            walk.turn()
        if message.role == "user" and not message.tool_results:
            walk.notification(message.text, at)
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                found = owner.get(part.id)
                walk.call(part, found[0] if found else None, offset + found[1] if found else at)
        applied = message.meta.get(APPLIED_EDITS) if message.role == "assistant" else None
        for path in applied if isinstance(applied, list) else ():
            if isinstance(path, str) and path:
                walk.effect(FileEffect("edited", path), at)


def _walk(
    messages: Sequence[Message], cwd: str, start: int, earlier_done: Sequence[str] = ()
) -> Walk:
    """The walk of ``messages`` (:func:`_fold`); the background commands ``earlier_done``
    says were started are known (:meth:`Walk.seed`)."""
    owner = _results(messages)
    walk = Walk(cwd=cwd, start=start, statuses=_states_outcomes(owner))
    walk.seed(earlier_done)
    _fold(walk, messages, owner)
    return walk


@dataclass(frozen=True, slots=True)
class LaterEvidence:
    """What the messages after a cut (the tail a compaction keeps verbatim) show about the
    error facts before it: only evidence, none of their own facts is listed in the state
    (they follow it verbatim).

    Attributes:
        passed: the keys of their runs (``cmd:``, ``test:``, ``suite:``, ``rerun:``,
            ``retry:``, ``background:``; :meth:`~ctxengine.model.facts.ErrorFact.
            fixed_by_any`), in first-seen order.
        errors: the error facts their failed runs recorded, with the statuses the walk left
            them in.
    """

    passed: tuple[str, ...] = ()
    errors: tuple[ErrorFact, ...] = ()

    def settle(self, ledgers: Ledgers) -> Ledgers:
        """``ledgers`` with the open errors this evidence fixes marked fixed
        (:func:`~ctxengine.model.facts.settle_errors`); nothing else changes."""
        if not self.passed and not self.errors:
            return ledgers
        errors = settle_errors(ledgers.error_facts, self.errors, self.passed)
        return replace(ledgers, error_facts=errors)


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
    return ledgers_and_evidence(messages, goal, cwd=cwd, start=start, earlier_done=earlier_done)[0]


def ledgers_and_evidence(
    messages: Sequence[Message],
    goal: str = "",
    *,
    cwd: str = "",
    start: int = 0,
    earlier_done: Sequence[str] = (),
    later: Sequence[Message] = (),
) -> tuple[Ledgers, LaterEvidence]:
    """:func:`extract_ledgers` of ``messages`` (same arguments), and what ``later`` (the
    messages kept verbatim after them, oldest first) shows about its errors: the walk of
    ``messages`` goes on over ``later`` (message ``k`` of it at ``start + len(messages) +
    k``), so that a retry right after the cut of a command that failed before it counts
    (:class:`~ctxengine.summarizers.walk.Walk`), and gives the keys and the error facts of
    ``later`` (:class:`LaterEvidence`; empty when ``later`` is). The ledgers are those of
    ``messages`` alone: apply the evidence with :meth:`LaterEvidence.settle` once they are
    merged with the earlier ones."""
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
    ledgers = Ledgers(
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
    if not later:
        return ledgers, LaterEvidence()
    # the walk goes on over the later messages: only their keys and errors are kept
    seen = len(walk.passed)
    tail = start + len(messages)
    owner = _results(later)
    walk.statuses = walk.statuses or _states_outcomes(owner)
    _fold(walk, later, owner, len(messages))
    errors = tuple(e for e in walk.errors if e.source >= tail)
    return ledgers, LaterEvidence(_dedup(walk.passed[seen:]), errors)
