"""Stateless calls: the context for a conversation that arrives whole on every request, as a
framework hook (LangChain middleware) or a proxy sees it, at the speed of a live session.

A stateless caller hands over every message of the conversation on each request. Opening a
fresh :class:`~.session.Session` over them costs a compaction from scratch on every request
past the trigger, and compacts differently from a live session (one compaction over the whole
history, where a live session made a chain of them as it grew). :class:`PrefixCache` keeps a
*checkpoint* of each request it served: the session log the request left (its messages and
the ladder's prune and compaction records), the session's :class:`~.session.LadderState` and
the context it returned, keyed by the content hash of the request's messages. A later request
whose first k messages are those of an earlier request continues from that request's
checkpoint: only the messages after the k are appended and one ``prepare()`` runs, exactly
what a live session that saw the same requests does.

**Keys.** Each message has a canonical hash (:func:`message_digest`: blake2b-128 of its
JSON form, so usage, model, stop reason and meta count);
the key of a request's first j messages is the rolling hash ``H(j) = blake2b(H(j-1) +
hash(message j))`` started from a hash of the configuration (window, policy, tools, and the
kinds of estimator and summarizer). A request finds the checkpoint of its longest prefix
that has one. An earlier message edited, added or removed changes every key from that
message on: such a request continues from a checkpoint before the change, or from scratch.
A request whose messages are the very objects (``is``) of a cached request's first j
messages skips hashing those j (messages are frozen values); only the rest is hashed. So does
a request of new objects (a caller that rebuilds every message on each call) whose first
messages equal, ``meta`` included, those of the newest checkpoint of one of the
conversations served most recently (:data:`~ctxengine.policy.defaults.
STATELESS_CONTENT_CANDIDATES`): one comparison of the messages by ``==`` (``meta``
included), and of the JSON of the metas that ``==`` compares more loosely (numbers; the
checkpoint's written once per message).

**Exactness.** The context a cached call returns is the one a live session returns when it
appended the same messages and called ``prepare()`` at the same requests: the call resumes
that session (the cached one, or one opened over the checkpoint's entries with its ladder
state restored, which projects the same contexts: DESIGN invariant 1). Where they differ:

* a request whose earlier requests were not served (or were evicted, or served under another
  configuration) continues from the longest cached prefix, or compacts from scratch: a live
  session would have had the chance to compact at the requests it missed;
* the same request served twice returns the context of the first time (a live session
  calling ``prepare()`` twice without appending gives the same context, save for a prune
  that ``policy.prune_when == "always"`` would add on the second call);
* a call whose ``prepare()`` raises leaves no checkpoint: the next request continues from
  the checkpoint before it (a live session keeps the failure count and the thrash stop).

**Memory.** At most ``size`` checkpoints (:data:`~ctxengine.policy.defaults.
STATELESS_CACHE_SIZE` by default), least recently used dropped first. The checkpoints of one
conversation share its list of messages and its log (append-only lists; a branch copies
them once): each adds its context and a few counters. One live :class:`~.session.Session`
per conversation (the one at its newest checkpoint) is kept warm; continuing from an older
checkpoint of the same conversation (a branch: an edited or regenerated request) opens a
session over that checkpoint's entries, O(entries).

**Store.** With a :class:`~ctxengine.stores.base.CheckpointStore` (the SQLite store) every
checkpoint is also written there, as the entries it added after the one it continued from, so
another process (a restarted proxy, another worker) continues the conversation from the
store when its memory has no checkpoint for it.
"""

from __future__ import annotations

import hashlib
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import chain, islice
from operator import attrgetter, is_
from typing import Any, Literal

import orjson

from ctxengine.errors import StoreError
from ctxengine.model import Entry, Message, ToolResultPart
from ctxengine.model.checks import check_message
from ctxengine.model.codec import canonical_json, entry_from_dict, entry_to_dict
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.policy.defaults import STATELESS_CACHE_SIZE, STATELESS_CONTENT_CANDIDATES
from ctxengine.projection.context import Context
from ctxengine.stores.base import CheckpointStore, StoredCheckpoint
from ctxengine.summarizers.base import Summarizer
from ctxengine.tokens.base import Estimator

from .events import LadderEvent
from .session import LadderState, Session

__all__ = ["SESSION_ID", "CacheStats", "PrefixCache", "Served", "message_digest", "prepare"]

