"""The whole ctxengine exception tree, drawn once.

::

    CtxEngineError
    ├── ConfigError                 invalid configuration (reserve larger than the window, …)
    │   ├── UnknownFormat           a transcript format name that no importer has
    │   ├── RulesFileError          a rules file that cannot be loaded (front matter, cycle)
    │   └── PinBudgetExceeded       the pinned items alone exceed their budget
    ├── TranscriptError             a transcript file cannot be read (names file, line/JSON path)
    │   └── UnsupportedFormatError  a recognised format that has no importer yet
    ├── StoreError                  the session store failed or was asked for something missing
    │   ├── SessionNotFound
    │   ├── StoreMissing            a read found no store file at the path given
    │   ├── StoreConflict           another writer appended first (compare-and-append lost)
    │   └── StoreBusy               another writer held the write lock past the busy timeout
    │       └── StoreLockTimeout    a session's compaction lock stayed held past the wait
    ├── CompactionError             a compaction could not be carried out
    │   ├── NothingToCompact        no valid cut point leaves anything to summarize
    │   ├── StaleCompaction         a compaction prepared off the request path arrived
    │   │                           after the history it covered changed
    │   ├── SummaryRejected         a summary failed validation (never stored)
    │   ├── CompactionLoopError     consecutive failures tripped the circuit breaker
    │   ├── ContextFloorError       what every compaction keeps is over the trigger already
    │   ├── ThrashError             the context refilled to the trigger right after
    │   │                           compacting, several times in a row
    │   └── CompactionVetoed        a before_compact hook vetoed the plan
    ├── ProviderError               a model provider call failed
    │   ├── ContextOverflow         the request did not fit the model's window
    │   │   └── ProviderOverflow    the provider rejected a request as too large (its numbers)
    │   ├── TransientProviderError  5xx, timeout or connection failure (retried, then raised)
    │   │   └── RateLimited         429: too many requests (carries retry-after seconds)
    │   ├── ProviderAuthError       401/403: missing or rejected credentials
    │   ├── ProviderRequestError    any other rejected request (4xx), not worth retrying
    │   └── Cancelled               the caller cancelled the call (stream closed)
    ├── InvalidRequest              a rendered request breaks a provider protocol
    ├── HookError                   a before_compact / after_compact hook raised
    └── InvariantError              an engine invariant broke (a bug in ctxengine, not the input)

Every error carries its numbers as attributes, so callers never parse messages.
"""

from __future__ import annotations

import math
import os
from typing import Any


class CtxEngineError(Exception):
    """Base class of every error raised by ctxengine.

    Every one pickles with its message and attributes (:meth:`__reduce__`), whatever its
    constructor takes, so that an error raised in a worker process (``replay --jobs``, a Ray
    task) reaches the parent as it was raised.
    """

    def __reduce__(self) -> tuple[Any, ...]:
        """Rebuilt by :func:`_restore` from the class, the message and the attributes."""
        return (_restore, (type(self), self.args, dict(self.__dict__)))


def _restore(
    cls: type[CtxEngineError], args: tuple[Any, ...], state: dict[str, Any]
) -> CtxEngineError:
    """The error ``cls`` with ``args`` and the attributes ``state``, its constructor not
    called (it may take other arguments than the message)."""
    exc = cls.__new__(cls)
    Exception.__init__(exc, *args)
    exc.__dict__.update(state)
    return exc


class ConfigError(CtxEngineError):
    """Configuration that can never work, e.g. a reserve at least as large as the window."""


class UnknownFormat(ConfigError):
    """A transcript format was asked for by name and no importer has that name.

    Attributes:
        name: the name asked for.
        known: the names that can be asked for, in sniffing order.
    """

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown format {name!r}; known formats: {', '.join(known)}")


