"""Builders of the preset tests: a session of a preset run offline under the hand-computable
estimator, and messages of exact token sizes."""

from __future__ import annotations

import json
from typing import Any

from ctxengine.engine import Session
from ctxengine.model import Entry, Message, TextPart, ToolCallPart, ToolResultPart
from ctxengine.policy import Policy
from ctxengine.policy.presets import offline, preset
from hand_estimator import HandEstimator

#: ``len(text) // 4 + 1`` tokens per text, 4 per message.
EST = HandEstimator()


def text_of(label: str, tokens: int) -> str:
    """A text of exactly ``tokens`` tokens under :data:`EST` (``tokens`` ≥ 3): ``4 ·
    (tokens − 1)`` characters starting with ``label``."""
    text = f"{label}: " + "lorem ipsum dolor sit amet " * (4 * tokens)
    return text[: 4 * (tokens - 1)]


def system(tokens: int) -> Message:
    """A system message of ``tokens`` + 4 tokens."""
    return Message("system", (TextPart(text_of("system prompt", tokens)),))


def user(label: str, tokens: int) -> Message:
    """A user message of ``tokens`` + 4 tokens."""
    return Message("user", (TextPart(text_of(label, tokens)),))


def assistant(label: str, tokens: int) -> Message:
    """An assistant text message of ``tokens`` + 4 tokens."""
    return Message("assistant", (TextPart(text_of(label, tokens)),))


def calling(cid: str, tool: str = "bash", **args: Any) -> Message:
    """An assistant message with one call of ``tool`` (arguments as JSON; default
    ``{"command": "ls"}``, 17 characters: 5 tokens)."""
    return Message("assistant", (ToolCallPart(cid, tool, json.dumps(args or {"command": "ls"})),))


def answer(cid: str, text: str) -> Message:
    """The tool message answering call ``cid`` with ``text``."""
    return Message("tool", (ToolResultPart(cid, (TextPart(text),)),))


def session(name: str, window: int, *, policy: Policy | None = None, **kw: Any) -> Session:
    """A session of preset ``name`` (or ``policy``) run offline (:func:`offline`: the
    extractive summarizer stands in for a model) under :data:`EST`."""
    return Session(window, policy=offline(policy or preset(name)), estimator=EST, **kw)


def pad_to(s: Session, tokens: int, label: str = "pad") -> Entry:
    """Append the user message that brings the projected context to exactly ``tokens``."""
    need = tokens - s.project().tokens - 4
    assert need >= 3, f"the context is already {s.project().tokens} tokens"
    return s.append(user(label, need))


def roles(messages: tuple[Message, ...]) -> list[str]:
    """The role of each message."""
    return [m.role for m in messages]


def fill_to(s: Session, tokens: int, size: int = 2_000) -> None:
    """Alternate user and assistant messages of ``size`` tokens, then one message of
    ``size / 4`` to ``1.25 · size`` tokens that brings the context to exactly ``tokens``
    (with the default size, every message stays under every preset's truncation cap:
    Codex's 10,240 characters)."""
    n = 0
    while tokens - s.project().tokens > size + size // 4:
        s.append(user(f"u{n}", size - 4) if n % 2 == 0 else assistant(f"a{n}", size - 4))
        n += 1
    need = tokens - s.project().tokens - 4
    s.append(user("pad", need) if n % 2 == 0 else assistant("pad", need))
    assert s.project().tokens == tokens
