"""How a compaction's continuation state enters the context: the injection shapes of the
known systems, the continuation message and re-injected durable state.

=================  ===========================================================================
shape              messages that stand for the compacted prefix
=================  ===========================================================================
checkpoint         one user message: the opening words, then the state in
                   ``<continuation-state>`` tags (pi, Claude Code, Roo Code; ctxengine's own)
acknowledged       that user message, then the assistant's :data:`ACKNOWLEDGEMENT` (Gemini CLI:
                   snapshot + canned model reply); the acknowledgement is left out when the
                   kept tail itself starts with an assistant message
handoff            one user message opening with :data:`HANDOFF_PREFIX` (Codex
                   ``SUMMARY_PREFIX``: a hand-off from another model); it follows the retained
                   user messages, so the state comes last
assistant_reply    the user's :data:`SUMMARY_QUESTION`, then the state as the assistant's reply
                   (OpenCode's ``summary:true`` assistant message)
=================  ===========================================================================

Every shape wraps the state in the same ``<continuation-state>`` frame, neutralised the same
way (:func:`~ctxengine.projection.frame.neutralize_state`), so a context holds exactly one
opening and one closing tag whatever the summary says. The wording is ctxengine's; only the
checkpoint's opening words follow the state's language (the other shapes are English).

Pure; no I/O.
"""

from __future__ import annotations

import re

from ctxengine.model import Message, TextPart
from ctxengine.model.roles import injected_parts, is_real_user_message
from ctxengine.policy.defaults import (
    RECALL_TOOL_NAME,
    REINJECT_RULES_FILES,
    REINJECT_RULES_MARKERS,
)
from ctxengine.projection.frame import STATE_TAG, neutralize_state, quote_imported
from ctxengine.projection.wording import ENGLISH, state_language, wording

#: The injection shapes (see the module table).
INJECTIONS: tuple[str, ...] = ("checkpoint", "acknowledged", "handoff", "assistant_reply")
#: Opening words of the continuation-state message (English; the checkpoint message opens in
#: the state's own language, :mod:`ctxengine.projection.wording`).
CONTINUATION_PREFIX = ENGLISH.continuation_prefix
#: Opening words of a hand-off state (the ``handoff`` shape).
HANDOFF_PREFIX = (
    "Another run of the agent worked on this task before you and left the hand-off summary "
    "below. Build on it: do not redo work it reports as finished, and check what you are "
    "unsure of before relying on it."
)
#: The assistant's reply to the state (the ``acknowledged`` shape).
ACKNOWLEDGEMENT = "Understood. I have the saved state above and will continue from it."
#: The synthetic user request the state answers (the ``assistant_reply`` shape).
SUMMARY_QUESTION = (
    "What have we done so far? Summarize the conversation so that the work can go on from "
    "the summary alone."
)
#: The continuation message an automatic compaction adds after the messages it saw.
CONTINUE_MESSAGE = (
    "Go on with the next step if there is one; if there is none, stop and ask the user how "
    "to proceed."
)
#: ``meta["synthetic"]`` of the messages written here (never real user messages).
SYNTHETIC_FRAME = "compaction_frame"
SYNTHETIC_CONTINUE = "compaction_continue"
SYNTHETIC_REINJECTED = "reinjected"


#: Said after the continuation state when the agent has the recall tool
#: (:data:`~ctxengine.policy.defaults.RECALL_TOOL_NAME`): what the state leaves out can still
#: be read word for word.
RECALL_NOTE = (
    "Everything before this point is still kept word for word: when you need the exact "
    "text of something the state above leaves out or only mentions (an error message, a "
    "command's output, code that was read or written), call the `"
    + RECALL_TOOL_NAME
    + "` tool with a text, a file path or a tool name instead of guessing or redoing the work."
)


