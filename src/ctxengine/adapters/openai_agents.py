"""OpenAI Agents SDK: :class:`CtxengineSession`, a ``Session`` (``get_items`` / ``add_items``
/ ``pop_item`` / ``clear_session``) that wraps any other session and hands the runner the
history fitted to the window.

Usage::

    from agents import Agent, Runner, SQLiteSession
    from ctxengine.adapters.openai_agents import CtxengineSession

    session = CtxengineSession(SQLiteSession("user-42", "chats.db"), window=128_000,
                               instructions=agent.instructions)
    Runner.run_sync(agent, "Fix the failing test", session=session)

The wrapped session keeps every item (``add_items``, ``pop_item`` and ``clear_session`` go
to it unchanged); ``get_items`` returns the projection of them, continuing from the previous
call's compaction (a :class:`~ctxengine.engine.stateless.PrefixCache`). The runner reads the
history once per run, then adds the run's items in memory; a run of many tool calls can
outgrow the window that way, so give the runner :meth:`CtxengineSession.model_input_filter`
too and every model call of the run is fitted::

    Runner.run_sync(agent, "Fix the failing test", session=session,
                    run_config=RunConfig(call_model_input_filter=session.model_input_filter))

Mapping: the items are Responses input items, read as the proxy reads ``/v1/responses``
(:mod:`ctxengine.proxy.wire`): messages, ``function_call`` / ``function_call_output``,
``custom_tool_call`` / output, ``reasoning`` (with its encrypted content) in the assistant
message that follows it. Items kept verbatim are the session's own; the continuation state
comes back as a user ``message`` item, pruned or truncated outputs as
``function_call_output`` items. Dropped in what is made anew: item ``id`` and ``status``, the
reasoning of finished turns (as the projection does). Items the readers do not know
(``item_reference``, hosted-tool calls) are kept while they are in the verbatim tail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents.memory import Session, SessionSettings
from agents.run_config import CallModelData, ModelInputData

from ctxengine.engine.stateless import PrefixCache
from ctxengine.policy import DEFAULT_POLICY, Policy

from ._fit import Fitted, Fitter

__all__ = ["CtxengineSession"]


class CtxengineSession:
    """A session whose ``get_items`` fits the wrapped session's items to ``window`` tokens.

    Args:
        underlying: the session that stores the items (``SQLiteSession`` …).
        window: the model's context window in tokens.
        instructions: the agent's instructions (counted in the window, never returned).
        tools: the agent's tool schemas (counted).
        policy: the ladder configuration.
        cache: checkpoints of earlier calls (default: one of the session's own).

    Attributes:
        fitter: the conversation's fitter (``calls``, ``changed_calls``).
        last: what the latest ``get_items`` returned, fitted.
    """

    def __init__(
        self,
        underlying: Session,
        window: int,
        *,
        instructions: str | None = None,
        tools: Sequence[Mapping[str, Any]] = (),
        policy: Policy = DEFAULT_POLICY,
        cache: PrefixCache | None = None,
    ) -> None:
        self.underlying = underlying
        self.session_id: str = underlying.session_id
        self.session_settings: SessionSettings | None = getattr(
            underlying, "session_settings", None
        )
        self.instructions = instructions
        self.tools = tuple(tools)
        self.fitter = Fitter(window, policy=policy, api="responses", cache=cache)
        self.last: Fitted | None = None
        #: The wrapped session's items and what ``get_items`` returned for them, latest call.
        self._stored: list[Any] = []
        self._served: list[Any] = []

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The wrapped session's items fitted to the window; the latest ``limit`` of them
        when given (a limit can cut a tool call from its output: the runner's own
        affair, as with any session)."""
        items: list[Any] = list(await self.underlying.get_items())
        if not items:
            return items
        fitted = self.fitter.fit([[i] for i in items], system=self.instructions,
                                 tools=self.tools)  # fmt: skip
        self.last = fitted
        out = [*fitted.head_responses(), *items[fitted.start :]] if fitted.changed else items
        out = out[-limit:] if limit is not None else out
        self._stored, self._served = items, (out if limit is None else [])
        return out

    def model_input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """Fit one model call of a run: the runner's ``call_model_input_filter``
        (``RunConfig(call_model_input_filter=session.model_input_filter)``).

        The input the runner built starts with what :meth:`get_items` returned; that part
        is read as the wrapped session's items it stood for, so the call's input is the
        whole stored history plus the run's new items, fitted to the window as
        :meth:`get_items` fits (continuing from its compaction). An input that does not
        start that way (a run without this session) is fitted as it is.

        Args:
            data: the runner's call data: ``model_data.input`` (Responses input items) and
                ``model_data.instructions`` (counted, never returned).

        Returns:
            The fitted input and the instructions unchanged.
        """
        given: list[Any] = list(data.model_data.input)
        served = self._served
        items: list[Any] = given
        if served and given[: len(served)] == served:
            items = [*self._stored, *given[len(served) :]]
        instructions = data.model_data.instructions
        fitted = self.fitter.fit([[i] for i in items], system=instructions or self.instructions,
                                 tools=self.tools)  # fmt: skip
        self.last = fitted
        out = [*fitted.head_responses(), *items[fitted.start :]] if fitted.changed else items
        return ModelInputData(input=out, instructions=instructions)

    async def add_items(self, items: list[Any]) -> None:
        """Add ``items`` to the wrapped session."""
        await self.underlying.add_items(items)

    async def pop_item(self) -> Any:
        """Remove and return the wrapped session's newest item."""
        return await self.underlying.pop_item()

    async def clear_session(self) -> None:
        """Clear the wrapped session."""
        await self.underlying.clear_session()
