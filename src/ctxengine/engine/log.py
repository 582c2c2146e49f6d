"""``SessionLog``: the session's history, persisted to its store, and the context projected
from it; one part of :class:`~ctxengine.engine.Session` (which adds the ladder and the model
calls by holding a ``SessionLog``, a planner and a :class:`~.runner.Runner`).

History is append-only; the context is always ``project()`` of the log. Per call the work is
proportional to the current epoch (the entries since the last compaction's first kept
entry), never to the whole history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ctxengine.errors import StoreConflict, StoreError
from ctxengine.model import CompactionRecord, Entry, ToolCallPart
from ctxengine.model.codec import body_hash
from ctxengine.model.entries import Body
from ctxengine.policy import Budget, Policy
from ctxengine.policy.defaults import APPEND_RETRIES, DEFAULT_IMAGE_TOKENS, RECALL_TOOL_NAME
from ctxengine.projection import project
from ctxengine.projection.context import Context
from ctxengine.projection.memo import ProjectionMemo
from ctxengine.projection.pins import Pinned, pinned_message
from ctxengine.projection.tools import tool_name
from ctxengine.tokens.base import Estimator
from ctxengine.tokens.cache import CachingEstimator
from ctxengine.tokens.correction import UsageCorrection
from ctxengine.tokens.estimate import HeuristicEstimator

from .history import History
from .pins import epoch_pins
from .view import context_tokens, settings

if TYPE_CHECKING:
    from ctxengine.assembly.head import CacheBreak, ContextAssembler, Head
    from ctxengine.stores.base import Store


def _same_sizing(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Two :meth:`SessionLog._sizing` tuples are the same: the same objects, equal counts."""
    return a[0] is b[0] and a[1] is b[1] and a[2] is b[2] and a[3:] == b[3:]


