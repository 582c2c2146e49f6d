"""``Session``: the one orchestrator. Append history, ``prepare()`` the context before each
model call (checking the trigger and running the ladder), ``record()`` replies, ``plan()``
and ``compact()``; or let ``complete()`` make the whole model call, with one overflow
recovery.

A session is composed of parts, each with one responsibility:

* :class:`~.log.SessionLog`: the history, its store and the projection;
* the planner: pure functions of :mod:`ctxengine.ladder` (:func:`~ctxengine.ladder.trigger.
  requirement`, :func:`~ctxengine.ladder.prune.plan_prune`,
  :func:`~ctxengine.ladder.compaction.plan_compaction`) turning history facts into one
  :class:`~ctxengine.ladder.plan.CompactionPlan`;
* :class:`~.compactor.Compactor`: prune, plan, the hooks, execute, append, events;
* :class:`~.runner.Runner`: the executor (summarizer, breaker, the fallback rule,
  acceptance);
* :mod:`.calls`: rendering, sending and overflow detection of a model call.

Every public method takes the session's lock: one ``Session`` may be shared by the threads
of a process. Sessions of other threads or processes that share a store with this one are
caught up before each decision (:meth:`~.log.SessionLog.sync`), and a compaction runs under
the store's compaction lock after a last catch-up: the first compaction of a range wins, the
others find it and use it (single flight).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from ctxengine.errors import (
    Cancelled,
    CompactionVetoed,
    ConfigError,
    ContextFloorError,
    ContextOverflow,
    NothingToCompact,
    ProviderError,
    SessionNotFound,
    SummaryRejected,
)
from ctxengine.ladder.plan import (
    NATIVE_PROVIDERS,
    CompactionPlan,
    Reason,
    Requirement,
    choose_backend,
)
from ctxengine.ladder.recover import (
    FallbackMode,
    OverflowLatch,
    SummarizerBreaker,
    check_output_room,
    recovery_budget,
    recovery_target,
)
from ctxengine.ladder.timing import cache_ttl, reply_gap
from ctxengine.ladder.trigger import requirement
from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    PinRecord,
    SupersedeRecord,
    TextPart,
    UnpinRecord,
    Usage,
)
from ctxengine.model.carriage import NATIVE_LEAD
from ctxengine.model.checks import check_message
from ctxengine.model.entries import RECORD_TYPES, Body
from ctxengine.model.roles import is_real_user_message
from ctxengine.policy import DEFAULT_POLICY, Budget, Policy
from ctxengine.policy.defaults import (
    BRANCH_SUMMARY_TOKENS,
    DEFAULT_COMPACTION_LOCK_TIMEOUT_S,
    DEFAULT_MAX_OUTPUT_TOKENS,
    RECALL_BUDGET_TOKENS,
    RECALL_TOOL_NAME,
)
from ctxengine.projection.context import Context
from ctxengine.projection.skills import SYNTHETIC_SKILL, SYNTHETIC_SKILL_NOTICE, skill_loads
from ctxengine.projection.tools import tool_name
from ctxengine.summarizers.extractive import ExtractiveSummarizer
from ctxengine.tokens.base import Estimator
from ctxengine.tokens.correction import UsageCorrection

from .compactor import Compactor
from .events import (
    AfterCompact,
    BeforeCompact,
    CompactionOutcome,
    LadderEvent,
)
from .history import History
from .log import SessionLog
from .native import NativeTarget, holds_native, native_settings, store_native_reply
from .pins import check_budget, pin_label
from .precompute import CandidateFn, Precomputer, local_candidate
from .runner import Runner
from .view import TailGuard, epoch_key, fixed_tokens

if TYPE_CHECKING:
    from ctxengine.assembly.head import CacheBreak, ContextAssembler, Head
    from ctxengine.assembly.skills import Skill
    from ctxengine.providers.base import Completion, Provider
    from ctxengine.providers.profiles import ModelProfile
    from ctxengine.recall import HistoryIndex, RecallQuery, RecallResult
    from ctxengine.stores.base import SessionLink, Store
    from ctxengine.summarizers.base import Summarizer

    from . import handoff
    from .branches import Checkout
    from .children import Pointers
    from .handoff import HandedOff


@dataclass(frozen=True, slots=True)
class LadderState:
    """What a session keeps beside its log that decides what its next :meth:`Session.prepare`
    does. A session opened over the same entries with this state restored
    (:meth:`Session.restore_ladder_state`) prepares the same contexts as the one it was read
    from (:meth:`Session.ladder_state`), but for a background compaction the latter held
    (``Policy.precompute_ratio``): the restored one compacts at the trigger in the
    foreground.

    Attributes:
        last_ladder_at: entries in the log when the ladder last ran (-1: never): an
            automatic compaction waits for an entry appended after it.
        failures: compactions in a row that left the context over the trigger.
        breaker_failures / breaker_open: the model summarizer's circuit breaker.
    """

    last_ladder_at: int = -1
    failures: int = 0
    breaker_failures: int = 0
    breaker_open: bool = False


class Session:
    """A live session log with a compaction ladder.

    Args:
        window: the model's context window in tokens.
        policy: ladder configuration (:class:`~ctxengine.policy.Policy`).
        estimator: token estimator (default :class:`HeuristicEstimator`, calibrated for the
            ``profile``'s tokenizer when it names one, :attr:`profile`).
        summarizer: continuation-state writer; default the one ``policy.summarizer`` names
            (``"extractive"``; ``"llm"`` and ``"hybrid"`` need ``summary_provider`` and
            ``summary_profile``). A model summarizer
            (:class:`~ctxengine.summarizers.llm.ModelSummarizer`) runs behind a circuit
            breaker: after ``policy.max_consecutive_failures`` failures in a row the
            extractive summarizer is used until a manual :meth:`compact` or a successful
            model summary.
        summary_provider / summary_profile: the summary model, for a policy that names a
            model summarizer.
        fallback: when a failed model summary gives way to the extractive one
            (:data:`~ctxengine.ladder.recover.FallbackMode`; default ``"breaker"``).
        store: persist every entry here: a store object, or where one lives (a SQLite file
            path, ``sqlite:///path``, ``postgresql://user@host/database``: opened with
            :func:`~ctxengine.stores.location.open_store`; the session does not close it);
            ``None`` keeps the log in memory only.
        session_id: the session to open or create in ``store``.
        entries: an existing log to start from (e.g. an imported transcript).
        tools: tool schemas sent with every request (counted in the context size). A
            stored session handed off from another (:meth:`handoff`; its link in ``store``
            says so) gets the recall tool (:data:`~ctxengine.recall.RECALL_TOOL`) added when
            its tools (the head's, with a ``head``) lack it, as :meth:`handoff` gave it: its
            continuation state says the whole history can be searched with it.
        before_compact: sees every plan before it runs; may veto it, change its focus or
            supply the summary (:class:`~.events.PlanDecision`).
        after_compact: sees every stored compaction (:class:`~.events.CompactionOutcome`).
        head: assembles the stable head put first in every context (a system message
            from named sections, and the tool list:
            :class:`~ctxengine.assembly.ContextAssembler`); its tokens count in the context
            size like a system prompt's. Its volatile sections are read once per epoch; a
            change of its tools or rules within an epoch is recorded as a ``"cache_break"``
            event naming the cause; the compact instructions of its rules files go to the
            summarizer. ``None`` (the default): no head besides the log's own system
            messages.
        prime_ledgers: analyse each message for the ledgers in the :meth:`prepare` that
            first sees it (:class:`~ctxengine.summarizers.prime.LedgerPrimer`) rather than
            in the compaction that summarizes it. The analyses are the same (the ledgers do
            not change); their cost moves from the compacting call to every call
            (``benchmarks/peers_measure.py --prime-ledgers`` shows both).
        profile: the agent model's profile (:class:`~ctxengine.providers.profiles.
            ModelProfile`), when known: its provider's prompt-cache lifetime is the one
            cache-aware timing uses when the policy gives none (:attr:`cache_ttl`), and its
            ``tokenizer`` the one the default estimator is calibrated for (OpenAI models:
            ``o200k_base`` or ``cl100k_base``; others and no profile: the estimator fitted
            to the larger of both); each :meth:`complete` replaces it with the profile of
            the model it calls.
        candidate: computes a background compaction (the policy's ``precompute_ratio``):
            ``(plan, snapshot) -> Candidate`` on a thread of its own
            (:data:`~.precompute.CandidateFn`); default
            :func:`~.precompute.local_candidate`, the session's own summarizer over a
            private copy of the log. Call :meth:`close` (or use the session as a context
            manager) to stop and join it.
        cwd: the session's working directory (absolute), when known: an imported
            transcript's recorded one (``ImportedSession.meta["cwd"]``), the agent's own.
            Every summary request carries it: paths are normalised against it and a file
            inside it is never listed as scratch for lying under ``/tmp``. ``""`` (the
            default): the summarizer reads it from the messages, or infers the project root
            from the paths they touch.

    Attributes:
        events: every ladder step taken or tried, in order (and the head's cache breaks).
        failures: compactions in a row that left the context over the trigger.

    Raises:
        ConfigError: the policy's reserve leaves no room in ``window``; a model summarizer
            named by the policy without a summary model; ``tools`` given as well as a
            ``head`` with tools of its own.
    """

    def __init__(
        self,
        window: int,
        *,
        policy: Policy = DEFAULT_POLICY,
        estimator: Estimator | None = None,
        summarizer: Summarizer | None = None,
        summary_provider: Provider | None = None,
        summary_profile: ModelProfile | None = None,
        fallback: FallbackMode = "breaker",
        store: Store | str | None = None,
        session_id: str = "session",
        entries: Iterable[Entry] = (),
        tools: Sequence[Mapping[str, Any]] = (),
        before_compact: BeforeCompact | None = None,
        after_compact: AfterCompact | None = None,
        head: ContextAssembler | None = None,
        prime_ledgers: bool = False,
        cwd: str = "",
        profile: ModelProfile | None = None,
        candidate: CandidateFn | None = None,
    ) -> None:
        if head is not None and tools and head.tools:
            raise ConfigError(
                "tool definitions were given to both the Session and its ContextAssembler; "
                "give them to one"
            )
        if isinstance(store, str):
            from ctxengine.stores.location import open_store

            store = open_store(store)
        self._lock = threading.RLock()
        self._window = window
        self._learned_limit: int | None = None
        self.log = SessionLog(
            window,
            policy=policy,
            estimator=estimator,
            store=store,
            session_id=session_id,
            tools=tools if head is None or tools else head.tools,
            head=head,
            tokenizer=profile.tokenizer if profile is not None else None,
        )
        extractive = ExtractiveSummarizer(user_messages_budget=policy.user_messages_budget_tokens)
        chosen = summarizer or _policy_summarizer(
            policy, extractive, summary_provider, summary_profile
        )
        self.runner = Runner(
            chosen,
            extractive,
            SummarizerBreaker(policy.breaker_threshold),
            fallback,
            latched=_drop_summarizer() if policy.fallback_summarizer == "none" else None,
        )
        self.runner.cwd = cwd
        self.compactor = Compactor(self.log, self.runner, before_compact, after_compact)
        self._profile = profile
        self.compactor.cache_ttl = self.cache_ttl
        self._precompute = Precomputer(
            self.log, self.compactor, self.runner, candidate or local_candidate
        )
        self.prime_ledgers = prime_ledgers
        self.log.on_cache_break = self._cache_break
        self._overflow = OverflowLatch(limit=policy.overflow_retries)
        #: Models that refused mid-conversation system messages in this session.
        self._system_refused: set[str] = set()
        #: The floor error of the latest ladder run, if it failed so.
        self._floor_error: ContextFloorError | None = None
        #: The recall index and the number of withdrawn entries it was built with.
        self._recall: tuple[HistoryIndex | None, int] = (None, 0)
        self._tail = TailGuard()
        self._last_ladder_at = -1
        #: The current call's trigger was deferred (:meth:`.precompute.Precomputer.defer`).
        self._deferred = False
        self.log.open(entries)
        #: The link to the session this one was started from, if any (read from the store).
        self._link: SessionLink | None = (
            store.session_link(session_id) if store is not None else None
        )
        link = self._link
        if link is not None and link.relation == "handoff" and not self.log.has_recall_tool:
            from ctxengine.recall import RECALL_TOOL

            self.log.tools = (*self.log.tools, RECALL_TOOL)
        #: The live parent that started or resumed this child (its result goes there).
        self._parent: Session | None = None
        #: The parent's call that started this child's first run, if any.
        self._call_id: str | None = None
        #: Children of an in-memory session (a stored session's are in its store).
        self._children: dict[str, tuple[SessionLink, Session]] = {}
        #: A hand-off's older sessions for recall (entries, positions skipped), once read.
        self._handoff_base: handoff.RecallBase | None = None

    # ------------------------------------------------------------------ the parts' state

    @property
    def events(self) -> list[LadderEvent]:
        """Every ladder step taken or tried, in order."""
        return self.compactor.events

    def _cache_break(self, found: CacheBreak) -> None:
        """Record a cache break of the head as a ``"cache_break"`` event: tokens are the
        head's before and after, the detail its cause."""
        self.compactor.event(
            "cache_break", None, found.tokens_before, found.tokens_after, found.cause
        )

    @property
    def head(self) -> ContextAssembler | None:
        """The assembler of the stable head, if any."""
        return self.log.head

    @property
    def last_head(self) -> Head | None:
        """The head of the latest context projected (sections, tokens, rules loaded), or
        ``None`` without an assembler or before the first projection."""
        return self.log.last_head

    @property
    def failures(self) -> int:
        """Compactions in a row that left the context over the trigger."""
        return self.compactor.failures

    @property
    def before_compact(self) -> BeforeCompact | None:
        """The hook that sees every plan before it runs."""
        return self.compactor.before_compact

    @before_compact.setter
    def before_compact(self, hook: BeforeCompact | None) -> None:
        self.compactor.before_compact = hook

    @property
    def after_compact(self) -> AfterCompact | None:
        """The hook that sees every stored compaction."""
        return self.compactor.after_compact

    @after_compact.setter
    def after_compact(self, hook: AfterCompact | None) -> None:
        self.compactor.after_compact = hook

    @property
    def policy(self) -> Policy:
        """The ladder configuration."""
        return self.log.policy

    @property
    def budget(self) -> Budget:
        """The policy resolved for the current window (or the limit a provider reported)."""
        return self.log.budget

    @property
    def estimator(self) -> Estimator:
        """The session's (cached) token estimator."""
        return self.log.estimator

    @property
    def store(self) -> Store | None:
        """Where entries are persisted, if anywhere."""
        return self.log.store

    @property
    def session_id(self) -> str:
        """The session's id in its store."""
        return self.log.session_id

    @property
    def tools(self) -> tuple[Mapping[str, Any], ...]:
        """Tool schemas sent with every request."""
        return self.log.tools

    @property
    def entries(self) -> tuple[Entry, ...]:
        """The whole history, in append order."""
        return self.log.entries

    @property
    def summarizer(self) -> Summarizer:
        """The continuation-state writer (may be replaced between calls)."""
        return self.runner.summarizer

    @summarizer.setter
    def summarizer(self, value: Summarizer) -> None:
        self.runner.summarizer = value

    @property
    def breaker(self) -> SummarizerBreaker:
        """Consecutive failures of a model summarizer."""
        return self.runner.breaker

    @property
    def window(self) -> int:
        """The model's context window in tokens, as set (a limit learned from a provider's
        overflow error may be lower: see :attr:`learned_limit`)."""
        return self._window

    @property
    def learned_limit(self) -> int | None:
        """The context limit a provider reported in an overflow error, when below the window:
        in force for the rest of the session (until :meth:`set_window`)."""
        return self._learned_limit

    def set_window(self, window: int) -> None:
        """Use a ``window``-token model from now on. A limit learned from a provider's
        overflow error stays in force while ``window`` is not larger than the window it was
        learned under (the budget is then resolved for the smaller of the two); a larger
        window forgets it. The next context is a new baseline (its earlier messages may be
        truncated differently).

        Raises:
            ConfigError: the policy's reserve leaves no room in ``window``.
        """
        with self._lock:
            learned = self._learned_limit
            if learned is not None and window > self._window:
                learned = None
            effective = min(window, learned) if learned is not None else window
            self.log.resize(effective)
            self._window = window
            self._learned_limit = learned if learned is not None and learned < window else None
            self._tail = TailGuard()

    @property
    def cache_ttl(self) -> float:
        """The provider's prompt-cache lifetime cache-aware timing uses, in seconds: the
        policy's ``cache_ttl_seconds``, else the lifetime of the model profile's provider
        (its extended one with ``cache_ttl_extended``: :func:`~ctxengine.ladder.timing.
        cache_ttl`), else :data:`~ctxengine.policy.defaults.DEFAULT_CACHE_TTL_SECONDS`."""
        if self.policy.cache_ttl_seconds is not None:
            return self.policy.cache_ttl_seconds
        provider = self._profile.provider if self._profile is not None else None
        return cache_ttl(provider, extended=self.policy.cache_ttl_extended)

    @property
    def profile(self) -> ModelProfile | None:
        """The agent model's profile, when known (see the ``profile`` argument). Setting
        it calibrates the default estimator for its tokenizer (``None``: the estimator
        fitted to the larger of both encodings) and, when that changes the estimator,
        resets the usage correction (:meth:`SessionLog.use_tokenizer
        <ctxengine.engine.log.SessionLog.use_tokenizer>`); a given estimator is kept."""
        return self._profile

    @profile.setter
    def profile(self, value: ModelProfile | None) -> None:
        with self._lock:
            self._profile = value
            self.compactor.cache_ttl = self.cache_ttl
            self.log.use_tokenizer(value.tokenizer if value is not None else None)

    @property
    def idle_seconds(self) -> float | None:
        """Seconds from the latest assistant reply to the newest message, by the entries'
        times (:func:`~ctxengine.ladder.timing.reply_gap`): how long the provider's prompt
        cache has gone unused when the next request is sent; ``None`` before a reply is
        followed by a message, or without times."""
        with self._lock:
            return reply_gap(self.log.history.entries)

    @property
    def precomputing(self) -> bool:
        """A background compaction of this session is being computed (its thread is
        alive)."""
        return self._precompute.running

    def wait_precompute(self, timeout: float | None = None) -> bool:
        """Wait (at most ``timeout`` seconds; ``None``: as long as it takes) for the
        background compaction being computed to finish, without holding the session: other
        threads go on meanwhile. Returns ``True`` when none is running any more. An agent
        need not call it: the call that reaches the trigger waits for it anyway."""
        with self._lock:
            threads = self._precompute.threads
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in threads)

    def cancel_precompute(self) -> bool:
        """Give up the background compaction held, from the caller's thread: a model
        summary in flight is aborted, the result dropped (a ``"precompute_cancelled"``
        event); history is unchanged. Returns whether there was one. Its thread may still
        be ending: :meth:`close` waits for it."""
        with self._lock:
            return self._precompute.cancel("cancelled by the caller")

    def close(self) -> None:
        """Cancel the background compaction held (if any) and wait for its thread to end;
        no background compaction starts afterwards. The log and its store stay usable (the
        store is the caller's to close)."""
        with self._lock:
            self._precompute.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def default_output_tokens(self) -> int:
        """Output budget of a model call that names none: ``min(4096, reserve)`` tokens."""
        return min(DEFAULT_MAX_OUTPUT_TOKENS, self.budget.reserve)

    def ladder_state(self) -> LadderState:
        """The state beside the log that the next :meth:`prepare` depends on."""
        with self._lock:
            breaker = self.runner.breaker
            return LadderState(
                self._last_ladder_at, self.compactor.failures, breaker.failures, breaker.open
            )

    def restore_ladder_state(self, state: LadderState) -> None:
        """Carry on from ``state`` (read by :meth:`ladder_state` from a session over the same
        entries as this one): the next :meth:`prepare` decides as that session's would."""
        with self._lock:
            self._last_ladder_at = state.last_ladder_at
            self.compactor.failures = state.failures
            self.runner.breaker.failures = state.breaker_failures
            self.runner.breaker.open = state.breaker_open

    # ------------------------------------------------------------------ history

    def append(
        self,
        body: Body,
        *,
        entry_id: str | None = None,
        created_at: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Entry:
        """Append a message (or record) to history and persist it; see
        :meth:`SessionLog.append <ctxengine.engine.log.SessionLog.append>` for the arguments,
        and for what happens when another writer of the stored session appended first.

        A message of tool results that touch files matching a path-scoped rules file of the
        head (``ContextAssembler(scoped_rules="attach")``, the default) is followed by that
        file, appended as an injected user-role message, once per session.

        Raises:
            TypeError / ValueError: a message whose fields have the wrong types, e.g. a tool
                call's ``arguments`` not JSON text or a usage count not an int
                (:func:`~ctxengine.model.checks.check_message`, which names the field), or a
                body that is neither a message nor a record (a dict); nothing is appended.
        """
        if isinstance(body, Message):
            check_message(body)
        elif not isinstance(body, RECORD_TYPES):
            raise TypeError(
                f"Session.append: expected a Message or a record, got {type(body).__name__} "
                "(build messages with ctxengine.model.user, assistant, tool_result)"
            )
        with self._lock:
            entry = self.log.append(body, entry_id=entry_id, created_at=created_at, meta=meta)
            self.log.attach_scoped_rules(entry)
            return entry

    def record(self, reply: Message) -> Entry:
        """Record an assistant reply (with its provider usage, when known).

        A reply that opens with the provider's native compaction item (the provider
        compacted at its threshold while answering: Anthropic's ``compaction`` block,
        OpenAI's ``compaction`` item) is stored as a native compaction of every message
        before it (:func:`~.native.store_native_reply`): a compaction record whose
        continuation state, written locally, stands in for the item with other providers,
        then the reply exactly as returned. The next automatic compaction waits for new
        entries.

        Returns:
            The reply's entry.

        Raises:
            ValueError: ``reply`` is not an assistant message.
            TypeError: a field of ``reply`` has the wrong type
                (:func:`~ctxengine.model.checks.check_message`; nothing is appended).
            SummaryRejected: the stand-in of a native compaction could not be written
                (nothing is appended).
        """
        check_message(reply, "reply")
        if reply.role != "assistant":
            raise ValueError(f"record() takes an assistant message, got role {reply.role!r}")
        with self._lock:
            self._overflow.clear()
            if holds_native(reply) and NATIVE_LEAD not in reply.meta:
                with self._single_flight():
                    self.log.sync()
                    outcome = store_native_reply(self.compactor, reply)
                if outcome is not None:
                    self._last_ladder_at = len(self.log.history)
                    return self.log.history.entries[-1]
            return self.log.append(reply)

    def revert(self, compaction_id: str | None = None) -> Entry:
        """Undo a compaction: append a record (:class:`~ctxengine.model.SupersedeRecord`,
        reason ``"revert of compaction ID"``) that withdraws it and every compaction and
        prune recorded after it, so the context is projected as it was before it, with
        every entry appended since. History stays append-only (the compaction is still
        stored; :meth:`recall` no longer searches its state); the next trigger check
        decides again whether to compact.

        Args:
            compaction_id: the entry id of the compaction record; default the latest
                compaction still in force.

        Returns:
            The revert record's entry.

        Raises:
            ValueError: no such entry, an entry that is not a compaction, one withdrawn
                already, or no compaction to revert.
        """
        with self._lock:
            h = self.log.history
            if compaction_id is None:
                if h.compaction is None:
                    raise ValueError("revert: the session has no compaction in force")
                start = h.compaction
            else:
                found = h.index.get(compaction_id)
                if found is None:
                    raise ValueError(f"revert: no entry {compaction_id!r} in this session")
                if h.entries[found].kind != "compaction":
                    kind = h.entries[found].kind
                    raise ValueError(
                        f"revert: entry {compaction_id!r} is a {kind}, not a compaction"
                    )
                if found in h.hidden:
                    raise ValueError(f"revert: compaction {compaction_id!r} is withdrawn already")
                start = found
            withdrawn = tuple(
                e.id
                for i, e in enumerate(h.entries[start:], start)
                if i not in h.hidden and e.kind in ("compaction", "prune")
            )
            record = SupersedeRecord(withdrawn, f"revert of compaction {h.entries[start].id}")
            entry = self.log.append(record)
            self.compactor.thrashing = None
            return entry

    def recall(
        self,
        query: str | RecallQuery,
        *,
        budget: int = RECALL_BUDGET_TOKENS,
        newest_first: bool = True,
    ) -> RecallResult:
        """Search the whole history, compacted entries included, for exact excerpts
        (:class:`~ctxengine.recall.HistoryIndex`, kept up to date incrementally).

        A session handed off from another searches that session's history up to the
        hand-off too, and so on up the hand-off chain (:mod:`ctxengine.recall.chain`): the
        newest session's hits first (with ``newest_first``), each a
        :class:`~ctxengine.recall.chain.SessionHit` naming its session; entry numbers
        (a hit's ``seq``, a query's ``first_seq``/``last_seq``) are those of each session.

        Args:
            query: a text to find (case-insensitive), or a :class:`~ctxengine.recall.
                RecallQuery` (regular expression, file path, tool name, entry range, role).
            budget: tokens the excerpts may take in all.
            newest_first: order of the hits.

        Returns:
            The :class:`~ctxengine.recall.RecallResult`: the hits shown, and how many
            matched in all.

        Raises:
            ConfigError: an empty query, an invalid regular expression.
        """
        from ctxengine.recall import RecallQuery

        if isinstance(query, str):
            query = RecallQuery(text=query)
        with self._lock:
            index = self._recall_index()
        return index.search(query, budget=budget, newest_first=newest_first)

    def run_recall_tool(self, arguments: str | Mapping[str, Any]) -> tuple[str, bool]:
        """Answer a call of the ``recall`` tool (:data:`~ctxengine.recall.RECALL_TOOL`,
        added to the agent's tools by the caller): ``(result text, is_error)``; invalid
        arguments give an error naming the field, for the agent to correct its call."""
        from ctxengine.recall import run_recall_tool

        with self._lock:
            index = self._recall_index()
        return run_recall_tool(index, arguments)

    def _recall_index(self) -> HistoryIndex:
        """The recall index over the log as it stands (rebuilt when entries were withdrawn
        since it was built). The branches left by a :meth:`checkout` are searched: their
        work is history, not a superseded copy. A session handed off from another searches
        its hand-off chain (:meth:`_recall_base`) first, through a
        :class:`~ctxengine.recall.chain.ChainIndex` whose hits name their session."""
        from ctxengine.recall import HistoryIndex
        from ctxengine.recall.chain import ChainIndex

        from . import children

        h = self.log.history
        index, hidden = self._recall
        base, base_hidden = self._recall_base()
        if index is None or hidden != len(h.hidden):
            index = ChainIndex(self.estimator) if base else HistoryIndex(self.estimator)
        excluded = h.hidden - h.left if h.left else h.hidden
        if not base:
            index.update(h.entries, excluded)
        else:
            # The older sessions first, then this one's own entries (its copies of its
            # hand-off parent's entries are found there already).
            n = len(base)
            source = self._link.parent_id if self._link is not None else None
            skip = {n + i for i in excluded} | base_hidden
            skip.update(
                n + i for i, e in enumerate(h.entries) if e.meta.get(children.COPIED_FROM) == source
            )
            index.update([*base, *h.entries], skip)
        self._recall = (index, len(h.hidden))
        return index

    def activate_skill(self, name: str) -> Entry:
        """Activate a skill of the head's catalog by a user message: append its body (and
        the paths of its reference and script files) as a synthetic user message
        (``meta["synthetic"] == "skill"``, ``meta["skill"]`` its name). When the same body
        is still whole in the context (activated before and not compacted away, or
        re-injected whole after a compaction) the message is one line saying so instead
        (``meta["synthetic"] == "skill_notice"``), not a second copy. The agent's own way
        to activate one is the ``skill`` tool (:meth:`run_skill_tool`).

        Returns:
            The appended entry.

        Raises:
            ConfigError: no head with skills, or no skill called ``name`` (the names
                available are listed).
        """
        from ctxengine.assembly.skill_tool import answer_skill

        with self._lock:
            self.log.sync()
            skill = self._skill(name)
            text = answer_skill(skill, self.loaded_skills())
            synthetic = SYNTHETIC_SKILL if text == skill.activation() else SYNTHETIC_SKILL_NOTICE
            meta = {"synthetic": synthetic, "skill": skill.name}
            return self.log.append(Message("user", (TextPart(text),), meta=meta))

    def run_skill_tool(self, arguments: str | Mapping[str, Any]) -> tuple[str, bool]:
        """Answer a call of the ``skill`` tool (:data:`~ctxengine.assembly.SKILL_TOOL`,
        added to the agent's tools by the caller) from the head's catalog:
        ``(result text, is_error)``. The text is the skill's body and files, or one line
        when the same body is still whole in the context; an unknown name or invalid
        arguments give an error naming them, for the agent to correct its call."""
        from ctxengine.assembly.skill_tool import run_skill_tool

        with self._lock:
            self.log.sync()
            head = self.log.head
            skills = head.skill_values if head is not None else ()
            loaded = self.loaded_skills()
        return run_skill_tool(skills, arguments, loaded)

    def loaded_skills(self) -> dict[str, str]:
        """The skill bodies whole in the current context, name → body (the newest of
        each name): activated and not compacted away nor pruned, or re-injected whole
        after a compaction (:func:`~ctxengine.projection.skills.skill_loads`)."""
        with self._lock:
            ctx = self.log.project()
            return {load.name: load.body for load in skill_loads(ctx.messages) if load.whole}

    def _skill(self, name: str) -> Skill:
        """The head's skill called ``name``.

        Raises:
            ConfigError: no head with skills, or no such skill.
        """
        head = self.log.head
        skills = head.skill_values if head is not None else ()
        if not skills:
            raise ConfigError(
                "no skills to activate: give the Session a ContextAssembler(skills=...) with "
                "Skill values (ctxengine.workspace.discover_skills finds them)"
            )
        found = head.skill(name.strip().lstrip("/")) if head is not None else None
        if found is None:
            known = ", ".join(s.name for s in skills)
            raise ConfigError(f"no skill named {name!r}; the skills available are: {known}")
        return found

    def _recall_base(self) -> handoff.RecallBase:
        """For a session handed off from another: the entries of every session of its
        hand-off chain (its hand-off parent, that one's hand-off parent …), each up to the
        entry it was handed off at, oldest session first, and the positions among them
        recall skips (:func:`~ctxengine.engine.handoff.recall_segment`); read once, from
        the sessions in memory or from the store. Else nothing."""
        from . import handoff

        if self._handoff_base is not None:
            return self._handoff_base
        found: handoff.RecallBase = ((), set())
        link = self._link
        if link is not None and link.relation == "handoff" and self.store is not None:
            segments: list[handoff.RecallBase] = []  # the newest session first
            seen = {self.session_id}
            while link is not None and link.relation == "handoff" and link.parent_id not in seen:
                seen.add(link.parent_id)
                old = History(self.estimator)
                for e in self.store.entries(link.parent_id):
                    old.adopt(e)
                    if e.id == link.parent_entry_id:
                        break
                up = self.store.session_link(link.parent_id)
                source = up.parent_id if up is not None and up.relation == "handoff" else None
                segments.append(handoff.recall_segment(old, source))
                link = up
            found = handoff.joined(reversed(segments))
        self._handoff_base = found
        return found

    def pin(self, item: str, reason: str | None = None) -> Entry:
        """Pin an entry of the history (by id) or a text: from now on every projection
        shows it verbatim, as a standing instruction (:mod:`ctxengine.projection.pins`):
        where the pin record stands while that is in the context, then after the
        continuation state of every compaction. A pinned entry adds nothing while it is
        itself in the context. Recorded as a :class:`~ctxengine.model.PinRecord` entry (a
        stored session keeps its pins).

        Args:
            item: an entry id of the history (its message's text is pinned, as it is now),
                else the text to pin. A string that is an entry id is taken as the id.
            reason: why, in words; shown with the item.

        Returns:
            The pin record's entry.

        Raises:
            ValueError: an empty text, or an entry that is not a message with text.
            PinBudgetExceeded: with this one the pinned texts exceed their budget
                (``Budget.pins_max`` tokens); nothing is pinned.
        """
        with self._lock:
            self.log.sync()
            h = self.log.history
            if item in h:
                found = h.entries[h.index[item]].message
                text = _pinnable_text(found) if found is not None else ""
                if not text.strip():
                    raise ValueError(f"entry {item!r} holds no message text to pin")
                record = PinRecord(text, item, reason)
            else:
                if not item.strip():
                    raise ValueError("nothing to pin: the text is empty")
                record = PinRecord(item, None, reason)
            check_budget((*h.pins(), record), self.budget.pins_max, self.estimator)
            return self.log.append(record)

    def unpin(self, item: str, reason: str | None = None) -> Entry:
        """Withdraw pins: from now on no projection shows them. Recorded as an
        :class:`~ctxengine.model.UnpinRecord` entry naming the pin records it withdraws
        (history stays append-only; a stored session keeps it). The context changes before
        its tail, as a prune changes it: the next request writes the prompt cache again from
        where the pinned items stood, and provider usage reported before the unpin no longer
        sizes the context.

        Args:
            item: the entry id of a pin record (the entry :meth:`pin` returned), the id of
                an entry pinned with :meth:`pin`, or a pinned text, verbatim (leading and
                trailing whitespace aside). Every pin it names is withdrawn.
            reason: why, in words; kept with the record.

        Returns:
            The unpin record's entry.

        Raises:
            ValueError: no pin in place matches ``item`` (the message lists the pins in
                place: id and first line). Automatic pins (the first request, the user's
                rules) have no record and cannot be unpinned; ``policy.auto_pins`` turns
                them off.
        """
        with self._lock:
            self.log.sync()
            h = self.log.history
            wanted = item.strip()
            pins = [(h.entries[pos].id, h.entries[pos].body) for pos in h.pin_positions]
            found = tuple(
                pin_id
                for pin_id, body in pins
                if isinstance(body, PinRecord)
                and (item in (pin_id, body.entry_id) or body.text.strip() == wanted)
            )
            if not found:
                listed = "; ".join(
                    f"{pin_id} {pin_label(body.text)}"
                    for pin_id, body in pins
                    if isinstance(body, PinRecord)
                )
                raise ValueError(
                    f"nothing to unpin: no pin in place has the id, the pinned entry id or "
                    f"the text {pin_label(item)} (pins in place: {listed or 'none'})"
                )
            return self.log.append(UnpinRecord(found, reason))

    # ------------------------------------------------------------------ branches

    def checkout(self, entry_id: str, *, summary: str | bool | None = None) -> Checkout:
        """Move the head of the conversation back to an earlier entry (pi's ``/tree``): the
        entries after it in the log (the branch left) are withdrawn from every later
        projection by an append-only record (:class:`~ctxengine.model.SupersedeRecord` with
        ``checkout`` set; they stay stored, and :meth:`recall` still finds them), and what is
        appended next continues from ``entry_id`` (its ``parent_id``). The context is then
        the one of right after ``entry_id`` was appended: a compaction, prune or pin recorded
        on the branch left is withdrawn with it (see :mod:`~ctxengine.engine.branches`).

        Args:
            entry_id: the entry to move to: a shown entry older than the newest.
            summary: a summary of the branch left, appended after the record as a user-role
                message marked synthetic (pi's branch summarization), whose parent is
                ``entry_id``: a text; ``True`` to have the session's summarizer write it
                (:data:`~ctxengine.policy.defaults.BRANCH_SUMMARY_TOKENS` at most); ``None``
                or ``False`` for none. The branch summaries of earlier checkouts that the
                branch left holds (a checkout to the same point or an earlier one) follow
                it verbatim (:data:`~ctxengine.engine.branches.BRANCH_SUMMARY_CARRIED`);
                the summarizer is given the other messages only. Without a summary they
                are left behind with the branch (recall still finds them).

        Returns:
            The :class:`~ctxengine.engine.branches.Checkout`: the record's entry, the
            summary's, the ids withdrawn, the ids of the earlier summaries carried.

        Raises:
            ValueError: no such entry, one withdrawn already, the newest entry, an entry that
                leaves tool calls unanswered, or an empty summary text.
            SummaryRejected, ProviderError: ``summary=True`` and the summarizer failed;
                nothing is appended.
        """
        from ctxengine.summarizers.base import SummaryRequest

        from . import branches
        from .branches import Checkout

        with self._lock:
            self.log.sync()
            h = self.log.history
            left = branches.abandoned_ids(h, entry_id)
            earlier = branches.earlier_summaries(h, left) if summary else ()
            text: str | None = None
            if isinstance(summary, str):
                if not summary.strip():
                    raise ValueError("checkout: the branch summary is empty")
                text = summary
            elif summary is True:
                messages = branches.abandoned_messages(h, left)
                if messages:
                    request = SummaryRequest(
                        messages=messages,
                        previous=None,
                        goal=h.goal or "",
                        budget_tokens=BRANCH_SUMMARY_TOKENS,
                    )
                    text = self.runner.summarizer.summarize(request, self.estimator).text
            record = SupersedeRecord(left, f"checkout of {entry_id}", checkout=entry_id)
            entry = self.log.append(record)
            note = None
            if text is not None or earlier:
                note = self.log.append(branches.summary_message(text, left, earlier))
            self.compactor.thrashing = None
            self._tail = TailGuard()
            return Checkout(entry, note, left, tuple(e.id for e in earlier))

    # ------------------------------------------------------------------ child sessions

    @property
    def link(self) -> SessionLink | None:
        """How this session was started from another one (a fork, a spawned subagent
        context, a hand-off), or ``None``."""
        return self._link

    def children(self) -> list[SessionLink]:
        """The links of the sessions started from this one, oldest first (from the store,
        else those started in this process)."""
        if self.store is not None:
            return self.store.children(self.session_id)
        return [link for link, _ in self._children.values()]

    def fork(
        self,
        at: str | None = None,
        *,
        task: str | Message | None = None,
        session_id: str | None = None,
        call_id: str | None = None,
    ) -> Session:
        """A child session whose history is a copy of this one's up to entry ``at`` (every
        entry up to it in the log, records included, so that its context is the one this
        session had there, head included: the first request repeats this session's and can
        reuse its prompt cache). Calls pending at ``at`` are answered in the child by a
        result saying the work goes on there; ``task``, when given, follows as a user
        message. The copied entries keep their ids (``meta["copied_from"]`` names this
        session); the link (this session, ``at``, ``"fork"``) is stored with them, in one
        transaction, in this session's store.

        Args:
            at: the entry to fork at (default: the newest).
            task: the child's instruction, appended after the copy.
            session_id: the child's id (default the first free ``"fork-<n>.<this id>"``,
                the next one when another writer takes it meanwhile).
            call_id: this session's tool call the child works for: its first result
                (:meth:`finish`) answers that call.

        Returns:
            The child session (same window, policy, estimator, summarizer, store and head).

        Raises:
            ValueError: no entry ``at``, one withdrawn, an empty task, or a ``session_id``
                taken.
        """
        from . import branches, children

        with self._lock:
            self.log.sync()
            h = self.log.history
            if at is None:
                if not h.entries:
                    raise ValueError("fork: the session has no entry to fork at")
                pos = max(i for i in range(len(h.entries)) if i not in h.hidden)
            else:
                found = h.index.get(at)
                if found is None:
                    raise ValueError(f"fork: no entry {at!r} in this session")
                if found in h.hidden:
                    raise ValueError(f"fork: entry {at!r} is withdrawn; fork at a shown entry")
                pos = found
            pending = sorted(branches.pending_at(h.entries[: pos + 1], h.hidden))
            packet = children.task_message(task) if task is not None else None

            def build(child_id: str) -> list[Entry]:
                entries = children.copies(h.entries[: pos + 1], child_id, self.session_id)
                if pending:
                    results = children.fork_point_results(pending, child_id)
                    entries.append(children.next_entry(results, child_id, entries))
                if packet is not None:
                    entries.append(children.next_entry(packet, child_id, entries))
                return entries

            return self._start_child("fork", session_id, h.entries[pos].id, build, call_id)

    def spawn(
        self,
        task: str | Message,
        *,
        session_id: str | None = None,
        call_id: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> Session:
        """A child session with a fresh context: this session's stable head (its assembled
        head, else the system and developer messages its log opens with, copied) and the
        task packet, a user message, only. The link (this session, its newest entry,
        ``"spawn"``) is stored with the child's first entries, in one transaction.

        Args:
            task: the task packet: what to do, the constraints, what to hand back.
            session_id: the child's id (default the first free ``"spawn-<n>.<this id>"``,
                the next one when another writer takes it meanwhile).
            call_id: this session's tool call the child works for: its first result
                (:meth:`finish`) answers that call.
            tools: the child's tools, instead of this session's (without an assembled head;
                with one, the head's tools are the child's).

        Returns:
            The child session (same window, policy, estimator, summarizer and store).

        Raises:
            ValueError: an empty task packet, or a ``session_id`` taken.
            ConfigError: ``tools`` given while this session has an assembled head.
        """
        from . import children

        if tools is not None and self.head is not None:
            raise ConfigError(
                "spawn: the child's tools are the assembled head's; give no tools, or set "
                "the child's with child.tools = …"
            )
        message = children.task_message(task)
        with self._lock:
            self.log.sync()
            h = self.log.history
            head = (
                []
                if self.head is not None
                else [e for i, e in enumerate(h.entries[: h.head_end]) if i not in h.hidden]
            )

            def build(child_id: str) -> list[Entry]:
                entries = children.copies(head, child_id, self.session_id)
                entries.append(children.next_entry(message, child_id, entries))
                return entries

            return self._start_child("spawn", session_id, h.leaf_id, build, call_id, tools)

    def resume(self, session_id: str) -> Session:
        """Open a child of this session again (a fork or a spawned context, stored or
        started in this process) to continue it: its history as stored, this session's
        window, policy, estimator, summarizer and head. Its next :meth:`finish` returns a
        new run's result here.

        Raises:
            ValueError: ``session_id`` is not a child of this session.
            SessionNotFound: (stored) no session ``session_id``.
        """
        with self._lock:
            if self.store is None:
                found = self._children.get(session_id)
                if found is None:
                    raise ValueError(f"resume: {session_id!r} is not a child of this session")
                return found[1]
            link = self.store.session_link(session_id)
            if link is None or link.parent_id != self.session_id:
                raise ValueError(
                    f"resume: session {session_id!r} was not started from {self.session_id!r}"
                )
            child = self._child_session(session_id)
            child._parent = self
            return child

    def finish(
        self,
        summary: str,
        *,
        pointers: Pointers | None = None,
        call_id: str | None = None,
    ) -> Entry:
        """Return this child's result to its parent: exactly one evidence entry per run
        (the entries since its previous result), appended to the parent's history: the
        summary and pointers into the run (entry ids, files, commands), its meta naming this
        session, the relation, the run's number and the entries it covers.

        Args:
            summary: the child's conclusion, in words.
            pointers: where the evidence is; default: the run's first and last entry, the
                files it modified and read, the commands it ran
                (:func:`~ctxengine.engine.children.run_pointers`).
            call_id: the parent's call this result answers (a tool result); default the
                ``call_id`` the child was started with, for its first run. Without one the
                result is a user-role message marked synthetic.

        Returns:
            The parent's new entry.

        Raises:
            ValueError: not a child, a hand-off (it continues its parent: nothing to
                return), a child not opened through its parent (:meth:`resume`), nothing
                new since its previous result, an empty summary, a ``call_id`` the parent
                does not await, or none while the parent awaits calls.
        """
        from . import children

        if not summary.strip():
            raise ValueError("finish: the summary is empty")
        link, parent = self._link, self._parent
        if link is None:
            raise ValueError(f"finish: session {self.session_id!r} is not a child session")
        if link.relation == "handoff":
            raise ValueError(
                f"finish: session {self.session_id!r} is a hand-off of {link.parent_id!r}: it "
                "continues that session and has no result to return"
            )
        if parent is None:
            raise ValueError(
                f"finish: open {self.session_id!r} with its parent's Session.resume() to "
                f"return its result to {link.parent_id!r}"
            )
        with self._lock:
            self.log.sync()
            mine = list(self.log.history.entries)
            hidden = set(self.log.history.hidden)
        with parent._lock:
            parent.log.sync()
            ph = parent.log.history
            run = children.current_run(mine, hidden, ph.entries, self.session_id)
            if not run.entries:
                raise ValueError(
                    f"finish: nothing new in {self.session_id!r} since run {run.number - 1} "
                    "returned its result"
                )
            if call_id is None and run.number == 1:
                call_id = self._call_id
            awaited = ph.pending_call_ids()
            if call_id is not None and call_id not in awaited:
                raise ValueError(
                    f"finish: session {parent.session_id!r} does not await a result of call "
                    f"{call_id!r}"
                )
            if call_id is None and awaited:
                raise ValueError(
                    f"finish: session {parent.session_id!r} awaits results of calls "
                    f"{', '.join(sorted(awaited))}: give the call_id this result answers"
                )
            found = pointers if pointers is not None else children.run_pointers(run.entries)
            message = children.evidence(
                self.session_id, link.relation, run, summary, found, call_id
            )
            return parent.append(message)

    def handoff(
        self,
        session_id: str | None = None,
        *,
        focus: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> HandedOff:
        """Continue this session in a new one instead of compacting it in place (Amp's
        hand-off): a copy of it is compacted in memory (this session is unchanged), and a
        new session, linked to this one (relation ``"handoff"``, this session's newest
        entry), is stored with only the entries that copy's context is projected from: head,
        retained entries, the continuation state (ledgers and re-injected state included),
        kept tail, pin and prune records (:mod:`~ctxengine.engine.handoff`). Calls left
        unanswered here are closed there by a synthetic error result. The new session gets
        the ``recall`` tool (:data:`~ctxengine.recall.RECALL_TOOL`), so its continuation
        state says that the whole history can be searched.

        Args:
            session_id: the new session's id (default the first free
                ``"handoff-<n>.<this id>"``, the next one when another writer takes it
                meanwhile).
            focus: what the summary should focus on.
            tools: the new session's tools (default this session's), the recall tool added
                when missing; with an assembled head, its tools are the head's.

        Returns:
            The :class:`~ctxengine.engine.handoff.HandedOff`. When nothing can be summarized
            (the whole context fits the keep-recent budget, or a state would not make it
            smaller) the new session carries the context verbatim and ``note`` says why.

        Raises:
            ValueError: an empty session, or a ``session_id`` taken.
            SummaryRejected, ProviderError, CompactionVetoed, Cancelled: the summary failed
                (nothing is stored).
            ConfigError: ``tools`` given while this session has an assembled head.
        """
        from ctxengine.recall import RECALL_TOOL

        from . import children, handoff
        from .handoff import HandedOff

        if tools is not None and self.head is not None:
            raise ConfigError("handoff: the new session's tools are the assembled head's")
        with self._lock:
            self.log.sync()
            if not self.log.history.entries:
                raise ValueError("handoff: the session has no entries to hand off")
            before = self.log.context_tokens(self.log.project())
            # The newest entry in log order (after a checkout the leaf is an older one):
            # the old history up to it is what the new session's recall searches.
            leaf = self.log.history.last_id
            head = children.head_copy(self.head)
            given = self.tools if tools is None else tuple(tools)
            with_recall = (
                given
                if any(tool_name(t) == RECALL_TOOL_NAME for t in given)
                else (*given, RECALL_TOOL)
            )
            if head is not None:
                head.set_tools(with_recall)
            copy = Session(
                self._window,
                policy=self.policy,
                estimator=self.log.base_estimator,
                summarizer=self.runner.summarizer,
                fallback=self.runner.fallback_mode,
                session_id=self.session_id,
                entries=self.log.history.entries,
                tools=() if head is not None else with_recall,
                head=head,
                cwd=self.runner.cwd,
            )
            note, summarized = "", False
            try:
                copy.compact(focus)
                summarized = True
            except NothingToCompact as exc:
                note = str(exc)
            except SummaryRejected as exc:
                if exc.reason != "inflated":
                    raise
                note = f"a continuation state would not make this session smaller ({exc})"
            h = copy.log.history
            pending = h.pending_call_ids()

            def build(child_id: str) -> list[Entry]:
                entries = [
                    e if e.id in self.log.history else replace(e, meta={})
                    for e in children.copies(handoff.carried(h), child_id, self.session_id)
                ]
                if pending:
                    closed = handoff.closing(pending)
                    entries.append(children.next_entry(closed, child_id, entries))
                return entries

            child = self._start_child("handoff", session_id, leaf, build, None, with_recall, head)
            child._parent = None
            up = self._link.parent_id if self._link and self._link.relation == "handoff" else None
            mine = handoff.recall_segment(self.log.history, up)
            child._handoff_base = handoff.joined((self._recall_base(), mine))
            compaction = child.log.history.compaction
            return HandedOff(
                child,
                child.entries[compaction].id if compaction is not None else None,
                summarized,
                note,
                tuple(sorted(pending)),
                before,
            )

    def _child_id(self, relation: Literal["fork", "spawn", "handoff"], wanted: str | None) -> str:
        """``wanted`` when given, else the first free ``"<relation>-<n>.<this id>"`` (after
        this id, not before it: a prefix of this id still names this session alone). Only a
        read: :meth:`_start_child` stores the child, and takes the next free id when the
        store's transaction finds this one taken.

        Raises:
            ValueError: ``wanted`` names a session that exists.
        """
        if wanted is not None:
            if self._session_exists(wanted):
                raise ValueError(f"{relation}: session {wanted!r} exists already")
            return wanted
        n = len(self.children()) + 1
        while self._session_exists(f"{relation}-{n}.{self.session_id}"):
            n += 1
        return f"{relation}-{n}.{self.session_id}"

    def _session_exists(self, session_id: str) -> bool:
        if session_id == self.session_id or session_id in self._children:
            return True
        if self.store is None:
            return False
        try:
            self.store.session_link(session_id)
        except SessionNotFound:
            return False
        return True

    def _start_child(
        self,
        relation: Literal["fork", "spawn", "handoff"],
        wanted: str | None,
        at: str | None,
        build: Callable[[str], list[Entry]],
        call_id: str | None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        head: ContextAssembler | None = None,
    ) -> Session:
        """Store a child (its session, its link ``relation`` to this session's entry ``at``
        and its first entries, ``build(child id)``, in one transaction) and open it; an
        in-memory session keeps it in :attr:`_children`. Its id is ``wanted``, else the
        first free ``"<relation>-<n>.<this id>"``: when another writer (another process)
        stores a session of that id first, the store's transaction refuses this one and
        the next free id is taken. ``head``: the child's assembler (default a copy of this
        session's).

        Raises:
            ValueError: ``wanted`` names a session that exists.
        """
        from ctxengine.stores.base import SessionInfo, SessionLink

        from . import children

        child_id = self._child_id(relation, wanted)
        entries = build(child_id)
        link = SessionLink(child_id, self.session_id, at, relation)
        if self.store is None:
            child = self._child_session(child_id, entries, tools, head)
            child._link = replace(link, created_at=children.now())
            self._children[child_id] = (child._link, child)
        else:
            info = SessionInfo(id=child_id, format="ctxengine")
            while not self.store.create_session(info, link=link, entries=entries):
                if wanted is not None:
                    raise ValueError(f"{relation}: session {wanted!r} exists already")
                child_id = self._child_id(relation, None)
                entries = build(child_id)
                link = SessionLink(child_id, self.session_id, at, relation)
                info = SessionInfo(id=child_id, format="ctxengine")
            child = self._child_session(child_id, tools=tools, head=head)
        child._parent = self
        child._call_id = call_id
        return child

    def _child_session(
        self,
        session_id: str,
        entries: Sequence[Entry] = (),
        tools: Sequence[Mapping[str, Any]] | None = None,
        head: ContextAssembler | None = None,
    ) -> Session:
        """A session for a child of this one: this session's window, policy, estimator,
        summarizer and fallback, store, working directory, and ``head`` (default a copy of
        its head)."""
        from . import children

        head = head if head is not None else children.head_copy(self.head)
        return Session(
            self._window,
            policy=self.policy,
            estimator=self.log.base_estimator,
            summarizer=self.runner.summarizer,
            fallback=self.runner.fallback_mode,
            store=self.store,
            session_id=session_id,
            entries=entries,
            tools=() if head is not None else (self.tools if tools is None else tools),
            head=head,
            cwd=self.runner.cwd,
        )

    def project(self) -> Context:
        """The current context (no ladder run)."""
        with self._lock:
            return self.log.project()

    def context_tokens(self, ctx: Context) -> int:
        """Size of ``ctx`` in tokens: the usage anchor (latest reply reporting prompt tokens,
        newer than the latest compaction and prune) plus the estimate of what follows it;
        the full estimate when there is no usable anchor. The estimated part is scaled by
        :attr:`usage_correction`."""
        with self._lock:
            return self.log.context_tokens(ctx)

    @property
    def usage_correction(self) -> UsageCorrection | None:
        """The running ratio of provider-reported to estimated tokens
        (:class:`~ctxengine.tokens.correction.UsageCorrection`): each reply that reports
        prompt tokens after an earlier one of the same epoch adds the growth it measured,
        and the ratio scales the estimated part of every context size (what follows the
        usage anchor, or the whole context before any). ``ratio`` is 1.0 until a report
        arrives. Set a new one to reset it or change its bounds, ``None`` to turn it off. A
        new profile whose tokenizer changes the default estimator replaces it with a fresh
        one of the same bounds (the ratio was learned against the old estimate)."""
        return self.log.correction

    @usage_correction.setter
    def usage_correction(self, value: UsageCorrection | None) -> None:
        with self._lock:
            self.log.correction = value

    # ------------------------------------------------------------------ the ladder

    def prepare(
        self,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        max_output_tokens: int | None = None,
    ) -> Context:
        """The context for the next model call, after running the ladder when the context
        has reached the trigger (prune, then summarize).

        Within an epoch successive results only grow at the tail (checked:
        :class:`~ctxengine.errors.InvariantError` otherwise).

        Args:
            tools: replace the session's tool schemas first.
            max_output_tokens: output budget of the coming call in tokens (default
                ``min(4096, the policy's reserve)``). When the context plus it exceeds the
                window the requirement is hard: a failing model summarizer gives way to the
                extractive one (a ``"fallback"`` event) instead of leaving the context too
                large to send.

        Raises:
            CompactionLoopError: ``policy.max_consecutive_failures`` compactions in a row
                failed to bring the context under the trigger.
            ContextFloorError: what every compaction keeps (system prompt, tool schemas,
                re-injected rules, todo list and background tasks, the tail no cut can drop)
                is at or over the trigger: no compaction runs. Raised again by every later
                call whose context does not fit the window beside its output, until new
                entries let the ladder try again.
            ThrashError: the context refilled to the trigger within a few calls of each of
                the latest compactions (``policy.thrash_guard``); automatic compaction stays
                stopped until a manual :meth:`compact`.
        """
        with self._lock:
            try:
                return self._prepare(tools, max_output_tokens)
            finally:
                self._precompute.release()  # a background compaction starts now

    def _prepare(
        self, tools: Sequence[Mapping[str, Any]] | None, max_output_tokens: int | None
    ) -> Context:
        """:meth:`prepare`'s body, under the session's lock."""
        if tools is not None:
            self.log.tools = tuple(tools)
        h = self.log.history
        self.log.sync()
        out = max_output_tokens or self.default_output_tokens
        if not self.policy.enabled:
            ctx = self.log.project()
            self._tail.check(
                ctx,
                epoch_key(ctx, h),
                provisional=bool(h.pending_call_ids()),
                skip=self._head_messages(ctx),
            )
            return ctx
        if self.prime_ledgers:
            self.compactor.prime()
        if self.policy.prune_when == "always" and self._at_check_point():
            ctx = self.log.project()
            self.compactor.prune_now(ctx, self.log.context_tokens(ctx))
        ctx, tokens, req = self._threshold(out)
        idle = req is None and (req := self._idle(tokens)) is not None
        if req is not None:
            with self._single_flight():
                if self.log.sync():
                    # Another writer appended meanwhile (maybe this very compaction).
                    ctx, tokens, req = self._threshold(out)
                    idle = req is None and (req := self._idle(tokens)) is not None
                if req is not None:
                    self._floor_error = None
                    try:
                        ctx = self._ladder(ctx, req, out, idle)
                    except ContextFloorError as exc:
                        self._floor_error = exc
                        raise
                    finally:
                        # The ladder's own prune/compaction entries are not new history:
                        # the next run waits for an entry appended after them. A deferred
                        # trigger ran nothing: the next call is a trigger again.
                        if not self._deferred:
                            self._last_ladder_at = len(h)
                        self._deferred = False
        elif self._floor_error is not None and (
            self.log.context_tokens(ctx) + out > self.budget.window
        ):
            # The ladder waits for new entries, but this context cannot be sent: the
            # floor that stopped it is still the answer.
            raise self._floor_error
        else:
            self._precompute.observe(ctx, tokens)
        # A context prepared while calls still await their results is provisional.
        provisional = bool(h.pending_call_ids())
        self._tail.check(
            ctx, epoch_key(ctx, h), provisional=provisional, skip=self._head_messages(ctx)
        )
        return ctx

    def _head_messages(self, ctx: Context) -> int:
        """1 when ``ctx`` opens with the assembled head's system message, else 0."""
        if self.log.head is None or not ctx.messages:
            return 0
        return int(ctx.sources[0] is None and ctx.messages[0].role == "system")

    def _threshold(self, output: int) -> tuple[Context, int, Requirement | None]:
        """The current context, its size in tokens and whether the trigger requires a
        compaction of it."""
        ctx = self.log.project()
        tokens = self.log.context_tokens(ctx)
        req = requirement(
            tokens,
            self.budget,
            reason="threshold",
            output_tokens=output,
            new_entries=self._last_ladder_at < len(self.log.history),
            messages=len(ctx.messages),
            max_messages=self.policy.max_messages,
            check_point=self._at_check_point(),
        )
        return ctx, tokens, req

    def _idle(self, tokens: int) -> Requirement | None:
        """The requirement of an idle compaction (``policy.idle_compact_seconds``): at a
        check point with entries new since the ladder last ran, when the newest message came
        at least that long after the latest reply (:func:`~ctxengine.ladder.timing.
        reply_gap`, from the entries' times) and the context (``tokens``) is at least
        ``policy.idle_compact_ratio`` of the trigger: the compaction the coming calls would
        run is run now, when the provider's cache is rebuilt anyway. ``None`` otherwise."""
        policy = self.policy
        limit = policy.idle_compact_seconds
        h = self.log.history
        if limit is None or self._last_ladder_at >= len(h) or _just_compacted(self.log):
            return None
        floor = int(self.budget.trigger * policy.idle_compact_ratio)
        if tokens < floor or not self._at_check_point():
            return None
        gap = reply_gap(h.entries)
        if gap is None or gap < limit:
            return None
        ttl = self.compactor.cache_ttl
        cache = "cold" if gap >= ttl else "warm"
        detail = (
            f"idle {gap:,.0f} s ≥ {limit:,.0f} s (cache {cache}: TTL {ttl:,.0f} s); context "
            f"{tokens:,} ≥ {floor:,} ({policy.idle_compact_ratio:.0%} of the trigger): "
            "compacting before this request"
        )
        return Requirement("soft", "threshold", detail, tokens)

    def _ladder(self, ctx: Context, req: Requirement, output: int, idle: bool) -> Context:
        """Run the ladder for ``req`` (an ``idle`` compaction is reported first): adopt the
        background compaction held for this history when there is one fit to adopt
        (:mod:`.precompute`), or send ``ctx`` as it is while a candidate started now is
        computed (``policy.precompute_block_ratio``), else prune and compact in the
        foreground."""
        if idle:
            self.compactor.event("idle", None, req.tokens, req.tokens, req.detail)
        candidate = self._precompute.take(req.tokens)
        if candidate is not None:
            try:
                adopted = self._precompute.adopt(candidate, ctx, req.tokens)
            except CompactionVetoed:
                return ctx
            if adopted is not None:
                return adopted
        elif not idle and self._precompute.defer(ctx, req, output):
            self._deferred = True
            return ctx
        return self.compactor.run_ladder(ctx, req, output, idle=idle)

    def _at_check_point(self) -> bool:
        """The policy checks the trigger before this call: always with ``"every_call"``;
        with ``"turn_start"`` only when the newest message is a real user message (the
        call opens a turn)."""
        if self.policy.check_points == "every_call":
            return True
        newest = next(
            (m for e in reversed(self.log.history.entries) if (m := e.message) is not None),
            None,
        )
        return newest is not None and is_real_user_message(newest)

    def note_ladder_run(self) -> None:
        """A compaction was stored outside :meth:`prepare` (a background swap): the next
        automatic compaction waits for an entry appended after it."""
        with self._lock:
            self._last_ladder_at = len(self.log.history)

    @property
    def lock(self) -> threading.RLock:
        """The lock every public method holds: hold it to read and write the session in one
        step (an executor working off the request path does)."""
        return self._lock

    def compaction_lock(self) -> AbstractContextManager[None]:
        """The store's compaction lock of this session (one compaction at a time across the
        threads and processes sharing the store), or nothing without a store."""
        return self._single_flight()

    def _single_flight(self) -> AbstractContextManager[None]:
        """The store's compaction lock of this session (one compaction at a time across the
        threads and processes sharing the store), or nothing without a store."""
        if self.store is None:
            return nullcontext()
        return self.store.compaction_lock(
            self.session_id, timeout_s=DEFAULT_COMPACTION_LOCK_TIMEOUT_S
        )

    def plan(
        self,
        focus: str | None = None,
        *,
        reason: Reason = "manual",
        max_output_tokens: int | None = None,
    ) -> CompactionPlan | None:
        """The plan a compaction would run now, without running it: no model call, nothing
        written.

        Args:
            focus: what the summary should focus on.
            reason: ``"manual"`` (what :meth:`compact` runs) or ``"threshold"`` (what
                :meth:`prepare` would run: ``None`` when the context is under the trigger;
                its compaction is planned as if its prune had been applied).
            max_output_tokens: the coming call's output budget (default
                :attr:`default_output_tokens`).

        Returns:
            The :class:`~ctxengine.ladder.plan.CompactionPlan`, or ``None`` when no
            compaction is due (threshold only).

        Raises:
            NothingToCompact: a manual compaction with nothing new since the latest one.
        """
        with self._lock:
            self.log.sync()
            ctx = self.log.project()
            tokens = self.log.context_tokens(ctx)
            out = max_output_tokens or self.default_output_tokens
            h = self.log.history
            new = (
                self._last_ladder_at < len(h)
                if reason == "threshold"
                else not _just_compacted(self.log)
            )
            if not self.policy.enabled:
                if reason == "threshold":
                    return None
                raise NothingToCompact(f"policy {self.policy.name!r} never compacts")
            req = requirement(
                tokens,
                self.budget,
                reason=reason,
                output_tokens=out,
                new_entries=new,
                messages=len(ctx.messages),
                max_messages=self.policy.max_messages,
                check_point=reason != "threshold" or self._at_check_point(),
            )
            if req is None:
                return None
            prune = self.compactor.plan_prune(ctx) if reason == "threshold" else None
            if prune is None:
                return self.compactor.make_plan(ctx, tokens, req, focus, self.budget, None)
            ctx = self.log.project(pruned=prune.call_ids)
            tokens = self.log.context_tokens(ctx)
            plan = self.compactor.make_plan(ctx, tokens, req, focus, self.budget, prune)
            # A prune that brings the context under the trigger is the whole plan.
            return replace(plan, attempts=()) if tokens < self.budget.trigger else plan

    def compact(
        self,
        focus: str | None = None,
        *,
        reason: Reason = "manual",
        cancel: threading.Event | None = None,
        provider: Provider | None = None,
        profile: ModelProfile | None = None,
    ) -> CompactionOutcome:
        """Compact now (``/compact``), whatever the context size.

        Args:
            focus: what the summary should focus on.
            reason: recorded with the compaction.
            cancel: setting it (from any thread: a deadline timer, a signal handler) aborts
                every model summary call of this compaction, the one in flight and any not
                started yet; history is unchanged.
            provider / profile: the agent's model, for ``policy.compaction_backend``
                ``"native"`` or ``"auto"``: where the backend resolves to native
                (:func:`~ctxengine.ladder.plan.choose_backend`; the profile defaults as in
                :meth:`complete`) the provider compacts on demand
                (:func:`~.native.execute_native`). Without it the compaction is local.

        Raises:
            NothingToCompact: no new entries since the last compaction, or no valid cut.
            SummaryRejected: the summarizer failed; history is unchanged.
            CompactionVetoed: a ``before_compact`` hook vetoed the plan.
            Cancelled: ``cancel`` was set while a model summarizer ran.
            ConfigError: backend ``"native"`` with a provider or model that cannot compact
                natively.
            ProviderError: the provider's compaction failed; history is unchanged.
        """
        target = self._native_target(provider, profile) if provider is not None else None
        with self._lock, self._single_flight():
            self._precompute.cancel(f"superseded by a {reason} compaction", wait=True)
            self.runner.outer_cancel = cancel
            self.compactor.native = target
            try:
                return self._compact_now(focus, reason)
            finally:
                self.runner.outer_cancel = None
                self.compactor.native = None

    def _native_target(
        self, provider: Provider, profile: ModelProfile | None, max_output: int | None = None
    ) -> NativeTarget | None:
        """Where this session's plans run for ``provider`` (``profile``: its model's, else
        looked up): a :class:`~.native.NativeTarget` when ``policy.compaction_backend``
        resolves to native, else ``None``.

        Raises:
            ConfigError: the backend is ``"native"`` but the API, the model's profile or the
                provider (no ``compact``) cannot compact natively.
        """
        from ctxengine.providers.base import NativeProvider
        from ctxengine.providers.profiles import ProfileTable

        if self.policy.compaction_backend == "local":
            return None
        if profile is None:
            profile = ProfileTable.load().lookup(provider.model)
        supported = profile is not None and profile.native_compaction
        if choose_backend(self.policy.compaction_backend, provider.name, supported) == "local":
            return None
        if not isinstance(provider, NativeProvider):
            raise ConfigError(
                f"compaction_backend 'native': provider {type(provider).__name__} has no "
                "compact() (use the Anthropic or OpenAI Responses provider)"
            )
        return NativeTarget(provider, max_output or self.budget.reserve)

    def _compact_now(self, focus: str | None, reason: Reason) -> CompactionOutcome:
        """:meth:`compact`'s body, under the session's lock and compaction lock."""
        self.log.sync()
        if not self.policy.enabled:
            raise NothingToCompact(f"policy {self.policy.name!r} never compacts")
        ctx = self.log.project()
        tokens = self.log.context_tokens(ctx)
        req = requirement(
            tokens,
            self.budget,
            reason=reason,
            output_tokens=self.default_output_tokens,
            new_entries=not _just_compacted(self.log),
        )
        if req is None:
            raise NothingToCompact("the context is under the trigger")
        plan = self.compactor.make_plan(ctx, tokens, req, focus, self.budget, None)
        return self.compactor.execute(plan, ctx)

    def abort(self) -> None:
        """Cancel the summary call in flight, from any thread: its stream is closed, the
        compaction raises :class:`~ctxengine.errors.Cancelled` and history is unchanged (no
        failure is counted). Does nothing when no summary call runs."""
        self.runner.abort()

    # ------------------------------------------------------------------ model calls

    def complete(
        self,
        provider: Provider,
        *,
        max_output_tokens: int | None = None,
        temperature: float | None = None,
        cancel: threading.Event | None = None,
        profile: ModelProfile | None = None,
    ) -> Completion:
        """One model call of the agent: :meth:`prepare` the context, send it through
        ``provider`` (rendered for its API), :meth:`record` the reply and return it.

        An overflow (an error matching the provider pattern table, 413, more input reported
        than the window holds, or a length stop with no output on a full window) compacts the
        session once (reason ``"overflow"``, see :meth:`on_overflow`) and retries; the
        overflowing reply is not recorded. A context that our own estimate puts over the
        window beside ``max_output_tokens`` is treated the same way and never sent.

        Args:
            provider: the agent's model.
            max_output_tokens: output budget of the call, in tokens; default
                ``min(4096, the policy's reserve)``.
            temperature: sampling temperature, or ``None`` for the provider default.
            cancel: setting it aborts the call, and a summary call of a compaction run by
                this call (``Cancelled``; history unchanged).
            profile: the agent model's profile; when it sets ``mid_conversation_system``,
                the continuation and re-injected state are sent as mid-conversation system
                messages where the API takes them (else as user turns). Default: the
                profile of ``provider.model`` in the shipped table with the overrides of
                ``CTXENGINE_MODEL_PROFILES`` (:meth:`ProfileTable.load
                <ctxengine.providers.profiles.ProfileTable.load>`); a model it does not
                know gets user turns, and so does a model that refused system messages
                once in this session (the refused request is sent again as user turns).
                Its ``native_compaction`` decides ``policy.compaction_backend`` ``"auto"``.

        Native compaction (``policy.compaction_backend`` resolving to ``"native"`` for this
        API and model: :func:`~ctxengine.ladder.plan.choose_backend`): every request asks
        the provider to compact at ``policy.native_trigger_tokens`` (else the budget's
        trigger), and the session's own compactions run on the provider
        (:mod:`.native`); a reply that opens with the provider's compaction is stored as
        one (:meth:`record`); with ``policy.native_pause_after_compaction`` the paused reply
        is stored and the call made once more. An overflow is still recovered locally.
        Anthropic context editing configured in the policy is sent whatever the backend.

        Raises:
            ContextOverflow: a second overflow after the recovery, with the provider's
                numbers when it gave them (else our estimate and the window).
            ConfigError: the system prompt and tools plus ``max_output_tokens`` (and a 5 %
                margin) leave no room for history; checked before anything is compacted or
                sent, and again against the limit an overflow reports. Also: the file named
                by ``CTXENGINE_MODEL_PROFILES`` is missing or invalid (no ``profile`` given);
                or backend ``"native"`` where the API or model cannot compact natively.
            ProviderError: any other provider failure, after its retries.
            CompactionLoopError: the ladder failed repeatedly.
        """
        from ctxengine.providers.profiles import ProfileTable

        from . import calls

        self._overflow.clear()
        if profile is None:
            profile = ProfileTable.load().lookup(provider.model)
        self.profile = profile
        out = max_output_tokens or self.default_output_tokens
        check_output_room(self.budget.window, fixed_tokens(self.project(), self.estimator), out)
        target = self._native_target(provider, profile, out)
        settings = (
            native_settings(self.policy, self.budget, provider.name, compact=target is not None)
            if provider.name in NATIVE_PROVIDERS
            else None
        )
        if settings is not None and not settings.compact and not settings.edits:
            settings = None
        self.runner.outer_cancel = cancel
        self.compactor.native = target
        try:
            # A reply paused after the provider's compaction is stored, then the turn is
            # asked for again on the compacted context (once).
            for _ in range(2):
                reply, ctx, live = calls.call_until_fit(
                    provider,
                    prepare=lambda: self.prepare(max_output_tokens=out),
                    measure=self.context_tokens,
                    recover=lambda overflow: self.on_overflow(overflow, max_output_tokens=out),
                    window=lambda: self.budget.window,
                    max_output=out,
                    temperature=temperature,
                    cancel=cancel,
                    system_messages=profile is not None
                    and profile.mid_conversation_system
                    and provider.model not in self._system_refused,
                    on_system_refused=lambda: self._system_refused.add(provider.model),
                    native=settings,
                )
                with self._lock:
                    if live is not None:
                        self.compactor.live = (
                            epoch_key(ctx, self.log.history),
                            len(ctx.messages),
                            live,
                        )
                self.record(reply.to_message())
                if reply.finish_reason != "compaction":
                    break
            return reply
        finally:
            self.runner.outer_cancel = None
            self.compactor.native = None

    def overflow_of(self, outcome: Completion | Usage | BaseException) -> ContextOverflow | None:
        """The overflow a model call signals, else ``None``: a failed call classified as
        overflow, a reply (or its usage) reporting more input than the window (silent
        overflow), or a reply stopped by the output limit with no output on a full window."""
        from . import calls

        return calls.overflow_of(outcome, self.budget.window)

    def on_overflow(
        self,
        signal: Completion | Usage | BaseException,
        *,
        max_output_tokens: int | None = None,
    ) -> CompactionOutcome:
        """React to an overflow of a model call made by the caller: compact now, with reason
        ``"overflow"``, so the caller can retry once. A second overflow before the next
        :meth:`record` is final.

        The recovery is forced: it runs even right after a compaction (no new entries), skips
        the "not beneficial" check, and a failing model summarizer gives way to the extractive
        one. It aims at ``min(trigger, limit − output budget − 5 % margin)`` with the limit
        the provider reported (else the window): the kept tail, summary and truncate caps
        shrink to match (:func:`~ctxengine.ladder.recover.recovery_budget`). A reported limit
        below the window stays in force for the rest of the session (:attr:`learned_limit`):
        later requests are sized for it.

        Args:
            signal: the provider error, the reply, or its usage (see :meth:`overflow_of`).
            max_output_tokens: the call's output budget (default: the policy's reserve).

        Raises:
            ValueError: ``signal`` is not an overflow.
            ContextOverflow: a second overflow, or a compaction that could not run; carries
                the provider's numbers when it gave them, else our estimate and the window.
            ConfigError: the system prompt and tools plus the output budget (default: the
                policy's reserve) and the margin leave no room for history in the window or
                the reported limit: compaction cannot fix that.
        """
        from . import calls

        overflow = self.overflow_of(signal)
        if overflow is None:
            raise ValueError(f"not a context overflow: {signal!r}"[:300])
        with self._lock, self._single_flight():
            self._precompute.cancel("superseded by an overflow recovery", wait=True)
            self.log.sync()
            ctx = self.log.project()
            tokens = self.log.context_tokens(ctx)
            window = self.budget.window
            output = max_output_tokens if max_output_tokens is not None else self.budget.reserve
            target = recovery_target(
                overflow,
                trigger=self.budget.trigger,
                window=window,
                tokens=tokens,
                fixed=fixed_tokens(ctx, self.estimator),
                output=output,
                just_compacted=_just_compacted(self.log),
                shrink=self.policy.overflow_shrink_ratio,
            )
            if not self.policy.enabled:
                why = f"policy {self.policy.name!r} never compacts"
                raise calls.final_overflow(overflow, tokens, window, why)
            if not self._overflow.try_recover():
                n = self._overflow.limit
                why = (
                    "still too large after one compaction"
                    if n == 1
                    else f"still too large after {n} compactions"
                    if n
                    else f"policy {self.policy.name!r} does not recover from overflows"
                )
                raise calls.final_overflow(overflow, tokens, window, why)
            budget = recovery_budget(self.budget, self.policy, target)
            self._learn_limit(overflow.limit)
            req = requirement(
                tokens,
                budget,
                reason="overflow",
                output_tokens=output,
                new_entries=True,
                limit=overflow.limit,
            )
            assert req is not None
            try:
                plan = self.compactor.make_plan(ctx, tokens, req, None, budget, None)
                outcome = self.compactor.execute(plan, ctx)
            except Cancelled:
                raise
            except (
                NothingToCompact,
                SummaryRejected,
                ProviderError,
                CompactionVetoed,
                ContextFloorError,
            ) as exc:
                why = f"compaction failed: {exc}"
                raise calls.final_overflow(overflow, tokens, window, why) from exc
            # The recovery's own entry is not new history: prepare() does not compact again.
            self._last_ladder_at = len(self.log.history)
            return outcome

    def _learn_limit(self, limit: int) -> None:
        """Keep a provider-reported limit below the current window for the rest of the
        session: the budget is resolved for it (a reserve that leaves no room in it keeps the
        old budget)."""
        if limit <= 0 or limit >= self.budget.window:
            return
        try:
            self.log.resize(limit)
        except ConfigError:
            return
        self._learned_limit = limit
        self._tail = TailGuard()  # a new budget: the next context is a new baseline


def _pinnable_text(message: Message) -> str:
    """The text a pin of ``message`` keeps: its text parts, else its tool results' text."""
    if message.text.strip():
        return message.text
    return "\n".join(r.text for r in message.tool_results)


def _just_compacted(log: SessionLog) -> bool:
    """The newest entry is a compaction record, or the message a native compaction record
    leads with (nothing else since)."""
    h = log.history
    if h.compaction is None:
        return False
    record = h.entries[h.compaction].body
    lead = record.lead_ids or () if isinstance(record, CompactionRecord) and record.native else ()
    return all(e.id in lead for e in h.entries[h.compaction + 1 :])


def _policy_summarizer(
    policy: Policy,
    extractive: ExtractiveSummarizer,
    provider: Provider | None,
    profile: ModelProfile | None,
) -> Summarizer:
    """The summarizer ``policy.summarizer`` names.

    Raises:
        ConfigError: a model summarizer without ``provider`` and ``profile``.
    """
    if policy.summarizer == "extractive":
        return extractive
    if policy.summarizer == "none":
        return _drop_summarizer()
    if provider is None or profile is None:
        raise ConfigError(
            f"policy.summarizer is {policy.summarizer!r}: pass summary_provider and "
            "summary_profile (the summary model), or a summarizer"
        )
    from ctxengine.summarizers.factory import make_summarizer

    return make_summarizer(
        policy.summarizer,
        user_messages_budget=policy.user_messages_budget_tokens,
        provider=provider,
        profile=profile,
        verify=policy.summary_verify,
        template=policy.summary_template,
        overflow=policy.summary_overflow,
    )


def _drop_summarizer() -> Summarizer:
    """A :class:`~ctxengine.summarizers.drop.DropSummarizer` (imported here: it carries the
    ledgers forward, so its module loads the ledger machinery)."""
    from ctxengine.summarizers.drop import DropSummarizer

    return DropSummarizer()
