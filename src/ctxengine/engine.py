"""``Session``: the one orchestrator. Append history, ``prepare()`` the context before each
model call (checking the trigger and running the ladder), ``record()`` replies, ``compact()``.

History is append-only: the ladder adds ``prune`` and ``compaction`` entries; the context is
always ``project()`` of the log. Per call the work is proportional to the current epoch (the
entries since the last compaction's first kept entry), never to the whole history.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from ctxengine.errors import (
    Cancelled,
    CompactionError,
    CompactionLoopError,
    ConfigError,
    ContextOverflow,
    NothingToCompact,
    ProviderError,
    SummaryRejected,
)
from ctxengine.ladder.prune import plan_prune
from ctxengine.ladder.recover import OverflowLatch, SummarizerBreaker, check_room
from ctxengine.ladder.summarize import plan_compaction
from ctxengine.model import CompactionRecord, Entry, Message, PinRecord, PruneRecord, Usage
from ctxengine.model.codec import body_hash
from ctxengine.model.entries import Body
from ctxengine.policy import DEFAULT_POLICY, Budget, Policy
from ctxengine.policy.defaults import DEFAULT_IMAGE_TOKENS
from ctxengine.projection import ProjectionSettings, continuation_message, project
from ctxengine.projection.context import Context
from ctxengine.projection.memo import ProjectionMemo
from ctxengine.projection.render.anthropic import render_anthropic
from ctxengine.projection.render.openai import render_openai
from ctxengine.providers import classify_error, to_provider_error
from ctxengine.providers.base import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    Completion,
    CompletionRequest,
    Provider,
)
from ctxengine.providers.overflow import is_length_stop_on_full_window, is_silent_overflow
from ctxengine.stores.base import SessionInfo, Store
from ctxengine.summarizers import is_goal_candidate, is_real_user_message
from ctxengine.summarizers.base import LiveRequest, Summarizer, Summary, SummaryRequest
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.summarizers.llm import ModelSummarizer
from ctxengine.tokens.base import Estimator
from ctxengine.tokens.cache import CachingEstimator
from ctxengine.tokens.estimate import HeuristicEstimator

Reason = Literal["threshold", "overflow", "manual"]


@dataclass(frozen=True, slots=True)
class LadderEvent:
    """One step the ladder took (or tried), for reports and replay timelines.

    Attributes:
        step: ``"prune"``, ``"compaction"`` or ``"failure"``.
        entry_id: the entry recorded (``None`` for a failure).
        tokens_before / tokens_after: context size in tokens around the step.
        detail: human-readable detail (the failure reason, the cut, …).
        at_entry: number of history entries when the step ran.
    """

    step: str
    entry_id: str | None
    tokens_before: int
    tokens_after: int
    detail: str
    at_entry: int


def _without_stand_ins(
    messages: Sequence[Message], sources: Sequence[str | None], pending: frozenset[str]
) -> tuple[tuple[Message, ...], tuple[str | None, ...]]:
    """``messages`` without the synthetic results the sanitizer gave to ``pending`` calls
    (an earlier piece of the newest reply needs a result in front of the next piece): the
    cut must see those calls unanswered, so that it keeps them in the tail."""
    shown = [
        k
        for k, (m, src) in enumerate(zip(messages, sources, strict=True))
        if not (src is None and m.tool_results and {r.call_id for r in m.tool_results} <= pending)
    ]
    return tuple(messages[k] for k in shown), tuple(sources[k] for k in shown)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Session:
    """A live session log with a compaction ladder.

    Args:
        window: the model's context window in tokens.
        policy: ladder configuration (:class:`~ctxengine.policy.Policy`).
        estimator: token estimator (default :class:`HeuristicEstimator`).
        summarizer: continuation-state writer (default extractive). A model summarizer
            (:class:`~ctxengine.summarizers.llm.ModelSummarizer`: ``llm``, ``hybrid``) runs
            behind a circuit breaker: after ``policy.max_consecutive_failures`` failures in a
            row the extractive summarizer is used until a manual :meth:`compact` or a
            successful model summary.
        store: persist every entry here (``None`` keeps the log in memory only).
        session_id: the session to open or create in ``store``.
        entries: an existing log to start from (e.g. an imported transcript).
        tools: tool schemas sent with every request (counted in the context size).

    Raises:
        ConfigError: the policy's reserve leaves no room in ``window``.
    """

    def __init__(
        self,
        window: int,
        *,
        policy: Policy = DEFAULT_POLICY,
        estimator: Estimator | None = None,
        summarizer: Summarizer | None = None,
        store: Store | None = None,
        session_id: str = "session",
        entries: Iterable[Entry] = (),
        tools: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        self.policy = policy
        self.budget: Budget = policy.resolve(window)
        self._cache = CachingEstimator(
            estimator or HeuristicEstimator(image_tokens=DEFAULT_IMAGE_TOKENS)
        )
        self.estimator: Estimator = self._cache
        self._memo = ProjectionMemo()
        #: tokens of the continuation-state message around its summary (prefix, tags)
        self._continuation_overhead = self.estimator.message(continuation_message(""))
        self.summarizer: Summarizer = summarizer or ExtractiveSummarizer(
            user_messages_budget=policy.user_messages_budget_tokens
        )
        self.store = store
        self.session_id = session_id
        self.tools: tuple[Mapping[str, Any], ...] = tuple(tools)
        self.events: list[LadderEvent] = []
        self.failures = 0
        self.breaker = SummarizerBreaker(policy.max_consecutive_failures)
        self._fallback = ExtractiveSummarizer(
            user_messages_budget=policy.user_messages_budget_tokens
        )
        self._overflow = OverflowLatch()
        self._live: tuple[tuple[str | None, int], int, LiveRequest] | None = None
        self._cancel: threading.Event | None = None
        self._outer_cancel: threading.Event | None = None
        self._entries: list[Entry] = []
        self._index: dict[str, int] = {}
        self._prunes: list[int] = []
        self._pruned: set[str] = set()
        self._compaction: int | None = None
        self._compactions = 0
        self._epoch_start = 0
        self._goal: str | None = None
        self._goal_id: str | None = None
        self._goal_tokens = 0
        self._requests: list[tuple[int, str]] = []  # (index, text) of real user requests
        self._pin_texts: list[str] = []
        self._pruned_ids: frozenset[str] = frozenset()
        self._head_end = 0
        self._last_ladder_at = -1
        self._last: Context | None = None
        self._last_key: tuple[str | None, int] | None = None
        for e in entries:
            self._adopt(e)
        if store is not None:
            store.create_session(SessionInfo(id=session_id, format="ctxengine"))
            for e in store.entries(session_id):
                if e.id not in self._index:
                    self._adopt(e)

    # ------------------------------------------------------------------ history

    @property
    def entries(self) -> tuple[Entry, ...]:
        """The whole history, in append order."""
        return tuple(self._entries)

    def append(
        self,
        body: Body,
        *,
        entry_id: str | None = None,
        created_at: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Entry:
        """Append a message (or record) to history and persist it.

        Args:
            body: a :class:`Message` (or a record).
            entry_id: id to use; default is the content hash chained to the parent.
            created_at: ISO-8601 time; default now (UTC).
            meta: extra fields kept with the entry.

        Returns:
            The new entry.
        """
        parent = self._entries[-1].id if self._entries else None
        eid = entry_id or body_hash(body, parent)
        if eid in self._index:
            n = 2
            while f"{eid}#{n}" in self._index:
                n += 1
            eid = f"{eid}#{n}"
        entry = Entry(
            id=eid,
            session_id=self.session_id,
            seq=len(self._entries),
            body=body,
            parent_id=parent,
            created_at=created_at or _now(),
            meta=dict(meta) if meta else {},
        )
        if self.store is not None:
            self.store.append(self.session_id, [entry])
        self._adopt(entry)
        return entry

    def record(self, reply: Message) -> Entry:
        """Record an assistant reply (with its provider usage, when known).

        Raises:
            ValueError: ``reply`` is not an assistant message.
        """
        if reply.role != "assistant":
            raise ValueError(f"record() takes an assistant message, got role {reply.role!r}")
        self._overflow.clear()
        return self.append(reply)

    def _adopt(self, entry: Entry) -> None:
        i = len(self._entries)
        self._entries.append(entry)
        self._index[entry.id] = i
        body = entry.body
        if isinstance(body, Message):
            if self._head_end == i and body.role in ("system", "developer"):
                self._head_end = i + 1
            if is_real_user_message(body):
                self._requests.append((i, body.text))
                if self._goal is None and is_goal_candidate(body):
                    self._goal, self._goal_id = body.text, entry.id
                    self._goal_tokens = self.estimator.text(body.text)
        elif isinstance(body, PruneRecord):
            self._prunes.append(i)
            self._pruned.update(body.call_ids)
            self._pruned_ids = frozenset(self._pruned)
        elif isinstance(body, PinRecord):
            self._pin_texts.append(body.text)
        elif isinstance(body, CompactionRecord):
            self._compaction = i
            self._compactions += 1
            first = body.first_kept_id
            self._epoch_start = self._index.get(first, i) if first is not None else i
            # A new epoch: work cached for the old one is not needed again.
            self._memo = ProjectionMemo()
            self._cache.clear()

    # ------------------------------------------------------------------ projection

    def _settings(self, truncate_tokens: int | None = None) -> ProjectionSettings:
        return ProjectionSettings(
            truncate_tokens=truncate_tokens or self.budget.truncate_tokens,
            truncate_max_chars=self.policy.truncate_max_chars,
            truncate_head_ratio=self.policy.truncate_head_ratio,
            goal_entry_id=self._goal_id,
            goal_tokens=self.budget.goal_max,
        )

    def _epoch_entries(self, extra: Sequence[Entry] = ()) -> list[Entry]:
        """Head + the epoch (+ ``extra`` records), in seq order. Prune records are not
        passed: the pruned call ids go to ``project()`` as a set kept up to date here."""
        start = max(self._epoch_start, self._head_end)
        picked = self._entries[: self._head_end]
        if self._compaction is not None and self._compaction < start:
            picked.append(self._entries[self._compaction])
        picked += self._entries[start:]
        picked += list(extra)
        return picked

    def project(self, extra: Sequence[Entry] = ()) -> Context:
        """The current context (no ladder run). ``extra`` records are projected as if
        appended (used to measure a tentative compaction)."""
        ctx = project(
            self._epoch_entries(extra),
            self._settings(),
            self.estimator,
            tools=self.tools,
            memo=self._memo,
            pruned=self._pruned_ids,
        )
        epoch = self._compactions + sum(isinstance(e.body, CompactionRecord) for e in extra)
        return ctx if ctx.epoch == epoch else replace(ctx, epoch=epoch)

    def context_tokens(self, ctx: Context) -> int:
        """Size of ``ctx`` in tokens: the usage anchor (latest usable assistant usage newer
        than the latest compaction and prune) plus the estimate of what follows it; the full
        estimate when there is no usable anchor."""
        floor = max([self._compaction or -1, *(self._prunes[-1:] or [-1])])
        anchor: tuple[int, Usage] | None = None
        for pos in range(len(ctx.messages) - 1, -1, -1):
            m = ctx.messages[pos]
            src = ctx.sources[pos]
            if m.role != "assistant" or src is None:
                continue
            idx = self._index.get(src, -1)
            if idx <= floor:
                break
            if m.usage is not None and not m.usage.is_zero and not m.aborted:
                anchor = (pos, m.usage)
                break
        if anchor is None:
            return ctx.tokens
        pos, usage = anchor
        tail = sum(self.estimator.message(m) for m in ctx.messages[pos + 1 :])
        return usage.context_tokens + tail

    # ------------------------------------------------------------------ ladder

    def prepare(self, *, tools: Sequence[Mapping[str, Any]] | None = None) -> Context:
        """The context for the next model call, after running the ladder when the context
        has reached the trigger (prune, then summarize).

        Within an epoch successive results only grow at the tail (asserted).

        Raises:
            CompactionLoopError: ``policy.max_consecutive_failures`` compactions in a row
                failed to bring the context under the trigger.
        """
        if tools is not None:
            self.tools = tuple(tools)
        ctx = self.project()
        tokens = self.context_tokens(ctx)
        if tokens >= self.budget.trigger and self._last_ladder_at < len(self._entries):
            try:
                ctx = self._run_ladder(ctx, tokens, "threshold")
            finally:
                # The ladder's own prune/compaction entries are not new history: the next
                # run waits for an entry appended after them.
                self._last_ladder_at = len(self._entries)
        self._check_tail_growth(ctx)
        return ctx

    def _check_tail_growth(self, ctx: Context) -> None:
        key = (ctx.compaction_id, len(self._prunes))
        last = self._last
        if last is not None and self._last_key == key:
            n = len(last.messages)
            ok = len(ctx.messages) >= n and all(
                a is b or a == b for a, b in zip(last.messages, ctx.messages[:n], strict=False)
            )
            assert ok, "projection changed before its tail within one epoch"
        if not self._pending_call_ids():
            # A context prepared while calls still await their results is provisional (a
            # result arriving later takes the place of its synthetic stand-in): it is not
            # the baseline of the next check.
            self._last, self._last_key = ctx, key

    def _pending_call_ids(self) -> frozenset[str]:
        """Calls of the newest reply (all its assistant messages) that no later message
        answers while only tool results follow it: running, or awaiting a human
        confirmation. O(size of the newest reply)."""
        answered: set[str] = set()
        calls: set[str] = set()
        i = len(self._entries) - 1
        while i >= 0:
            m = self._entries[i].message
            if m is not None and m.role == "assistant":
                break
            if m is not None and not m.tool_results:
                return frozenset()
            if m is not None:
                answered.update(r.call_id for r in m.tool_results)
            i -= 1
        while i >= 0:
            m = self._entries[i].message
            if m is not None and m.role != "assistant":
                break
            if m is not None:
                calls.update(c.id for c in m.tool_calls)
            i -= 1
        return frozenset(calls - answered)

    def _run_ladder(self, ctx: Context, tokens: int, reason: Reason) -> Context:
        before = tokens
        if self.policy.prune_enabled:
            plan = plan_prune(
                ctx.messages,
                self.estimator,
                protect_tokens=self.budget.prune_protect,
                minimum_tokens=self.budget.prune_minimum,
                protect_turns=self.policy.prune_protect_turns,
                exempt_tools=self.policy.prune_exempt_tools,
                already_pruned=self._pruned,
            )
            if plan is not None:
                entry = self.append(PruneRecord(plan.call_ids, plan.tokens_saved, self.policy.name))
                ctx = self.project()
                tokens = self.context_tokens(ctx)
                self.events.append(
                    LadderEvent(
                        "prune",
                        entry.id,
                        before,
                        tokens,
                        f"{len(plan.call_ids)} tool results",
                        len(self._entries),
                    )
                )
                if tokens < self.budget.trigger:
                    self.failures = 0
                    return ctx
        try:
            return self._compact(ctx, tokens, reason=reason, focus=None).context
        except (CompactionLoopError, Cancelled):
            raise
        except (CompactionError, ProviderError) as exc:
            self._fail(tokens, str(exc))
            return ctx
        except Exception as exc:
            # An unexpected summarizer error propagates, but still counts towards the
            # breaker: a caller that retries must not loop past it.
            try:
                self._fail(tokens, f"{type(exc).__name__}: {exc}")
            except CompactionLoopError as loop:
                raise loop from exc
            raise

    def _fail(self, tokens: int, detail: str) -> None:
        self.failures += 1
        self.events.append(LadderEvent("failure", None, tokens, tokens, detail, len(self._entries)))
        if self.failures >= self.policy.max_consecutive_failures:
            raise CompactionLoopError(self.failures, tokens, self.budget.trigger)

    def compact(self, focus: str | None = None, *, reason: Reason = "manual") -> CompactionOutcome:
        """Compact now (``/compact``), whatever the context size.

        Raises:
            NothingToCompact: no new entries since the last compaction, or no valid cut.
            SummaryRejected: the summarizer failed; history is unchanged.
        """
        ctx = self.project()
        return self._compact(ctx, self.context_tokens(ctx), reason=reason, focus=focus)

    def _compact(
        self, ctx: Context, tokens: int, *, reason: Reason, focus: str | None
    ) -> CompactionOutcome:
        if (
            self._compaction is not None
            and self._compaction == len(self._entries) - 1
            and ctx.tokens < self.budget.trigger
        ):
            # A second compaction without new entries is allowed only when the context no
            # longer fits (the window shrank since the last one).
            raise NothingToCompact("already compacted: no new entries since the last compaction")
        before = ctx.tokens
        n_head = 0
        while n_head < len(ctx.messages) and ctx.messages[n_head].role in ("system", "developer"):
            n_head += 1
        fixed = sum(self.estimator.message(m) for m in ctx.messages[:n_head])
        if self.tools:
            fixed += self.estimator.tools(self.tools)
        start = 0
        while start < len(ctx.messages) and ctx.messages[start].role in ("system", "developer"):
            start += 1
        if ctx.compaction_id is not None:
            start += 1  # the continuation-state message
        conversation = ctx.messages[start:]
        sources = ctx.sources[start:]
        pending = self._pending_call_ids()
        if pending:
            conversation, sources = _without_stand_ins(conversation, sources, pending)
        prev = self._entries[self._compaction].body if self._compaction is not None else None
        previous = prev if isinstance(prev, CompactionRecord) else None
        keep = self.budget.keep_recent
        cap: int | None = previous.truncate_tokens if previous else None
        best: tuple[Entry, Context, int] | None = None
        last_error = "no valid cut point leaves anything to summarize"
        rejected: SummaryRejected | None = None
        # a model summary of a cut already tried is reused, not bought again
        written: dict[tuple[str, bool], Summary] = {}
        for attempt in range(4):
            plan = plan_compaction(
                conversation,
                sources,
                self.estimator,
                keep_recent_tokens=keep,
                allow_split_turn=self.policy.split_turn,
            )
            if plan is not None:
                n_sum = len(plan.to_summarize)
                room = (
                    self.budget.trigger
                    - fixed
                    - plan.kept_tokens
                    - self._continuation_overhead
                    - self.budget.window // 100
                )
                request = SummaryRequest(
                    messages=self._originals(plan.to_summarize, sources[:n_sum]),
                    previous=previous,
                    goal=self._goal or "",
                    budget_tokens=self._summary_budget(room),
                    focus=focus,
                    turn_prefix=self._originals(
                        plan.turn_prefix, sources[n_sum : n_sum + len(plan.turn_prefix)]
                    ),
                    prior_user_messages=self._prior_user_messages(),
                    pinned=self._pins(),
                    live_request=self._live_request(ctx, start + n_sum + len(plan.turn_prefix)),
                )
                key = (plan.first_kept_id, plan.splits_turn)
                try:
                    summary = written.get(key) or self._summarize_within(
                        request, room, tokens, manual=reason == "manual"
                    )
                except SummaryRejected as exc:
                    if exc.reason != "over_budget":
                        raise
                    rejected = exc
                    last_error = str(exc)
                    keep //= 2
                    continue
                if isinstance(self.summarizer, ModelSummarizer):
                    written[key] = summary
                record = CompactionRecord(
                    summary=summary.text,
                    first_kept_id=plan.first_kept_id,
                    tokens_before=before,
                    tokens_after=0,
                    policy=self.policy.name,
                    summarizer=summary.summarizer,
                    reason=reason,
                    ledgers=summary.ledgers,
                    splits_turn=plan.splits_turn,
                    truncate_tokens=cap,
                )
                tentative = self._tentative(record)
                after_ctx = self._project_with(tentative, cap)
                after = after_ctx.tokens
                if best is None or after < best[2]:
                    best = (tentative, after_ctx, after)
                if after < self.budget.trigger and (after < before or reason == "overflow"):
                    break
                last_error = f"context still {after} tokens after compaction"
            keep //= 2
            if attempt >= 1:
                cap = max(64, (cap or self.budget.truncate_tokens) // 2)
        if best is None:
            if rejected is not None:
                raise rejected
            raise NothingToCompact(last_error)
        tentative, after_ctx, after = best
        if after >= before and reason != "overflow":
            raise SummaryRejected("inflated", tokens_before=before, tokens_after=after)
        body = tentative.body
        assert isinstance(body, CompactionRecord)
        entry = self.append(replace(body, tokens_after=after), entry_id=tentative.id)
        final = self.project()
        self.events.append(
            LadderEvent(
                "compaction",
                entry.id,
                before,
                final.tokens,
                f"first kept {body.first_kept_id}",
                len(self._entries),
            )
        )
        if final.tokens >= self.budget.trigger:
            self._fail(final.tokens, f"context still {final.tokens} tokens after compaction")
        else:
            self.failures = 0
        return CompactionOutcome(entry, final, before, final.tokens)

    # ------------------------------------------------------------------ summarizer

    def _summary_budget(self, room: int) -> int:
        """Tokens for the continuation state: the policy's summary budget, raised (within
        ``room``, the tokens left under the trigger beside the head and the kept tail) so
        that the first user request fits verbatim beside the ledgers, up to ``goal_max``."""
        base = self.budget.summary_max
        goal = min(self._goal_tokens, self.budget.goal_max)
        if goal + base // 2 <= base:
            return base
        return max(base, min(room, goal + base))

    def _summarize_within(
        self, request: SummaryRequest, room: int, tokens: int, *, manual: bool
    ) -> Summary:
        """:meth:`_summarize`; when the required content alone exceeds the summary budget
        (``over_budget``) but fits ``room`` (the tokens left under the trigger beside the
        head and the kept tail), summarize again with the budget it asked for."""
        try:
            return self._summarize(request, tokens, manual=manual)
        except SummaryRejected as exc:
            needed = exc.tokens_after
            if exc.reason != "over_budget" or needed is None or needed > room:
                raise
            return self._summarize(replace(request, budget_tokens=needed), tokens, manual=manual)

    def _summarize(self, request: SummaryRequest, tokens: int, *, manual: bool) -> Summary:
        """Run the summarizer. A model summarizer goes through the breaker: a manual
        compaction closes it, and once it is open the extractive summarizer is used."""
        model = self.summarizer
        if not isinstance(model, ModelSummarizer):
            return self.summarizer.summarize(request, self.estimator)
        if manual:
            self.breaker.reset()
        if self.breaker.open:
            return self._fallback.summarize(request, self.estimator)
        self._cancel = cancel = self._outer_cancel or threading.Event()
        try:
            summary = model.summarize(request, self.estimator, cancel=cancel)
        except Cancelled:
            raise
        except (SummaryRejected, ProviderError) as exc:
            if not self.breaker.failure(str(exc)):
                raise
            detail = (
                f"{model.name} summarizer failed {self.breaker.failures} times in a row (last: "
                f"{exc}); using the extractive summarizer until a manual compact or a "
                "successful model summary"
            )
            self.events.append(
                LadderEvent("fallback", None, tokens, tokens, detail, len(self._entries))
            )
            return self._fallback.summarize(request, self.estimator)
        finally:
            self._cancel = None
        self.breaker.success()
        return summary

    def abort(self) -> None:
        """Cancel the summary call in flight, from any thread: its stream is closed, the
        compaction raises :class:`~ctxengine.errors.Cancelled` and history is unchanged (no
        failure is counted). Does nothing when no summary call runs."""
        cancel = self._cancel
        if cancel is not None:
            cancel.set()

    def _live_request(self, ctx: Context, covered: int) -> LiveRequest | None:
        """The latest request sent through :meth:`complete`, when it was rendered from this
        epoch's context and holds the first ``covered`` messages of ``ctx``."""
        if self._live is None:
            return None
        key, sent, live = self._live
        if key != (ctx.compaction_id, len(self._prunes)) or sent < covered:
            return None
        return live

    # ------------------------------------------------------------------ model calls

    def complete(
        self,
        provider: Provider,
        *,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
        cancel: threading.Event | None = None,
    ) -> Completion:
        """One model call of the agent: :meth:`prepare` the context, send it through
        ``provider`` (rendered for its API), :meth:`record` the reply and return it.

        An overflow (an error matching the provider pattern table, 413, more input reported
        than the window holds, or a length stop with no output on a full window) compacts the
        session once (reason ``"overflow"``) and retries; the overflowing reply is not
        recorded.

        Args:
            provider: the agent's model.
            max_output_tokens: output budget of the call, in tokens; default
                ``min(4096, the policy's reserve)``.
            temperature: sampling temperature, or ``None`` for the provider default.
            cancel: setting it aborts the call, and a summary call of a compaction run by
                this call (``Cancelled``; history unchanged).

        Raises:
            ContextOverflow: a second overflow after the recovery, with the provider's
                numbers when it gave them (else our estimate and the window).
            ConfigError: the system prompt and tools plus ``max_output_tokens`` leave no room
                for history.
            ProviderError: any other provider failure, after its retries.
            CompactionLoopError: the ladder failed repeatedly.
        """
        self._overflow.clear()
        self._outer_cancel = cancel
        try:
            return self._complete(provider, max_output_tokens, temperature, cancel)
        finally:
            self._outer_cancel = None

    def _complete(
        self,
        provider: Provider,
        max_output_tokens: int | None,
        temperature: float | None,
        cancel: threading.Event | None,
    ) -> Completion:
        out = max_output_tokens or min(DEFAULT_MAX_OUTPUT_TOKENS, self.budget.reserve)
        while True:
            ctx = self.prepare()
            check_room(self.budget.window, self._fixed_tokens(ctx), out)
            request, live = self._request(ctx, provider, out, temperature)
            try:
                reply = provider.complete(request, cancel=cancel)
            except ContextOverflow as exc:
                overflow: ContextOverflow = exc
            else:
                found = self.overflow_of(reply)
                if found is None:
                    if live is not None:
                        key = (ctx.compaction_id, len(self._prunes))
                        self._live = (key, len(ctx.messages), live)
                    self.record(reply.to_message())
                    return reply
                overflow = found
            self.on_overflow(overflow, max_output_tokens=out)

    def overflow_of(self, outcome: Completion | Usage | BaseException) -> ContextOverflow | None:
        """The overflow a model call signals, else ``None``: a failed call classified as
        overflow, a reply (or its usage) reporting more input than the window (silent
        overflow), or a reply stopped by the output limit with no output on a full window."""
        if isinstance(outcome, Usage):
            outcome = Completion("", usage=outcome)
        if isinstance(outcome, BaseException):
            if isinstance(outcome, ContextOverflow):
                return outcome
            if classify_error(outcome).kind != "overflow":
                return None
            error = to_provider_error(outcome)
            return error if isinstance(error, ContextOverflow) else None
        window, usage = self.budget.window, outcome.usage
        if is_silent_overflow(usage, window):
            detail = "silent overflow: the reply reports more input than the window holds"
            return ContextOverflow(usage.prompt_tokens, window, detail)
        stop, out, prompt = outcome.finish_reason, usage.output_tokens, usage.prompt_tokens
        if is_length_stop_on_full_window(stop, out, prompt, window):
            detail = "the reply hit the output limit with no output on a full window"
            return ContextOverflow(prompt, window, detail)
        return None

    def on_overflow(
        self,
        signal: Completion | Usage | BaseException,
        *,
        max_output_tokens: int | None = None,
    ) -> CompactionOutcome:
        """React to an overflow of a model call made by the caller: compact now, with reason
        ``"overflow"`` and no benefit check, so the caller can retry once. A second overflow
        before the next :meth:`record` is final.

        Args:
            signal: the provider error, the reply, or its usage (see :meth:`overflow_of`).
            max_output_tokens: the call's output budget (default: the policy's reserve).

        Raises:
            ValueError: ``signal`` is not an overflow.
            ContextOverflow: a second overflow, or a compaction that could not run; carries
                the provider's numbers when it gave them, else our estimate and the window.
            ConfigError: the system prompt and tools plus the output budget (default: the
                policy's reserve) leave no room for history: compaction cannot fix that.
        """
        overflow = self.overflow_of(signal)
        if overflow is None:
            raise ValueError(f"not a context overflow: {signal!r}"[:300])
        ctx = self.project()
        tokens = self.context_tokens(ctx)
        reserve = max_output_tokens if max_output_tokens is not None else self.budget.reserve
        check_room(self.budget.window, self._fixed_tokens(ctx), reserve)
        if not self._overflow.try_recover():
            raise self._final_overflow(overflow, tokens, "still too large after one compaction")
        try:
            return self._compact(ctx, tokens, reason="overflow", focus=None)
        except Cancelled:
            raise
        except (NothingToCompact, SummaryRejected, ProviderError) as exc:
            raise self._final_overflow(overflow, tokens, f"compaction failed: {exc}") from exc

    def _final_overflow(self, overflow: ContextOverflow, tokens: int, why: str) -> ContextOverflow:
        used = overflow.tokens or tokens
        limit = overflow.limit or self.budget.window
        return ContextOverflow(used, limit, f"{why}; the provider said: {overflow}")

    def _fixed_tokens(self, ctx: Context) -> int:
        """Tokens every request carries whatever the history: head messages and tools."""
        fixed = self.estimator.tools(ctx.tools) if ctx.tools else 0
        for m in ctx.messages:
            if m.role not in ("system", "developer"):
                break
            fixed += self.estimator.message(m)
        return fixed

    @staticmethod
    def _request(
        ctx: Context, provider: Provider, max_output: int, temperature: float | None
    ) -> tuple[CompletionRequest, LiveRequest | None]:
        renderers = {"openai": render_openai, "anthropic": render_anthropic}
        render = renderers.get(provider.name)
        if render is None:  # Responses: the provider maps the messages itself
            request = CompletionRequest(
                messages=ctx.messages,
                tools=ctx.tools,
                max_output_tokens=max_output,
                temperature=temperature,
                cache=True,
            )
            return request, None
        body = render(ctx)
        request = CompletionRequest(
            body=body, max_output_tokens=max_output, temperature=temperature, cache=True
        )
        return request, LiveRequest(provider.name, body, ctx.tokens)

    def _tentative(self, record: CompactionRecord) -> Entry:
        parent = self._entries[-1].id if self._entries else None
        return Entry(
            id=body_hash(record, parent),
            session_id=self.session_id,
            seq=len(self._entries),
            body=record,
            parent_id=parent,
        )

    def _project_with(self, tentative: Entry, cap: int | None) -> Context:
        body = tentative.body
        assert isinstance(body, CompactionRecord)
        first = body.first_kept_id
        start = self._index[first] if first is not None else len(self._entries)
        picked = self._entries[: self._head_end]
        picked += self._entries[max(start, self._head_end) :]
        picked.append(tentative)
        return project(
            picked,
            self._settings(cap),
            self.estimator,
            tools=self.tools,
            memo=self._memo,
            pruned=self._pruned_ids,
        )

    def _prior_user_messages(self) -> tuple[str, ...]:
        """Real user requests before the current epoch (oldest first, verbatim)."""
        end = bisect_left(self._requests, (self._epoch_start, ""))
        return tuple(text for _i, text in self._requests[:end])

    def _pins(self) -> tuple[str, ...]:
        return tuple(self._pin_texts)

    def _originals(
        self, messages: Sequence[Message], sources: Sequence[str | None]
    ) -> tuple[Message, ...]:
        """The full history messages behind projected ones (untruncated, unpruned)."""
        out: list[Message] = []
        for m, src in zip(messages, sources, strict=True):
            idx = self._index.get(src) if src is not None else None
            body = self._entries[idx].body if idx is not None else None
            out.append(body if isinstance(body, Message) else m)
        return tuple(out)


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """Result of a compaction.

    Attributes:
        entry: the ``compaction`` entry appended.
        context: the context after it.
        tokens_before / tokens_after: context size in tokens.
    """

    entry: Entry
    context: Context
    tokens_before: int
    tokens_after: int


__all__ = ["CompactionOutcome", "ConfigError", "LadderEvent", "Session"]
