"""Native compaction in the engine: the provider compacts, the session stores what it
returned and a continuation state that stands in for it.

Two ways in:

* **on demand** (:func:`execute_native`): a plan whose backend is ``"native"`` (the
  ladder's trigger, ``/compact``) sends the messages before the plan's cut to the provider's
  compaction (Anthropic's ``compaction`` parameter, OpenAI's ``/responses/compact``); the
  kept tail stays verbatim after what it returns;
* **at the provider's threshold** (:func:`store_native_reply`): an ordinary call asked the
  provider to compact on its own (:func:`native_settings`), and the reply opens with the
  compaction: it covers every message the request held.

Either way the session appends a :class:`~ctxengine.model.CompactionRecord` with ``native``
set, then the message holding the provider's items exactly as returned (its ``lead_ids``,
marked :data:`~ctxengine.model.carriage.NATIVE_LEAD`). The record's ``summary`` is a
continuation state of the same range written by the extractive summarizer
(:meth:`~.runner.Runner.stand_in`): what every other provider reads, so moving the session
to another provider (or Chat Completions) sends a valid request with a local continuation
state. History stays append-only; a failed native compaction appends nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ctxengine.errors import NothingToCompact, SummaryRejected
from ctxengine.ladder.compaction import Conversation, conversation_of
from ctxengine.ladder.plan import NATIVE_PROVIDERS, Attempt, CompactionPlan, Cut, Requirement
from ctxengine.model import Message, NativeCompactionPart
from ctxengine.model.carriage import NATIVE_LEAD, native_block
from ctxengine.model.codec import content_hash
from ctxengine.policy import Budget, Policy
from ctxengine.policy.defaults import ANTHROPIC_COMPACT_TRIGGER_MIN
from ctxengine.projection.context import Context

from .compactor import Compactor
from .events import CompactionOutcome
from .runner import _record

if TYPE_CHECKING:
    from ctxengine.providers.base import NativeProvider
    from ctxengine.providers.native import NativeSettings


@dataclass(frozen=True, slots=True)
class NativeTarget:
    """The provider a session's native compactions go to.

    Attributes:
        provider: the agent's provider (its ``name`` is the API: ``"anthropic"`` or
            ``"openai-responses"``).
        max_output_tokens: output budget of a compaction request, in tokens.
    """

    provider: NativeProvider
    max_output_tokens: int

    @property
    def api(self) -> str:
        """The request format: ``"anthropic"`` or ``"openai-responses"``."""
        return self.provider.name

    @property
    def native(self) -> str:
        """The provider the items are stored under (``"anthropic"``, ``"openai"``)."""
        return NATIVE_PROVIDERS[self.provider.name]


def native_settings(policy: Policy, budget: Budget, api: str, *, compact: bool) -> NativeSettings:
    """What an ordinary request to ``api`` asks of the provider under ``policy``: compaction
    at a threshold when ``compact`` (the native backend), at ``policy.native_trigger_tokens``
    or else the budget's trigger (tokens; for Anthropic at least its minimum, 50,000); and,
    for Anthropic, the context editing the policy configures (sent whatever the backend).
    """
    from ctxengine.providers.native import NativeSettings

    trigger = policy.native_trigger_tokens
    if trigger is None:
        trigger = budget.trigger
        if api == "anthropic":
            trigger = max(trigger, ANTHROPIC_COMPACT_TRIGGER_MIN)
    edits: tuple[Mapping[str, Any], ...] = ()
    if api == "anthropic":
        configured = (policy.native_clear_thinking, policy.native_clear_tool_uses)
        edits = tuple(e.edit() for e in configured if e is not None)
    return NativeSettings(
        compact=compact,
        trigger_tokens=trigger,
        instructions=policy.native_instructions,
        pause_after_compaction=policy.native_pause_after_compaction,
        edits=edits,
    )


def _lead_id(message: Message, compactor: Compactor) -> str:
    """A fresh entry id for the message holding a native compaction's items."""
    base = "native-" + content_hash(message.parts).removeprefix("b2:")[:24]
    eid, n = base, 2
    while eid in compactor.log.history:
        eid, n = f"{base}#{n}", n + 1
    return eid


def whole_cut(conversation: Conversation) -> Cut:
    """The cut that summarizes every message of ``conversation`` and keeps none."""
    n = len(conversation.messages)
    return Cut(n, None, n, 0, False, 0)


