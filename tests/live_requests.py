"""Compare the requests a real agent sent its model with an imported session's projection.

``model-requests.jsonl`` (in ``../shared/corpus/live-agents/<agent>/``) holds every request
body the agent sent. For each request answered by an assistant message of the session, the
session's log up to that message is projected (no truncation, no pruning) and both sides are
brought to one canonical form:

* a list of ``(role, items)`` with consecutive messages of the same role merged;
* items ``("text", t)`` (consecutive texts of a message joined, whitespace collapsed),
  ``("call", id, name, arguments)`` (arguments as sorted JSON), ``("result", id, text)``,
  ``("reasoning", text)`` and ``("summary", text)``.

A compaction summary is compared on its own: ctxengine frames every summary in its own
continuation message (:data:`ctxengine.projection.project.CONTINUATION_PREFIX` and
``<continuation-state>`` tags) placed right after the head, while agents send their summary
text in their own place; so ``("summary", …)`` items are taken out of both sides and compared
as a list, and the rest is compared in order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.projection.project import project
from ctxengine.projection.settings import ProjectionSettings
from hand_estimator import HandEstimator

Item = tuple[str, ...]
Canonical = list[tuple[str, list[Item]]]

#: Projection without truncation at source.
NO_TRUNCATION = ProjectionSettings(10**9, 10**12, 0.5)
_CONTINUATION = re.compile(r"<continuation-state>\n(.*)\n</continuation-state>\Z", re.S)
_WS = re.compile(r"\s+")


def norm(text: str) -> str:
    """``text`` with every whitespace run collapsed to one space, stripped."""
    return _WS.sub(" ", text).strip()


def canonical_json(value: Any) -> str:
    """``value`` (or the JSON text it is) as sorted compact JSON."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Request:
    """One line of ``model-requests.jsonl``: its 1-based number, kind and body."""

    number: int
    kind: str
    body: dict[str, Any]
    reply: Any


def requests(path: Path) -> list[Request]:
    """Every request of a ``model-requests.jsonl`` file, in order."""
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        obj = json.loads(line)
        out.append(Request(number, str(obj.get("kind")), obj["body"], obj.get("reply")))
    return out


def merge(messages: Canonical) -> Canonical:
    """Consecutive messages of the same role merged; consecutive texts joined; empty
    messages dropped."""
    out: Canonical = []
    for role, items in messages:
        if not items:
            continue
        if out and out[-1][0] == role:
            out[-1][1].extend(items)
        else:
            out.append((role, list(items)))
    for _, items in out:
        joined: list[Item] = []
        for item in items:
            if item[0] == "text" and joined and joined[-1][0] == "text":
                joined[-1] = ("text", norm(joined[-1][1] + " " + item[1]))
            else:
                joined.append(item)
        items[:] = [i for i in joined if i != ("text", "")]
    return [(r, i) for r, i in out if i]


def split_summaries(messages: Canonical) -> tuple[Canonical, list[str]]:
    """``messages`` without their ``("summary", …)`` items (re-merged), and those texts."""
    summaries = [i[1] for _, items in messages for i in items if i[0] == "summary"]
    rest = [(r, [i for i in items if i[0] != "summary"]) for r, items in messages]
    return merge(rest), summaries


# -- the projection side --------------------------------------------------------------------


def projected(entries: Sequence[Entry], *, tool_role: str) -> Canonical:
    """The projection of ``entries`` in canonical form (``tool`` messages take
    ``tool_role``)."""
    ctx = project(entries, NO_TRUNCATION, HandEstimator())
    out: Canonical = []
    for msg in ctx.messages:
        out.append((tool_role if msg.role == "tool" else msg.role, _items(msg)))
    return merge(out)


def _items(msg: Message) -> list[Item]:
    items: list[Item] = []
    for part in msg.parts:
        if isinstance(part, TextPart):
            found = _CONTINUATION.search(part.text)
            if found and msg.role == "user":
                items.append(("summary", norm(found.group(1))))
            else:
                items.append(("text", norm(part.text)))
        elif isinstance(part, ToolCallPart):
            args = part.arguments
            if part.meta.get("freeform"):
                args = json.loads(args)["input"]
            items.append(("call", part.id, part.name, canonical_json(args)))
        elif isinstance(part, ToolResultPart):
            items.append(("result", part.call_id, norm(part.text)))
        elif isinstance(part, ReasoningPart) and part.text:
            items.append(("reasoning", norm(part.text)))
    return items


def entries_before(entries: Sequence[Entry], found: Callable[[Message], bool]) -> int | None:
    """Index of the first assistant entry for which ``found`` holds (the reply of a
    request), or ``None``."""
    for i, entry in enumerate(entries):
        msg = entry.message
        if msg is not None and msg.role == "assistant" and found(msg):
            return i
    return None


def summaries_of(entries: Sequence[Entry]) -> list[str]:
    """The summaries of the compaction records in ``entries``, normalised."""
    return [norm(e.body.summary) for e in entries if isinstance(e.body, CompactionRecord)]


# -- the request side -----------------------------------------------------------------------


def anthropic_request(body: dict[str, Any], summaries: Sequence[str]) -> Canonical:
    """An Anthropic Messages request body's ``messages`` in canonical form; a text equal
    (up to whitespace) to one of ``summaries`` is a ``("summary", …)`` item."""
    out: Canonical = []
    for m in body["messages"]:
        content = m["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        items: list[Item] = []
        for b in blocks:
            kind = b.get("type")
            if kind == "text":
                text = norm(b["text"])
                items.append(("summary", text) if text in summaries else ("text", text))
            elif kind == "tool_use":
                items.append(("call", b["id"], b["name"], canonical_json(b["input"])))
            elif kind == "tool_result":
                inner = b.get("content")
                if isinstance(inner, str):
                    text = inner
                else:
                    text = "\n".join(x["text"] for x in inner or () if x.get("type") == "text")
                items.append(("result", b["tool_use_id"], norm(text)))
            elif kind == "thinking" and b.get("thinking"):
                items.append(("reasoning", norm(b["thinking"])))
        out.append((m["role"], items))
    return merge(out)


def responses_request(body: dict[str, Any], summaries: Sequence[str]) -> Canonical:
    """An OpenAI Responses request body's ``input`` in canonical form (calls and their
    outputs; assistant-side items of one response form one assistant message)."""
    out: Canonical = []
    for item in body["input"]:
        kind = item.get("type")
        if kind == "message":
            texts = [norm(c["text"]) for c in item["content"] if "text" in c]
            found: list[Item] = []
            for text in texts:
                found.append(("summary", text) if text in summaries else ("text", text))
            out.append((item["role"], found))
        elif kind == "reasoning":
            text = "\n\n".join(s["text"] for s in item.get("summary") or ())
            out.append(("assistant", [("reasoning", norm(text))] if text else []))
        elif kind in ("function_call", "custom_tool_call"):
            args = item.get("arguments", item.get("input"))
            out.append(
                ("assistant", [("call", item["call_id"], item["name"], canonical_json(args))])
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item["output"]
            text = output if isinstance(output, str) else json.dumps(output)
            out.append(("tool", [("result", item["call_id"], norm(text))]))
    return merge(out)


def first_difference(a: Canonical, b: Canonical) -> str:
    """Where two canonical forms first differ (for assertion messages)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"message {i}: {_short(x)} != {_short(y)}"
    return f"lengths {len(a)} != {len(b)}"


def _short(message: tuple[str, list[Item]]) -> str:
    role, items = message
    return role + " " + repr([tuple(str(v)[:60] for v in i) for i in items])[:600]
