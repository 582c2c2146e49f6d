"""Background (speculative) compaction: the compaction the trigger will ask for is computed
off the request path before the trigger is reached, then adopted when it is.

Codex starts a candidate compaction at 65 % of the model's window, OpenCode at 85 % of its
compaction limit (for a context of at least 64K tokens); each candidate is tagged with the
history version it was computed from and adopted at the trigger, or discarded when the
conversation moved too far meanwhile (OpenCode's tail limit ``min(max(keep·2, 30,000), 25 %
of the budget)``), so that the user does not wait for a summary (seed 000 §1.1, §2;
:mod:`ctxengine.policy.defaults`). Here, driven by :meth:`Session.prepare
<ctxengine.engine.Session.prepare>` on the caller's thread (:class:`Precomputer`):

1. **start**: below the trigger, at or over :meth:`Policy.precompute_tokens
   <ctxengine.policy.Policy.precompute_tokens>`, with no call awaiting its result, the
   compaction is planned now (the plan a foreground compaction of this history would run:
   reason ``"threshold"``, no prune) and a thread computes it from a :class:`Snapshot` of the
   history (its :class:`HistoryVersion`: the number of entries and the newest entry's id);
   a ``"precompute_started"`` event.
2. **stale**: at every later call, a candidate whose history has been changed by a record
   (a compaction, prune, revert …) or whose budget changed is discarded
   (``"precompute_discarded"``, superseded), and so is one whose entries appended since the
   snapshot exceed the tail limit (:func:`~ctxengine.ladder.timing.tail_limit`; the event
   names the entries and their tokens); a new one may then start.
3. **trigger**: the running candidate is waited for, then adopted (``"precompute_adopted"``,
   then the usual ``"compaction"`` event): its record is appended as a foreground
   compaction of the snapshot would have written it, so the context is that compaction's
   followed by the entries appended since (:func:`adopted_record`); the ``before_compact``
   hook sees its plan first. A failed candidate (``"precompute_failed"``) or a discarded one
   leaves the trigger to the foreground ladder, as without precompute. With
   ``Policy.precompute_block_ratio`` set (Copilot SDK infinite sessions: background
   compaction at 80 %, blocking at 95 %), a stale candidate is adopted still when the
   context after it stays under the precompute size (:meth:`Precomputer.take`), and a
   trigger that holds no candidate (none started: the context crossed both sizes in one
   step; or one discarded) does not compact in the foreground while the context is under
   that share of the window: it goes out as it is, a candidate starts
   (``"precompute_deferred"``), and the next trigger waits for it and adopts it
   (:meth:`Precomputer.defer`).
4. **cancel**: :meth:`Precomputer.cancel` (a manual compaction, an overflow recovery,
   :meth:`Session.cancel_precompute <ctxengine.engine.Session.cancel_precompute>`) aborts a
   model summary in flight and drops the result (``"precompute_cancelled"``);
   :meth:`Precomputer.close` also waits for the thread to end. The background never writes
   history: cancelling leaves it as it was.

Never two at once: a session runs at most one computation thread (a discarded one that
cannot be interrupted, such as the extractive summarizer, is waited out before the next
starts), and with a store it holds the store's per-session lock
(:meth:`Store.compaction_lock <ctxengine.stores.base.Store.compaction_lock>`, under the
session id plus :data:`PRECOMPUTE_LOCK_SUFFIX`) while it runs, so another process or
``Session`` over the same stored session does not precompute it too
(``"precompute_skipped"``). The compaction itself is appended under the session's
compaction lock, as every compaction is.

The candidate is computed by a pluggable :data:`CandidateFn` taking the plan and the
snapshot; the default, :func:`local_candidate`, runs the session's own executor and
summarizer over a private copy of the log. A provider's background compaction (Anthropic
``compact-2026-09-04``: keep talking on the full history, then swap exactly the prefix that
was sent) fits the same shape.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ctxengine.errors import (
    Cancelled,
    CompactionVetoed,
    NothingToCompact,
    StoreError,
    StoreLockTimeout,
)
from ctxengine.ladder.plan import CompactionPlan, Requirement
from ctxengine.ladder.timing import tail_limit
from ctxengine.model import (
    CompactionRecord,
    Entry,
    PruneRecord,
    SupersedeRecord,
    UnpinRecord,
)
from ctxengine.model.codec import body_to_dict, content_hash
from ctxengine.policy import Budget, Policy
from ctxengine.projection.context import Context
from ctxengine.projection.memo import ProjectionMemo
from ctxengine.tokens.base import Estimator
from ctxengine.tokens.cache import CachingEstimator

from .compactor import Compactor
from .events import LadderEvent
from .log import SessionLog
from .runner import Executed, Runner

if TYPE_CHECKING:
    from ctxengine.assembly.head import ContextAssembler
    from ctxengine.summarizers.base import LiveRequest

#: Appended to the session id to name the store lock a background compaction holds (one
#: per stored session across threads and processes; not the compaction lock itself, which
#: only the appending of a compaction takes).
PRECOMPUTE_LOCK_SUFFIX = "\x1fprecompute"

#: Records that change what the context shows before its tail: a candidate computed before
#: one of them no longer describes the history.
_SUPERSEDING = (CompactionRecord, PruneRecord, SupersedeRecord, UnpinRecord)


@dataclass(frozen=True, slots=True)
class HistoryVersion:
    """The history a candidate was computed from.

    Attributes:
        entries: the number of entries then.
        last_id: the newest entry's id then (``None``: empty).
    """

    entries: int
    last_id: str | None

    def __str__(self) -> str:
        return f"{self.entries} entries (last {self.last_id})"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a candidate is computed from: the session at one history version, as values
    another thread may read while the session goes on.

    Attributes:
        version: the history version.
        entries: the history at that version.
        context: the context projected from it (the plan was made from this).
        budget / policy: the session's resolved budget and policy.
        session_id: the session's id.
        estimator: the session's estimator without its cache (a computation wraps its own).
        tools: the tool schemas sent with every request (without a head).
        head: the session's head assembler, or ``None``; only provisional heads are built
            from it (no snapshot of its volatile sections is taken, no cache break noted).
        runner: a private copy of the session's executor (its summarizers, a copy of the
            breaker, the fallback rule); a computation may change it.
        live: the latest request sent for this epoch, for a model summarizer's cache reuse
            (see :meth:`~.compactor.Compactor.live_for`), or ``None``.
        instructions: the compact instructions of the head's rules files, or ``None``.
        requirement: what the plan is made for (soft, reason ``"threshold"``, the context
            size at the snapshot).
        cancel: set when the candidate is no longer wanted: a model summary in flight is
            aborted; a computation should stop as soon as it can.
    """

    version: HistoryVersion
    entries: tuple[Entry, ...]
    context: Context
    budget: Budget
    policy: Policy
    session_id: str
    estimator: Estimator
    tools: tuple[Mapping[str, Any], ...]
    head: ContextAssembler | None
    runner: Runner
    live: tuple[int, LiveRequest] | None
    instructions: str | None
    requirement: Requirement
    cancel: threading.Event
    _copy: list[Compactor] = field(default_factory=list, compare=False, repr=False)

    def compactor(self) -> Compactor:
        """The session's planner and executor over a private copy of the log at this
        version (no store; built on first use, on the computing thread): what a foreground
        compaction of this history would use."""
        if not self._copy:
            log = SessionLog(
                self.budget.window,
                policy=self.policy,
                estimator=self.estimator,
                store=None,
                session_id=self.session_id,
                tools=self.tools if self.head is None else (),
                head=self.head,
            )
            log.budget = self.budget
            log.open(self.entries)
            self._copy.append(Compactor(log, self.runner))
        return self._copy[0]

    def plan(self) -> CompactionPlan:
        """The plan a foreground compaction of this history runs for :attr:`requirement`
        (no prune: the compaction the trigger will ask for).

        Raises:
            NothingToCompact: no valid cut leaves anything to summarize.
            ContextFloorError: what every compaction keeps leaves no room under the trigger.
        """
        compactor = self.compactor()
        req = self.requirement
        plan = compactor.make_plan(self.context, req.tokens, req, None, self.budget, None)
        if plan.first is None:
            raise NothingToCompact("no valid cut point leaves anything to summarize")
        if plan.floor_tokens >= plan.floor_limit:
            raise compactor.floor_error(plan)
        return plan