#: Session id of the sessions stateless calls open (in memory; never stored as a session).
SESSION_ID = "stateless"
#: Bytes of each hash (blake2b digest size), as the content addresses of entries.
_DIGEST = 16
_META = attrgetter("meta")
_PARTS = attrgetter("parts")
_CONTENT = attrgetter("content")
_IS_RESULT = ToolResultPart.__instancecheck__
_IS_STR = str.__instancecheck__
#: Types whose values ``==`` may find equal to values of another type (``1 == 1.0 == True``).
_SCALARS = frozenset({bool, int, float})
#: Messages from which a request of a checkpoint's own objects has the checkpoint's loose
#: metas noted (:meth:`_Loose.note`: about 1.5 µs a message, once) rather than a pass of
#: ``is`` over all its messages at every call (about 15 ns a message).
_NOTE_FROM = 1_000

Source = Literal["memory", "store", "none"]


def _plain(value: Any) -> Any:
    """orjson's ``default`` for :func:`message_digest`: a mapping (a read-only ``meta``) as a
    dict.

    Raises:
        TypeError: any other value orjson cannot write.
    """
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def message_digest(message: Message) -> bytes:
    """The canonical hash of ``message``: blake2b-128 (16 bytes) of its orjson form (every
    field of the message and its parts, in declaration order; ``meta`` keys sorted), so
    role, parts, usage, model, stop reason and meta all count.

    Raises:
        TypeError: a ``meta`` value that JSON cannot hold.
    """
    data = orjson.dumps(message, default=_plain, option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(data, digest_size=_DIGEST).digest()


def _chain(key: bytes, digest: bytes) -> bytes:
    """The rolling hash after one more message."""
    return hashlib.blake2b(key + digest, digest_size=_DIGEST).digest()


@dataclass(frozen=True, slots=True, eq=False)
class Served:
    """What one stateless call produced.

    Attributes:
        context: the context for the model call.
        reused: messages of the request found in a checkpoint (0: compacted from scratch;
            all of them: the same request served before).
        source: where that checkpoint came from: ``"memory"``, ``"store"`` or ``"none"``.
        events: the ladder steps this call took (prune, compaction, failure …).
        tokens: the context's size as the ladder measures it, in tokens
            (:meth:`Session.context_tokens <ctxengine.engine.Session.context_tokens>`: the
            usage anchor plus the estimate of what follows it, scaled by the session's usage
            correction); ``context.tokens`` is the plain estimate.
        log: the session log the call left (a property: see :attr:`log`).

    Two are equal when every attribute, ``log`` included, is.
    """

    context: Context
    reused: int
    source: Source
    events: tuple[LadderEvent, ...]
    tokens: int
    #: the session's entries (an append-only list) and how many of them are this call's log
    _entries: Sequence[Entry] = field(repr=False)
    _size: int = field(repr=False)

    @property
    def log(self) -> tuple[Entry, ...]:
        """The session log the call left: the request's messages and the ladder's records
        (prune, compaction …), as a live session over the same requests holds it (entries
        of session :data:`SESSION_ID`; a caller that stores them under a session of its own
        replaces ``session_id``). Copied when read (a call does not copy its log, O(entries),
        for a caller that never reads it)."""
        return tuple(islice(self._entries, self._size))

    def _key(self) -> tuple[Any, ...]:
        return (self.context, self.reused, self.source, self.events, self.tokens, self.log)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Served):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())


@dataclass(frozen=True, slots=True)
class CacheStats:
    """Calls a :class:`PrefixCache` served, by where their checkpoint came from.

    Attributes:
        memory / store: calls that continued from a checkpoint in memory / in the store.
        none: calls compacted from scratch (no checkpoint for any prefix).
        repeated: calls whose whole request was a checkpoint (counted in ``memory`` or
            ``store`` too).
        rebuilt: calls that opened a session over a checkpoint's entries (a branch, or a
            checkpoint read from the store) instead of resuming the warm one.
    """

    memory: int = 0
    store: int = 0
    none: int = 0
    repeated: int = 0
    rebuilt: int = 0


@dataclass(slots=True)
class _Checkpoint:
    """One served request: its messages (``messages[:count]``), the log it left
    (``log[:size]``), its ladder state, context and the context's measured size
    (``tokens``), and the session left there while no later call has moved it on.
    ``messages`` and ``log`` are shared with the later checkpoints of the conversation
    (append-only lists), and so is ``loose``: which of its messages have metas that ``==``
    compares more loosely than JSON."""

    key: bytes
    config: bytes
    messages: list[Message]
    count: int
    log: list[Entry]
    size: int
    state: LadderState
    context: Context
    session: Session | None
    tokens: int
    loose: _Loose
    recovered: bool = False


def _request(messages: Sequence[Message]) -> Sequence[Message]:
    """``messages``, not empty (its items are checked by :func:`_check`).

    Raises:
        ValueError: no messages.
    """
    if not messages:
        raise ValueError("a stateless call needs at least one message")
    return messages


