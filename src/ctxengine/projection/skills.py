"""Skill bodies in the conversation: the texts that carry one (an activation, the notice of a
repeated activation, a re-injection after a compaction) and :func:`skill_loads`, which finds
them in messages — ctxengine's own and Claude Code's. Pure; no I/O.

A skill's body enters the conversation only when it is activated (the catalog in the head
names it): as the result of a ``skill`` tool call, or as a synthetic user message
(``meta["synthetic"] ==`` :data:`SYNTHETIC_SKILL`). Both carry the same text
(:func:`activation_text`): one line saying which skill is loaded, the body inside a
``<skill name=… path=…>`` block, and the paths of its reference and script files, never
their contents.

Claude Code records a ``Skill {"skill": name, "args": …}`` call, a tool result
("Launching skill: name"), and then the body as an ``isMeta`` user message opening with
"Base directory for this skill: <folder>" (both for the tool and for a typed ``/name``);
when arguments were passed it appends an ``ARGUMENTS: …`` line. :func:`skill_loads` reads
those messages too, without the arguments: a body shown again after a compaction must not
carry the request it once answered (Claude Code 2.1.239: "the reminder after compaction no
longer re-runs a skill's original arguments").
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ctxengine.model import Message, ToolCallPart
from ctxengine.model.json_depth import loads_bounded
from ctxengine.model.roles import is_real_user_message
from ctxengine.policy.defaults import SKILL_CALL_NAME_KEYS, SKILL_CALL_TOOLS, SKILL_FILE

from .injection import SYNTHETIC_REINJECTED

__all__ = [
    "CLAUDE_CODE_SKILL_PREFIX",
    "SYNTHETIC_SKILL",
    "SYNTHETIC_SKILL_NOTICE",
    "SkillLoad",
    "activation_text",
    "notice_text",
    "reinjected_skill_name",
    "reinjected_text",
    "skill_load_step",
    "skill_loads",
    "skill_notice_step",
    "skill_notices",
]

#: ``meta["synthetic"]`` of a user message that activates a skill, and of the notice that
#: stands for a second activation.
SYNTHETIC_SKILL = "skill"
SYNTHETIC_SKILL_NOTICE = "skill_notice"

#: The line above an activated body.
ACTIVATION_HEADER = (
    'The "{name}" skill is loaded ({path}): follow its instructions below for the task at hand.'
)
#: The block holding a body, in an activation and in a re-injection.
BODY_BLOCK = '<skill name="{name}" path="{path}">\n{body}\n</skill>'
#: After an activated body: its reference and script files, by path.
FILES_NOTE = (
    "Files of this skill, not shown here (read a reference when the instructions call for it; "
    "run a script rather than reading it):\n{lines}"
)
FILE_LINE = "- {path}"
#: What a second activation of a skill whose body is still in the context adds: one line.
NOTICE = (
    'The "{name}" skill is already loaded above ({path}); follow those instructions, they are '
    "not repeated here."
)
#: The line above a body re-injected after a compaction: context, not a new request.
REINJECTED_HEADER = (
    'The "{name}" skill was loaded earlier in this session ({path}). Its instructions are '
    "shown again as context for the work under way, not as a new request: do not run the skill "
    "again or redo steps already taken for an earlier request."
)
#: After a re-injected body cut to its top: where the rest is.
REST_NOTE = "[{lines:,} more lines of this skill are not shown: read {path} for the rest.]"
#: The first line of a body Claude Code sends when a skill is invoked.
CLAUDE_CODE_SKILL_PREFIX = "Base directory for this skill:"

_OPEN = re.compile(r'^<skill name="([^"\n]+)" path="([^"\n]+)">\n', re.MULTILINE)
_CLOSE = "\n</skill>"
_REST = re.compile(r"\A\n\[[\d,]+ more lines of this skill are not shown: read ")
_REINJECTED = re.compile(r'\AThe "([^"\n]+)" skill was loaded earlier in this session \(')
_ARGUMENTS = re.compile(r"\n+ARGUMENTS: [^\n]*\s*\Z")
_NOTICE = re.compile(r'\AThe "([^"\n]+)" skill is already loaded above \(')


def activation_text(name: str, path: str, body: str, files: Sequence[str] = ()) -> str:
    """The text that activates a skill (a tool result or a user message): the header, the
    body in its ``<skill>`` block, then its ``files`` (paths as shown), one per line.

    Args:
        name: the skill's name.
        path: its ``SKILL.md`` as shown.
        body: the text below its front matter.
        files: its reference and script files, as shown.
    """
    text = (
        ACTIVATION_HEADER.format(name=name, path=path)
        + "\n\n"
        + BODY_BLOCK.format(name=name, path=path, body=body)
    )
    if files:
        lines = "\n".join(FILE_LINE.format(path=f) for f in files)
        text += "\n\n" + FILES_NOTE.format(lines=lines)
    return text


def notice_text(name: str, path: str) -> str:
    """The one line a second activation adds while the body is still in the context."""
    return NOTICE.format(name=name, path=path)


def reinjected_text(name: str, path: str, body: str, rest_lines: int = 0) -> str:
    """A body re-injected after a compaction: :data:`REINJECTED_HEADER`, the body (or its
    top) in its ``<skill>`` block, then, when ``rest_lines`` lines were cut off,
    :data:`REST_NOTE` naming ``path``."""
    text = (
        REINJECTED_HEADER.format(name=name, path=path)
        + "\n\n"
        + BODY_BLOCK.format(name=name, path=path, body=body)
    )
    if rest_lines:
        text += "\n" + REST_NOTE.format(lines=rest_lines, path=path)
    return text


def reinjected_skill_name(text: str) -> str | None:
    """The skill a re-injected text (:func:`reinjected_text`) carries, or ``None``."""
    found = _REINJECTED.match(text)
    return found.group(1) if found is not None else None


@dataclass(frozen=True, slots=True)
class SkillLoad:
    """One skill body found in the conversation.

    Attributes:
        name: the skill's name.
        path: its ``SKILL.md`` (as the message names it).
        body: the body shown (without Claude Code's ``ARGUMENTS:`` line).
        at: position of the message in the sequence searched.
        whole: the whole body (``False``: a re-injection cut to its top).
        source: ``"tool"`` (a skill tool's result), ``"message"`` (a synthetic user
            message), ``"reinjected"`` (re-injected after a compaction) or ``"claude-code"``
            (Claude Code's ``isMeta`` body message).
    """

    name: str
    path: str
    body: str
    at: int
    whole: bool
    source: str


def _block(text: str) -> tuple[str, str, str, str] | None:
    """``(name, path, body, after)`` of the ``<skill>`` block in ``text``, or ``None``."""
    opened = _OPEN.search(text)
    if opened is None:
        return None
    close = text.rfind(_CLOSE)
    if close < opened.end() - 1:
        return None
    body = text[opened.end() : close] if close >= opened.end() else ""
    return opened.group(1), opened.group(2), body, text[close + len(_CLOSE) :]


def _call_name(call: ToolCallPart) -> str | None:
    """The skill a :data:`~ctxengine.policy.defaults.SKILL_CALL_TOOLS` call asks for."""
    try:
        args = loads_bounded(call.arguments)
    except ValueError:
        return None
    if not isinstance(args, dict):
        return None
    for key in SKILL_CALL_NAME_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip().lstrip("/")
    return None


def _claude_code(text: str, asked: str | None) -> tuple[str, str, str] | None:
    """``(name, path, body)`` of a Claude Code body message, or ``None``."""
    if not text.startswith(CLAUDE_CODE_SKILL_PREFIX):
        return None
    first, _, rest = text.partition("\n")
    folder = first[len(CLAUDE_CODE_SKILL_PREFIX) :].strip().replace("\\", "/").rstrip("/")
    if not folder:
        return None
    name = asked or posixpath.basename(folder)
    body = _ARGUMENTS.sub("", rest.strip("\n")).rstrip()
    return name, f"{folder}/{SKILL_FILE}", body


def skill_loads(messages: Sequence[Message]) -> list[SkillLoad]:
    """Every skill body in ``messages``, in order: the results of a skill tool call
    (:data:`~ctxengine.policy.defaults.SKILL_CALL_TOOLS`) and synthetic user messages
    (:data:`SYNTHETIC_SKILL`) that hold an activation (:func:`activation_text`; a notice
    holds none), re-injected skill texts (:func:`reinjected_text`), and Claude Code's body
    messages (an injected user message opening with :data:`CLAUDE_CODE_SKILL_PREFIX`; its
    name is the one the skill call of the latest assistant message asked for, else its
    folder's)."""
    calls: dict[str, str] = {}
    asked: str | None = None
    out: list[SkillLoad] = []
    for at, m in enumerate(messages):
        asked = skill_load_step(m, at, calls, asked, out)
    return out


def skill_load_step(
    m: Message, at: int, calls: dict[str, str], asked: str | None, out: list[SkillLoad]
) -> str | None:
    """One step of :func:`skill_loads`: the loads of ``m`` (at position ``at``) appended to
    ``out``, ``m``'s calls added to ``calls`` (call id → tool name of the messages so far);
    ``asked`` is the skill the latest skill call asked for (``None``: none). Returns the
    ``asked`` the next message starts with."""
    if m.role == "assistant":
        asked = None
    for call in m.tool_calls:
        calls[call.id] = call.name
        if call.name in SKILL_CALL_TOOLS:
            asked = _call_name(call)
    for r in m.tool_results:
        if r.is_error or calls.get(r.call_id) not in SKILL_CALL_TOOLS:
            continue
        found = _block(r.text)
        if found is not None:
            name, path, body, _ = found
            out.append(SkillLoad(name, path, body, at, True, "tool"))
    if m.role != "user" or m.tool_results:
        return asked
    synthetic = m.meta.get("synthetic")
    text = m.text
    if synthetic in (SYNTHETIC_SKILL, SYNTHETIC_REINJECTED):
        found = _block(text)
        if found is None:
            return asked
        name, path, body, after = found
        if synthetic == SYNTHETIC_SKILL:
            out.append(SkillLoad(name, path, body, at, True, "message"))
        elif reinjected_skill_name(text) == name:
            whole = _REST.match(after) is None
            out.append(SkillLoad(name, path, body, at, whole, "reinjected"))
    elif text.startswith(CLAUDE_CODE_SKILL_PREFIX) and not is_real_user_message(m):
        claude = _claude_code(text, asked)
        if claude is not None:
            name, path, body = claude
            out.append(SkillLoad(name, path, body, at, True, "claude-code"))
            asked = None
    return asked


def skill_notices(messages: Sequence[Message]) -> list[tuple[str, int]]:
    """``(name, position)`` of every notice in ``messages`` (:func:`notice_text`: a second
    activation while the body was in the context, as a skill tool's result or a
    :data:`SYNTHETIC_SKILL_NOTICE` user message): the skill was used again there."""
    calls: dict[str, str] = {}
    out: list[tuple[str, int]] = []
    for at, m in enumerate(messages):
        skill_notice_step(m, at, calls, out)
    return out


def skill_notice_step(
    m: Message, at: int, calls: dict[str, str], out: list[tuple[str, int]]
) -> None:
    """One step of :func:`skill_notices`: the notices of ``m`` (at position ``at``)
    appended to ``out``, ``m``'s calls added to ``calls`` (call id → tool name of the
    messages so far)."""
    for call in m.tool_calls:
        calls[call.id] = call.name
    texts = [
        r.text
        for r in m.tool_results
        if not r.is_error and calls.get(r.call_id) in SKILL_CALL_TOOLS
    ]
    if m.role == "user" and m.meta.get("synthetic") == SYNTHETIC_SKILL_NOTICE:
        texts.append(m.text)
    for text in texts:
        found = _NOTICE.match(text)
        if found is not None:
            out.append((found.group(1), at))
