"""Inputs and per-output scoring for ``peers_measure.py`` (peers-measured.md §3–§4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from _approx import approx_tokens
from _common import require_file

from ctxengine.engine import Session
from ctxengine.importers import read_transcript
from ctxengine.model import Entry, Message
from ctxengine.projection.context import Context
from ctxengine.projection.render.anthropic import render_anthropic
from ctxengine.projection.render.openai import render_openai
from ctxengine.projection.validate import validate
from ctxengine.replay import source_messages
from ctxengine.summarizers.sections import needs_quoting, quoted_block
from ctxengine.tokens import HeuristicEstimator

#: Budgets B in tokens (peers-measured.md §1: 4k/8k/16k/32k/64k; its §6 ratios show k = 1,000).
BUDGETS = (4_000, 8_000, 16_000, 32_000, 64_000)
TARGET_P95_MS = 0.5
#: name, corpus path, whether the run was aborted (its in-flight request is measured too).
TRANSCRIPTS = (
    ("django", "openai-messages/mini-swe-agent-deepseek-chat-django-13265.traj.json", False),
    ("pvlib", "openai-messages/mini-swe-agent-deepseek-reasoner-pvlib-1606-aborted.traj.json",
     True),
    ("marshmallow", "swe-agent/swe-agent-marshmallow-1867-function-calling.traj", False),
)  # fmt: skip
CREATED = "2026-11-29T12:00:00.000+00:00"
#: The issue's corpus test checks the first 500 characters of the first request.
TASK_HEAD_CHARS = 500


@dataclass(frozen=True, slots=True)
class Transcript:
    """One input: its messages, a log of them, the request ends and the facts looked for.

    ``requests`` holds each request's end i (the request is ``messages[:i]``); ``raw_tokens``
    and ``raw_ours`` size each untouched request by the approximate counter and by ctxengine's
    estimator.
    """

    name: str
    messages: tuple[Message, ...]
    entries: tuple[Entry, ...]
    requests: tuple[int, ...]
    raw_tokens: dict[int, int]
    raw_ours: dict[int, int]
    task: str
    system: str


def load(name: str, relative: str, aborted: bool) -> Transcript:
    """Import one transcript (usage dropped) and size its untouched requests."""
    messages = tuple(source_messages(read_transcript(require_file(relative)).entries))
    scratch = Session(10**9)
    for m in messages:
        scratch.append(m, created_at=CREATED)
    ends = [i for i, m in enumerate(messages) if m.role == "assistant"]
    if aborted and messages[-1].role != "assistant":
        ends.append(len(messages))
    est = HeuristicEstimator()
    raw, ours = {}, {}
    for i in ends:
        prefix = messages[:i]
        raw[i] = approx_tokens(render_openai(Context(prefix, (None,) * i))["messages"])
        ours[i] = sum(est.message(m) for m in prefix)
    task = next(m.text for m in messages if m.role == "user" and not m.tool_results)
    system = next(m.text for m in messages if m.role == "system")
    return Transcript(name, messages, scratch.entries, tuple(ends), raw, ours, task, system)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one ``prepare()`` call produced, scored.

    ``openai`` / ``anthropic``: the validator's problems. ``task``: ``"verbatim"`` (the
    whole task, as it stands or, when it holds a line starting with ``#``, as the
    continuation state quotes it: later lines indented four spaces), ``"head"`` (only the first
    :data:`TASK_HEAD_CHARS` characters found, either way) or ``"lost"``; ``task_where``
    says where the task (or its head) was found: ``"message"`` (the user message itself),
    ``"summary"`` (the continuation state) or ``""``. ``shape``: the output's messages as role
    letters with token sizes (``Σ`` = continuation state, ``✂`` = truncated at source).
    """

    transcript: str
    budget: int
    request: int
    raw_tokens: int
    ms: float
    compacted: bool
    openai: tuple[str, ...]
    anthropic: tuple[str, ...]
    tokens_ours: int
    tokens_approx: int
    task: str
    task_where: str
    last_kept: bool
    last_role: str
    system_kept: bool
    shape: str

    @property
    def over_history(self) -> bool:
        return self.raw_tokens > self.budget

    @property
    def invalid(self) -> bool:
        return bool(self.openai)

    @property
    def task_kept(self) -> bool:
        return self.task == "verbatim"


def _body_text(m: dict[str, Any]) -> str:
    content = m.get("content") or ""
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))


def _input_text(m: Message) -> str:
    if m.tool_results:
        return "\n".join(getattr(p, "text", "") or "" for r in m.tool_results for p in r.content)
    return m.text


def _shape(ctx: Context, est: HeuristicEstimator) -> str:
    letters = {"system": "S", "developer": "D", "user": "U", "assistant": "A", "tool": "T"}
    cut = {t.entry_id for t in ctx.truncations}
    out = []
    for m, src in zip(ctx.messages, ctx.sources, strict=True):
        tag = letters[m.role] if src is not None else "Σ"
        if src is not None and src in cut:
            tag += "✂"
        out.append(f"{tag}{est.message(m)}")
    return " ".join(out)


def _forms(text: str, task: str) -> tuple[str, ...]:
    """``text`` as it stands, and as the continuation state quotes it when ``task`` holds a
    line starting with ``#`` (:func:`~ctxengine.summarizers.sections.quoted_block`: its
    later lines indented four spaces, so that none reads as a heading of the state)."""
    return (text, quoted_block(text)) if needs_quoting(task) else (text,)


def _task(task: str, ctx: Context, texts: list[str]) -> tuple[str, str]:
    head = task[:TASK_HEAD_CHARS]
    for state, needle in (("verbatim", task), ("head", head)):
        for src, text in zip(ctx.sources, texts, strict=True):
            if any(form in text for form in _forms(needle, task)):
                return state, "message" if src is not None else "summary"
    return "lost", ""


def score(t: Transcript, budget: int, i: int, ctx: Context, ms: float, compacted: bool) -> Outcome:
    """Render, validate and measure one output of request ``messages[:i]``."""
    body = render_openai(ctx)
    texts = [_body_text(m) for m in body["messages"]]
    ctx_texts = [_input_text(m) if m.role == "tool" else m.text for m in ctx.messages]
    last = t.messages[i - 1]
    last_text = _input_text(last)
    task, where = _task(t.task, ctx, ctx_texts)
    if task == "verbatim" and not any(f in x for x in texts for f in _forms(t.task, t.task)):
        task, where = "lost", "not rendered"
    return Outcome(
        transcript=t.name,
        budget=budget,
        request=i,
        raw_tokens=t.raw_tokens[i],
        ms=ms,
        compacted=compacted,
        openai=tuple(validate(body, "openai")),
        anthropic=tuple(validate(render_anthropic(ctx), "anthropic")),
        tokens_ours=ctx.tokens,
        tokens_approx=approx_tokens(body["messages"]),
        task=task,
        task_where=where,
        last_kept=any(last_text in x for x in texts),
        last_role=last.role,
        system_kept=any(
            m["role"] == "system" and t.system in x
            for m, x in zip(body["messages"], texts, strict=True)
        ),
        shape=_shape(ctx, HeuristicEstimator()),
    )