@dataclass(frozen=True, slots=True)
class Candidate:
    """A compaction computed in the background, not appended yet.

    Attributes:
        version: the history version it was computed from.
        plan: the plan it ran.
        executed: the compaction: its record as a foreground compaction of the snapshot
            would append it, the context it gave over the snapshot, the attempt kept, the
            summarizer, its notes, the fallback taken.
        breaker: the summarizer breaker's ``(failures, open)`` after it ran (the session
            takes it over when it adopts the candidate, as a foreground run would have left
            it).
        events: the ladder events it reported while it ran (a fallback), re-reported when
            it is adopted.
        seconds: how long the computation took, in seconds.
        work: the estimates and projection work of the log copy it ran on, handed to the
            session's log when it is adopted (the new epoch is not estimated again), or
            ``None``.
    """

    version: HistoryVersion
    plan: CompactionPlan
    executed: Executed
    breaker: tuple[int, bool] = (0, False)
    events: tuple[LadderEvent, ...] = ()
    seconds: float = 0.0
    work: tuple[CachingEstimator, ProjectionMemo] | None = None


#: Computes a candidate: ``(plan, snapshot) -> Candidate``, on a thread of its own. Raises
#: what a compaction raises (``NothingToCompact``, ``SummaryRejected``, ``ProviderError``,
#: ``Cancelled`` …): the candidate is then reported failed and the trigger compacts in the
#: foreground.
CandidateFn = Callable[[CompactionPlan, Snapshot], Candidate]


