"""Real user messages, and the rule-stating sentences in them (the constraints ledger).

A *real* user message is one a person typed: role ``user``, some text, and not one of the
messages agents inject in the user role (Codex ``<environment_context>`` and AGENTS.md blocks,
Claude Code ``<command-name>``/``<local-command-stdout>``/``<system-reminder>`` blocks, task
notifications, "[Request interrupted by user]", a continued-session summary), nor a message
whose ``meta`` marks it ``synthetic``, ``isMeta`` or ``isCompactSummary``.

A *goal candidate* is a real user message that is not a bare slash command (``/mode``,
``/model gpt-4o``): the session's goal is the first goal candidate, since a command typed to
the agent's own interface says nothing about the task.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ctxengine.model import Message, TextPart

#: Longest constraint sentence kept, in characters (longer ones are cut and end with "…").
CONSTRAINT_MAX_CHARS = 300

_INJECTED_PREFIXES: tuple[str, ...] = (
    "<environment_context>",
    "<user_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "# AGENTS.md instructions",
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<system-reminder>",
    "<task-notification>",
    "[Request interrupted by user",
    "This session is being continued from a previous conversation",
)
_META_FLAGS: tuple[str, ...] = ("synthetic", "isMeta", "isCompactSummary")
#: Longest text, in characters (after stripping), still taken for a bare slash command.
SLASH_COMMAND_MAX_CHARS = 40
#: ``/`` then a command name without ``/`` or ``.`` (so ``/home/u/a.py …`` is a path, not a
#: command), then optional arguments on the same line.
_SLASH_COMMAND = re.compile(r"/[\w:-]*(?:[ \t][^\n]*)?")


def is_injected_text(text: str) -> bool:
    """True for text agents inject in the user role (or blank text): see the module docstring."""
    stripped = text.strip()
    return not stripped or stripped.startswith(_INJECTED_PREFIXES)


def is_real_user_message(message: Message) -> bool:
    """True for a user message a person wrote (see the module docstring for what is not)."""
    if message.role != "user" or message.tool_results:
        return False
    if any(message.meta.get(flag) for flag in _META_FLAGS):
        return False
    return not is_injected_text(message.text)


def is_slash_command(text: str) -> bool:
    """True for text that is only a slash command typed to the agent's interface: one line of
    at most :data:`SLASH_COMMAND_MAX_CHARS` characters (surrounding whitespace ignored) that
    starts with ``/`` and a command name holding no ``/`` or ``.`` (``/mode``, ``/``,
    ``/model gpt-4o``; not ``/home/u/a.py is broken``), optionally followed by arguments."""
    stripped = text.strip()
    return (
        len(stripped) <= SLASH_COMMAND_MAX_CHARS and _SLASH_COMMAND.fullmatch(stripped) is not None
    )


def is_goal_candidate(message: Message) -> bool:
    """True for a message that may be the session's goal: a real user message
    (:func:`is_real_user_message`) that is not a bare slash command (:func:`is_slash_command`).
    The goal is the first such message of the session (pi: a session opening with ``/mode``
    has its goal in the next message)."""
    return is_real_user_message(message) and not is_slash_command(message.text)


def is_goal_text(text: str) -> bool:
    """:func:`is_goal_candidate` for a text already known to be a user's: neither injected
    (:func:`is_injected_text`) nor a bare slash command."""
    return not is_injected_text(text) and not is_slash_command(text)


def user_text(message: Message) -> str:
    """The text a user typed: the message's text parts joined by newlines, unchanged."""
    return "\n".join(p.text for p in message.parts if isinstance(p, TextPart))


def real_user_texts(messages: Iterable[Message]) -> tuple[str, ...]:
    """Texts of the real user messages among ``messages``, oldest first, verbatim."""
    return tuple(user_text(m) for m in messages if is_real_user_message(m))


_RULE = re.compile(
    r"\b(?:must|mustn't|never|don'?t|do not|always|only|should ?n[o']t|shall not|make sure|"
    r"ensure|avoid|no need to|required to|please do not)\b|"
    r"不要|必须|禁止|务必|不能|只能|不许|不准|不得|切勿|请勿|一定要|不可以|别再",
    re.IGNORECASE,
)
#: A sentence ends after . ! ? (followed by space), after 。！？；, or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])|\n+")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _prose_lines(text: str) -> list[str]:
    """Lines outside fenced code blocks (pasted code and logs are not the user's rules)."""
    out: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def _cap(sentence: str) -> str:
    if len(sentence) <= CONSTRAINT_MAX_CHARS:
        return sentence
    return sentence[: CONSTRAINT_MAX_CHARS - 1] + "…"


def constraint_sentences(text: str) -> tuple[str, ...]:
    """Sentences of ``text`` that state a rule (must, must not, never, don't, always, only,
    should not, make sure, ensure, avoid, 不要, 必须, 禁止, 务必, 不能, 只能 …), matched
    case-insensitively, verbatim apart from surrounding whitespace and a leading list marker,
    capped at :data:`CONSTRAINT_MAX_CHARS`, deduplicated, in order. Text inside fenced code
    blocks is ignored."""
    out: list[str] = []
    seen: set[str] = set()
    for line in _prose_lines(text):
        for raw in _SENTENCE_END.split(line):
            sentence = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", raw).strip()
            if sentence and _RULE.search(sentence):
                capped = _cap(sentence)
                if capped not in seen:
                    seen.add(capped)
                    out.append(capped)
    return tuple(out)


def constraints_of(messages: Iterable[Message]) -> tuple[str, ...]:
    """Constraint sentences from the real user messages among ``messages`` (never from tool
    results or assistant text), in order, deduplicated."""
    out: list[str] = []
    seen: set[str] = set()
    for text in real_user_texts(messages):
        for sentence in constraint_sentences(text):
            if sentence not in seen:
                seen.add(sentence)
                out.append(sentence)
    return tuple(out)