class SessionLog:
    """A session's append-only log and its projection (no ladder).

    Attributes:
        policy / budget: the configuration and its resolution for the current window.
        estimator: the (cached) token estimator.
        correction: the running ratio of provider-reported to estimated tokens that scales
            the estimated part of :meth:`context_tokens` (``None``: no correction).
        store / session_id: where entries are persisted, if anywhere.
        tools: tool schemas sent with every request (with a ``head``: its tool section).
        history: the log in memory with its indexes.
        head: builds the stable head of every context, or ``None``.
        on_cache_break: told each :class:`~ctxengine.assembly.CacheBreak` the head reports.

    Args:
        window: the model's context window in tokens.
        policy: projection and ladder configuration.
        estimator: token estimator (default :class:`HeuristicEstimator` calibrated for
            ``tokenizer``); wrapped in a cache that is emptied at each compaction.
        store: persist every entry here (``None`` keeps the log in memory only).
        session_id: the session to open or create in ``store``.
        tools: tool schemas sent with every request (counted in the context size); with a
            ``head``, its tool section is replaced by them unless none are given.
        head: builds the stable head (a system message and the tool list) put first in every
            context; its tokens count in the context size like a system prompt's.
        tokenizer: the model's tokenizer family (a model profile's ``tokenizer``:
            ``"o200k_base"``, ``"cl100k_base"``), which the default estimator is calibrated
            for; ``None``: unknown (the default estimator errs high by both encodings).

    Raises:
        ConfigError: the policy's reserve leaves no room in ``window``; ``tokenizer`` is not
            one the estimator is calibrated for.
    """

    def __init__(
        self,
        window: int,
        *,
        policy: Policy,
        estimator: Estimator | None,
        store: Store | None,
        session_id: str,
        tools: Sequence[Mapping[str, Any]],
        head: ContextAssembler | None = None,
        tokenizer: str | None = None,
    ) -> None:
        self.policy = policy
        self.budget: Budget = policy.resolve(window)
        #: The estimator is the default one, made for the model's tokenizer.
        self._default_estimator = estimator is None
        self._cache = CachingEstimator(
            estimator or HeuristicEstimator(image_tokens=DEFAULT_IMAGE_TOKENS, encoding=tokenizer)
        )
        self.estimator: Estimator = self._cache
        self.correction: UsageCorrection | None = UsageCorrection()
        #: the last context measured by :meth:`context_tokens`, what its size depends on
        #: (:meth:`_sizing`) and the size
        self._sized: tuple[Context, tuple[Any, ...], int] | None = None
        self._memo = ProjectionMemo()
        self.store = store
        self.session_id = session_id
        self.head = head
        self.on_cache_break: Callable[[CacheBreak], None] | None = None
        self._breaks_seen = len(head.breaks) if head is not None else 0
        self._last_head: Head | None = None
        #: The tool list last checked for the recall tool, and the answer.
        self._recall_tools: tuple[Sequence[Mapping[str, Any]], bool] | None = None
        #: Entries already scanned for attached path-scoped rules, and their files.
        self._attached: tuple[int, set[str]] | None = None
        self._tools: tuple[Mapping[str, Any], ...] = ()
        if head is None or tools:
            self.tools = tuple(tools)  # a head given no tools keeps its own untouched
        self.history = History(self.estimator)
        self._pins: dict[str, tuple[Pinned, ...]] = {}

    @property
    def base_estimator(self) -> Estimator:
        """The estimator given (or the default one), without the session's cache."""
        return self._cache.base

    def use_tokenizer(self, tokenizer: str | None) -> bool:
        """Calibrate the default estimator for ``tokenizer`` (a model profile's, ``None``
        for an unknown one) from now on: every cached estimate is dropped and the goal is
        measured again. An estimator given to the log is kept as it is.

        The usage correction is reset (a new :class:`UsageCorrection` with the same bounds;
        none stays none): its ratio was learned against the old estimator's counts, and
        no one factor carries it over, since the two calibrations differ by script (the
        same ratio would over- or under-correct a session by its mix of prose, code and
        wide scripts). The usage anchors of the current epoch are pooled again, against
        the new estimator, the next time a context is measured.

        Returns:
            True when the estimator changed.

        Raises:
            ConfigError: ``tokenizer`` is not one the estimator is calibrated for.
        """
        current = self._cache.base
        if not self._default_estimator or not isinstance(current, HeuristicEstimator):
            return False
        if current.encoding == tokenizer:
            return False
        self._cache.base = HeuristicEstimator(image_tokens=current.image_tokens, encoding=tokenizer)
        self._memo = ProjectionMemo()
        self._cache.clear()
        self._pins.clear()
        if self.history.goal is not None:
            self.history.goal_tokens = self.estimator.text(self.history.goal)
        if self.correction is not None:
            self.correction = self.correction.fresh()
        return True

    @property
    def tools(self) -> tuple[Mapping[str, Any], ...]:
        """Tool schemas sent with every request: with a head, its (canonical) tool section."""
        return self.head.tools if self.head is not None else self._tools

    @tools.setter
    def tools(self, value: Sequence[Mapping[str, Any]]) -> None:
        if self.head is not None:
            self.head.set_tools(value)
        else:
            self._tools = tuple(value)

    @property
    def last_head(self) -> Head | None:
        """The head of the latest context projected for sending (not a measurement), or
        ``None`` (no head, or nothing projected yet)."""
        return self._last_head

    def open(self, entries: Iterable[Entry]) -> None:
        """Start from ``entries``, then create the session in the store (when there is
        one) and adopt the stored entries not seen yet."""
        for e in entries:
            self._adopt(e)
        if self.store is not None:
            from ctxengine.stores.base import SessionInfo

            self.store.create_session(SessionInfo(id=self.session_id, format="ctxengine"))
            for e in self.store.entries(self.session_id):
                if e.id not in self.history:
                    self._adopt(e)

    def resize(self, window: int) -> None:
        """Resolve the policy for a ``window``-token model from now on.

        Raises:
            ConfigError: the policy's reserve leaves no room in ``window``.
        """
        self.budget = self.policy.resolve(window)
        self._memo = ProjectionMemo()
        self._cache.clear()
        self._pins.clear()

    @property
    def entries(self) -> tuple[Entry, ...]:
        """The whole history, in append order."""
        return tuple(self.history.entries)

    def append(
        self,
        body: Body,
        *,
        entry_id: str | None = None,
        created_at: str | None = None,
        meta: Mapping[str, Any] | None = None,
        keep_work: bool = False,
    ) -> Entry:
        """Append a message (or record) to history and persist it.

        Args:
            body: a :class:`Message` (or a record).
            entry_id: id to use; default is the content hash chained to the parent.
            created_at: ISO-8601 time; default now (UTC).
            meta: extra fields kept with the entry.
            keep_work: a compaction record that starts a new epoch keeps the cached
                estimates and per-entry projection work of the old one (its kept tail and
                the entries after it are projected again at once: a background compaction
                adopted); by default they are dropped.

        Another writer of the same stored session (a thread or process with its own
        ``Session``) may have appended first: the store refuses the entry
        (:class:`~ctxengine.errors.StoreConflict`), the log adopts what was appended meanwhile
        and the entry is appended after it (a content-hash id is recomputed for its new
        parent).

        Returns:
            The new entry.

        Raises:
            StoreError: the store failed, or other writers kept appending first
                :data:`~ctxengine.policy.defaults.APPEND_RETRIES` times in a row.
        """
        for _ in range(APPEND_RETRIES):
            parent = self.history.leaf_id
            entry = self.history.new_entry(
                body, self.session_id, entry_id=entry_id, created_at=created_at, meta=meta
            )
            if self.store is not None:
                try:
                    self.store.append(self.session_id, [entry], expect_last_seq=entry.seq - 1)
                except StoreConflict:
                    self.sync()
                    if entry_id is not None and entry_id == body_hash(body, parent):
                        entry_id = None  # a content hash of the old parent: hash again
                    continue
            self._adopt(entry, keep_work=keep_work)
            return entry
        raise StoreError(
            f"append to session {self.session_id!r}: other writers appended first "
            f"{APPEND_RETRIES} times in a row"
        )

    def attach_scoped_rules(self, entry: Entry) -> list[Entry]:
        """After ``entry`` (just appended): when its message holds tool results and the
        head attaches path-scoped rules (:attr:`ContextAssembler.attaches
        <ctxengine.assembly.head.ContextAssembler.attaches>`), append one injected message
        per rules file that the answered calls load and that no earlier message of the
        history attached (:meth:`ContextAssembler.attachments
        <ctxengine.assembly.head.ContextAssembler.attachments>`). Returns the entries
        appended (often none)."""
        head, message = self.head, entry.message
        if head is None or message is None or not head.attaches or not message.tool_results:
            return []
        from ctxengine.assembly.head import SYNTHETIC_SCOPED_RULE, attachment_message

        ids = {r.call_id for r in message.tool_results}
        calls: list[ToolCallPart] = []
        entries = self.history.entries
        for e in reversed(entries[: max(0, len(entries) - 1)]):
            m = e.message
            if m is None or m.role != "assistant":
                continue
            calls.extend(c for c in m.tool_calls if c.id in ids)
            if len(calls) >= len(ids):
                break
        if self._attached is None or self._attached[0] > len(entries):
            self._attached = (0, set())
        start, attached = self._attached
        for e in entries[start:]:
            m = e.message
            if m is not None and m.meta.get("synthetic") == SYNTHETIC_SCOPED_RULE:
                attached.add(str(m.meta.get("rules_file")))
        self._attached = (len(entries), attached)
        out: list[Entry] = []
        for rule, hit in head.attachments(calls[::-1], attached):
            out.append(self.append(attachment_message(rule, hit)))
            attached.add(rule.path)
        return out

    def sync(self) -> int:
        """Adopt the entries other writers appended to the stored session since this log
        last saw it. Returns how many were adopted (0 without a store)."""
        if self.store is None:
            return 0
        fresh = self.store.entries(self.session_id, after_seq=len(self.history) - 1)
        adopted = 0
        for e in fresh:
            if e.id not in self.history:
                self._adopt(e)
                adopted += 1
        return adopted

    def _adopt(self, entry: Entry, *, keep_work: bool = False) -> None:
        if self.history.adopt(entry):
            if keep_work:
                self._memo.epoch = None
                self._memo.trim()
                return
            # A new epoch: work cached for the old one is not needed again.
            self._memo = ProjectionMemo()
            self._cache.clear()
            self._pins.clear()

    @property
    def work(self) -> tuple[CachingEstimator, ProjectionMemo]:
        """The caches of this log's work: estimates and per-entry projection work (handed to
        the log a background compaction is adopted into: :meth:`absorb`)."""
        return self._cache, self._memo

    def absorb(self, work: tuple[CachingEstimator, ProjectionMemo]) -> None:
        """Take over the estimates and the per-entry projection work of another log over the
        same entries (a private copy that computed a compaction now appended here), so that
        projecting the new epoch does not estimate and rewrite its entries again. The
        results are the same with or without it."""
        estimates, memo = work
        if estimates.base is self._cache.base:
            self._cache.absorb(estimates)
        self._memo.rewrites.update(memo.rewrites)
        self._memo.continuations.update(memo.continuations)
        self._memo.trim()

    def pins(self, tentative: Entry | None = None) -> tuple[Pinned, ...]:
        """The pinned items shown after the latest compaction, or after ``tentative`` (a
        compaction record not appended yet); none before any compaction
        (:func:`~.pins.epoch_pins`).

        Raises:
            PinBudgetExceeded: the pin records to show exceed the budget.
        """
        h = self.history
        if tentative is None:
            if h.compaction is None:
                return ()
            entry, at = h.entries[h.compaction], h.compaction
        else:
            entry, at = tentative, len(h)
        record = entry.body
        assert isinstance(record, CompactionRecord)
        found = self._pins.get(entry.id)
        if found is None:
            found = epoch_pins(h, self.policy, self.budget, self.estimator, at=at, record=record)
            if tentative is None:
                self._pins[entry.id] = found
        return found

    def pins_overhead(self) -> int:
        """Tokens of the pinned-items message a compaction keeping no tail would show (the
        most a compaction adds for pins); 0 without pins."""
        h = self.history
        if not h.pin_positions and not self.policy.auto_pins:
            return 0
        probe = CompactionRecord("", None, 0, 0, self.policy.name, "extractive")
        items = self.pins(h.tentative(probe, self.session_id))
        return self.estimator.message(pinned_message(items, "en")) if items else 0

    def project(self, extra: Sequence[Entry] = (), *, pruned: Iterable[str] = ()) -> Context:
        """The current context (no ladder run). ``extra`` records are projected as if
        appended (used to measure a tentative compaction); the results of the ``pruned``
        call ids are shown pruned as if a prune record named them."""
        h = self.history
        latest = next((e for e in extra if isinstance(e.body, CompactionRecord)), None)
        ctx = self._project(
            h.epoch_entries(extra),
            pruned=frozenset(pruned),
            pins=self.pins(latest),
            provisional=bool(extra),
        )
        epoch = h.compactions + sum(isinstance(e.body, CompactionRecord) for e in extra)
        return ctx if ctx.epoch == epoch else replace(ctx, epoch=epoch)

    def _project(
        self,
        entries: Sequence[Entry],
        cap: int | None = None,
        pruned: frozenset[str] = frozenset(),
        pins: Sequence[Pinned] = (),
        *,
        provisional: bool = False,
    ) -> Context:
        """``project()`` of ``entries`` (a subset of the log, see :meth:`History.epoch_entries`)
        with the truncate-at-source cap ``cap`` in tokens (default the budget's), the
        results of ``pruned`` call ids shown pruned besides those pruned already and the
        pinned items ``pins``; with a head, the head first (``provisional``: a context that
        is measured, not sent)."""
        h = self.history
        ctx = project(
            entries,
            settings(self.policy, self.budget, cap, recall_note=self.has_recall_tool),
            self.estimator,
            tools=self.tools if self.head is None else (),
            pins=pins,
            memo=self._memo if not pruned else None,
            pruned=h.pruned_ids | pruned if pruned else h.pruned_ids,
        )
        if self.head is None:
            return ctx
        return self._with_head(ctx, self.head, provisional)

    def _with_head(self, ctx: Context, assembler: ContextAssembler, provisional: bool) -> Context:
        """``ctx`` with the head of its epoch first: its system message, its tools and its
        tokens. Cache breaks the head reports are passed to :attr:`on_cache_break`."""
        head = assembler.build(
            ctx.compaction_id,
            self.estimator,
            messages=ctx.messages if assembler.scoped else (),
            provisional=provisional,
        )
        if not provisional:
            self._last_head = head
            fresh = assembler.breaks[self._breaks_seen :]
            self._breaks_seen = len(assembler.breaks)
            if self.on_cache_break is not None:
                for found in fresh:
                    self.on_cache_break(found)
        if head.message is None:
            return replace(ctx, tools=head.tools, tokens=ctx.tokens + head.tokens)
        return replace(
            ctx,
            messages=(head.message, *ctx.messages),
            sources=(None, *ctx.sources),
            tools=head.tools,
            tokens=ctx.tokens + head.tokens,
            preamble=None if ctx.preamble is None else ctx.preamble + 1,
        )

    @property
    def has_recall_tool(self) -> bool:
        """Whether the agent's tools (the head's, else the session's) include the recall
        tool (:data:`~ctxengine.policy.defaults.RECALL_TOOL_NAME`)."""
        tools = self.tools
        if self._recall_tools is None or self._recall_tools[0] is not tools:
            named = any(tool_name(t) == RECALL_TOOL_NAME for t in tools)
            self._recall_tools = (tools, named)
        return self._recall_tools[1]

    def instructions(self) -> str | None:
        """The compact instructions of the rules files in the head (for the summarizer), or
        ``None``."""
        return self._last_head.instructions if self._last_head is not None else None

    def measure(self, record: CompactionRecord, cap: int | None) -> tuple[Entry, Context]:
        """The entry ``record`` would be appended as, and the context it would give with
        the truncate-at-source cap ``cap`` (tokens); history is unchanged."""
        tentative = self.history.tentative(record, self.session_id)
        entries = self.history.entries_after(tentative)
        ctx = self._project(entries, cap, pins=self.pins(tentative), provisional=True)
        return tentative, ctx

    def context_tokens(self, ctx: Context) -> int:
        """Size of ``ctx`` in tokens: the usage anchor (latest usable assistant usage newer
        than the latest compaction and prune) plus the estimate of what follows it; the full
        estimate when there is no usable anchor (after a compaction, a reply reporting more
        prompt tokens than the window holds is none: it measured another conversation). The
        estimated part is scaled by :attr:`correction` (which first pools a new anchor's
        report, once: measuring the same context again gives the same size, which is kept
        for the last context measured while the history, estimator, correction and window
        stay as they were)."""
        sized = self._sized
        if sized is not None and sized[0] is ctx and _same_sizing(sized[1], self._sizing()):
            return sized[2]
        tokens = context_tokens(
            ctx, self.history, self.estimator, self.correction, window=self.budget.window
        )
        self._sized = (ctx, self._sizing(), tokens)
        return tokens

    def _sizing(self) -> tuple[Any, ...]:
        """What the size of a context depends on besides the context: the history (the
        object and its length), the estimator and the correction (the objects, and the
        reports pooled) and the window (:func:`_same_sizing` compares two)."""
        correction = self.correction
        return (
            self.history,
            self.estimator,
            correction,
            len(self.history),
            None if correction is None else (correction.observations, correction.ratio),
            self.budget.window,
        )