def local_candidate(plan: CompactionPlan, snapshot: Snapshot) -> Candidate:
    """The default :data:`CandidateFn`: the session's own executor and summarizer run
    ``plan`` over the private copy of the log at ``snapshot`` (:meth:`Snapshot.compactor`),
    exactly as a foreground compaction of that history runs it (:meth:`Compactor.run
    <ctxengine.engine.compactor.Compactor.run>`); setting ``snapshot.cancel`` aborts a model
    summary call.

    Raises:
        NothingToCompact / SummaryRejected / ProviderError / Cancelled: as a compaction.
    """
    started = time.perf_counter()
    compactor = snapshot.compactor()
    runner = compactor.runner
    runner.outer_cancel = snapshot.cancel
    executed = compactor.run(
        plan, snapshot.context, None, live=snapshot.live, instructions=snapshot.instructions
    )
    return Candidate(
        snapshot.version,
        plan,
        executed,
        (runner.breaker.failures, runner.breaker.open),
        tuple(compactor.events),
        time.perf_counter() - started,
        compactor.log.work,
    )


def adopted_record(candidate: Candidate, since: tuple[Entry, ...]) -> CompactionRecord:
    """The record appended when ``candidate`` is adopted after the entries ``since`` its
    snapshot: its own record unchanged when nothing was appended since; else with
    ``snapshot_id`` naming the snapshot's newest entry (the entries since are projected as
    entries logged after the compaction), and, when it keeps no tail, with the first entry
    since as its first kept entry (the entries since stay in the context). The context it
    gives is the one a foreground compaction of the snapshot gave, followed by the entries
    since."""
    record = candidate.executed.record
    if not since:
        return record
    first = record.first_kept_id if record.first_kept_id is not None else since[0].id
    return replace(record, snapshot_id=candidate.version.last_id, first_kept_id=first)


