"""The proxy's decisions, free of HTTP: what to forward for one request, how to recover from
an upstream overflow, and what to remember of a reply.

For each request (:meth:`ProxyCore.prepare`):

1. The conversation is named by the ``X-Ctxengine-Session`` header, else by the content
   hash of its stable prefix (:func:`~ctxengine.proxy.wire.stable_key`).
2. Its body is read into messages (:class:`~ctxengine.proxy.wire.ConversationReader`:
   only the items after the previous request's are read); an assistant message whose reply
   the proxy saw carries that reply's provider usage (the usage anchor).
3. :class:`~ctxengine.engine.stateless.PrefixCache` gives the context, continuing from the
   conversation's previous request: the ladder runs when the context nears the window
   (``--window``, else the model profile's window). Tokens are estimated for the request's
   model (:meth:`ProxyCore.estimator_for`): calibrated for the tokenizer family its profile
   names (``o200k_base``: GPT-4o and later; ``cl100k_base``: GPT-4, GPT-3.5), the default
   estimate for the others (Claude, Gemini, a model without a profile). The calibration is
   part of the checkpoints' keys: a conversation that moves to a model of another family
   continues from no checkpoint of the old one (it is compacted afresh, as a request whose
   earlier requests were not served).
4. A context still over the window by the ladder's own measure (the usage anchor plus the
   estimate of what follows it, scaled by the session's usage correction: what the trigger
   is checked against) is refused (:class:`~ctxengine.proxy.refusal.Refused`,
   ``context_length``). When nothing was compacted, pruned or truncated the client's bytes
   are forwarded unchanged (a request the projection would repair, such as a tool result
   without its call, goes as sent: the upstream answers it, and the log line says so);
   otherwise the body is rebuilt (:func:`~ctxengine.proxy.wire.forwarded_body`, else
   :func:`~ctxengine.proxy.wire.full_body`) and checked with
   :func:`~ctxengine.projection.validate.validate`; a body that cannot be made valid is
   refused.

A Responses request with ``previous_response_id`` or ``conversation`` is stateful: its
history lives on the upstream, where the proxy cannot see it, so it is passed on untouched
(not read, not stored) and logged as ``passed (stateful: …)``.
5. The session log (messages, compaction and prune records) goes to the store, under the
   conversation's key, in a background writer (:class:`~ctxengine.proxy.record.Recorder`).

Thread-safe: requests of different conversations run at the same time; requests of one
conversation take its lock in turn. With a shared recorder (``serve --workers N``: several
processes on one store) the lock of a conversation is also taken across the processes, the
prefix cache looks in the store for checkpoints other processes wrote, and the usage of
every reply is kept in the store (:mod:`ctxengine.proxy.record`): a conversation keeps its
compactions whichever process serves its next request.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import orjson

from ctxengine.engine.events import LadderEvent
from ctxengine.engine.stateless import PrefixCache, Served
from ctxengine.errors import ContextFloorError, ContextOverflow, CtxEngineError
from ctxengine.model import Message, Usage
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.policy.defaults import (
    DEFAULT_IMAGE_TOKENS,
    PROXY_CONVERSATIONS,
    PROXY_DEFAULT_WINDOW,
    PROXY_USAGE_RECORDS,
    STATELESS_CACHE_SIZE,
)
from ctxengine.projection.context import Context
from ctxengine.projection.validate import validate
from ctxengine.providers.classify import PayloadError, classify_error
from ctxengine.providers.profiles import ProfileTable
from ctxengine.tokens.estimate import HeuristicEstimator

from .record import Recorder
from .refusal import Refused
from .replies import Signature, message_signature
from .wire import (
    PROVIDERS,
    Api,
    BadRequest,
    Conversation,
    ConversationReader,
    forwarded_body,
    full_body,
    stable_key,
)

__all__ = ["Prepared", "ProxyCore", "Refused", "with_opening"]

#: The header a client names its conversation with.
SESSION_HEADER = "x-ctxengine-session"
#: Anthropic's header of beta features, and the feature that opens the 1M-token window.
BETA_HEADER = "anthropic-beta"
CONTEXT_1M_BETA = "context-1m-"
#: Responses fields that keep the history on the upstream.
STATEFUL_FIELDS = ("previous_response_id", "conversation")


@dataclass(slots=True)
class Prepared:
    """What to forward for one request.

    Attributes:
        api: the API of the request.
        key: the conversation's key (its stored session id).
        body: the client's body, parsed.
        conversation: its history, read (``None`` for a stateful request: not read).
        window: the window the context was fitted to (tokens).
        raw: the bytes to forward: the client's own when :attr:`changed` is False.
        changed: the forwarded context differs from the request (compacted, pruned or
            truncated).
        tokens_before: the request's estimated size (tokens: messages and tools).
        tokens_after: the forwarded context's estimated size.
        measured: the forwarded context's size as the ladder measures it (the usage anchor
            plus the estimate of what follows it, scaled by the usage correction).
        epoch: compactions in force.
        events: the ladder steps this request took.
        served: the cache's answer (``None`` for a stateful request).
        model: the request's ``model``.
        stateful: the field that makes the request stateful (``previous_response_id``,
            ``conversation``), which the proxy passed on untouched; ``None`` for a request
            that carries its whole history.
        started: ``time.perf_counter()`` when the request arrived.
    """

    api: Api
    key: str
    body: dict[str, Any]
    conversation: Conversation | None
    window: int
    raw: bytes
    changed: bool
    tokens_before: int
    tokens_after: int
    measured: int
    epoch: int
    events: tuple[LadderEvent, ...]
    served: Served | None
    model: str | None = None
    stateful: str | None = None
    started: float = field(default_factory=time.perf_counter)
    recovered: bool = False

    def log_line(self, status: int, *, ms: float, what: str | None = None) -> str:
        """The one line logged for this request (no key or header value in it); ``what``
        names a request that is not a model call (``"count_tokens"``)."""
        head = f"{self.api} {self.key} {self.model or '-'} {status}"
        if what is not None:
            head = f"{self.api} {what} {self.key} {self.model or '-'} {status}"
        if self.stateful is not None:
            return f"{head} passed (stateful: {self.stateful}) {ms:.1f} ms"
        verb = "compacted" if self.changed else "passed"
        steps = ",".join(e.step for e in self.events)
        extra = f" steps={steps}" if steps else ""
        ctx = self.served.context if self.served is not None else None
        if ctx is not None and self.changed and ctx.truncations:
            extra += f" truncated={len(ctx.truncations)}"
        if ctx is not None:
            extra += _repairs(ctx, applied=self.changed)
        retry = " recovered-overflow" if self.recovered else ""
        measured = f"measured {self.measured:,}, " if self.measured != self.tokens_after else ""
        return (
            f"{head} {verb} tokens {self.tokens_before:,} -> {self.tokens_after:,} "
            f"({measured}window {self.window:,}, epoch {self.epoch}){extra}{retry} {ms:.1f} ms"
        )


def _repairs(ctx: Context, *, applied: bool) -> str:
    """What the projection repaired in ``ctx`` (a tool result without its call dropped …),
    for the log line: ``" repaired: …"`` when the forwarded context carries the repair,
    ``" sent as is: …"`` when the client's bytes went unchanged (the upstream answers them);
    ``""`` when nothing needed repair."""
    report = ctx.sanitize
    found = [
        (n, noun, done)
        for n, noun, done in (
            (len(report.dropped_results), "orphan tool result", "dropped"),
            (len(report.duplicate_results), "duplicate tool result", "dropped"),
            (len(report.synthetic_results), "unanswered tool call", "given an error result"),
            (len(report.moved_results), "misplaced tool result", "moved after its call"),
        )
        if n
    ]
    if not found:
        return ""
    if applied:
        listed = [f"{n} {noun}{'s' if n > 1 else ''} {done}" for n, noun, done in found]
        return " repaired: " + ", ".join(listed)
    return " sent as is: " + ", ".join(f"{n} {noun}{'s' if n > 1 else ''}" for n, noun, _ in found)


class _Usages:
    """Provider usage of the replies the proxy passed back, by assistant-message signature
    (least recently used dropped past :data:`PROXY_USAGE_RECORDS`); also kept in the store
    of a shared recorder, and looked up there when memory lacks it (another process passed
    the reply back)."""

    def __init__(self, recorder: Recorder | None = None) -> None:
        self._lock = threading.Lock()
        self._by: OrderedDict[tuple[str, Signature], Usage] = OrderedDict()
        self._recorder = recorder if recorder is not None and recorder.shared else None

    def put(self, key: str, signature: Signature, usage: Usage) -> None:
        self._remember(key, signature, usage)
        if self._recorder is not None:
            self._recorder.save_usage(key, signature, usage)

    def _remember(self, key: str, signature: Signature, usage: Usage) -> None:
        with self._lock:
            self._by[(key, signature)] = usage
            self._by.move_to_end((key, signature))
            while len(self._by) > PROXY_USAGE_RECORDS:
                self._by.popitem(last=False)

    def get(self, key: str, message: Message) -> Usage | None:
        signature = message_signature(message)
        with self._lock:
            found = self._by.get((key, signature))
        if found is None and self._recorder is not None:
            found = self._recorder.usage(key, signature)
            if found is not None:
                self._remember(key, signature, found)
        return found


@dataclass(slots=True)
class _Conversation:
    lock: threading.Lock
    reader: ConversationReader


class ProxyCore:
    """See the module docstring.

    Args:
        window: the context window in tokens for every model; ``None``: each model's
            profile (:mod:`ctxengine.providers.profiles`), :data:`PROXY_DEFAULT_WINDOW`
            for a model without one.
        policy: the ladder configuration; the proxy re-injects the conversation's opening
            (``"opening"`` in ``reinject``, :func:`with_opening`) whatever it says.
        recorder: where conversations are stored (``None``: nowhere); its store also keeps
            the prefix cache's checkpoints.
        cache_size: checkpoints kept in memory.

    Raises:
        ValueError: ``window`` below 1.
    """

    def __init__(
        self,
        *,
        window: int | None = None,
        policy: Policy = DEFAULT_POLICY,
        recorder: Recorder | None = None,
        cache_size: int | None = None,
    ) -> None:
        if window is not None and window < 1:
            raise ValueError(f"window must be a positive number of tokens, got {window}")
        self.window = window
        self.policy = with_opening(policy)
        self.recorder = recorder
        store = recorder.checkpoints if recorder is not None else None
        shared = recorder is not None and recorder.shared
        self.cache = PrefixCache(cache_size or STATELESS_CACHE_SIZE, store=store, shared=shared)
        self._usages = _Usages(recorder)
        self._lock = threading.Lock()
        self._conversations: OrderedDict[tuple[Api, str], _Conversation] = OrderedDict()
        self._profiles = ProfileTable.load()
        self._windows: dict[tuple[str, bool], int] = {}
        #: The tokenizer family of each model seen (its profile's, ``None`` for none).
        self._families: dict[str, str | None] = {}
        #: One estimator per tokenizer family, shared by the requests of its models.
        self._estimators: dict[str | None, HeuristicEstimator] = {}

    # ------------------------------------------------------------------ helpers

    def window_for(self, model: str | None, headers: Mapping[str, str] | None = None) -> int:
        """The window for ``model``: the configured one, else its profile's; the profile's
        1M-token window (``context_window_1m``) when the request's ``anthropic-beta`` header
        asks for Anthropic's ``context-1m-…`` feature and the profile has one."""
        if self.window is not None:
            return self.window
        if model is None:
            return PROXY_DEFAULT_WINDOW
        wide = headers is not None and CONTEXT_1M_BETA in headers.get(BETA_HEADER, "")
        found = self._windows.get((model, wide))
        if found is None:
            profile = self._profiles.lookup(model)
            found = PROXY_DEFAULT_WINDOW
            if profile is not None:
                found = profile.context_window
                if wide and profile.context_window_1m is not None:
                    found = profile.context_window_1m
            self._windows[(model, wide)] = found
        return found

    def estimator_for(self, model: str | None) -> HeuristicEstimator:
        """The token estimator of a request for ``model``: calibrated for the tokenizer
        family of its profile (``"o200k_base"``, ``"cl100k_base"``), the default estimate
        (fitted to err high under both) for a model whose profile names none, a model
        without a profile and a request without a model. Images are priced as a session
        prices them (:data:`~ctxengine.policy.defaults.DEFAULT_IMAGE_TOKENS`). One
        estimator per family, shared by every request of its models."""
        family: str | None = None
        if model is not None:
            if model in self._families:
                family = self._families[model]
            else:
                profile = self._profiles.lookup(model)
                family = profile.tokenizer if profile is not None else None
                with self._lock:
                    self._families[model] = family
        found = self._estimators.get(family)
        if found is None:
            found = HeuristicEstimator(image_tokens=DEFAULT_IMAGE_TOKENS, encoding=family)
            with self._lock:
                found = self._estimators.setdefault(family, found)
        return found

    def _session_estimator(self, model: str | None) -> HeuristicEstimator | None:
        """What the prefix cache's sessions for ``model`` estimate with: its calibrated
        estimator, ``None`` (the sessions' own default, the same estimate, under the
        checkpoint keys it always had) for the default estimate."""
        found = self.estimator_for(model)
        return found if found.encoding is not None else None

    def _conversation(self, api: Api, key: str) -> _Conversation:
        with self._lock:
            conv = self._conversations.get((api, key))
            if conv is None:
                reader = ConversationReader(api, partial(self._usages.get, key))
                conv = _Conversation(threading.Lock(), reader)
                self._conversations[(api, key)] = conv
                while len(self._conversations) > PROXY_CONVERSATIONS:
                    self._conversations.popitem(last=False)
            else:
                self._conversations.move_to_end((api, key))
            return conv

    @property
    def shared(self) -> bool:
        """True when other processes serve conversations through the same store."""
        return self.recorder is not None and self.recorder.shared

    def _shared_lock(self, key: str) -> AbstractContextManager[None]:
        """The lock of conversation ``key`` across the processes of a shared recorder's
        store (nothing otherwise)."""
        if self.recorder is None:
            return nullcontext()
        return self.recorder.conversation_lock(key)

    def _tokens(self, conversation: Conversation, model: str | None) -> int:
        """The request's estimated size (tokens: messages and tools) for ``model``."""
        est = self.estimator_for(model)
        return sum(est.message(m) for m in conversation.messages) + est.tools(conversation.tools)

    # ------------------------------------------------------------------ requests

    def prepare(
        self, api: Api, raw: bytes, headers: Mapping[str, str], *, record: bool = True
    ) -> Prepared:
        """What to forward for the request ``raw`` (the body's bytes) of ``api``.

        Args:
            api: the API of the request path.
            raw: the request body.
            headers: the request headers (lower-case names); ``x-ctxengine-session`` and
                ``anthropic-beta`` are read.
            record: store the conversation (False for a token count).

        Raises:
            Refused: the body is not JSON or not a request of ``api`` (400,
                ``invalid_request``, the JSON path named); its context cannot be brought
                within the window (400, ``context_length``); or the body built for the
                context does not validate (500, ``proxy``). Its ``key`` and ``model`` are
                set when known.
        """
        started = time.perf_counter()
        model: str | None = None
        try:
            try:
                body = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise Refused(400, "invalid_request", f"the body is not JSON: {exc}") from exc
            if not isinstance(body, dict):
                raise Refused(400, "invalid_request", "the body must be a JSON object")
            model = body.get("model") if isinstance(body.get("model"), str) else None
            prepared = self._prepare(api, body, raw, headers, record, model)
        except Refused as exc:
            exc.model = exc.model or model
            raise
        prepared.started = started
        return prepared

    def _prepare(
        self,
        api: Api,
        body: dict[str, Any],
        raw: bytes,
        headers: Mapping[str, str],
        record: bool,
        model: str | None,
    ) -> Prepared:
        """:meth:`prepare` once the body is a JSON object."""
        key = headers.get(SESSION_HEADER)
        stateful = _stateful(api, body)
        if stateful is not None:
            # Not read: its history is on the upstream (its key names it in the log only).
            window = self.window_for(model, headers)
            return Prepared(
                api, key or "-", body, None, window, raw, False, 0, 0, 0, 0, (), None, model,
                stateful,
            )  # fmt: skip
        try:
            key = key or stable_key(api, body)
            conv = self._conversation(api, key)
            with conv.lock, self._shared_lock(key):
                conversation = conv.reader.read(body)
                if not conversation.messages:
                    where = "$.input" if api == "responses" else "$.messages"
                    raise BadRequest("the request holds no message", where)
                window = self.window_for(model, headers)
                served = self.cache.serve(
                    conversation.messages,
                    window=window,
                    policy=self.policy,
                    tools=conversation.tools,
                    estimator=self._session_estimator(model),
                )
        except BadRequest as exc:
            raise _keyed(Refused(400, "invalid_request", str(exc), exc.param), key) from exc
        except ContextFloorError as exc:
            limit = exc.trigger - exc.free
            refused = Refused(400, "context_length", str(exc), tokens=exc.floor, limit=limit)
            raise _keyed(refused, key) from exc
        except ContextOverflow as exc:
            refused = Refused(400, "context_length", str(exc), tokens=exc.tokens, limit=exc.limit)
            raise _keyed(refused, key) from exc
        except CtxEngineError as exc:
            refused = Refused(500, "proxy", f"ctxengine could not compact: {exc}")
            raise _keyed(refused, key) from exc
        try:
            return self._prepared(api, key, body, conversation, window, raw, served, model)
        except Refused as exc:
            raise _keyed(exc, key) from None
        finally:
            # Stored even when refused: the conversation and the compactions tried.
            if record and self.recorder is not None:
                self.recorder.record(key, served.log, api=api, model=conversation.model)

    def _prepared(
        self,
        api: Api,
        key: str,
        body: dict[str, Any],
        conversation: Conversation,
        window: int,
        raw: bytes,
        served: Served,
        model: str | None,
    ) -> Prepared:
        """What to forward for ``served`` (a request for ``model``).

        Raises:
            Refused: the context is still over the window by the ladder's measure
                (``served.tokens``), or its body does not validate.
        """
        ctx = served.context
        if served.tokens > window:
            raise Refused(
                400,
                "context_length",
                _too_long(served, window),
                tokens=served.tokens,
                limit=window,
            )
        compacted = bool(ctx.epoch or ctx.pruned or ctx.truncations)
        changed = compacted and not _same_messages(ctx, conversation)
        after = ctx.tokens
        before = self._tokens(conversation, model) if changed else after
        if changed:
            raw = self._rebuild(body, conversation, ctx)
        return Prepared(
            api,
            key,
            body,
            conversation,
            window,
            raw,
            changed,
            before,
            after,
            served.tokens,
            ctx.epoch,
            served.events,
            served,
            conversation.model,
        )

    def _rebuild(self, body: dict[str, Any], conversation: Conversation, ctx: Context) -> bytes:
        """The body for ``ctx``, valid for the API.

        Raises:
            Refused: neither the spliced nor the fully rendered body validates.
        """
        provider = PROVIDERS[conversation.api]
        out = forwarded_body(body, conversation, ctx)
        problems = validate(out, provider)
        if problems:
            out = full_body(body, conversation, ctx)
            problems = validate(out, provider)
        if problems:
            listed = "; ".join(problems[:5])
            raise Refused(500, "proxy", f"the compacted request is not valid: {listed}")
        return orjson.dumps(out)

    def recover(self, prepared: Prepared, status: int, error: Any) -> Prepared | None:
        """The request to retry after the upstream answered ``prepared`` with ``status`` and
        the error body ``error``: one compaction (reason ``"overflow"``) when the error is a
        context overflow, ``None`` when it is not one or the request is stateful (the
        proxy holds none of its history).

        Raises:
            Refused: the overflow cannot be recovered (the request was recovered once, or
                the compaction could not run); status 400, ``context_length``.
        """
        signal = _payload_error(status, error)
        if prepared.conversation is None or classify_error(signal).kind != "overflow":
            return None
        conversation = prepared.conversation
        conv = self._conversation(prepared.api, prepared.key)
        try:
            with conv.lock, self._shared_lock(prepared.key):
                served = self.cache.recover(
                    conversation.messages,
                    signal,
                    window=prepared.window,
                    policy=self.policy,
                    tools=conversation.tools,
                    estimator=self._session_estimator(prepared.model),
                )
        except (CtxEngineError, ValueError) as exc:
            numbers = exc if isinstance(exc, ContextOverflow) else None
            refused = Refused(
                400,
                "context_length",
                str(exc),
                tokens=numbers.tokens if numbers is not None else None,
                limit=numbers.limit if numbers is not None else None,
            )
            raise _keyed(refused, prepared.key, prepared.model) from exc
        try:
            out = self._prepared(
                prepared.api,
                prepared.key,
                prepared.body,
                conversation,
                prepared.window,
                prepared.raw,
                served,
                prepared.model,
            )
        except Refused as exc:
            raise _keyed(exc, prepared.key, prepared.model) from None
        out.started = prepared.started
        out.recovered = True
        if not out.changed:
            message = (
                "the upstream rejected the request as too long and compaction left it unchanged"
            )
            raise _keyed(Refused(400, "context_length", message), prepared.key, prepared.model)
        self._record(out)
        return out

    def observe(self, prepared: Prepared, reply: tuple[Signature, Usage | None] | None) -> None:
        """Remember the usage of the upstream's reply to ``prepared``: attached to the
        assistant message when the client sends it back (the usage anchor)."""
        if reply is None:
            return
        signature, usage = reply
        if usage is not None and not usage.is_zero:
            self._usages.put(prepared.key, signature, usage)

    def _record(self, prepared: Prepared) -> None:
        if self.recorder is not None and prepared.served is not None:
            self.recorder.record(
                prepared.key, prepared.served.log, api=prepared.api, model=prepared.model
            )


