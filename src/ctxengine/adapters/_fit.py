"""The part the framework hooks share: a conversation given as Chat Completions (or
Responses) messages, one group per framework message, fitted to the window with a prefix
cache; the answer says which framework messages are kept as they are and renders the rest."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxengine.engine.stateless import PrefixCache
from ctxengine.model import Message, TextPart
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.projection.context import Context
from ctxengine.proxy.wire import (
    Api,
    Conversation,
    ConversationReader,
    render_chat,
    render_responses,
    split,
)

__all__ = ["Fitted", "Fitter"]

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Fitted:
    """A conversation fitted to the window.

    Attributes:
        context: the context ctxengine projected.
        changed: the context differs from the conversation (compacted, pruned, truncated).
        head: the messages to make anew, in order, before the kept ones (system messages
            given as ``system`` to :meth:`Fitter.fit` left out).
        start: the index of the first framework message kept as it is (all of them from
            there on); the number of messages when none is kept.
        tokens: the context's estimated size (tokens).
    """

    context: Context
    changed: bool
    head: tuple[Message, ...]
    start: int
    tokens: int

    def head_chat(self) -> list[Json]:
        """:attr:`head` as Chat Completions messages."""
        return render_chat(self.head)

    def head_responses(self) -> list[Json]:
        """:attr:`head` as Responses input items."""
        return render_responses(self.head)


class Fitter:
    """Fits one conversation to a window, call after call (see the module docstring).

    Args:
        window: the model's context window in tokens.
        policy: the ladder configuration.
        api: the shape of the groups given to :meth:`fit`: ``"chat"`` (Chat Completions
            messages) or ``"responses"`` (Responses input items).
        cache: checkpoints of earlier calls (default: one of its own; share one between the
            fitters of many conversations to bound memory).
    """

    def __init__(
        self,
        window: int,
        *,
        policy: Policy = DEFAULT_POLICY,
        api: Api = "chat",
        cache: PrefixCache | None = None,
    ) -> None:
        self.window = window
        self.policy = policy
        self.api = api
        self.cache = cache or PrefixCache()
        self._reader = ConversationReader(api)
        self._lock = threading.Lock()
        #: Calls served, and those whose context differed from the conversation.
        self.calls = 0
        self.changed_calls = 0

    def fit(
        self,
        groups: Sequence[Sequence[Json]],
        *,
        system: str | None = None,
        tools: Sequence[Mapping[str, Any]] = (),
    ) -> Fitted:
        """Fit the conversation ``groups`` (per framework message, its messages in the
        fitter's API shape) to the window.

        Args:
            groups: the framework's messages, oldest first, each as a list of messages.
            system: the system prompt the framework sends beside the messages (counted, and
                never part of the head).
            tools: the tool schemas sent with the call (counted).

        Raises:
            BadRequest: a message the readers cannot take (its JSON path).
            ContextFloorError / CompactionLoopError / ThrashError: as
                :meth:`PrefixCache.serve <ctxengine.engine.stateless.PrefixCache.serve>`.
        """
        flat: list[Json] = []
        owner: list[int] = []
        for i, group in enumerate(groups):
            for item in group:
                flat.append(item)
                owner.append(i)
        key = "input" if self.api == "responses" else "messages"
        body: Json = {key: flat}
        if system:
            body["instructions" if self.api == "responses" else "system_prompt"] = system
        with self._lock:
            read = self._reader.read(body)
            messages = read.messages
            spans = [s if s[0] < 0 else (owner[s[0]], owner[s[1] - 1] + 1) for s in read.spans]
            if system and self.api == "chat":
                messages = (Message("system", (TextPart(system),)), *messages)
                spans = [(-1, -1), *spans]
            conv = Conversation(
                self.api, tuple(messages), tuple(spans), list(groups), tuple(tools),
                None, None, False,
            )  # fmt: skip
            served = self.cache.serve(messages, window=self.window, policy=self.policy,
                                      tools=tuple(tools))  # fmt: skip
            self.calls += 1
        ctx = served.context
        changed = len(ctx.messages) != len(messages) or not all(
            a is b or a == b for a, b in zip(ctx.messages, messages, strict=True)
        )
        if not changed:
            return Fitted(ctx, False, (), 0, ctx.tokens)
        self.changed_calls += 1
        head, start = split(conv, ctx)
        if system:
            head = [m for m in head if not (m.role == "system" and m == messages[0])]
        return Fitted(ctx, True, tuple(head), start, ctx.tokens)