class _Job:
    """One computation: its snapshot, its thread and what it produced (the plan, the
    candidate, and the wire form of the record it is adopted as after newer entries)."""

    def __init__(self, snapshot: Snapshot, compute: CandidateFn, lock: ExitStack) -> None:
        self.snapshot = snapshot
        self.plan: CompactionPlan | None = None
        self.candidate: Candidate | None = None
        self.wire: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        #: Set when the call that started the job has returned: the computation competes
        #: with no request path for the interpreter.
        self.go = threading.Event()
        self._compute = compute
        self._lock = lock
        self.thread = threading.Thread(
            target=self._work, name=f"ctxengine-precompute-{snapshot.session_id}", daemon=True
        )

    def _work(self) -> None:
        try:
            self.go.wait()
            if self.snapshot.cancel.is_set():
                raise Cancelled("the background compaction was given up before it started")
            self.plan = self.snapshot.plan()
            self.candidate = candidate = self._compute(self.plan, self.snapshot)
            record = candidate.executed.record
            if record.first_kept_id is not None:
                # Adopted after newer entries, the record names the snapshot's newest entry;
                # its wire form (the costly part of its content hash) is ready then.
                seen = replace(record, snapshot_id=candidate.version.last_id)
                self.wire = body_to_dict(seen)
        except BaseException as exc:  # reported by the session's next call
            self.error = exc
        finally:
            try:
                self._lock.close()
            finally:
                self.done.set()

    @property
    def version(self) -> HistoryVersion:
        return self.snapshot.version