def _loose(value: Any) -> bool:
    """``value`` (a ``meta`` or a value in one) holds something that ``==`` may find equal to
    a value JSON writes otherwise: a number or a boolean (``1 == 1.0 == True``), a key that
    is not a string, or a value of a type JSON has no form of; strings, ``None``, lists,
    tuples and mappings of those compare as their JSON does."""
    kind = type(value)
    if kind is str or value is None:
        return False
    if kind is dict or (kind not in _SCALARS and isinstance(value, Mapping)):
        return not all(map(_IS_STR, value)) or any(map(_loose, value.values()))
    if kind is list or kind is tuple:
        return any(map(_loose, value))
    return kind in _SCALARS or not isinstance(value, str)


def _inner_metas(message: Message) -> list[Any]:
    """The ``meta`` of each part of ``message``, then of each tool result's content."""
    parts = message.parts
    results = chain.from_iterable(map(_CONTENT, filter(_IS_RESULT, parts)))
    return [*map(_META, parts), *map(_META, results)]


def _json(metas: Iterable[Any]) -> bytes:
    """``metas`` as a JSON list, as :func:`message_digest` writes a ``meta`` (keys sorted).

    Raises:
        TypeError: a ``meta`` value that JSON cannot hold.
    """
    return orjson.dumps(list(metas), default=_plain, option=orjson.OPT_SORT_KEYS)


def _joined(kept: list[bytes], indices: list[int], stored: Sequence[Message], read: Any) -> bytes:
    """The JSON list of ``read(stored[i])`` for each i of ``indices`` (a prefix of the
    indices ``kept`` is parallel to), from the JSON of each kept in ``kept``: those not kept
    yet are written and kept first.

    Raises:
        TypeError: a ``meta`` value that JSON cannot hold.
    """
    for i in indices[len(kept) :]:
        kept.append(orjson.dumps(read(stored[i]), default=_plain, option=orjson.OPT_SORT_KEYS))
    return b"[" + b",".join(kept[: len(indices)]) + b"]"


@dataclass(slots=True)
class _Loose:
    """Which messages of a conversation have metas that ``==`` compares more loosely than
    JSON (:func:`_loose`): the indices, ascending, of those whose own ``meta`` does
    (``own``) and of those whose parts' or tool result contents' metas do (``inner``),
    among the first ``upto`` messages (noted when a comparison first needs
    them), and the JSON of those metas (``own_json``, ``inner_json``: parallel to the
    first indices, written when a comparison first needs them). Shared, like their message
    list, by the checkpoints of one conversation (append-only): a checkpoint of ``count``
    messages reads the indices below ``count``."""

    own: list[int] = field(default_factory=list)
    inner: list[int] = field(default_factory=list)
    upto: int = 0
    own_json: list[bytes] = field(default_factory=list)
    inner_json: list[bytes] = field(default_factory=list)

    def note(self, messages: Sequence[Message], n: int) -> None:
        """Note the loose ones among ``messages[:n]`` (the conversation's messages) that
        are not noted yet."""
        for k in range(self.upto, n):
            m = messages[k]
            if m.meta and _loose(m.meta):
                self.own.append(k)
            if any(map(_loose, filter(None, _inner_metas(m)))):
                self.inner.append(k)
        self.upto = max(self.upto, n)

    def clean(self, n: int) -> bool:
        """None of the first ``n`` messages (noted) has loose metas."""
        return (not self.own or self.own[0] >= n) and (not self.inner or self.inner[0] >= n)

    def same(self, stored: Sequence[Message], head: Sequence[Message], n: int) -> bool:
        """The metas of ``head[:n]`` are those of ``stored[:n]`` as JSON, given that the
        messages are equal by ``==`` (which compares ``meta`` too, as the same JSON save
        where ``stored`` holds a loose value): only the messages noted here are read, and
        the JSON of those of ``stored`` is written once.

        Raises:
            TypeError: a ``meta`` value that JSON cannot hold.
        """
        if self.upto < n:
            self.note(stored, n)
        own = self.own[: bisect_left(self.own, n)]
        if own and _json(map(_META, map(head.__getitem__, own))) != _joined(
            self.own_json, own, stored, _META
        ):
            return False
        inner = self.inner[: bisect_left(self.inner, n)]
        return not inner or _json(map(_inner_metas, map(head.__getitem__, inner))) == _joined(
            self.inner_json, inner, stored, _inner_metas
        )


def _same_messages(stored: list[Message], head: list[Message], loose: _Loose, n: int) -> bool:
    """``head`` holds the ``n`` messages of ``stored``: equal by ``==`` (every field and
    ``meta`` of the messages, their parts and tool result contents), and their metas the
    same JSON, as :func:`message_digest` writes them, where ``==`` is looser (``1 == 1.0 ==
    True``: :meth:`_Loose.same`).

    Raises:
        TypeError: a ``meta`` value that JSON cannot hold.
    """
    return stored == head and loose.same(stored, head, n)