class RulesFileError(ConfigError):
    """A rules file (AGENTS.md, CLAUDE.md, a ``.cursor/rules`` rule …) that cannot be loaded:
    malformed front matter, a field of the wrong type, or an import cycle.

    Attributes:
        path: the file, as shown to the user.
        line: 1-based line of the problem, or ``None`` for the whole file.
        reason: what is wrong.
    """

    def __init__(self, path: str, reason: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {reason}")


class SkillFileError(ConfigError):
    """A skill (a ``SKILL.md`` file) that cannot be loaded: no front matter, a missing or
    empty ``name`` or ``description``, a field of the wrong type, malformed front matter, or a
    file that cannot be read.

    Attributes:
        path: the file, as shown to the user.
        line: 1-based line of the problem, or ``None`` for the whole file.
        reason: what is wrong.
    """

    def __init__(self, path: str, reason: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {reason}")


class PinBudgetExceeded(ConfigError):
    """The pinned items alone exceed their budget (``Budget.pins_max``): nothing was pinned
    (from :meth:`~ctxengine.engine.Session.pin`), or no compaction could show them all.

    Attributes:
        tokens: tokens of the pinned items, with the one being pinned.
        budget: the budget in tokens.
        items: ``(label, tokens)`` of each pinned item, largest first.
    """

    def __init__(self, tokens: int, budget: int, items: tuple[tuple[str, int], ...]) -> None:
        self.tokens = tokens
        self.budget = budget
        self.items = items
        largest = "; ".join(f"{label}: {n:,} tokens" for label, n in items[:3])
        super().__init__(
            f"the pinned items take {tokens:,} tokens, over their budget of {budget:,} "
            f"(largest: {largest}); unpin some (Session.unpin(pin id or text)), pin "
            "shorter texts, or raise policy.pins_max_tokens"
        )


class TranscriptError(CtxEngineError):
    """A transcript file could not be imported.

    Attributes:
        path: the file (as given).
        line: 1-based line number for line-oriented formats, else ``None``.
        json_path: JSON path (``$.messages[3].content``) for document formats, else ``None``.
        expected: what the importer expected to find there.
    """

    def __init__(
        self,
        path: str,
        expected: str,
        *,
        line: int | None = None,
        json_path: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.json_path = json_path
        self.expected = expected
        where = path
        if line is not None:
            where += f":{line}"
        if json_path is not None:
            where += f" at {json_path}"
        super().__init__(f"{where}: {expected}")


class UnsupportedFormatError(TranscriptError):
    """The file is in a known agent format that ctxengine does not import yet."""

    def __init__(self, path: str, format_name: str) -> None:
        self.format_name = format_name
        super().__init__(path, f"format not supported yet: {format_name}")


class StoreError(CtxEngineError):
    """The session store failed (I/O, schema) or was asked for something it lacks.

    Attributes:
        stored: entries a batched import committed before it failed (``0``: the store is as
            it was before the call).
    """

    stored: int = 0


class SessionNotFound(StoreError):
    """No session with this id (or unique id prefix) is stored.

    Attributes:
        session_id: the id or prefix looked for.
        where: the store path when there was no store there at all, else ``None``.
    """

    def __init__(self, session_id: str, *, where: str | None = None) -> None:
        self.session_id = session_id
        self.where = where
        missing = f" (no store at {where})" if where is not None else ""
        super().__init__(f"no stored session matches {session_id!r}{missing}")


class StoreMissing(StoreError):
    """A read-only open found no store at ``path`` (nothing was created).

    Attributes:
        path: the database file looked for.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(f"no store at {path} (nothing has been imported there yet)")


class StoreBusy(StoreError):
    """Another writer (thread or process) held the store's write lock for longer than the
    caller was willing to wait; nothing of the write was stored.

    Attributes:
        path: the database file (``None`` for a lock that is not the database's).
        operation: what was being written.
        timeout_s: how long the caller waited, in seconds.
    """

    def __init__(self, path: str | None, operation: str, timeout_s: float, *, message: str = ""):
        self.path = path
        self.operation = operation
        self.timeout_s = timeout_s
        super().__init__(
            message
            or (
                f"sqlite store {path}: {operation} failed: store busy (another writer held the "
                f"write lock longer than the {timeout_s:g} s busy timeout)"
            )
        )


class StoreConflict(StoreError):
    """An append expected the session log to end at seq ``expected``, but another writer
    (thread or process) appended first and it ends at ``actual``. Nothing of the append was
    stored; re-read the entries after ``expected``, rebuild the entries on top of them, retry.

    Attributes:
        session_id: the session appended to.
        expected: the last seq the caller had seen (``-1``: an empty log).
        actual: the last seq stored (``-1``: an empty log).
    """

    def __init__(self, session_id: str, expected: int, actual: int) -> None:
        self.session_id = session_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"session {session_id!r} moved on: the append expected its last entry at seq "
            f"{expected}, the store holds seq {actual}; re-read the entries after seq "
            f"{expected} and retry"
        )


class StoreLockTimeout(StoreBusy):
    """A session's compaction lock was still held by another thread or process after
    ``timeout_s`` seconds of waiting.

    Attributes:
        session_id: the session whose lock was wanted.
        timeout_s: how long the caller waited, in seconds.
    """

    def __init__(self, session_id: str, timeout_s: float) -> None:
        self.session_id = session_id
        super().__init__(
            None,
            f"compact session {session_id!r}",
            timeout_s,
            message=f"the compaction lock of session {session_id!r} is still held by another "
            f"writer after {timeout_s:g} s",
        )


class CompactionError(CtxEngineError):
    """A compaction could not be carried out; history is unchanged."""


class NothingToCompact(CompactionError):
    """No valid cut point leaves a non-empty prefix to summarize."""


class StaleCompaction(CompactionError):
    """A compaction prepared off the request path cannot be adopted any more: the history it
    was made from changed before its result arrived (another compaction, or entries it
    covered withdrawn). Nothing is appended.

    Attributes:
        reason: what changed, in words.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"stale compaction: {reason}")


class SummaryRejected(CompactionError):
    """A summary failed validation and was not stored.

    Attributes:
        reason: short machine-readable reason (``"empty"``, ``"inflated"``, ``"length"`` …).
        tokens_before / tokens_after: context sizes in tokens, when known.
    """

    def __init__(
        self,
        reason: str,
        detail: str = "",
        *,
        tokens_before: int | None = None,
        tokens_after: int | None = None,
    ) -> None:
        self.reason = reason
        self.tokens_before = tokens_before
        self.tokens_after = tokens_after
        msg = f"summary rejected: {reason}"
        if detail:
            msg += f" ({detail})"
        super().__init__(msg)


class CompactionLoopError(CompactionError):
    """``failures`` consecutive compactions freed nothing; the circuit breaker is open."""

    def __init__(self, failures: int, tokens: int, threshold: int, why: str = "") -> None:
        self.failures = failures
        self.tokens = tokens
        self.threshold = threshold
        self.why = why
        super().__init__(
            f"{failures} consecutive compactions failed to bring the context "
            f"({tokens} tokens) under the trigger ({threshold} tokens)"
            + (f": {why}" if why else "")
        )


#: How a floor names the newest user message (:class:`ContextFloorError`'s parts).
NEWEST_USER_MESSAGE = "newest user message"


class ContextFloorError(CompactionError):
    """What every compaction keeps (the floor: system prompt, tool schemas, re-injected rules,
    todo list and background tasks, the smallest continuation state, the newest exchange, a
    newest user message awaiting its answer, the margin kept under the trigger) is already
    at or over the trigger less the room a compaction must leave free, so no compaction can
    bring the context under the trigger for more than a call or two. Raised once, before any
    summary is written, instead of compacting again and again; history is unchanged.

    Attributes:
        floor: tokens of the floor.
        trigger: the trigger it was compared with, in tokens.
        window: the model's window, in tokens.
        parts: the floor's parts, largest first, as ``(name, tokens)``.
        free: tokens a compaction must leave free under the trigger (0: none).
    """

    def __init__(
        self,
        floor: int,
        trigger: int,
        window: int,
        parts: tuple[tuple[str, int], ...],
        free: int = 0,
    ) -> None:
        self.floor = floor
        self.trigger = trigger
        self.window = window
        self.parts = parts
        self.free = free
        largest = ", ".join(f"{name} {tokens:,}" for name, tokens in parts[:3])
        room = f" with {free:,} tokens to spare" if free else ""
        advice = (
            "shorten these (rules files, tool schemas, system prompt), re-inject less, or use "
            "a model with a larger window"
        )
        if parts and parts[0][0] == NEWEST_USER_MESSAGE:
            advice = (
                "the newest user message is never cut nor summarized before it is answered: "
                "send a shorter one, or use a model with a larger window"
            )
        super().__init__(
            f"no compaction can bring the context under the trigger of {trigger:,} tokens"
            f"{room} (window {window:,}): what every compaction keeps is {floor:,} tokens "
            f"already (largest parts: {largest}); {advice}"
        )


class ThrashError(CompactionError):
    """Automatic compaction stopped: the context refilled to the trigger within a few model
    calls of the previous compaction, several times in a row (Claude Code 2.1.89 stops after
    3). A manual compaction, a larger window or a change of what refills the context lets it
    go on.

    Attributes:
        compactions: automatic compactions in the streak.
        calls: model calls between each of them and the next refill, oldest first.
        tokens: the context size now, in tokens.
        trigger: the trigger, in tokens.
        contributors: ``(label, tokens)`` of what fills the context, re-injected parts
            first, then tool results by tool, then pinned items.
        advice: what to change, one sentence per contributor kind found.
    """

    def __init__(
        self,
        compactions: int,
        calls: tuple[int, ...],
        tokens: int,
        trigger: int,
        contributors: tuple[tuple[str, int], ...],
        advice: tuple[str, ...],
    ) -> None:
        self.compactions = compactions
        self.calls = calls
        self.tokens = tokens
        self.trigger = trigger
        self.contributors = contributors
        self.advice = advice
        within = ", ".join(str(n) for n in calls)
        top = "; ".join(f"{label}: {n:,} tokens" for label, n in contributors) or "none found"
        super().__init__(
            f"automatic compaction stopped: the context refilled to the trigger "
            f"({trigger:,} tokens) within {within} model calls of each of the last "
            f"{compactions} compactions; it is now {tokens:,} tokens. Top contributors: "
            f"{top}. " + " ".join(advice)
        )


class CompactionVetoed(CompactionError):
    """A ``before_compact`` hook vetoed the plan; history is unchanged.

    Attributes:
        why: the reason the hook gave.
    """

    def __init__(self, why: str) -> None:
        self.why = why
        super().__init__(f"compaction vetoed by a before_compact hook: {why}")


class HookError(CtxEngineError):
    """A ``before_compact`` or ``after_compact`` hook raised: the caller's code, not a failed
    compaction, so it is not counted towards the failure breaker. For ``before_compact``
    nothing was stored; for ``after_compact`` the compaction was stored already.

    Attributes:
        hook: ``"before_compact"`` or ``"after_compact"``.
        error: what the hook raised (also the ``__cause__``).
    """

    def __init__(self, hook: str, error: BaseException) -> None:
        self.hook = hook
        self.error = error
        super().__init__(f"the {hook} hook raised {type(error).__name__}: {error}")


class InvariantError(CtxEngineError):
    """An engine invariant broke (for example a projection that changed before its tail
    within one epoch): a bug in ctxengine, not bad input."""


class ProviderError(CtxEngineError):
    """A model provider call failed."""


class ContextOverflow(ProviderError):
    """The request does not fit the model's context window.

    Attributes:
        tokens: the request size in tokens (reported or estimated).
        limit: the usable window in tokens.
    """

    def __init__(self, tokens: int, limit: int, detail: str = "") -> None:
        self.tokens = tokens
        self.limit = limit
        msg = f"context overflow: {tokens} tokens > limit {limit}"
        if detail:
            msg += f" ({detail})"
        super().__init__(msg)


class InvalidRequest(CtxEngineError):
    """A rendered request body breaks the provider protocol.

    Attributes:
        problems: one human-readable line per violated invariant.
    """

    def __init__(self, provider: str, problems: list[str]) -> None:
        self.provider = provider
        self.problems = problems
        super().__init__(f"invalid {provider} request: " + "; ".join(problems[:5]))


class ProviderOverflow(ContextOverflow):
    """A provider rejected the request as larger than its window (or its payload limit).

    ``tokens`` and ``limit`` are what the provider reported, or 0 when its message carried no
    numbers (``reported`` tells which). The engine may re-raise with its own estimate.

    Attributes:
        status: HTTP status (400, 413, …) or ``None``.
        provider_message: the provider's error text, verbatim.
        reported: True when both numbers came from the provider's message.
    """

    def __init__(
        self,
        tokens: int | None,
        limit: int | None,
        *,
        status: int | None = None,
        provider_message: str = "",
    ) -> None:
        self.status = status
        self.provider_message = provider_message
        self.reported = tokens is not None and limit is not None
        super().__init__(tokens or 0, limit or 0, provider_message[:300])

    def __str__(self) -> str:
        if self.reported:
            return super().__str__()
        status = f"HTTP {self.status}: " if self.status is not None else ""
        return f"context overflow (sizes not reported): {status}{self.provider_message[:300]}"


class TransientProviderError(ProviderError):
    """A call failed in a way that may pass on retry (5xx, timeout, connection reset).

    Attributes:
        status: HTTP status, or ``None`` for timeouts and connection errors.
        attempts: attempts made before giving up (set by the retry loop; 1 before it).
        retry_after: seconds the provider asked us to wait (``retry-after``), else ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        attempts: int = 1,
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        self.attempts = attempts
        self.retry_after = retry_after
        self.detail = message
        super().__init__(message)

    def __str__(self) -> str:
        where = f"HTTP {self.status}" if self.status is not None else "no response"
        return f"provider call failed after {self.attempts} attempt(s) ({where}): {self.detail}"


class RateLimited(TransientProviderError):
    """HTTP 429. ``retry_after`` is the provider's requested wait in seconds, if it sent one."""

    def __init__(
        self, message: str, *, retry_after: float | None = None, attempts: int = 1
    ) -> None:
        super().__init__(message, status=429, attempts=attempts, retry_after=retry_after)


class ProviderAuthError(ProviderError):
    """HTTP 401/403: the API key is missing, wrong or lacks access. Set the provider's key
    variable (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``) or pass ``api_key``."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class ProviderRequestError(ProviderError):
    """The provider rejected the request (4xx other than overflow, auth and rate limits) or
    failed in a way a retry will not fix.

    Attributes:
        status: HTTP status, or ``None``.
        kind: ``"bad_request"`` or ``"other"``.
    """

    def __init__(self, message: str, *, status: int | None = None, kind: str = "other") -> None:
        self.status = status
        self.kind = kind
        super().__init__(message)


class Cancelled(ProviderError):
    """The caller cancelled the call; the stream was closed and nothing was returned."""


def seconds_from_env(name: str, default: float) -> float:
    """The environment variable ``name`` read as a number of seconds (a duration the user
    sets: a busy timeout, a progress delay), else ``default`` when it is unset or blank.

    Raises:
        ConfigError: the variable is set but not a finite number of seconds >= 0, naming it
            and the value found.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"{name}={raw!r}: expected a finite number of seconds >= 0")
    return value


def describe(exc: BaseException) -> str:
    """``"<ExceptionType>: <first line of its message>"`` (the type alone when the message is
    empty): one line for a report that lists failures and goes on."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