class Precomputer:
    """The background compactions of one session (see the module doc). Every method runs on
    the caller's thread, under the session's lock; only the computation runs elsewhere.

    Args:
        log: the session log (history, store, budget, estimator).
        compactor: plans, reports and commits (the session's).
        runner: the session's executor; each computation gets a copy.
        compute: computes a candidate (default :func:`local_candidate`).
    """

    def __init__(
        self,
        log: SessionLog,
        compactor: Compactor,
        runner: Runner,
        compute: CandidateFn = local_candidate,
    ) -> None:
        self.log = log
        self.compactor = compactor
        self.runner = runner
        self.compute = compute
        #: The computation whose result may still be adopted.
        self._job: _Job | None = None
        #: A computation given up while its thread still runs (waited out before another
        #: starts).
        self._retired: _Job | None = None
        self._closed = False
        #: The epoch in which a busy store lock was last reported (reported once per epoch).
        self._busy_noted: int | None = None

    def release(self) -> None:
        """Let the computation started by the current call begin (called when that call
        returns, so that the computation does not hold the interpreter while the call
        finishes)."""
        if self._job is not None:
            self._job.go.set()

    @property
    def running(self) -> bool:
        """A computation thread of this session is alive."""
        return any(j is not None and j.thread.is_alive() for j in (self._job, self._retired))

    @property
    def threads(self) -> tuple[threading.Thread, ...]:
        """The computation threads started and not yet joined by :meth:`close`."""
        return tuple(j.thread for j in (self._retired, self._job) if j is not None)

    # ------------------------------------------------------------------ below the trigger

    def observe(self, ctx: Context, tokens: int) -> None:
        """At a call below the trigger (``ctx``, ``tokens`` by the usage anchor): give up a
        computation whose candidate can no longer be adopted (:meth:`verdict`; a failed
        one is reported then, else it waits for the trigger), and start one when the
        context reached the policy's precompute size and none is held. Whether a
        computation has finished never changes what a call decides: a discarded one still
        running is waited out before the next starts (so that one session never runs two),
        the one held is waited for at the trigger."""
        policy = self.log.policy
        threshold = policy.precompute_tokens(self.log.budget)
        if threshold is None or self._closed or not policy.enabled:
            return
        job = self._job
        if job is not None:
            why = self.verdict(job)
            if why is None:
                return
            self._give_up(job, why, tokens)
        if tokens >= threshold:
            self._settle()
            self._start(ctx, tokens, threshold)

    def _start(self, ctx: Context, tokens: int, threshold: int, detail: str = "") -> None:
        """Start a computation from the history now (``detail``: why, default the
        precompute size reached); nothing when calls await their results, the history is
        empty or another writer holds the precompute lock."""
        h = self.log.history
        if h.pending_call_ids() or not h.entries:
            return
        policy = self.log.policy
        if not detail:
            share = f"{policy.precompute_ratio:.0%} of the {policy.precompute_base}"
            detail = f"context {tokens:,} ≥ {threshold:,} ({share})"
        req = Requirement("soft", "threshold", f"precomputed: {detail}", tokens)
        compactor = self.compactor
        lock = ExitStack()
        store = self.log.store
        if store is not None:
            key = self.log.session_id + PRECOMPUTE_LOCK_SUFFIX
            try:
                lock.enter_context(store.compaction_lock(key, timeout_s=0))
            except StoreError as exc:
                # StoreLockTimeout: another thread or process holds it; otherwise another
                # session of this thread does, or the lock file cannot be made.
                if self._busy_noted != h.compactions:
                    self._busy_noted = h.compactions
                    note = (
                        f"another writer is precomputing session {self.log.session_id!r}"
                        if isinstance(exc, StoreLockTimeout)
                        else f"the precompute lock is unavailable: {exc}"
                    )
                    compactor.event("precompute_skipped", None, tokens, tokens, note)
                return
        version = HistoryVersion(len(h), h.last_id)
        snapshot = Snapshot(
            version=version,
            entries=tuple(h.entries),
            context=ctx,
            budget=self.log.budget,
            policy=self.log.policy,
            session_id=self.log.session_id,
            estimator=self.log.base_estimator,
            tools=self.log.tools,
            head=self.log.head,
            runner=self.runner.copy(),
            live=compactor.live_for(ctx),
            instructions=self.log.instructions(),
            requirement=req,
            cancel=threading.Event(),
        )
        job = _Job(snapshot, self.compute, lock)
        try:
            job.thread.start()
        except BaseException:
            lock.close()
            raise
        self._job = job
        compactor.event("precompute_started", None, tokens, tokens, f"{detail}; version {version}")

    def verdict(self, job: _Job) -> str | None:
        """Why ``job``'s candidate can no longer be adopted, or ``None`` while it can: the
        history no longer extends its snapshot, or a record since changed the context
        before its tail, or the budget changed (superseded); or the entries appended since
        exceed the tail limit (stale)."""
        h = self.log.history
        v = job.version
        if len(h) < v.entries or (v.entries and h.entries[v.entries - 1].id != v.last_id):
            return "superseded: the history no longer extends the snapshot"
        budget = self.log.budget
        if budget != job.snapshot.budget:
            return f"superseded: the budget changed (trigger {budget.trigger:,})"
        since = h.entries[v.entries :]
        for e in since:
            if isinstance(e.body, _SUPERSEDING):
                return f"superseded: a {e.kind} entry was appended since the snapshot"
        tokens = self._since_tokens(v.entries)
        limit = tail_limit(budget.keep_recent, budget.trigger)
        if tokens > limit:
            return (
                f"stale: {len(since)} entries ({tokens:,} tokens) appended since the snapshot "
                f"of {v.entries} entries > tail limit {limit:,}"
            )
        return None

    # ------------------------------------------------------------------ at the trigger

    def take(self, tokens: int) -> Candidate | None:
        """At the trigger (context ``tokens``): the candidate to adopt, waiting for one still
        being computed, or ``None`` (none held, or it failed, or it is superseded or stale:
        reported, and the trigger compacts in the foreground or :meth:`defer` starts
        another). With a block limit (``Policy.precompute_block_ratio``) a stale candidate
        is adopted still (waited for) when the context after it stays under the precompute
        size (:meth:`Policy.precompute_tokens <ctxengine.policy.Policy.precompute_tokens>`):
        at most its compaction's ``tokens_after`` plus the tokens of the messages since its
        snapshot, before any truncation; the Copilot SDK and Anthropic's background
        compaction swap in whatever was appended meanwhile. Under that size the next
        trigger is a precompute cycle away. When the messages since alone reach it, the
        candidate is discarded without waiting for it."""
        job = self._job
        if job is None:
            return None
        why = self.verdict(job)
        size = self._late_size(why)
        if why is not None and size is None:
            self._give_up(job, why, tokens)
            self._settle()
            return None
        since = self._since_tokens(job.version.entries) if size is not None else 0
        if size is not None and since >= size:
            self._give_up(job, f"{why}; the messages since alone reach {size:,}", tokens)
            self._settle()
            return None
        job.go.set()
        job.thread.join()
        candidate = job.candidate
        if job.error is not None or candidate is None:
            self._failed(job, tokens)
            return None
        if size is not None:
            after = candidate.executed.record.tokens_after + since
            if after >= size:
                late = f"{why}; the context after it (at most {after:,}) reaches {size:,}"
                self._discard(job, late, tokens)
                self._settle()
                return None
        return candidate

    def _late_size(self, why: str | None) -> int | None:
        """The precompute size under which a candidate held for ``why`` (:meth:`verdict`)
        may be adopted late: only a stale one, only with a block limit; else ``None``."""
        policy = self.log.policy
        if why is None or not why.startswith("stale"):
            return None
        if policy.precompute_block_tokens(self.log.budget) is None:
            return None
        return policy.precompute_tokens(self.log.budget)

    def _since_tokens(self, entries: int) -> int:
        """Tokens of the messages appended after the first ``entries`` entries (a
        snapshot's), by the session's estimator."""
        estimator = self.log.estimator
        since = self.log.history.entries[entries:]
        return sum(estimator.message(m) for e in since if (m := e.message) is not None)

    def defer(self, ctx: Context, req: Requirement, output: int) -> bool:
        """At a soft trigger that holds no candidate (after :meth:`take`; ``ctx`` and
        ``req.tokens`` by the usage anchor, ``output`` tokens of output to come): whether
        the call goes out as it is, with a candidate started now that the next trigger
        waits for and adopts (a ``"precompute_deferred"`` event). Only with a block limit
        (:meth:`Policy.precompute_block_tokens
        <ctxengine.policy.Policy.precompute_block_tokens>`) not reached by the context, the
        request within the window, and none of: automatic compaction stopped (thrash), a
        ``before_compact`` veto since the latest compaction (the candidate would be vetoed
        after its summary was paid for), a policy that prunes on every call (each prune
        supersedes a candidate), calls awaiting their results, another writer holding the
        precompute lock. Else False: the trigger compacts in the foreground. The decision
        reads the history, the session's state and the store lock, never how far a
        computation has got."""
        policy = self.log.policy
        budget = self.log.budget
        block = policy.precompute_block_tokens(budget)
        h = self.log.history
        tokens = req.tokens
        if (
            block is None
            or self._job is not None
            or self._closed
            or not policy.enabled
            or req.hard
            or tokens >= block
            or tokens + output > budget.window
            or self.compactor.thrashing is not None
            or self.compactor.vetoed_at == h.compactions
            or policy.prune_when == "always"
        ):
            return False
        self._settle()
        share = f"{policy.precompute_block_ratio:.0%} of the window"
        why = f"{req.detail}; under the block limit {block:,} ({share}), no candidate held"
        self._start(ctx, tokens, block, why)
        if self._job is None:
            return False
        self.compactor.event(
            "precompute_deferred",
            None,
            tokens,
            tokens,
            f"{why}: sent as it is; the next trigger waits for the candidate started now",
        )
        return True

    def adopt(self, candidate: Candidate, ctx: Context, tokens: int) -> Context | None:
        """Append ``candidate`` (taken at the trigger of ``ctx``, ``tokens``): the thrash
        check, the ``before_compact`` hook on its plan, the record (:func:`adopted_record`),
        the events. Returns the context after it, or ``None`` when the hook changed the plan
        (a focus or a summary of its own: the candidate is discarded, the caller runs the
        ladder).

        Raises:
            CompactionVetoed: the hook vetoed it (the candidate is discarded).
            ThrashError / CompactionLoopError / HookError: as a foreground compaction.
        """
        job = self._job
        assert job is not None and job.candidate is candidate
        compactor = self.compactor
        h = self.log.history
        since = tuple(h.entries[candidate.version.entries :])
        compactor.check_thrash(ctx, tokens)
        try:
            plan, supplied = compactor.decide(candidate.plan)
        except CompactionVetoed:
            self._discard(job, "the before_compact hook vetoed it", tokens)
            raise
        except Exception as exc:
            self._discard(job, f"{type(exc).__name__}: {exc}", tokens)
            raise
        if plan is not candidate.plan or supplied is not None:
            self._discard(job, "the before_compact hook changed its plan", tokens)
            return None
        self._job = None
        compactor.events.extend(candidate.events)
        self.runner.breaker.failures, self.runner.breaker.open = candidate.breaker
        since_tokens = self._since_tokens(candidate.version.entries)
        budget = self.log.budget
        limit = tail_limit(budget.keep_recent, budget.trigger)
        detail = (
            f"version {candidate.version}; {len(since)} entries ({since_tokens:,} tokens) "
            f"since ≤ tail limit {limit:,}"
        )
        size = self.log.policy.precompute_tokens(budget)
        if since_tokens > limit and size is not None:  # a late adoption (:meth:`take`)
            after = candidate.executed.record.tokens_after + since_tokens
            detail = (
                f"version {candidate.version}; {len(since)} entries ({since_tokens:,} tokens) "
                f"since > tail limit {limit:,}, adopted late: the context after it at most "
                f"{after:,} < {size:,}, where the next background compaction starts"
            )
        compactor.event("precompute_adopted", None, tokens, tokens, detail, plan=plan)
        record = adopted_record(candidate, since)
        entry_id = candidate.executed.entry_id if not since else None
        if since and job.wire is not None:
            # body_hash(record, parent), from the wire form computed in the background
            entry_id = content_hash({"parent": h.leaf_id, "body": job.wire})
        outcome = compactor.commit(
            plan,
            candidate.executed,
            tokens,
            record=record,
            entry_id=entry_id,
            work=candidate.work,
            note=" (precomputed)",
        )
        return outcome.context

    # ------------------------------------------------------------------ giving up

    def cancel(self, why: str, tokens: int = 0, *, wait: bool = False) -> bool:
        """Give up the computation held (``why`` names the cause in the
        ``"precompute_cancelled"`` event): a model summary in flight is aborted and its
        result dropped; with ``wait``, its thread is waited out (a compaction is about to
        run). Returns whether there was one."""
        job = self._job
        if job is not None:
            self._retire(job)
            self.compactor.event("precompute_cancelled", None, tokens, tokens, why, plan=job.plan)
        if wait:
            self._settle()
        return job is not None

    def close(self, why: str = "the session was closed") -> None:
        """Cancel the computation held and wait for every computation thread to end; no
        computation starts afterwards."""
        self._closed = True
        self.cancel(why)
        for job in (self._retired, self._job):
            if job is not None:
                job.thread.join()
        self._retired = None

    def _retire(self, job: _Job) -> None:
        """Stop wanting ``job``: abort what can be aborted; its thread is joined by
        :meth:`_settle`."""
        job.snapshot.cancel.set()
        job.go.set()
        self._job = None
        self._settle()  # at most one given-up thread is kept
        self._retired = job

    def _settle(self) -> None:
        """Wait for the given-up computation's thread to end."""
        if self._retired is not None:
            self._retired.thread.join()
            self._retired = None

    def _give_up(self, job: _Job, why: str, tokens: int) -> None:
        """Report ``job`` as failed when it failed, else as discarded for ``why``."""
        if job.done.is_set() and job.error is not None:
            self._failed(job, tokens)
        else:
            self._discard(job, why, tokens)

    def _discard(self, job: _Job, why: str, tokens: int) -> None:
        self._retire(job)
        self.compactor.event("precompute_discarded", None, tokens, tokens, why, plan=job.plan)

    def _failed(self, job: _Job, tokens: int) -> None:
        self._retire(job)
        error = job.error
        detail = "no candidate" if error is None else f"{type(error).__name__}: {error}"
        self.compactor.event("precompute_failed", None, tokens, tokens, detail, plan=job.plan)


__all__ = [
    "PRECOMPUTE_LOCK_SUFFIX",
    "Candidate",
    "CandidateFn",
    "HistoryVersion",
    "Precomputer",
    "Snapshot",
    "adopted_record",
    "local_candidate",
]