def with_opening(policy: Policy) -> Policy:
    """``policy`` re-injecting the conversation's opening after every compaction (the
    reminders and system messages an agent's harness put there before the first reply:
    :func:`~ctxengine.ladder.reinject.opening_items`): an agent behind the proxy never
    compacts itself, so nothing else would bring them back."""
    if "opening" in policy.reinject:
        return policy
    return policy.model_copy(update={"reinject": ("opening", *policy.reinject)})


def _keyed(refused: Refused, key: str | None, model: str | None = None) -> Refused:
    """``refused`` with the conversation's ``key`` (and ``model``) for its log line."""
    refused.key = refused.key or key
    refused.model = refused.model or model
    return refused


def _stateful(api: Api, body: Mapping[str, Any]) -> str | None:
    """The field that keeps a Responses request's history on the upstream
    (:data:`STATEFUL_FIELDS`), or ``None``."""
    if api != "responses":
        return None
    return next((f for f in STATEFUL_FIELDS if body.get(f) not in (None, "")), None)


def _too_long(served: Served, window: int) -> str:
    """Why a context ``served`` left over ``window`` is refused: its size by the ladder's
    measure and the plain estimate when they differ, and what the ladder did this request."""
    size = f"the conversation needs {served.tokens:,} tokens"
    if served.tokens != served.context.tokens:
        size += (
            f" (ctxengine's estimate {served.context.tokens:,}, corrected by the usage the "
            "upstream reported)"
        )
    steps = [e.step for e in served.events]
    failures = [e.detail for e in served.events if e.step == "failure"]
    if "compaction" in steps:
        why = "after compaction: what no compaction can drop is too large"
    elif failures:
        why = f"compaction failed: {failures[-1]}"
    else:
        why = "and the ladder did not run again (no new messages since its last attempt)"
    return f"{size}, over the {window:,}-token window, {why}"


def _same_messages(ctx: Context, conversation: Conversation) -> bool:
    mine, theirs = ctx.messages, conversation.messages
    if len(mine) != len(theirs):
        return False
    return all(a is b or a == b for a, b in zip(mine, theirs, strict=True))


def _payload_error(status: int, error: Any) -> PayloadError:
    """The upstream's error as an exception :func:`classify_error` reads."""
    message, code = "", None
    if isinstance(error, Mapping):
        inner = error.get("error", error)
        if isinstance(inner, Mapping):
            found = inner.get("message")
            message = found if isinstance(found, str) else orjson.dumps(dict(inner)).decode()
            code = inner.get("code") if isinstance(inner.get("code"), str) else None
            if code is None and isinstance(inner.get("type"), str):
                code = inner["type"]
        elif isinstance(inner, str):
            message = inner
    elif isinstance(error, str):
        message = error
    return PayloadError(message, code=code, status=status)
