"""The OpenAI Agents SDK session wrapper with a real ``Runner`` and a scripted model: 200
turns, every model call valid and within the window; compared with the SDK's own item limit
(``SessionSettings(limit=…)``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agents import (
    Agent,
    ModelResponse,
    ModelSettings,
    Runner,
    SQLiteSession,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from agents.memory import SessionSettings
from agents.models.interface import Model
from checks import TURNS, WINDOW, Calls
from harness import SYSTEM, tool_output, user_text
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from ctxengine.adapters.openai_agents import CtxengineSession
from ctxengine.policy import DEFAULT_POLICY

set_tracing_disabled(True)


class ToolModel(Model):
    """Calls ``read_file`` after a user message, answers after its output."""

    def __init__(self, calls: Calls) -> None:
        self.calls = calls

    async def get_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: ModelSettings,
        tools: list[Any],
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        schemas = [
            {"type": "function", "name": t.name, "parameters": t.params_json_schema} for t in tools
        ]
        self.calls.see({"input": items, "instructions": system_instructions, "tools": schemas})
        n = len(self.calls.tokens)
        last = items[-1]
        if last.get("role") == "user":
            turn = str(last["content"]).split(":")[0].removeprefix("Turn ")
            out: Any = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call_{n}",
                name="read_file",
                arguments=json.dumps({"path": f"m_{turn}.py"}),
                id=f"fc_{n}",
                status="completed",
            )
        else:
            text = ResponseOutputText(
                type="output_text", text=f"Done with step {n}.", annotations=[]
            )
            out = ResponseOutputMessage(
                type="message", id=f"msg_{n}", role="assistant", status="completed", content=[text]
            )
        return ModelResponse(output=[out], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@function_tool
def read_file(path: str) -> str:
    """Read a file."""
    turn = int(path.removeprefix("m_").removesuffix(".py"))
    return tool_output(turn, path)


def _run(session: Any, calls: Calls) -> None:
    agent = Agent(name="coder", instructions=SYSTEM, model=ToolModel(calls), tools=[read_file])
    for turn in range(TURNS):
        asyncio.run(Runner.run(agent, user_text(turn), session=session))


def test_two_hundred_turns_every_call_valid_and_within_the_window() -> None:
    calls = Calls(api="responses")
    tools = [{"type": "function", "name": "read_file", "parameters": read_file.params_json_schema}]
    stored = SQLiteSession("coder")
    session = CtxengineSession(stored, WINDOW, instructions=SYSTEM, tools=tools)
    _run(session, calls)
    assert len(calls.tokens) == 2 * TURNS
    assert calls.invalid == []
    # The runner reads the session once per run (before the run's user message) and adds
    # the run's items in memory: its calls go past the trigger by what the run added (the
    # policy's headroom), never past the window.
    assert DEFAULT_POLICY.resolve(WINDOW).trigger < max(calls.tokens) <= WINDOW
    # The wrapped session keeps every item: user, call, output, answer per turn.
    assert len(asyncio.run(stored.get_items())) == 4 * TURNS
    assert session.last is not None and session.last.context.epoch >= 5
    print(
        "openai-agents ctxengine:",
        json.dumps(
            {
                "calls": len(calls.tokens),
                "max": max(calls.tokens),
                "mean": sum(calls.tokens) // len(calls.tokens),
                "epochs": session.last.context.epoch,
                "invalid": len(calls.invalid),
            }
        ),
    )


@pytest.mark.parametrize("limit", [40])
def test_the_sdks_item_limit_on_the_same_conversation(limit: int) -> None:
    """The comparison: SQLiteSession with ``SessionSettings(limit=…)``, the SDK's own way of
    bounding the history (latest items; 40 is about the kept tail of the default policy)."""
    calls = Calls(api="responses")
    _run(SQLiteSession("coder", session_settings=SessionSettings(limit=limit)), calls)
    assert len(calls.tokens) == 2 * TURNS
    print(
        f"openai-agents item limit {limit}:",
        json.dumps(
            {
                "calls": len(calls.tokens),
                "max": max(calls.tokens),
                "mean": sum(calls.tokens) // len(calls.tokens),
                "invalid": len(calls.invalid),
            }
        ),
    )


class LongRunModel(Model):
    """One run of ``steps`` tool calls (``read_file`` of a long file each) before the answer."""

    def __init__(self, calls: Calls, steps: int) -> None:
        self.calls = calls
        self.steps = steps

    async def get_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: ModelSettings,
        tools: list[Any],
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        schemas = [
            {"type": "function", "name": t.name, "parameters": t.params_json_schema} for t in tools
        ]
        self.calls.see({"input": items, "instructions": system_instructions, "tools": schemas})
        n = len(self.calls.tokens)
        if n <= self.steps:
            out: Any = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call_{n}",
                name="read_big",
                arguments=json.dumps({"n": n}),
                id=f"fc_{n}",
                status="completed",
            )
        else:
            text = ResponseOutputText(type="output_text", text="All read.", annotations=[])
            out = ResponseOutputMessage(
                type="message", id=f"msg_{n}", role="assistant", status="completed", content=[text]
            )
        return ModelResponse(output=[out], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@function_tool
def read_big(n: int) -> str:
    """Read a long file."""
    return "\n".join(f"big_{n}.py:{i}: value_{n}_{i} = compute({i}, {n})" for i in range(120))


@pytest.mark.parametrize("filtered", [False, True])
def test_one_long_run_fitted_per_model_call(filtered: bool) -> None:
    """A single run of 40 tool calls (about 1,500 tokens each) outgrows the 16,000-token
    window in memory; with ``model_input_filter`` as the runner's ``call_model_input_filter``
    every one of its 41 model calls is fitted, valid and within the window, and the wrapped
    session still gets every item."""
    from agents import RunConfig

    calls = Calls(api="responses")
    stored = SQLiteSession("long-run")
    tools = [{"type": "function", "name": "read_big", "parameters": read_big.params_json_schema}]
    session = CtxengineSession(stored, WINDOW, instructions=SYSTEM, tools=tools)
    agent = Agent(
        name="coder", instructions=SYSTEM, model=LongRunModel(calls, 40), tools=[read_big]
    )
    config = RunConfig(call_model_input_filter=session.model_input_filter if filtered else None)
    result = asyncio.run(
        Runner.run(agent, "Read the big files.", session=session, run_config=config, max_turns=60)
    )
    assert result.final_output == "All read."
    assert len(calls.tokens) == 41
    assert calls.invalid == []
    # user message, 40 calls and their outputs, the answer
    assert len(asyncio.run(stored.get_items())) == 82
    if filtered:
        assert max(calls.tokens) <= WINDOW
        assert session.last is not None and session.last.context.epoch >= 1
    else:
        assert max(calls.tokens) > 3 * WINDOW
    print(
        f"openai-agents long run {'filtered' if filtered else 'session only'}:",
        json.dumps(
            {
                "calls": len(calls.tokens),
                "max": max(calls.tokens),
                "window": WINDOW,
                "invalid": len(calls.invalid),
            }
        ),
    )
