"""``Compactor``: the part of a :class:`~ctxengine.engine.Session` that plans and runs its
compactions: prune, plan (the pure functions of :mod:`ctxengine.ladder`), the
``before_compact`` / ``after_compact`` hooks, the executor (:class:`~.runner.Runner`), the
append, the events and the count of failures in a row.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ctxengine._runtime import collector_paused
from ctxengine.errors import (
    Cancelled,
    CompactionError,
    CompactionLoopError,
    CompactionVetoed,
    ContextFloorError,
    HookError,
    ProviderError,
    SummaryRejected,
    ThrashError,
)
from ctxengine.ladder.compaction import conversation_of, plan_compaction
from ctxengine.ladder.plan import CompactionPlan, Requirement
from ctxengine.ladder.prune import PrunePlan, plan_prune
from ctxengine.ladder.reinject import DurableItem
from ctxengine.ladder.thrash import (
    advice,
    contributors,
    reappended_ids,
    refill_calls,
    refill_note,
)
from ctxengine.ladder.timing import reply_gap
from ctxengine.model import CompactionRecord, Entry, PruneRecord
from ctxengine.policy import Budget, Policy
from ctxengine.policy.defaults import DEFAULT_CACHE_TTL_SECONDS
from ctxengine.projection import frame_messages
from ctxengine.projection.context import Context
from ctxengine.projection.memo import ProjectionMemo
from ctxengine.tokens.base import Estimator
from ctxengine.tokens.cache import CachingEstimator

from .events import AfterCompact, BeforeCompact, CompactionOutcome, LadderEvent
from .log import SessionLog
from .runner import Executed, Runner
from .view import EpochKey, epoch_key, fixed_tokens

if TYPE_CHECKING:
    from ctxengine.assembly.head import Head
    from ctxengine.ladder.durable_ledger import DurableLedger
    from ctxengine.summarizers.base import LiveRequest
    from ctxengine.summarizers.prime import LedgerPrimer

    from .native import NativeTarget


class Compactor:
    """Plans and runs the compactions of ``log``.

    Args:
        log: the session log (history, store, projection).
        runner: the executor of plans.
        before_compact / after_compact: the hooks (see :class:`~ctxengine.engine.Session`).

    Attributes:
        events: every ladder step taken or tried, in order.
        failures: compactions in a row that left the context over the trigger.
        thrashing: the thrash error that stopped automatic compaction, until a manual
            compaction lets it go on (``None``: not stopped).
        vetoed_at: the number of compactions in history when the ``before_compact`` hook
            last vetoed a plan (``None``: never).
        live: the latest request sent (epoch, messages it holds, request), or ``None``; a
            model summarizer may extend it (cache reuse).
        continuation_overhead: tokens of the messages that show the continuation state (in
            the policy's injection shape) around its summary; a plan adds the pinned items'
            message to it (:meth:`~.log.SessionLog.pins_overhead`).
        primer: analyses each message for the ledgers as it arrives (:meth:`prime`).
        cache_ttl: the provider's prompt-cache lifetime in seconds (the session sets it from
            the policy or the model profile: :meth:`~ctxengine.engine.Session.cache_ttl`).
        native: the provider plans run on (:mod:`.native`), or ``None`` (local).
    """

    def __init__(
        self,
        log: SessionLog,
        runner: Runner,
        before_compact: BeforeCompact | None = None,
        after_compact: AfterCompact | None = None,
    ) -> None:
        self.log = log
        self.runner = runner
        self.before_compact = before_compact
        self.after_compact = after_compact
        self.events: list[LadderEvent] = []
        self.failures = 0
        self.thrashing: ThrashError | None = None
        self.vetoed_at: int | None = None
        #: ``history.compactions`` when the latest ``"refill"`` event was reported.
        self._refill_noted = -(10**9)
        self.live: tuple[EpochKey, int, LiveRequest] | None = None
        self.continuation_overhead = sum(
            log.estimator.message(m) for m in frame_messages("", log.policy.injection)
        )
        self.primer: LedgerPrimer | None = None
        self._primed = 0
        self.cache_ttl = DEFAULT_CACHE_TTL_SECONDS
        #: Where plans run natively (the provider compacts), while a model call of the
        #: session with the native backend is in progress; ``None``: plans run locally.
        self.native: NativeTarget | None = None
        # the durable ledger, the entries it folded, and the entry position of each message
        self._durable: DurableLedger | None = None
        self._durable_of: list[Entry] | None = None
        self._durable_seen = 0
        self._message_entries: list[int] = []

    def prime(self) -> None:
        """Analyse the messages appended since the last call for the ledgers
        (:class:`~ctxengine.summarizers.prime.LedgerPrimer`), so that the compaction that
        summarizes them only folds what is remembered."""
        if self.primer is None:
            from ctxengine.summarizers.prime import LedgerPrimer

            self.primer = LedgerPrimer()
        entries = self.log.history.entries
        for entry in entries[self._primed :]:
            message = entry.message
            if message is not None:
                self.primer.observe(message)
        self._primed = len(entries)

    @property
    def policy(self) -> Policy:
        """The log's policy."""
        return self.log.policy

    @property
    def budget(self) -> Budget:
        """The log's resolved budget."""
        return self.log.budget

    @property
    def estimator(self) -> Estimator:
        """The log's estimator."""
        return self.log.estimator

    @property
    def tools(self) -> tuple[Mapping[str, Any], ...]:
        """The log's tool schemas."""
        return self.log.tools

    def plan_prune(self, ctx: Context) -> PrunePlan | None:
        """The prune the policy allows now, or ``None`` (disabled, nothing worth it, or a
        warm cache when the policy prunes a cold one only)."""
        policy = self.policy
        if not policy.prune_enabled or not policy.enabled:
            return None
        if policy.prune_cache_cold_only and not self.cache_cold():
            return None
        return plan_prune(
            ctx.messages,
            self.estimator,
            protect_tokens=self.budget.prune_protect,
            minimum_tokens=self.budget.prune_minimum,
            protect_turns=policy.prune_protect_turns,
            exempt_tools=policy.prune_exempt_tools,
            already_pruned=self.log.history.pruned_ids,
            protect_results=policy.prune_protect_results,
            tail_tokens=policy.prune_keep_tail_tokens or 0,
        )

    def cache_cold(self) -> bool:
        """The provider's prompt cache has expired: the newest message came at least
        :attr:`cache_ttl` seconds after the latest assistant reply
        (:func:`~ctxengine.ladder.timing.reply_gap`; records the ladder wrote do not count).
        Unknown times count as warm: a step that waits for a cold cache does not run on a
        guess."""
        gap = reply_gap(self.log.history.entries)
        return gap is not None and gap >= self.cache_ttl

    def _prune_detail(self, prune: PrunePlan) -> str:
        """The detail of a prune event: how many results, and the cold cache it waited for
        when the policy prunes a cold cache only."""
        detail = f"{len(prune.call_ids)} tool results"
        if self.policy.prune_cache_cold_only:
            gap = reply_gap(self.log.history.entries) or 0.0
            detail += (
                f"; cache cold ({gap:,.0f} s since the latest reply ≥ {self.cache_ttl:,.0f} s)"
            )
        return detail

    def prune_now(self, ctx: Context, tokens: int) -> Context:
        """Run a prune outside the trigger (``policy.prune_when == "always"``): append it and
        report it when one is worth it; returns the context after it (``ctx`` when none)."""
        prune = self.plan_prune(ctx)
        if prune is None:
            return ctx
        entry = self.log.append(PruneRecord(prune.call_ids, prune.tokens_saved, self.policy.name))
        after = self.log.project()
        self.event(
            "prune", entry.id, tokens, self.log.context_tokens(after), self._prune_detail(prune)
        )
        return after

    def durable(self, first_kept_id: str | None) -> tuple[DurableItem, ...]:
        """The candidate durable state (``policy.reinject``) of a compaction whose first kept
        entry is ``first_kept_id`` (``None``: none): found in the history before that entry,
        less what the history from it on shows (:func:`~ctxengine.ladder.reinject.
        durable_items`, answered by the session's :class:`~ctxengine.ladder.durable_ledger.
        DurableLedger`, which folds each message once)."""
        h = self.log.history
        ledger = self._durable_ledger()
        end = len(h) if first_kept_id is None else h.index.get(first_kept_id, len(h))
        cut = bisect_left(self._message_entries, end)
        kept = [m for e in h.entries[end:] if (m := e.message) is not None]
        return ledger.items(cut, kept, self.policy, self.estimator)

    def _durable_ledger(self) -> DurableLedger:
        """The durable ledger with every message of the history folded (a new one when the
        history is not the one it folded)."""
        h = self.log.history
        entries = h.entries
        ledger = self._durable
        if ledger is None or self._durable_of is not entries or self._durable_seen > len(entries):
            from ctxengine.ladder.durable_ledger import DurableLedger

            ledger = self._durable = DurableLedger()
            self._durable_of = entries
            self._durable_seen = 0
            self._message_entries = []
        for n in range(self._durable_seen, len(entries)):
            m = entries[n].message
            if m is not None:
                ledger.observe(m)
                self._message_entries.append(n)
        self._durable_seen = len(entries)
        return ledger

    def make_plan(
        self,
        ctx: Context,
        tokens: int,
        req: Requirement,
        focus: str | None,
        budget: Budget,
        prune: PrunePlan | None,
    ) -> CompactionPlan:
        """The plan of a compaction of ``ctx`` (``tokens`` by the usage anchor) to
        ``budget``. The schedule starts from ``budget``'s truncate cap, never from a cap an
        earlier compaction squeezed: caps relax when room comes back."""
        h = self.log.history
        conversation = conversation_of(ctx, self.estimator, self.tools, h.pending_call_ids())
        pins = self.log.pins_overhead()
        cap = (
            budget.truncate_tokens if budget.truncate_tokens < self.budget.truncate_tokens else None
        )
        last = len(h)
        from ctxengine.summarizers.extractive_state import minimum_state_tokens

        state = minimum_state_tokens(h.goal or "", self.estimator, (last, last))
        plan = plan_compaction(
            conversation,
            self.estimator,
            requirement=req,
            budget=budget,
            policy=self.policy,
            tokens_before=tokens,
            continuation_overhead=self.continuation_overhead + pins,
            pinned_tokens=pins,
            state_tokens=state,
            goal_tokens=h.goal_tokens,
            cap=cap,
            focus=focus,
            prune=prune,
            durable=self.durable if self.policy.reinject else None,
        )
        # An overflow is recovered locally: the provider's compaction request would carry
        # the very context it just refused.
        if self.native is not None and req.reason != "overflow":
            plan = replace(plan, backend="native", native=self.native.native)
        return plan

    def run_ladder(
        self, ctx: Context, req: Requirement, output: int, *, idle: bool = False
    ) -> Context:
        """Prune, then compact unless pruning brought ``ctx`` under the trigger (``idle``: an
        idle session's compaction, run under the trigger whatever the prune saved). A failed
        compaction is counted and the context returned as it is. ``output``: the coming
        call's output budget (the context must fit beside it).

        Under a summarizer that calls no model, Python's cyclic garbage collector is paused
        meanwhile (:func:`collector_paused`): the ladder allocates many short-lived objects
        that hold no reference cycles, and each collection they would set off walks every
        object the process holds, the whole history included."""
        from ctxengine.summarizers.calls import ModelSummarizer

        if isinstance(self.runner.summarizer, ModelSummarizer):
            return self._run_ladder(ctx, req, output, idle)
        with collector_paused():
            return self._run_ladder(ctx, req, output, idle)

    def _run_ladder(self, ctx: Context, req: Requirement, output: int, idle: bool) -> Context:
        tokens = req.tokens
        prune = self.plan_prune(ctx)
        if prune is not None:
            entry = self.log.append(
                PruneRecord(prune.call_ids, prune.tokens_saved, self.policy.name)
            )
            ctx = self.log.project()
            tokens = self.log.context_tokens(ctx)
            self.event("prune", entry.id, req.tokens, tokens, self._prune_detail(prune))
            if tokens < self.budget.trigger and not idle:
                self.failures = 0
                return ctx
            hard = tokens + output > self.budget.window
            req = Requirement("hard" if hard else "soft", req.reason, req.detail, tokens)
        self.check_thrash(ctx, tokens)
        try:
            plan = self.make_plan(ctx, tokens, req, None, self.budget, prune)
            return self.execute(plan, ctx).context
        except CompactionVetoed:
            return ctx
        except (CompactionLoopError, ContextFloorError, Cancelled, HookError):
            raise
        except (CompactionError, ProviderError) as exc:
            self.fail(tokens, str(exc))
            return ctx
        except Exception as exc:
            # An unexpected summarizer error propagates, but still counts towards the
            # breaker: a caller that retries must not loop past it.
            try:
                self.fail(tokens, f"{type(exc).__name__}: {exc}")
            except CompactionLoopError as loop:
                raise loop from exc
            raise

    def check_thrash(self, ctx: Context, tokens: int) -> None:
        """Stop automatic compaction when the context, ``tokens`` at the trigger, refilled
        within ``policy.thrash_refill_calls`` model calls of each of the latest
        ``policy.thrash_limit`` automatic compactions (:mod:`ctxengine.ladder.thrash`);
        reported as a ``"thrash"`` event. Checked as ``policy.thrash_guard`` says: with
        ``"model"`` (the default), it stops only when the session's summarizer calls a
        model; under one that costs no model call (extractive) the same finding is a
        ``"refill"`` event naming the contributors (:func:`~ctxengine.ladder.thrash.
        refill_note`), once per ``policy.thrash_limit`` compactions, and compaction goes
        on. Once raised, the error is raised again at every automatic compaction until a
        manual one.

        Raises:
            ThrashError: naming what fills the context and what to change.
        """
        if self.thrashing is not None:
            raise self.thrashing
        guard = self.policy.thrash_guard
        if guard == "off":
            return
        from ctxengine.summarizers.calls import ModelSummarizer

        stop = guard == "always" or isinstance(self.runner.summarizer, ModelSummarizer)
        limit = self.policy.thrash_limit
        h = self.log.history
        if not stop and h.compactions - self._refill_noted < limit:
            return
        calls = refill_calls(h.entries, limit=limit, within=self.policy.thrash_refill_calls)
        if len(calls) < limit:
            return
        found = contributors(ctx, self.estimator, reappended_ids(h.entries, h.epoch_start))
        if not stop:
            self._refill_noted = h.compactions
            self.event("refill", None, tokens, tokens, refill_note(calls, found))
            return
        error = ThrashError(
            len(calls),
            calls,
            tokens,
            self.budget.trigger,
            tuple((c.label, c.tokens) for c in found),
            advice(found),
        )
        self.event("thrash", None, tokens, tokens, str(error))
        self.thrashing = error
        raise error

    def execute(self, plan: CompactionPlan, ctx: Context) -> CompactionOutcome:
        """Run ``plan`` (made from ``ctx``) through the hooks and the runner, append the
        compaction and report it: :meth:`decide`, :meth:`run`, :meth:`commit`.

        A plan whose backend is ``"native"`` runs on the provider (:func:`.native.
        execute_native`) unless the hook supplied a summary.

        Raises:
            ContextFloorError: an automatic compaction whose floor (what every compaction
                keeps) is at or over the trigger less the room it must leave free
                (:attr:`~ctxengine.ladder.plan.CompactionPlan.floor_limit`): reported and
                raised before anything runs; a manual one with such a floor, when its
                summary does not fit the room the floor leaves (``over_budget``) or the
                compacted context would not fit the window (``too_large``): the same error,
                naming the floor's largest parts, raised from that rejection.
            CompactionVetoed: the ``before_compact`` hook vetoed it.
            NothingToCompact / SummaryRejected / ProviderError: history is unchanged.
            CompactionLoopError: the context is still over the trigger, too many times in a
                row.
        """
        plan, supplied = self.decide(plan)
        if plan.backend == "native" and supplied is None and self.native is not None:
            from .native import execute_native  # the native executor builds on this module

            return execute_native(self, plan, ctx, self.native)
        executed = self.run(
            plan, ctx, supplied, live=self.live_for(ctx), instructions=self.log.instructions()
        )
        return self.commit(plan, executed, plan.tokens_before)

    def decide(self, plan: CompactionPlan) -> tuple[CompactionPlan, str | None]:
        """The floor check and the ``before_compact`` hook: the plan to run (its focus as the
        hook set it) and the summary the hook supplied, if any.

        Raises:
            ContextFloorError: an automatic plan whose floor is at or over its limit.
            CompactionVetoed: the hook vetoed it (reported as a ``"veto"`` event).
            HookError: the hook raised.
        """
        if plan.reason != "manual" and plan.floor_tokens >= plan.floor_limit:
            raise self.floor_error(plan)
        supplied: str | None = None
        if self.before_compact is not None:
            try:
                decision = self.before_compact(plan)
            except Exception as exc:
                raise HookError("before_compact", exc) from exc
            if decision is not None:
                if decision.veto is not None:
                    self.vetoed_at = self.log.history.compactions
                    self.event(
                        "veto",
                        None,
                        plan.tokens_before,
                        plan.tokens_before,
                        decision.veto,
                        plan=plan,
                    )
                    raise CompactionVetoed(decision.veto)
                if decision.focus is not None:
                    plan = replace(plan, focus=decision.focus)
                supplied = decision.summary
        return plan, supplied

    def live_for(self, ctx: Context) -> tuple[int, LiveRequest] | None:
        """The latest request sent, when it belongs to ``ctx``'s epoch: how many of the
        context's messages it holds, and the request (a model summarizer may extend it)."""
        live = self.live
        if live is None or live[0] != epoch_key(ctx, self.log.history):
            return None
        return live[1:]

    def run(
        self,
        plan: CompactionPlan,
        ctx: Context,
        supplied: str | None,
        *,
        live: tuple[int, LiveRequest] | None,
        instructions: str | None,
    ) -> Executed:
        """Run ``plan`` (made from ``ctx``) through the runner; nothing is appended. The
        executor's part of :meth:`execute`, also run over a private copy of the log by a
        background compaction (:func:`~.precompute.local_candidate`).

        Args:
            supplied: a summary the ``before_compact`` hook supplied, if any.
            live: see :meth:`live_for`.
            instructions: the compact instructions of the head's rules files, if any.

        Raises:
            ContextFloorError: a manual compaction whose summary does not fit the room its
                floor leaves.
            NothingToCompact / SummaryRejected / ProviderError / Cancelled: history is
                unchanged.
        """
        h = self.log.history
        conversation = conversation_of(ctx, self.estimator, self.tools, h.pending_call_ids())
        self.runner.instructions = instructions
        try:
            return self.runner.execute(
                plan,
                conversation,
                h,
                self.estimator,
                measure=self.log.measure,
                live=live,
                continuation_overhead=self.continuation_overhead + self.log.pins_overhead(),
                summary=supplied,
                on_fallback=lambda detail: self.event(
                    "fallback", None, plan.tokens_before, plan.tokens_before, detail, plan=plan
                ),
            )
        except SummaryRejected as exc:
            # a manual compaction runs whatever the floor; when the floor leaves the summary
            # no room, say so the way the automatic check does: by the floor's largest parts
            if exc.reason in ("over_budget", "too_large") and plan.floor_tokens >= plan.floor_limit:
                raise self.floor_error(plan) from exc
            raise

    def commit(
        self,
        plan: CompactionPlan,
        executed: Executed,
        before: int,
        *,
        record: CompactionRecord | None = None,
        entry_id: str | None = None,
        work: tuple[CachingEstimator, ProjectionMemo] | None = None,
        note: str = "",
    ) -> CompactionOutcome:
        """Append ``executed``'s compaction (or ``record``, a precomputed compaction adopted
        later, under ``entry_id``, default its content hash), report it (``before``: the
        context size, in tokens, when it was decided; ``note`` ends the event's detail),
        count a context still over the trigger as a failure and run the ``after_compact``
        hook. ``work``: estimates and projection work done on a copy of the log for the new
        epoch (:meth:`~.log.SessionLog.absorb`); the log then keeps its own work of the old
        epoch too (the entries appended since the copy was made are in the new one).

        Raises:
            CompactionLoopError: the context is still over the trigger, too many times in a
                row.
            HookError: the ``after_compact`` hook raised.
        """
        if record is None:
            entry = self.log.append(executed.record, entry_id=executed.entry_id)
        else:
            entry = self.log.append(record, entry_id=entry_id, keep_work=work is not None)
        if work is not None:
            self.log.absorb(work)
        stored = entry.body
        assert isinstance(stored, CompactionRecord)
        if plan.reason == "manual":
            self.thrashing = None
        final = self.log.project()
        detail = f"first kept {stored.first_kept_id}{note}"
        self.event("compaction", entry.id, before, final.tokens, detail, executed.notes, plan)
        if final.tokens >= self.budget.trigger:
            self.fail(final.tokens, f"context still {final.tokens} tokens after compaction")
        else:
            self.failures = 0
        outcome = CompactionOutcome(
            entry,
            final,
            before,
            final.tokens,
            plan,
            executed.attempt,
            executed.summarizer,
            executed.notes,
            executed.fallback,
        )
        self.run_after_compact(outcome)
        return outcome

    def run_after_compact(self, outcome: CompactionOutcome) -> None:
        """Show ``outcome`` to the ``after_compact`` hook, if any.

        Raises:
            HookError: the hook raised.
        """
        if self.after_compact is not None:
            try:
                self.after_compact(outcome)
            except Exception as exc:
                raise HookError("after_compact", exc) from exc

    def floor_error(self, plan: CompactionPlan) -> ContextFloorError:
        """The :class:`~ctxengine.errors.ContextFloorError` of ``plan`` (its floor, largest
        parts first, the assembled head's sections named: :func:`head_parts`), reported as a
        ``"failure"`` event."""
        error = ContextFloorError(
            plan.floor_tokens,
            plan.budget.trigger,
            plan.budget.window,
            head_parts(plan.floor, self.log.last_head),
            plan.floor_free,
        )
        self.event("failure", None, plan.tokens_before, plan.tokens_before, str(error), plan=plan)
        return error

    def event(
        self,
        step: str,
        entry_id: str | None,
        before: int,
        after: int,
        detail: str,
        notes: tuple[str, ...] = (),
        plan: CompactionPlan | None = None,
    ) -> None:
        """Report a step, stamped with the current number of entries."""
        self.events.append(
            LadderEvent(step, entry_id, before, after, detail, len(self.log.history), notes, plan)
        )

    def fail(self, tokens: int, detail: str) -> None:
        """Count a failed compaction (context ``tokens``) and report it.

        Raises:
            CompactionLoopError: ``policy.max_consecutive_failures`` failures in a row.
        """
        self.failures += 1
        self.event("failure", None, tokens, tokens, detail)
        if self.failures >= self.policy.max_consecutive_failures:
            fixed = fixed_tokens(self.log.project(), self.estimator)
            why = ""
            if fixed >= self.budget.trigger:
                why = (
                    f"the system prompt and tool schemas alone are {fixed:,} tokens, which no "
                    "compaction can shrink; use a model with a larger window or a shorter "
                    "system prompt"
                )
            raise CompactionLoopError(self.failures, tokens, self.budget.trigger, why)