def _framed(prefix: str, summary: str, recall: bool = False) -> str:
    framed = f"{prefix}\n\n<{STATE_TAG}>\n{neutralize_state(summary)}\n</{STATE_TAG}>"
    return f"{framed}\n\n{RECALL_NOTE}" if recall else framed


def continuation_message(summary: str, *, imported: bool = False, recall: bool = False) -> Message:
    """The user message that stands for the compacted prefix: the opening words in the
    state's language (:func:`~ctxengine.projection.wording.state_language`; English is
    :data:`CONTINUATION_PREFIX`), a blank line, then ``summary`` inside
    ``<continuation-state>`` tags.

    Every summary reaches the model through here or :func:`frame_messages` (the extractive,
    model and hook-supplied ones, and summaries imported from other systems), so this is
    where frame tags in it are neutralised (:func:`~ctxengine.projection.frame.
    neutralize_state`): the message holds exactly one opening and one closing
    ``continuation-state`` tag whatever the summary says. An ``imported`` summary (another
    system's compaction text, shown as it was imported) is quoted as data first
    (:func:`~ctxengine.projection.frame.quote_imported`: every tag neutralised,
    instruction-like lines removed, headings moved down). With ``recall`` (the agent has
    the recall tool) :data:`RECALL_NOTE` follows the state."""
    if imported:
        summary = quote_imported(summary)
    prefix = wording(state_language(summary)).continuation_prefix
    return Message("user", (TextPart(_framed(prefix, summary, recall)),))


def frame_messages(
    summary: str, injection: str | None, *, imported: bool = False, recall: bool = False
) -> tuple[Message, ...]:
    """The messages that show ``summary`` in the ``injection`` shape (``None`` or
    ``"checkpoint"``: :func:`continuation_message` alone). The ``acknowledged`` shape's
    acknowledgement is included; the projection leaves it out before an assistant message.
    The messages of the other shapes carry ``meta["synthetic"]`` (:data:`SYNTHETIC_FRAME`),
    so none of them counts as a real user message. An ``imported`` summary is quoted as data
    (:func:`continuation_message`). With ``recall``, :data:`RECALL_NOTE` follows the state.

    Raises:
        ValueError: an unknown shape.
    """
    if injection is None or injection == "checkpoint":
        return (continuation_message(summary, imported=imported, recall=recall),)
    if imported:
        summary = quote_imported(summary)
    meta = {"synthetic": SYNTHETIC_FRAME}
    if injection == "acknowledged":
        return (
            continuation_message(summary, recall=recall),
            Message("assistant", (TextPart(ACKNOWLEDGEMENT),), meta=meta),
        )
    if injection == "handoff":
        text = _framed(HANDOFF_PREFIX, summary, recall)
        return (Message("user", (TextPart(text),), meta=meta),)
    if injection == "assistant_reply":
        text = _framed(CONTINUATION_PREFIX, summary, recall)
        return (
            Message("user", (TextPart(SUMMARY_QUESTION),), meta=meta),
            Message("assistant", (TextPart(text),), meta=meta),
        )
    raise ValueError(f"unknown injection shape {injection!r}; expected one of {INJECTIONS}")


def continue_message() -> Message:
    """The synthetic user message asking the agent to go on (OpenCode
    ``compaction_continue``)."""
    return Message("user", (TextPart(CONTINUE_MESSAGE),), meta={"synthetic": SYNTHETIC_CONTINUE})


_RULES_NAMES = "|".join(re.escape(name) for name in REINJECT_RULES_FILES)
#: A line opening the contents of a rules file: "Contents of <path>/CLAUDE.md …" or a
#: Markdown heading naming it ("# AGENTS.md instructions for <dir>").
_RULES_LINE = re.compile(
    rf"^(?:Contents of (?:\S*/)?|#+[ \t]+)(?:{_RULES_NAMES})(?!\.?\w)", re.MULTILINE
)


