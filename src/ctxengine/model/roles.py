"""Who wrote a user-role message: the one definition of a *real user message* and of a *goal
candidate*, used by turn segmentation, prune, the ledgers and the summarizers alike.

A **real user message** is one a person typed: role ``user``, no tool result in it, a
non-blank text, and not one of the messages agents inject in the user role:

- text starting with one of :data:`INJECTED_PREFIXES` (after leading whitespace): Codex
  ``<environment_context>``, ``<user_instructions>``, ``<user_shell_command>``,
  ``<turn_aborted>`` and AGENTS.md blocks; Claude Code ``<command-name>``,
  ``<local-command-stdout>``, ``<system-reminder>`` and task-notification blocks;
  "[Request interrupted by user"; a continued-session summary;
- a message whose ``meta`` sets one of :data:`META_FLAGS` (``synthetic``, Claude Code
  ``isMeta``, ``isCompactSummary``).

The test is made per text part: a message whose parts are an injected block and a person's
text (Claude Code sends the first prompt as a ``<system-reminder>`` part, then the request
part) is a real user message, and its user text (:func:`user_text`) is the person's parts
alone; the injected parts stay what they are (rules, for
:func:`~ctxengine.projection.injection.rules_text`).

It opens a turn (DESIGN.md glossary: a turn is one real user message plus every message that
answers it), so injected reminders belong to the turn they were written into.

A **goal candidate** is a real user message that is not a bare slash command (``/mode``,
``/model gpt-4o``): the session's goal is the first goal candidate, since a command typed to
the agent's own interface says nothing about the task (pi: a session opening with ``/mode``
has its goal in the next message).
"""

from __future__ import annotations

import re

from ctxengine.model.messages import Message
from ctxengine.model.parts import TextPart

#: Openings of text that agents inject in the user role (matched after leading whitespace).
INJECTED_PREFIXES: tuple[str, ...] = (
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
#: ``meta`` keys that mark a user-role message as written by the harness, not a person.
META_FLAGS: tuple[str, ...] = ("synthetic", "isMeta", "isCompactSummary")
#: Longest text, in characters (after stripping), still taken for a bare slash command.
#: (A format rule, not a tuning knob: kept here because the model layer imports nothing.)
SLASH_COMMAND_MAX_CHARS = 40
#: ``/`` then a command name without ``/`` or ``.`` (so ``/home/u/a.py …`` is a path, not a
#: command), then optional arguments on the same line.
_SLASH_COMMAND = re.compile(r"/[\w:-]*(?:[ \t][^\n]*)?")


def is_injected_text(text: str) -> bool:
    """True for blank text or text starting (after whitespace) with one of
    :data:`INJECTED_PREFIXES`."""
    stripped = text.strip()
    return not stripped or stripped.startswith(INJECTED_PREFIXES)


def injected_parts(message: Message) -> tuple[TextPart, ...]:
    """The text parts of ``message`` that hold an injected block: non-blank and starting
    with one of :data:`INJECTED_PREFIXES`."""
    return tuple(
        p
        for p in message.parts
        if isinstance(p, TextPart) and p.text.strip() and is_injected_text(p.text)
    )


def user_text(message: Message) -> str:
    """The text a person wrote in ``message``: its text (text parts joined by newlines), less
    the parts that hold an injected block (:func:`injected_parts`) when the others hold a
    person's text. A message of injected parts only (or of one injected text) gives its whole
    text, as before the split."""
    injected = injected_parts(message)
    if not injected:
        return message.text
    own = [p.text for p in message.parts if isinstance(p, TextPart) and p not in injected]
    joined = "\n".join(own)
    return joined if joined.strip() else message.text


def is_real_user_message(message: Message) -> bool:
    """True for a user message a person wrote: role ``user``, no tool result, no
    :data:`META_FLAGS` flag set in ``meta``, and a text part that is not injected: its text
    (text parts joined by newlines) is not injected (:func:`is_injected_text`), or one of
    its text parts is neither blank nor injected (an injected part followed by the request).
    A message holding only an image or a document has blank text and is therefore not
    one."""
    if message.role != "user" or message.tool_results:
        return False
    if any(message.meta.get(flag) for flag in META_FLAGS):
        return False
    if not is_injected_text(message.text):
        return True
    return any(isinstance(p, TextPart) and not is_injected_text(p.text) for p in message.parts)


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
    (:func:`is_real_user_message`) that is not a bare slash command (:func:`is_slash_command`)."""
    return is_real_user_message(message) and not is_slash_command(user_text(message))


def is_goal_text(text: str) -> bool:
    """:func:`is_goal_candidate` for a text already known to be a user's: neither injected
    (:func:`is_injected_text`) nor a bare slash command."""
    return not is_injected_text(text) and not is_slash_command(text)