#: How a floor error names a section of the assembled head.
_HEAD_LABELS = {
    "base": "base instructions",
    "rules": "rules",
    "skills": "skill catalog",
    "memory": "memory index",
    "environment": "environment",
    "git_status": "git status",
}


def head_parts(
    parts: tuple[tuple[str, int], ...], head: Head | None
) -> tuple[tuple[str, int], ...]:
    """``parts`` (a floor, ``(name, tokens)`` largest first) with its ``"system prompt"``
    split into the sections of the assembled ``head`` that fill it (the rules section named
    by its files: ``"rules CLAUDE.md"``), the rest staying ``"system prompt"``; unchanged
    without a head."""
    if head is None:
        return parts
    total = dict(parts).get("system prompt", 0)
    named: list[tuple[str, int]] = []
    for section in head.sections:
        if section.name == "tools" or section.tokens <= 0:
            continue
        label = _HEAD_LABELS.get(section.name, section.name)
        if section.name == "rules" and section.sources:
            label = f"rules {', '.join(section.sources)}"
        named.append((label, min(section.tokens, total)))
        total -= named[-1][1]
    out = [p for p in parts if p[0] != "system prompt"] + named
    if total > 0:
        out.append(("system prompt", total))
    return tuple(sorted(out, key=lambda p: -p[1]))
