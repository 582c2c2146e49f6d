"""The pydantic-ai history processor with a real ``Agent`` and a ``FunctionModel``: 200 turns,
every model call valid and within the window; compared with the keep-recent processor
pydantic-ai documents (``ProcessHistory`` keeping the latest messages)."""

from __future__ import annotations

import json
from typing import Any

from checks import TURNS, WINDOW, Calls
from harness import SYSTEM, tool_output, user_text
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ctxengine.adapters.pydantic_ai import CtxengineHistory, to_chat
from ctxengine.policy import DEFAULT_POLICY

#: The tool as the agent declares it to the model (``read_file(path: str)``), counted by the
#: processor as the model receives it.
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "parameters": {
                "additionalProperties": False,
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
                "type": "object",
            },
        },
    }
]


def _model(calls: Calls) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        chat = [d for m in messages for d in to_chat(m)]
        tools = [
            {
                "type": "function",
                "function": {"name": t.name, "parameters": t.parameters_json_schema},
            }
            for t in info.function_tools
        ]
        calls.see({"messages": chat, "tools": tools})
        n = len(calls.tokens)
        last = messages[-1]
        if isinstance(last, ModelRequest) and isinstance(last.parts[-1], UserPromptPart):
            turn = str(last.parts[-1].content).split(":")[0].removeprefix("Turn ")
            return ModelResponse(
                parts=[ToolCallPart("read_file", {"path": f"m_{turn}.py"}, f"call_{n}")]
            )
        return ModelResponse(parts=[TextPart(f"Done with step {n}.")])

    return FunctionModel(answer)


def _run(processor: Any, calls: Calls) -> list[ModelMessage]:
    agent = Agent(_model(calls), system_prompt=SYSTEM, capabilities=[ProcessHistory(processor)])

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file."""
        turn = int(path.removeprefix("m_").removesuffix(".py"))
        return tool_output(turn, path)

    history: list[ModelMessage] = []
    for turn in range(TURNS):
        history = agent.run_sync(user_text(turn), message_history=history).all_messages()
    return history


def test_two_hundred_turns_every_call_valid_and_within_the_window() -> None:
    calls = Calls()
    processor = CtxengineHistory(WINDOW, tools=TOOLS)
    history = _run(processor, calls)
    assert len(calls.tokens) == 2 * TURNS
    assert calls.invalid == []
    assert max(calls.tokens) <= DEFAULT_POLICY.resolve(WINDOW).trigger
    # ProcessHistory writes the processed messages back into the run's history: the agent
    # keeps the compacted conversation, and each compaction starts from the previous one's
    # continuation state.
    compacted = [
        m
        for m in history
        if isinstance(m, ModelRequest)
        and any(
            str(getattr(p, "content", "")).startswith("The earlier part of this session was")
            for p in m.parts
        )
    ]
    assert len(compacted) == 1
    assert len(history) < 4 * TURNS
    assert processor.fitter.changed_calls >= 5
    print(
        "pydantic-ai ctxengine:",
        json.dumps(
            {
                "calls": len(calls.tokens),
                "max": max(calls.tokens),
                "mean": sum(calls.tokens) // len(calls.tokens),
                "history": len(history),
                "changed": processor.fitter.changed_calls,
                "invalid": len(calls.invalid),
            }
        ),
    )


def test_the_documented_keep_recent_processor_on_the_same_conversation() -> None:
    """The comparison: ``messages[-N:]`` (pydantic-ai's documented trimming), with N = 20
    messages, about the default policy's kept tail."""
    calls = Calls()

    def keep_recent(messages: list[ModelMessage]) -> list[ModelMessage]:
        return messages[-20:]

    _run(keep_recent, calls)
    assert len(calls.tokens) == 2 * TURNS
    print(
        "pydantic-ai keep_recent:",
        json.dumps(
            {
                "calls": len(calls.tokens),
                "max": max(calls.tokens),
                "mean": sum(calls.tokens) // len(calls.tokens),
                "invalid": len(calls.invalid),
            }
        ),
    )
