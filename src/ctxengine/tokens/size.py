"""Context size: the provider's usage anchor plus an estimate of what came after it (pi
``estimateContextTokens``).

The usage anchor is the latest assistant message whose usage is usable: present, with a
non-zero prompt, from a reply that ended normally (:attr:`Message.aborted` is false), and
newer than the latest compaction. Its :attr:`Usage.context_tokens` (prompt + output) measured
everything up to and including that reply; the messages after it are estimated. Without a
usable anchor the whole context is estimated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctxengine.model import Message
from ctxengine.tokens.base import Estimator


@dataclass(frozen=True, slots=True)
class ContextSize:
    """The size of a context in tokens.

    Attributes:
        total: ``anchored + estimated``.
        anchored: tokens reported by the usage anchor (prompt + output), 0 without one.
        estimated: tokens estimated: the messages after the anchor, or everything (messages
            plus ``extra_tokens``) without one.
        anchor_index: index of the anchor message in the sequence, or ``None``.
    """

    total: int
    anchored: int
    estimated: int
    anchor_index: int | None


def is_usable_anchor(message: Message) -> bool:
    """True when ``message`` is an assistant reply whose usage can anchor the context size:
    usage present, prompt tokens > 0 (an all-zero or output-only report measured nothing),
    and the reply did not end in an error or abort."""
    usage = message.usage
    return (
        message.role == "assistant"
        and usage is not None
        and usage.prompt_tokens > 0
        and not message.aborted
    )


def find_anchor(
    messages: Sequence[Message], *, fresh_from: int = 0, window: int | None = None
) -> int | None:
    """Index of the usage anchor: the last usable assistant message at index ≥
    ``fresh_from``, or ``None``. Scans backwards, so the cost is the distance from the end.

    With ``window`` (the model's context window, tokens), a reply reporting more prompt tokens
    than the window holds is passed over: no request the model accepted measured that much,
    so the report belongs to another conversation (messages imported from an agent that ran
    with a larger window, or from a context ctxengine did not build)."""
    for i in range(len(messages) - 1, max(fresh_from, 0) - 1, -1):
        m = messages[i]
        if is_usable_anchor(m) and (
            window is None or m.usage is None or m.usage.prompt_tokens <= window
        ):
            return i
    return None


def context_size(
    messages: Sequence[Message],
    estimator: Estimator,
    *,
    per_message: Sequence[int] | None = None,
    fresh_from: int = 0,
    extra_tokens: int = 0,
) -> ContextSize:
    """Size in tokens of the context made of ``messages``.

    Args:
        messages: the context's messages in order (system and developer messages included).
        estimator: prices the messages that are not covered by the anchor.
        per_message: cached ``estimator.message`` results, one per message (same length as
            ``messages``); lets the engine keep the cost proportional to the new messages.
        fresh_from: index of the first message appended after the latest compaction. Usage
            on earlier messages measured the context before that compaction and is ignored
            (pi ignores assistant messages timestamped before the latest compaction).
        extra_tokens: tokens outside ``messages`` that a request also carries (tool schemas),
            added only when there is no anchor: an anchor's prompt already contains them.

    Returns:
        :class:`ContextSize`. Never raises for well-formed input; a ``per_message`` of the
        wrong length raises ``ValueError``.
    """
    if per_message is not None and len(per_message) != len(messages):
        raise ValueError(
            f"per_message has {len(per_message)} estimates for {len(messages)} messages"
        )
    anchor = find_anchor(messages, fresh_from=fresh_from)
    start = 0 if anchor is None else anchor + 1
    if per_message is not None:
        estimated = sum(per_message[start:])
    else:
        estimated = sum(estimator.message(m) for m in messages[start:])
    if anchor is None:
        estimated += extra_tokens
        return ContextSize(estimated, 0, estimated, None)
    usage = messages[anchor].usage
    anchored = usage.context_tokens if usage is not None else 0
    return ContextSize(anchored + estimated, anchored, estimated, anchor)
