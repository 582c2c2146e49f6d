"""The LangChain middleware with a real ``create_agent`` and a fake chat model: 200 turns,
every model call valid and within the window; compared with LangChain's
``SummarizationMiddleware``."""

from __future__ import annotations

import json
from typing import Any

from checks import TURNS, WINDOW, Calls
from harness import SYSTEM, tool_output, user_text
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    convert_to_openai_messages,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from ctxengine.adapters.langchain import CtxengineMiddleware
from ctxengine.policy import DEFAULT_POLICY


class ToolModel(BaseChatModel):
    """Calls ``read_file`` after a user message, answers after its result; records every
    call it gets (:class:`checks.Calls`)."""

    calls: Any = None
    approx: list[int] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "tool-model"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.tools = [convert_to_openai_tool(t) for t in tools]
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        body = {"messages": convert_to_openai_messages(messages), "tools": self.tools}
        self.calls.see(body)
        self.approx.append(count_tokens_approximately(messages, tools=self.tools))
        n = len(self.calls.tokens)
        last = messages[-1]
        if isinstance(last, HumanMessage):
            turn = last.text.split(":")[0].removeprefix("Turn ")
            call = {"id": f"call_{n}", "name": "read_file", "args": {"path": f"m_{turn}.py"}}
            reply = AIMessage(content="", tool_calls=[call])
        else:
            reply = AIMessage(content=f"Done with step {n}.")
        return ChatResult(generations=[ChatGeneration(message=reply)])


class Summarizer(BaseChatModel):
    """LangChain's summarizer model: a fixed summary; counts its calls."""

    count: int = 0

    @property
    def _llm_type(self) -> str:
        return "summarizer"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.count += 1
        text = "## SESSION INTENT\nRead the modules.\n## SUMMARY\nFiles were read."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


@tool
def read_file(path: str) -> str:
    """Read a file."""
    turn = int(path.removeprefix("m_").removesuffix(".py"))
    return tool_output(turn, path)


def _run(middleware: Any, model: ToolModel) -> list[BaseMessage]:
    agent = create_agent(model, [read_file], system_prompt=SYSTEM, middleware=[middleware])
    history: list[BaseMessage] = []
    for turn in range(TURNS):
        state = agent.invoke({"messages": [*history, HumanMessage(user_text(turn))]})
        history = state["messages"]
    return history


def test_two_hundred_turns_every_call_valid_and_within_the_window() -> None:
    calls = Calls()
    middleware = CtxengineMiddleware(WINDOW)
    model = ToolModel(calls=calls)
    history = _run(middleware, model)
    assert len(calls.tokens) == 2 * TURNS
    assert calls.invalid == []
    trigger = DEFAULT_POLICY.resolve(WINDOW).trigger
    assert max(calls.tokens) <= trigger
    # The agent's state keeps every message: the view was ephemeral.
    assert len(history) == 4 * TURNS
    assert middleware.fitter.calls == 2 * TURNS
    assert middleware.last is not None and middleware.last.context.epoch >= 5
    print(
        "langchain ctxengine:",
        json.dumps(
            {
                "calls": len(calls.tokens),
                "max": max(calls.tokens),
                "max_langchain_count": max(model.approx),
                "mean": sum(calls.tokens) // len(calls.tokens),
                "epochs": middleware.last.context.epoch,
                "invalid": len(calls.invalid),
            }
        ),
    )


def test_langchains_summarization_middleware_on_the_same_conversation() -> None:
    """The comparison: SummarizationMiddleware set to the same trigger and kept tail."""
    calls = Calls()
    summarizer = Summarizer()
    budget = DEFAULT_POLICY.resolve(WINDOW)
    middleware = SummarizationMiddleware(
        summarizer, trigger=("tokens", budget.trigger), keep=("tokens", budget.keep_recent)
    )
    model = ToolModel(calls=calls)
    _run(middleware, model)
    assert len(calls.tokens) == 2 * TURNS
    assert summarizer.count > 0
    print(
        "langchain summarization:",
        json.dumps(
            {
                "calls": len(calls.tokens),
                "summaries": summarizer.count,
                "max": max(calls.tokens),
                "max_langchain_count": max(model.approx),
                "mean": sum(calls.tokens) // len(calls.tokens),
                "invalid": len(calls.invalid),
                "over_window": sum(t > WINDOW for t in calls.tokens),
            }
        ),
    )
