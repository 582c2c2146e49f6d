"""The README's framework examples ("Use it with your agent") run as written: each python
block of that section is executed, with the framework's fake model in place of the named
model, the one place a network call would happen (and the Agents SDK's trace export turned
off, its other one)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import agents
import langchain.chat_models
import pytest
from agents import ModelResponse, Usage
from agents.models.interface import Model
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from openai.types.responses import ResponseOutputMessage, ResponseOutputText
from pydantic_ai.models.test import TestModel

README = Path(__file__).resolve().parents[2] / "README.md"
SECTION = "## Use it with your agent"


def snippets() -> dict[str, str]:
    """The python blocks of the README's section, by their first line (a comment naming the
    framework)."""
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    blocks = re.findall(r"```python\n(.*?)```", text[start:end], flags=re.S)
    return {b.splitlines()[0]: b for b in blocks}


#: The messages each call of :class:`FakeChatModel` was given.
SEEN: list[list[BaseMessage]] = []


class FakeChatModel(BaseChatModel):
    """LangChain: answers every call with one text, recording the messages it was given
    (:data:`SEEN`)."""

    @property
    def _llm_type(self) -> str:
        return "fake"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        SEEN.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage("setup.py installs x"))])


class FakeAgentsModel(Model):
    """OpenAI Agents SDK: answers every call with one text."""

    def __init__(self) -> None:
        self.calls = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        self.calls += 1
        text = ResponseOutputText(type="output_text", text="Fixed.", annotations=[])
        out = ResponseOutputMessage(
            type="message", id="msg_1", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[out], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def _run(block: str, named: str, fake: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Execute ``block`` with the expression ``named`` (found exactly once) replaced by
    ``fake`` (a name in ``namespace``)."""
    assert block.count(named) == 1, named
    exec(compile(block.replace(named, fake), str(README), "exec"), namespace)
    return namespace


def test_the_section_has_one_example_per_framework() -> None:
    assert [line for line in snippets()] == [
        "# LangChain v1: middleware in place of SummarizationMiddleware",
        "# OpenAI Agents SDK: a Session wrapper, and the same fitting for every model call of "
        "a run",
        "# pydantic-ai: a history processor",
    ]


def test_the_langchain_example_runs(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    (block,) = [b for k, b in snippets().items() if k.startswith("# LangChain")]
    fake = FakeChatModel()
    SEEN.clear()
    # the named model's constructor (it needs langchain-openai and a key) gives the fake
    monkeypatch.setattr(langchain.chat_models, "init_chat_model", lambda *a, **k: fake)
    ns = _run(block, 'init_chat_model("openai:gpt-5")', "init_chat_model()", {})
    assert capsys.readouterr().out == "setup.py installs x\n"
    (messages,) = SEEN
    assert [m.type for m in messages] == ["human"]
    assert ns["result"]["messages"][-1].content == "setup.py installs x"


def test_the_openai_agents_example_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: Any
) -> None:
    (block,) = [b for k, b in snippets().items() if k.startswith("# OpenAI Agents SDK")]
    monkeypatch.chdir(tmp_path)  # its chats.db
    agents.set_tracing_disabled(True)
    try:
        fake = FakeAgentsModel()
        ns = _run(block, 'model="gpt-5"', "model=FAKE", {"FAKE": fake})
    finally:
        agents.set_tracing_disabled(False)
    assert capsys.readouterr().out == "Fixed.\n"
    assert fake.calls == 1
    assert (tmp_path / "chats.db").exists()
    items = ns["session"].underlying
    assert items.session_id == "chat-42"


def test_the_pydantic_ai_example_runs(capsys: Any) -> None:
    (block,) = [b for k, b in snippets().items() if k.startswith("# pydantic-ai")]
    ns = _run(block, '"openai:gpt-5"', "TestModel()", {"TestModel": TestModel})
    assert capsys.readouterr().out == "success (no tool calls)\n"
    assert ns["result"].output == "success (no tool calls)"