def store_native(
    compactor: Compactor,
    plan: CompactionPlan,
    attempt: Attempt,
    conversation: Conversation,
    message: Message,
    provider: str,
) -> CompactionOutcome:
    """Append a native compaction: the record (its stand-in continuation state written at
    ``attempt``'s cut, ``native`` = ``provider``), then ``message``, the items exactly as
    returned, marked as the record's lead; report it and run the ``after_compact`` hook.

    Raises:
        SummaryRejected: the stand-in could not be written (nothing is appended).
        HookError: the ``after_compact`` hook raised.
    """
    log, h = compactor.log, compactor.log.history
    compactor.runner.instructions = log.instructions()
    summary = compactor.runner.stand_in(plan, attempt, conversation, h, compactor.estimator)
    lead = replace(message, meta={**message.meta, NATIVE_LEAD: provider})
    lead_id = _lead_id(lead, compactor)
    record = replace(
        _record(plan, attempt, summary),
        native=provider,
        lead_ids=(lead_id,),
        retained_ids=None,
        continuation=None,
        reinjected=None,
    )
    _, measured = log.measure(record, attempt.truncate_tokens)
    record = replace(record, tokens_after=measured.tokens + compactor.estimator.message(lead))
    entry = log.append(record)
    log.append(lead, entry_id=lead_id)
    if plan.reason == "manual":
        compactor.thrashing = None
    final = log.project()
    notes = (f"native:{provider}", f"stand-in:{summary.summarizer}", *summary.notes)
    detail = f"native {provider} compaction, first kept {record.first_kept_id}"
    compactor.event("compaction", entry.id, plan.tokens_before, final.tokens, detail, notes, plan)
    compactor.failures = 0
    outcome = CompactionOutcome(
        entry, final, plan.tokens_before, final.tokens, plan, 0, provider, notes, None
    )
    compactor.run_after_compact(outcome)
    return outcome


def execute_native(
    compactor: Compactor, plan: CompactionPlan, ctx: Context, target: NativeTarget
) -> CompactionOutcome:
    """Run ``plan`` (made from ``ctx``) on the provider: the messages before its first
    attempt's cut (head, earlier continuation state, the summarized range) are sent to the
    provider's on-demand compaction; what it returns is stored first, the kept tail after it
    (:func:`store_native`).

    Raises:
        NothingToCompact: the plan has no cut.
        SummaryRejected: the provider's compaction came back without a summary (Anthropic's
            block with ``content: null``); nothing is appended.
        ProviderError / Cancelled: the compaction request failed; nothing is appended.
    """
    from ctxengine.projection.render.registry import original_tool_names, renderer_for
    from ctxengine.providers.base import CompletionRequest

    attempt = plan.first
    if attempt is None or attempt.cut is None:
        raise NothingToCompact("no valid cut point leaves anything to summarize")
    h = compactor.log.history
    conversation = conversation_of(ctx, compactor.estimator, compactor.tools, h.pending_call_ids())
    end = attempt.cut.index
    prefix = Context(
        messages=(*ctx.messages[: conversation.start], *conversation.messages[:end]),
        sources=(*ctx.sources[: conversation.start], *conversation.sources[:end]),
        tools=ctx.tools,
    )
    body = renderer_for(target.api)(prefix, cache=False)
    request = CompletionRequest(
        body=body,
        max_output_tokens=target.max_output_tokens,
        tool_names=original_tool_names(prefix, target.api),
    )
    with compactor.runner.cancellable() as cancel:
        reply = target.provider.compact(
            request, instructions=compactor.policy.native_instructions, cancel=cancel
        )
    for part in reply.native:
        block = native_block(part) if part.provider == "anthropic" else None
        if block is not None and block.get("type") == "compaction" and not block.get("content"):
            raise SummaryRejected("empty", "the provider's compaction returned no summary")
    message = reply.to_message()
    return store_native(compactor, plan, attempt, conversation, message, target.native)


def store_native_reply(compactor: Compactor, reply: Message) -> CompactionOutcome | None:
    """Store ``reply``, a reply that opens with the provider's compaction (it compacted at
    its threshold while answering), as a native compaction of every message before it:
    the record with its stand-in, then ``reply`` itself as the record's lead. ``None`` (and
    nothing appended) when ``reply`` holds no native item or the context holds nothing to
    summarize; the caller then appends it as an ordinary reply.

    Raises:
        SummaryRejected: the stand-in could not be written.
    """
    natives = [p for p in reply.parts if isinstance(p, NativeCompactionPart)]
    if not natives:
        return None
    log = compactor.log
    ctx = log.project()
    h = log.history
    conversation = conversation_of(ctx, compactor.estimator, compactor.tools, h.pending_call_ids())
    if not conversation.messages:
        return None
    tokens = log.context_tokens(ctx)
    provider = natives[0].provider
    req = Requirement("soft", "threshold", f"{provider} compacted at its threshold", tokens)
    plan = compactor.make_plan(ctx, tokens, req, None, compactor.budget, None)
    first = plan.first
    budget_tokens = first.summary_tokens if first is not None else compactor.budget.summary_max
    attempt = Attempt(0, None, whole_cut(conversation), budget_tokens, 0)
    plan = replace(plan, attempts=(attempt,), fallback=None, backend="native", native=provider)
    return store_native(compactor, plan, attempt, conversation, reply, provider)


def holds_native(message: Message) -> bool:
    """``message`` carries a provider's native compaction item."""
    return any(isinstance(p, NativeCompactionPart) for p in message.parts)


__all__ = [
    "NativeTarget",
    "execute_native",
    "holds_native",
    "native_settings",
    "store_native",
    "store_native_reply",
    "whole_cut",
]
