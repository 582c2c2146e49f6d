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
   (``--window``, else the model profile's window).
4. When the context is the request's own messages the client's bytes are forwarded
   unchanged; otherwise the body is rebuilt (:func:`~ctxengine.proxy.wire.forwarded_body`,
   else :func:`~ctxengine.proxy.wire.full_body`) and checked with
   :func:`~ctxengine.projection.validate.validate`; a body that cannot be made valid is
   refused (:class:`Refused`).
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

__all__ = ["Prepared", "ProxyCore", "Refused"]

#: The header a client names its conversation with.
SESSION_HEADER = "x-ctxengine-session"


class Refused(Exception):
    """A request the proxy will not forward: answered with ``status`` and ``message`` in the
    API's own error shape.

    Attributes:
        status: the HTTP status (400: bad or oversized request; 500: the proxy failed).
        kind: the error type (``invalid_request_error``, ``context_length_exceeded`` …).
        param: the JSON path at fault, when known.
    """

    def __init__(self, status: int, kind: str, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.param = param


@dataclass(slots=True)
class Prepared:
    """What to forward for one request.

    Attributes:
        api: the API of the request.
        key: the conversation's key (its stored session id).
        body: the client's body, parsed.
        conversation: its history, read.
        window: the window the context was fitted to (tokens).
        raw: the bytes to forward: the client's own when :attr:`changed` is False.
        changed: the context differs from the request (compacted, pruned or truncated).
        tokens_before: the request's estimated size (tokens: messages and tools).
        tokens_after: the forwarded context's estimated size.
        epoch: compactions in force.
        events: the ladder steps this request took.
        served: the cache's answer.
        started: ``time.perf_counter()`` when the request arrived.
    """

    api: Api
    key: str
    body: dict[str, Any]
    conversation: Conversation
    window: int
    raw: bytes
    changed: bool
    tokens_before: int
    tokens_after: int
    epoch: int
    events: tuple[LadderEvent, ...]
    served: Served
    started: float = field(default_factory=time.perf_counter)
    recovered: bool = False

    def log_line(self, status: int, *, ms: float) -> str:
        """The one line logged for this request (no key or header value in it)."""
        what = "compacted" if self.changed else "passed"
        steps = ",".join(e.step for e in self.events)
        extra = f" steps={steps}" if steps else ""
        retry = " recovered-overflow" if self.recovered else ""
        return (
            f"{self.api} {self.key} {self.conversation.model or '-'} {status} {what} "
            f"tokens {self.tokens_before:,} -> {self.tokens_after:,} "
            f"(window {self.window:,}, epoch {self.epoch}){extra}{retry} {ms:.1f} ms"
        )


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
        policy: the ladder configuration.
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
        self.policy = policy
        self.recorder = recorder
        store = recorder.checkpoints if recorder is not None else None
        shared = recorder is not None and recorder.shared
        self.cache = PrefixCache(cache_size or STATELESS_CACHE_SIZE, store=store, shared=shared)
        self.estimator = HeuristicEstimator()
        self._usages = _Usages(recorder)
        self._lock = threading.Lock()
        self._conversations: OrderedDict[tuple[Api, str], _Conversation] = OrderedDict()
        self._profiles = ProfileTable.load()
        self._windows: dict[str, int] = {}

    # ------------------------------------------------------------------ helpers

    def window_for(self, model: str | None) -> int:
        """The window for ``model``: the configured one, else its profile's."""
        if self.window is not None:
            return self.window
        if model is None:
            return PROXY_DEFAULT_WINDOW
        found = self._windows.get(model)
        if found is None:
            profile = self._profiles.lookup(model)
            found = profile.context_window if profile is not None else PROXY_DEFAULT_WINDOW
            self._windows[model] = found
        return found

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

    def _tokens(self, conversation: Conversation) -> int:
        est = self.estimator
        return sum(est.message(m) for m in conversation.messages) + est.tools(conversation.tools)

    # ------------------------------------------------------------------ requests

    def prepare(
        self, api: Api, raw: bytes, headers: Mapping[str, str], *, record: bool = True
    ) -> Prepared:
        """What to forward for the request ``raw`` (the body's bytes) of ``api``.

        Args:
            api: the API of the request path.
            raw: the request body.
            headers: the request headers (lower-case names); only ``x-ctxengine-session``
                is read.
            record: store the conversation (False for a token count).

        Raises:
            Refused: the body is not JSON or not a request of ``api``; its context cannot
                be brought within the window (status 400, ``context_length_exceeded``); or
                the body built for the context does not validate (status 500).
        """
        started = time.perf_counter()
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise Refused(400, "invalid_request_error", f"the body is not JSON: {exc}") from exc
        if not isinstance(body, dict):
            raise Refused(400, "invalid_request_error", "the body must be a JSON object")
        try:
            key = headers.get(SESSION_HEADER) or stable_key(api, body)
            conv = self._conversation(api, key)
            with conv.lock, self._shared_lock(key):
                conversation = conv.reader.read(body)
                if not conversation.messages:
                    raise BadRequest("the request holds no message", "$")
                window = self.window_for(conversation.model)
                served = self.cache.serve(
                    conversation.messages,
                    window=window,
                    policy=self.policy,
                    tools=conversation.tools,
                )
        except BadRequest as exc:
            raise Refused(400, "invalid_request_error", str(exc), exc.param) from exc
        except (ContextFloorError, ContextOverflow) as exc:
            raise Refused(400, "context_length_exceeded", str(exc)) from exc
        except CtxEngineError as exc:
            raise Refused(500, "proxy_error", f"ctxengine could not compact: {exc}") from exc
        try:
            prepared = self._prepared(api, key, body, conversation, window, raw, served)
        finally:
            # Stored even when refused: the conversation and the compactions tried.
            if record and self.recorder is not None:
                self.recorder.record(key, served.log, api=api, model=conversation.model)
        prepared.started = started
        return prepared

    def _prepared(
        self,
        api: Api,
        key: str,
        body: dict[str, Any],
        conversation: Conversation,
        window: int,
        raw: bytes,
        served: Served,
    ) -> Prepared:
        """What to forward for ``served``.

        Raises:
            Refused: the context is still over the window (the ladder could not bring it
                under: what no cut can drop is too large), or its body does not validate.
        """
        ctx = served.context
        if ctx.tokens > window:
            raise Refused(
                400,
                "context_length_exceeded",
                f"the conversation needs {ctx.tokens:,} tokens after compaction, over the "
                f"{window:,}-token window (what no compaction can drop is too large)",
            )
        changed = not _same_messages(ctx, conversation)
        after = ctx.tokens
        before = self._tokens(conversation) if changed else after
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
            ctx.epoch,
            served.events,
            served,
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
            raise Refused(500, "proxy_error", f"the compacted request is not valid: {listed}")
        return orjson.dumps(out)

    def recover(self, prepared: Prepared, status: int, error: Any) -> Prepared | None:
        """The request to retry after the upstream answered ``prepared`` with ``status`` and
        the error body ``error``: one compaction (reason ``"overflow"``) when the error is a
        context overflow, ``None`` when it is not one.

        Raises:
            Refused: the overflow cannot be recovered (the request was recovered once, or
                the compaction could not run); status 400, ``context_length_exceeded``.
        """
        signal = _payload_error(status, error)
        if classify_error(signal).kind != "overflow":
            return None
        conv = self._conversation(prepared.api, prepared.key)
        try:
            with conv.lock, self._shared_lock(prepared.key):
                served = self.cache.recover(
                    prepared.conversation.messages,
                    signal,
                    window=prepared.window,
                    policy=self.policy,
                    tools=prepared.conversation.tools,
                )
        except (CtxEngineError, ValueError) as exc:
            raise Refused(400, "context_length_exceeded", str(exc)) from exc
        out = self._prepared(
            prepared.api,
            prepared.key,
            prepared.body,
            prepared.conversation,
            prepared.window,
            prepared.raw,
            served,
        )
        out.started = prepared.started
        out.recovered = True
        if not out.changed:
            raise Refused(400, "context_length_exceeded", "the upstream rejected the request "
                          "as too long and compaction left it unchanged")  # fmt: skip
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
        if self.recorder is not None:
            self.recorder.record(
                prepared.key,
                prepared.served.log,
                api=prepared.api,
                model=prepared.conversation.model,
            )


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
