"""Pending calls are never inside a compacted prefix.

A pending call (:mod:`ctxengine.boundaries.pending`: a call of the newest reply that no later
message answers, with only tool results after that reply) is still running, or awaits a
human confirmation. Its result will come, and must find the call verbatim in the context.
Every index after the start of that reply is unsafe, so the reply (and everything after it)
stays in the kept tail.

A call that never got a result but is followed by a user message or a later reply was
abandoned by the source (the agent went on without it): it constrains nothing here, and the
sanitizer gives it a synthetic error result. Treating it as pending would forbid every later
cut, so such a history could never be compacted again.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxengine.boundaries.pending import pending_reply_start
from ctxengine.model import Message


def safe_indices(messages: Sequence[Message]) -> frozenset[int]:
    """Cut indices in ``0..len(messages)`` that keep every pending call's reply."""
    start = pending_reply_start(messages)
    return frozenset(range((len(messages) if start is None else start) + 1))
