"""Native compaction in the background: the wire side of Anthropic's background (async)
compaction (beta ``compact-2026-09-04``), for an executor that runs it off the request path.

The steps are the compaction-background page's (platform.claude.com):

1. :func:`begin`: take the history as it stands and build the on-demand compaction request
   of every message in it (the ``compaction`` parameter and its beta header); record which
   message entries it holds (:class:`BackgroundCompaction`).
2. :func:`run` sends it (blocking: run it in a thread, or ``asyncio.to_thread``). Meanwhile
   the conversation goes on over the full history: entries are appended, nothing earlier is
   edited, and no other compaction starts until this one is swapped in or has failed (the
   caller's single flight).
3. :func:`swap`, when the reply arrives with the compaction: exactly the messages sent are
   dropped from the front and the returned item put in their place; every entry appended
   since step 1 follows it. In the log: a native compaction record whose first kept entry
   is the first message appended after the request was built, then the returned item as
   its lead (:func:`~.native.store_native`); its locally written continuation state covers
   exactly the messages sent. The tail keeps its signed thinking (the projection keeps the
   reasoning of a tail kept across a native compaction), so the swapped history sent on the
   next request keeps the thinking produced meanwhile valid.

A reply without a summary, a failed request, or a history that changed under the request
(another compaction, or an entry it held withdrawn: :class:`~ctxengine.errors.
StaleCompaction`) leaves the log as it is: the caller keeps the full history. OpenAI's
``/responses/compact`` goes through the same three steps.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

from ctxengine.errors import NothingToCompact, StaleCompaction, SummaryRejected
from ctxengine.ladder.compaction import Conversation, conversation_of
from ctxengine.ladder.plan import Attempt, CompactionPlan, Requirement
from ctxengine.model.carriage import native_block
from ctxengine.projection.render.registry import original_tool_names, renderer_for
from ctxengine.providers.base import Completion, CompletionRequest, NativeProvider

from .events import CompactionOutcome
from .native import NativeTarget, store_native, whole_cut
from .session import Session


@dataclass(frozen=True, slots=True)
class BackgroundCompaction:
    """A compaction request built from the history as it stood (step 1).

    Attributes:
        target: the provider that compacts.
        request: the compaction request (:meth:`NativeProvider.compact
            <ctxengine.providers.base.NativeProvider.compact>` adds the ``compaction``
            parameter and its beta header).
        sent_ids: entry ids of the messages the request holds, in order (the prefix the
            swap drops).
        version: entries in the log when it was built (the history version).
        compaction_id: the compaction in force when it was built (``None``: none); the swap
            refuses a history that compacted since.
        plan / attempt / conversation: what the stand-in continuation state is written
            from (every conversation message at step 1, nothing kept).
    """

    target: NativeTarget
    request: CompletionRequest
    sent_ids: tuple[str, ...]
    version: int
    compaction_id: str | None
    plan: CompactionPlan
    attempt: Attempt
    conversation: Conversation


def begin(
    session: Session, provider: NativeProvider, *, max_output_tokens: int | None = None
) -> BackgroundCompaction:
    """Step 1: the compaction request of every message of ``session`` now (head included:
    Anthropic's system prompt), with what the swap needs.

    Args:
        provider: the Anthropic Messages or OpenAI Responses provider.
        max_output_tokens: the request's output budget in tokens (default: the budget's
            reserve).

    Raises:
        NothingToCompact: no message to summarize yet, or calls await their results (the
            API cannot compact a conversation whose last turn has an unanswered call).
    """
    with session.lock:
        log = session.log
        h = log.history
        log.sync()
        if h.pending_call_ids():
            raise NothingToCompact("calls await their results: compact after they return")
        ctx = log.project()
        compactor = session.compactor
        conversation = conversation_of(ctx, compactor.estimator, compactor.tools, frozenset())
        if not conversation.messages:
            raise NothingToCompact("no message to summarize")
        tokens = log.context_tokens(ctx)
        target = NativeTarget(provider, max_output_tokens or session.budget.reserve)
        req = Requirement("soft", "manual", "background compaction", tokens)
        plan = compactor.make_plan(ctx, tokens, req, None, session.budget, None)
        first = plan.first
        summary = first.summary_tokens if first is not None else session.budget.summary_max
        attempt = Attempt(0, None, whole_cut(conversation), summary, 0)
        plan = replace(
            plan, attempts=(attempt,), fallback=None, backend="native", native=target.native
        )
        body = renderer_for(target.api)(ctx, cache=False)
        request = CompletionRequest(
            body=body,
            max_output_tokens=target.max_output_tokens,
            tool_names=original_tool_names(ctx, target.api),
        )
        sent = tuple(s for s in conversation.sources if s is not None)
        compaction = h.entries[h.compaction].id if h.compaction is not None else None
        return BackgroundCompaction(
            target, request, sent, len(h), compaction, plan, attempt, conversation
        )


def run(
    ticket: BackgroundCompaction,
    *,
    instructions: str | None = None,
    cancel: threading.Event | None = None,
) -> Completion:
    """Step 2: send the compaction request (blocking). ``instructions`` replace the
    provider's summarization prompt (Anthropic); ``cancel`` stops the call (the stream is
    closed, :class:`~ctxengine.errors.Cancelled` raised).

    Raises:
        ProviderError / Cancelled: the request failed; nothing to swap.
    """
    return ticket.target.provider.compact(ticket.request, instructions=instructions, cancel=cancel)


def swap(session: Session, ticket: BackgroundCompaction, reply: Completion) -> CompactionOutcome:
    """Step 3: put the compaction ``reply`` in place of exactly the messages the request
    held; every entry appended since follows it.

    Returns:
        The native compaction stored.

    Raises:
        SummaryRejected: the reply holds no summary (no compaction item, or Anthropic's
            block with ``content: null``); the log is unchanged.
        StaleCompaction: the session compacted since :func:`begin`, or an entry the request
            held was withdrawn; the log is unchanged.
    """
    if not reply.native:
        raise SummaryRejected("empty", "the compaction reply holds no compaction item")
    for part in reply.native:
        block = native_block(part)
        if block is not None and block.get("type") == "compaction" and not block.get("content"):
            raise SummaryRejected("empty", "the provider's compaction returned no summary")
    with session.lock, session.compaction_lock():
        log = session.log
        log.sync()
        h = log.history
        current = h.entries[h.compaction].id if h.compaction is not None else None
        if current != ticket.compaction_id:
            raise StaleCompaction("the session compacted after the request was built")
        positions = [h.index.get(i) for i in ticket.sent_ids]
        if any(p is None or p in h.hidden for p in positions):
            raise StaleCompaction("an entry the request held was withdrawn")
        after = next(
            (
                e.id
                for k, e in enumerate(h.entries[ticket.version :], ticket.version)
                if k not in h.hidden and e.message is not None
            ),
            None,
        )
        cut = ticket.attempt.cut
        assert cut is not None
        attempt = replace(ticket.attempt, cut=replace(cut, first_kept_id=after))
        outcome = store_native(
            session.compactor,
            ticket.plan,
            attempt,
            ticket.conversation,
            reply.to_message(),
            ticket.target.native,
        )
        session.note_ladder_run()
        return outcome


__all__ = ["BackgroundCompaction", "begin", "run", "swap"]