def _same_prefix(found: _Checkpoint, request: Sequence[Message], j: int) -> bool:
    """``request[:j]`` is ``found.messages[:j]``: the same message objects, or equal
    messages (:func:`_same_messages`).

    A request that continues a checkpoint holds its very objects: one comparison of the
    lists, which takes an object as equal to itself without calling ``==`` on it (a loop
    in C), decides, unless the checkpoint's metas hold loose values (:class:`_Loose`) and
    some object is another, equal one: a pass of ``is`` finds none, else the JSON of those
    metas decides. From :data:`_NOTE_FROM` messages on, which metas are loose is noted
    first (once per message; a pass of ``is`` costs about 1 % of noting a message, per
    message, every call).

    Raises:
        TypeError: a ``meta`` value that JSON cannot hold.
    """
    stored = found.messages
    mine = stored if len(stored) == j else stored[:j]
    head = request if type(request) is list and len(request) == j else request[:j]
    if not isinstance(head, list):
        head = list(head)
    if mine != head:
        return False
    loose = found.loose
    if j >= _NOTE_FROM:
        loose.note(stored, j)
        if loose.clean(j):
            return True
    return all(map(is_, mine, head)) or loose.same(mine, head, j)


def _check(request: Sequence[Message], start: int) -> None:
    """Check that ``request[start:]`` holds messages only, with fields of the right types
    (:func:`~ctxengine.model.checks.check_message`).

    Raises:
        TypeError: an item is not a :class:`~ctxengine.model.Message`, or one of its fields
            has the wrong type (named by index and field, e.g. ``messages[3].parts[1]:
            ToolCallPart.arguments must be …``).
        ValueError: a message's role is not one of :data:`~ctxengine.model.ROLES`.
    """
    for n in range(start, len(request)):
        check_message(request[n], f"messages[{n}]")


def _kind(obj: object) -> str | None:
    """How a configuration names an estimator or summarizer: its class (with the tokenizer
    an estimator is calibrated for, when it names one), ``None`` for the default."""
    if obj is None:
        return None
    kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
    encoding = getattr(obj, "encoding", None)
    return f"{kind}[{encoding}]" if isinstance(encoding, str) else kind