#: The rules file a text carries: "Contents of <path>" (group 1) or a heading "# <name>
#: instructions for <dir>" (groups 2 and 3).
_RULES_FILE = re.compile(
    rf"^Contents of ((?:\S*/)?(?:{_RULES_NAMES}))(?!\.?\w)"
    rf"|^#+[ \t]+({_RULES_NAMES})(?!\.?\w)(?:[ \t]+instructions[ \t]+for[ \t]+(\S+?):?$)?",
    re.MULTILINE,
)


#: A path-scoped rules file attached by ctxengine's own head
#: (:data:`~ctxengine.assembly.head.SCOPED_RULE_ATTACHMENT`): "Contents of <path>
#: (path-scoped rules for files matching …".
_SCOPED_RULES_FILE = re.compile(r"^Contents of (\S+) \(path-scoped rules for ", re.MULTILINE)


def rules_file(text: str) -> str | None:
    """The rules file ``text`` carries, as it names it: the path of its first "Contents of
    <path>/CLAUDE.md" line (or of a path-scoped rules file ctxengine attached), or the file
    of a heading "# AGENTS.md instructions for <dir>" (``<dir>/AGENTS.md``; the bare name
    when the heading names no directory); ``None`` when it names none (a ``# claudeMd``
    section without a "Contents of" line)."""
    scoped = _SCOPED_RULES_FILE.search(text)
    if scoped is not None:
        return scoped.group(1)
    found = _RULES_FILE.search(text)
    if found is None:
        return None
    if found.group(1) is not None:
        return found.group(1)
    name, where = found.group(2), found.group(3)
    return f"{where.rstrip('/')}/{name}" if where else name


def _carries_rules(text: str) -> bool:
    return (
        any(marker in text for marker in REINJECT_RULES_MARKERS)
        or _RULES_LINE.search(text) is not None
        or _SCOPED_RULES_FILE.search(text) is not None
    )


def rules_text(message: Message) -> str | None:
    """The rules ``message`` carries, or ``None``: for an injected user-role message (role
    ``user``, no tool result, not a real user message,
    :func:`~ctxengine.model.roles.is_real_user_message`), its whole text when it holds one
    of :data:`~ctxengine.policy.defaults.REINJECT_RULES_MARKERS` or a line that opens the
    contents of one of :data:`~ctxengine.policy.defaults.REINJECT_RULES_FILES` ("Contents
    of /repo/CLAUDE.md …", "# AGENTS.md instructions for /repo") or of a path-scoped rules
    file that ctxengine's head attached; for a real user message
    whose injected parts (:func:`~ctxengine.model.roles.injected_parts`) carry such text
    beside the person's request (Claude Code's first prompt), those parts alone, joined by
    newlines. A message that only mentions such a file (a directory listing, a hint) carries
    none."""
    if message.role != "user" or message.tool_results:
        return None
    if not is_real_user_message(message):
        text = message.text
        return text if _carries_rules(text) else None
    parts = [p.text for p in injected_parts(message) if _carries_rules(p.text)]
    return "\n".join(parts) if parts else None


def is_rules_message(message: Message) -> bool:
    """A user-role message that carries rules (:func:`rules_text`): an injected rules block,
    or a person's message with a rules block in a part of its own."""
    return rules_text(message) is not None


#: What a message that repeats re-injected durable state word for word is shown as (a harness
#: that sends its rules again after every compaction): the text is above already.
REPEATED_NOTE = "[The same text as the re-injected durable state above; not repeated here.]"


def repeated_message(message: Message) -> Message:
    """``message`` (an injected user message repeating re-injected durable state) shown as
    :data:`REPEATED_NOTE`, its meta kept."""
    return Message("user", (TextPart(REPEATED_NOTE),), meta=message.meta)


def reinjected_message(text: str) -> Message:
    """One item of re-injected durable state, as a synthetic user message."""
    return Message("user", (TextPart(text),), meta={"synthetic": SYNTHETIC_REINJECTED})
