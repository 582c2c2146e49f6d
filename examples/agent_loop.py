#!/usr/bin/env python3
"""A minimal coding-agent loop on ctxengine, with a stub model instead of a real one.

Every turn: ``prepare()`` gives the context for the next call (compacting when it reaches the
trigger), the context is rendered as an OpenAI Chat Completions body, the "model" answers,
the reply is ``record()``-ed and each tool call's result is ``append()``-ed. The window is
small (6,000 tokens) so that the session compacts a few times on the way. Run it::

    python examples/agent_loop.py

Swap ``stub_model`` for a real call (``openai.OpenAI().chat.completions.create(**body)``, or
``Session.complete(create_provider("openai:gpt-4o-mini"))``) and the loop is the same.
"""

from __future__ import annotations

import json
from typing import Any

from ctxengine import Session, render_openai, validate
from ctxengine.model import ToolCallPart, Usage, assistant, system, tool_result, user

WINDOW = 6_000
FILES = [f"src/app/module_{k}.py" for k in range(12)]


def read_file(path: str) -> str:
    """The stub tool: a made-up file of about 1,000 tokens."""
    name = path.rsplit("/", 1)[-1].removesuffix(".py")
    body = "".join(f"def {name}_step_{n}(value):\n    return value + {n}\n\n" for n in range(60))
    return f"# {path}\n{body}"


def stub_model(body: dict[str, Any], turn: int) -> tuple[str, list[str]]:
    """Stands in for the model: reads the next file until every file was read, then answers.
    Returns ``(text, paths to read)``; it sees only what the request body shows it."""
    shown = json.dumps(body["messages"])
    if turn < len(FILES):
        return f"Reading {FILES[turn]}.", [FILES[turn]]
    kept = sum(path in shown for path in FILES)
    return f"Done: the module_N_step functions are consistent ({kept} files in view).", []


def main() -> None:
    session = Session(WINDOW)
    session.append(system("You are a careful coding agent."))
    session.append(user("Check that every module in src/app has the same step functions."))
    for turn in range(len(FILES) + 1):
        ctx = session.prepare()  # compacts here when the context reached the trigger
        body = render_openai(ctx, model="stub-model")
        assert not validate(body, "openai")  # every request is protocol-valid
        text, reads = stub_model(body, turn)
        calls = [
            ToolCallPart(f"call_{turn}_{n}", "read_file", json.dumps({"path": p}))
            for n, p in enumerate(reads)
        ]
        usage = Usage(input_tokens=ctx.tokens, output_tokens=20)
        session.record(assistant(text, *calls, usage=usage))
        for call in calls:
            session.append(tool_result(call.id, read_file(json.loads(call.arguments)["path"])))
        compacted = [e for e in session.events if e.step == "compaction"]
        print(
            f"turn {turn + 1:2}: {ctx.tokens:5,} tokens sent in {len(body['messages']):2} "
            f"messages (compactions so far: {len(compacted)})"
        )
    print(text)
    print(f"history: {len(session.entries)} entries, nothing deleted")


if __name__ == "__main__":
    main()