class PrefixCache:
    """Checkpoints of stateless calls, so that a conversation seen again with a longer tail
    continues from its earlier compactions (see the module docstring).

    Args:
        size: most checkpoints kept in memory (one per request served), least recently used
            dropped first.
        store: also keep every checkpoint here, and look here when memory has none (the
            SQLite store).
        estimator: the token estimator of every session (default
            :class:`~ctxengine.tokens.HeuristicEstimator`, not calibrated for a tokenizer);
            part of the configuration, by class (and calibrated tokenizer) in the store's
            keys.
        summarizer: the continuation-state writer of every session (default: the one the
            policy names); part of the configuration, by class in the store's keys.
        prime_ledgers: the sessions analyse each message for the ledgers as it arrives
            (:class:`Session <ctxengine.engine.Session>`'s ``prime_ledgers``).
        shared: other processes serve the same conversations through the same ``store``
            (proxy workers): a request whose longest checkpoint in memory is shorter than the
            request also looks in the store for a longer one (another process may have
            served the requests since), so that a conversation continues from its newest
            compaction whichever process serves it. One store query more per request.

    One cache may be shared by the threads of a process; calls of one conversation should
    not run at the same time (the second one opens a session of its own and does the work
    again).

    Messages are values: a message object a checkpoint holds is taken as unchanged when a
    request holds it again (compared by identity), so a ``meta`` dict changed in place after
    it was served is not seen; edit a message by replacing it
    (``dataclasses.replace(message, meta=...)``), which changes the keys from it on.

    Raises:
        ValueError: ``size`` below 1.
    """

    def __init__(
        self,
        size: int = STATELESS_CACHE_SIZE,
        *,
        store: CheckpointStore | None = None,
        estimator: Estimator | None = None,
        summarizer: Summarizer | None = None,
        prime_ledgers: bool = False,
        shared: bool = False,
    ) -> None:
        if size < 1:
            raise ValueError(f"a prefix cache holds at least 1 checkpoint, got size={size}")
        self.size = size
        self.store = store
        self.estimator = estimator
        self.summarizer = summarizer
        self.prime_ledgers = prime_ledgers
        self.shared = shared
        self._lru: OrderedDict[bytes, _Checkpoint] = OrderedDict()
        #: per message object (by ``id``) that ends a checkpoint, per configuration, the key
        #: of the newest such checkpoint
        self._tips: dict[int, dict[bytes, bytes]] = {}
        self._lock = threading.Lock()
        self._configs: dict[tuple[int, int, bytes, str | None], tuple[Policy, bytes]] = {}
        self._stats: dict[str, int] = dict.fromkeys(asdict(CacheStats()), 0)

    def __len__(self) -> int:
        return len(self._lru)

    @property
    def stats(self) -> CacheStats:
        """Calls served so far, by where their checkpoint came from."""
        with self._lock:
            return CacheStats(**self._stats)

    def clear(self) -> None:
        """Forget every checkpoint in memory (the store keeps its own)."""
        with self._lock:
            self._lru.clear()
            self._tips.clear()

    # ------------------------------------------------------------------ serving

    def serve(
        self,
        messages: Sequence[Message],
        *,
        window: int,
        policy: Policy = DEFAULT_POLICY,
        tools: Sequence[Mapping[str, Any]] = (),
        created_at: str | None = None,
        estimator: Estimator | None = None,
    ) -> Served:
        """The context for a model call on ``messages`` (the whole conversation, oldest
        first), continuing from the checkpoint of its longest cached prefix.

        Args:
            messages: every message of the conversation so far.
            window: the model's context window in tokens.
            policy: the ladder configuration.
            tools: tool schemas sent with the request (counted in the context size).
            created_at: ISO-8601 time recorded on the messages this call appends (the ones
                after the checkpoint); default now (UTC), as :meth:`Session.append
                <ctxengine.engine.Session.append>`.
            estimator: the token estimator of this call's session (default: the cache's),
                e.g. one calibrated for the tokenizer of the request's model; part of the
                configuration like the cache's (a conversation continues only from
                checkpoints made with an estimator of the same kind and calibration).

        Returns:
            The context, with how much of the request came from a checkpoint and the
            ladder steps taken.

        Raises:
            ValueError / TypeError: no messages, an item that is not a ``Message``, or a
                message field of the wrong type (named, e.g. ``messages[3].parts[1]``).
            ConfigError: the policy's reserve leaves no room in ``window``; the policy names
                a model summarizer and the cache has no ``summarizer``.
            StoreError: the store failed, or holds a checkpoint it cannot read.
            CompactionLoopError / ContextFloorError / ThrashError: as
                :meth:`Session.prepare <ctxengine.engine.Session.prepare>` (no checkpoint is
                kept for this request).
        """
        request = _request(messages)
        counter = estimator if estimator is not None else self.estimator
        config = self._config(window, policy, tools, counter)
        with self._lock:
            base, start, keys = self._find(config, request)
        source: Source = "memory" if base is not None else "none"
        if self.store is not None and (base is None or (self.shared and base.count < len(request))):
            # Only the prefixes longer than the one memory found (its key is keys[skip - 1]).
            skip = base.count - start if base is not None else 0
            stored = self._from_store(
                config, request, start + skip, keys[skip:], window, policy, tools, counter
            )
            if stored is not None:
                base, source = stored, "store"
        if base is not None and base.count == len(request):
            self._count(source, repeated=True)
            self._keep(base)
            return Served(base.context, len(request), source, (), base.tokens, base.log, base.size)
        session, rebuilt = self._resume(base, window, policy, tools, counter)
        before = len(session.events)
        reused = base.count if base is not None else 0
        for m in request[reused:]:
            session.append(m, created_at=created_at)
        ctx = session.prepare()
        tokens = session.context_tokens(ctx)
        history = session.log.history
        messages, loose = self._messages(base, request)
        checkpoint = _Checkpoint(
            keys[-1],
            config,
            messages,
            len(request),
            history.entries,
            len(history),
            session.ladder_state(),
            ctx,
            session,
            tokens,
            loose,
        )
        self._count(source, rebuilt=rebuilt or source == "store")
        self._keep(checkpoint)
        if self.store is not None:
            # A recovered checkpoint is not stored (its key holds the rejected one there):
            # what continues from it is stored whole.
            self._save(checkpoint, None if base is not None and base.recovered else base)
        events = tuple(session.events[before:])
        return Served(ctx, reused, source, events, tokens, history.entries, len(history))

    def recover(
        self,
        messages: Sequence[Message],
        signal: BaseException,
        *,
        window: int,
        policy: Policy = DEFAULT_POLICY,
        tools: Sequence[Mapping[str, Any]] = (),
        max_output_tokens: int | None = None,
        estimator: Estimator | None = None,
    ) -> Served:
        """The context for ``messages`` after the model rejected the one :meth:`serve` gave
        for them with a context overflow: one compaction with reason ``"overflow"``
        (:meth:`Session.on_overflow <ctxengine.engine.Session.on_overflow>`), kept as the
        request's checkpoint in place of the rejected one, so later requests continue from
        it. One recovery per request: a second overflow of the same request is final.

        Args:
            messages: the request :meth:`serve` answered (the whole conversation).
            signal: the provider's error (classified as an overflow).
            window / policy / tools / estimator: as given to :meth:`serve`.
            max_output_tokens: the call's output budget (default: the policy's reserve).

        Returns:
            The recovered context and the ladder steps taken (``reused``: every message).

        Raises:
            ValueError: ``signal`` is not an overflow; the request was not served first.
            ContextOverflow: the request was recovered once already, or the compaction
                could not run (carries the provider's numbers when it gave them).
            StoreError: the store failed.
        """
        request = _request(messages)
        counter = estimator if estimator is not None else self.estimator
        config = self._config(window, policy, tools, counter)
        with self._lock:
            base, _, keys = self._find(config, request)
        if base is None or base.count != len(request):
            raise ValueError("recover() takes a request that serve() answered first")
        session, _ = self._resume(base, window, policy, tools, counter)
        if not base.recovered:
            # One recovery per stateless call: the latch of the live session is cleared by
            # record(), which a stateless caller never calls.
            session._overflow.clear()
        before = len(session.events)
        try:
            session.on_overflow(signal, max_output_tokens=max_output_tokens)
        finally:
            base.recovered = True
        ctx = session.prepare(max_output_tokens=max_output_tokens)
        tokens = session.context_tokens(ctx)
        history = session.log.history
        checkpoint = _Checkpoint(
            keys[-1] if keys else base.key,
            config,
            base.messages,
            base.count,
            history.entries,
            len(history),
            session.ladder_state(),
            ctx,
            session,
            tokens,
            base.loose,
            recovered=True,
        )
        with self._lock:
            self._lru.pop(checkpoint.key, None)
        self._keep(checkpoint)
        events = tuple(session.events[before:])
        return Served(ctx, len(request), "memory", events, tokens, history.entries, len(history))

    def _messages(
        self, base: _Checkpoint | None, request: Sequence[Message]
    ) -> tuple[list[Message], _Loose]:
        """The message list of a checkpoint of ``request`` continued from ``base``, and
        which of them have loose metas: base's, with the new messages appended, while no
        other checkpoint has appended to them (the conversation's newest); else lists of
        its own."""
        with self._lock:
            if base is not None and len(base.messages) == base.count:
                base.messages.extend(request[base.count :])
                return base.messages, base.loose
        return list(request), _Loose()

    def _count(self, source: Source, *, repeated: bool = False, rebuilt: bool = False) -> None:
        with self._lock:
            self._stats[source] += 1
            self._stats["repeated"] += repeated
            self._stats["rebuilt"] += rebuilt

    def _config(
        self,
        window: int,
        policy: Policy,
        tools: Sequence[Mapping[str, Any]],
        estimator: Estimator | None,
    ) -> bytes:
        """The hash the rolling keys start from: window, policy, tools, estimator (kind and
        calibration) and summarizer kind."""
        listed = canonical_json(list(tools)) if tools else b""
        kind = _kind(estimator)
        memo = (window, id(policy), listed, kind)
        with self._lock:
            known = self._configs.get(memo)
            if known is not None and known[0] is policy:
                return known[1]
        described = {
            "window": window,
            "policy": policy.model_dump(mode="json"),
            "tools": list(tools),
            "estimator": kind,
            "summarizer": _kind(self.summarizer),
        }
        digest = hashlib.blake2b(canonical_json(described), digest_size=_DIGEST).digest()
        with self._lock:
            if len(self._configs) >= self.size:
                self._configs.clear()
            self._configs[memo] = (policy, digest)
        return digest

    def _find(
        self, config: bytes, request: Sequence[Message]
    ) -> tuple[_Checkpoint | None, int, list[bytes]]:
        """The checkpoint of the longest prefix of ``request`` in memory (or ``None``), the
        number of messages whose keys were not computed (a checkpoint's own messages, found
        by identity, or equal to those of a recent checkpoint), and the keys of
        ``request[:j]`` for each j after them.

        Raises:
            TypeError: an item of ``request`` that is not a message; a ``meta`` value that
                JSON cannot hold.
        """
        base: _Checkpoint | None = None
        if not self._tips.keys().isdisjoint(map(id, reversed(request))):
            # some message object ends a checkpoint (looked for from the newest: a request
            # that continues one has it among its last messages): the longest such prefix
            # whose messages are that checkpoint's
            for j in range(len(request), 0, -1):
                tips = self._tips.get(id(request[j - 1]))
                tip = tips.get(config) if tips is not None else None
                if tip is None:
                    continue
                found = self._lru.get(tip)
                if found is not None and found.count == j and _same_prefix(found, request, j):
                    base = found
                    break
        if base is None:
            base = self._equal(config, request)
        start = base.count if base is not None else 0
        key = base.key if base is not None else config
        _check(request, start)
        keys: list[bytes] = []
        for m in request[start:]:
            key = _chain(key, message_digest(m))
            keys.append(key)
        for key in reversed(keys):
            found = self._lru.get(key)
            if found is not None:
                return found, start, keys
        return base, start, keys

    def _equal(self, config: bytes, request: Sequence[Message]) -> _Checkpoint | None:
        """For a request of new message objects (a caller that rebuilds every message on
        each call): the most recently used checkpoint of ``config`` whose messages equal the
        first ones of ``request``, among the newest checkpoints of the
        :data:`~ctxengine.policy.defaults.STATELESS_CONTENT_CANDIDATES` conversations
        (message lists) served most recently; ``None`` when none is.

        Messages compare with ``==``, every field and ``meta`` (of the message, its parts
        and tool result contents) included, in one pass that stops at the first message that
        differs. ``==`` takes ``1``, ``1.0`` and ``True`` for equal: fields other than
        ``meta`` compare so; metas as JSON, as :func:`message_digest` writes them: ``==``
        decides that for metas that hold only strings, ``None``, lists and mappings of
        those, and the metas of the checkpoint's other messages (``loose``) are compared as
        JSON too.

        Raises:
            TypeError: a ``meta`` value that JSON cannot hold.
        """
        tried: set[int] = set()
        for found in reversed(self._lru.values()):
            if len(tried) == STATELESS_CONTENT_CANDIDATES:
                break
            n = found.count
            if found.config != config or n > len(request) or id(found.messages) in tried:
                continue
            tried.add(id(found.messages))
            stored = found.messages if len(found.messages) == n else found.messages[:n]
            head = request[:n]
            if _same_messages(
                stored, head if isinstance(head, list) else list(head), found.loose, n
            ):
                return found
        return None

    def _keep(self, checkpoint: _Checkpoint) -> None:
        """Put ``checkpoint`` first in line; drop the least recently used over the size."""
        with self._lock:
            self._lru[checkpoint.key] = checkpoint
            self._lru.move_to_end(checkpoint.key)
            tip = id(checkpoint.messages[checkpoint.count - 1])
            self._tips.setdefault(tip, {})[checkpoint.config] = checkpoint.key
            while len(self._lru) > self.size:
                key, old = self._lru.popitem(last=False)
                tip = id(old.messages[old.count - 1])
                tips = self._tips.get(tip)
                if tips is not None and tips.get(old.config) == key:
                    del tips[old.config]
                    if not tips:
                        del self._tips[tip]

    def _open(
        self,
        window: int,
        policy: Policy,
        tools: Sequence[Mapping[str, Any]],
        estimator: Estimator | None,
        entries: Sequence[Entry] = (),
        state: LadderState | None = None,
    ) -> Session:
        session = Session(
            window,
            policy=policy,
            estimator=estimator,
            summarizer=self.summarizer,
            tools=tools,
            session_id=SESSION_ID,
            entries=entries,
            prime_ledgers=self.prime_ledgers,
        )
        if state is not None:
            session.restore_ladder_state(state)
        return session

    def _resume(
        self,
        base: _Checkpoint | None,
        window: int,
        policy: Policy,
        tools: Sequence[Mapping[str, Any]],
        estimator: Estimator | None,
    ) -> tuple[Session, bool]:
        """The session to continue from ``base``: its warm session when no call has moved it
        on (it is taken: the next call from ``base`` opens one), else one opened over its
        entries; a new session without ``base``. True when one was opened over entries."""
        if base is None:
            return self._open(window, policy, tools, estimator), False
        with self._lock:
            session, base.session = base.session, None
        if session is not None and len(session.log.history) == base.size:
            return session, False
        return self._open(window, policy, tools, estimator, base.log[: base.size], base.state), True

    # ------------------------------------------------------------------ the store

    def _save(self, checkpoint: _Checkpoint, base: _Checkpoint | None) -> None:
        """Write ``checkpoint`` to the store: the entries it added after ``base``'s."""
        assert self.store is not None
        tail: list[list[Any]] = []
        for entry in checkpoint.log[base.size if base is not None else 0 : checkpoint.size]:
            if isinstance(entry.body, Message):
                tail.append(["m", entry.id, entry.created_at])
            else:
                tail.append(["r", entry_to_dict(entry)])
        self.store.save_checkpoint(
            StoredCheckpoint(
                checkpoint.config.hex(),
                checkpoint.key.hex(),
                base.key.hex() if base is not None else None,
                checkpoint.count,
                orjson.dumps(tail),
                orjson.dumps(asdict(checkpoint.state)),
            )
        )

    def _from_store(
        self,
        config: bytes,
        request: Sequence[Message],
        start: int,
        keys: list[bytes],
        window: int,
        policy: Policy,
        tools: Sequence[Mapping[str, Any]],
        estimator: Estimator | None,
    ) -> _Checkpoint | None:
        """The checkpoint of the longest prefix of ``request`` (after the first ``start``
        messages, whose keys are not in ``keys``) that the store holds, with a session
        opened over its entries; ``None`` when there is none.

        Raises:
            StoreError: the store failed, or a stored checkpoint cannot be read.
        """
        assert self.store is not None
        found = self.store.longest_checkpoint(config.hex(), [k.hex() for k in keys])
        if found is None:
            return None
        chain = self.store.checkpoint_chain(config.hex(), found)
        if not chain:
            return None
        size = chain[-1].messages
        try:
            entries = _entries(chain, request)
            state = LadderState(**orjson.loads(chain[-1].state))
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise StoreError(
                f"stateless checkpoint {found} (config {config.hex()}) cannot be read: {exc}"
            ) from exc
        if size != start + keys.index(bytes.fromhex(found)) + 1:
            raise StoreError(
                f"stateless checkpoint {found} (config {config.hex()}) says {size} messages, "
                "not the length of the prefix it is the hash of"
            )
        session = self._open(window, policy, tools, estimator, entries, state)
        history = session.log.history
        loose = _Loose()
        ctx = session.project()
        return _Checkpoint(
            bytes.fromhex(found),
            config,
            list(request[:size]),
            size,
            history.entries,
            len(history),
            state,
            ctx,
            session,
            session.context_tokens(ctx),
            loose,
        )


def _entries(chain: Sequence[StoredCheckpoint], request: Sequence[Message]) -> list[Entry]:
    """The log a stored chain of checkpoints describes, its messages taken from ``request``
    in order.

    Raises:
        ValueError / TypeError / KeyError / IndexError: a tail that is not what
            :meth:`PrefixCache._save` writes, or one that names more messages than its row
            counts.
    """
    entries: list[Entry] = []
    used = 0
    for row in chain:
        for item in orjson.loads(row.tail):
            if item[0] == "m":
                entries.append(
                    Entry(
                        id=item[1],
                        session_id=SESSION_ID,
                        seq=len(entries),
                        body=request[used],
                        parent_id=entries[-1].id if entries else None,
                        created_at=item[2],
                    )
                )
                used += 1
            elif item[0] == "r":
                entries.append(entry_from_dict(item[1]))
            else:
                raise ValueError(f"unknown tail item {item[0]!r}")
        if used != row.messages:
            raise ValueError(f"checkpoint {row.prefix} holds {used} messages, not {row.messages}")
    return entries


def prepare(
    messages: Sequence[Message],
    *,
    window: int,
    policy: Policy = DEFAULT_POLICY,
    tools: Sequence[Mapping[str, Any]] = (),
    cache: PrefixCache | None = None,
    created_at: str | None = None,
) -> Context:
    """The context for a model call on ``messages``, the whole conversation so far (a
    stateless call: a framework hook or a proxy that sees every message on each request).

    With a ``cache`` the call continues from the checkpoint of the longest prefix of
    ``messages`` it served before, as a live session would (:class:`PrefixCache`); without
    one a fresh session is opened over ``messages`` and compacts them from scratch when they
    are past the trigger.

    Args:
        messages: every message of the conversation, oldest first.
        window: the model's context window in tokens.
        policy: the ladder configuration.
        tools: tool schemas sent with the request (counted in the context size).
        cache: checkpoints of earlier calls (see :class:`PrefixCache`), or ``None``.
        created_at: ISO-8601 time recorded on the messages appended (default now, UTC).

    Returns:
        The :class:`~ctxengine.projection.context.Context` to render and send.

    Raises:
        ValueError / TypeError: no messages, an item that is not a ``Message``, or a
            message field of the wrong type (named, e.g. ``messages[3].parts[1]``).
        ConfigError: the policy's reserve leaves no room in ``window``, or the policy names a
            model summarizer (pass a :class:`PrefixCache` with a ``summarizer``).
        CompactionLoopError / ContextFloorError / ThrashError: as :meth:`Session.prepare
            <ctxengine.engine.Session.prepare>`.
        StoreError: the cache's store failed.
    """
    if cache is not None:
        return cache.serve(
            messages, window=window, policy=policy, tools=tools, created_at=created_at
        ).context
    request = _request(messages)
    _check(request, 0)
    session = Session(window, policy=policy, tools=tools, session_id=SESSION_ID)
    for m in request:
        session.append(m, created_at=created_at)
    return session.prepare()
