"""Thrash detection: automatic compactions that each buy only a few model calls.

A compaction *refills rapidly* when the context reaches the trigger again within
``policy.thrash_refill_calls`` model calls (assistant replies) after it. When the trigger
is reached and each of the latest ``policy.thrash_limit`` automatic compactions (threshold
or overflow) refilled rapidly, automatic compaction stops with a
:class:`~ctxengine.errors.ThrashError` instead of compacting again (Claude Code 2.1.89:
"the context refilled to the limit within 3 turns of the previous compact, 3 times in a
row"); ``policy.thrash_guard`` says when the check runs. A manual (or imported) compaction
ends the streak: after one, automatic compaction goes on.

The error names what fills the context (:func:`contributors`), in this order:

1. re-injected parts: the durable state the compaction re-injected, and user-role blocks a
   harness appended again after the compaction (an injected block of the tail whose text
   was already logged before the epoch: a rules file re-sent after every compaction); a
   block that carries a rules file is named by that file
   (:func:`~ctxengine.projection.injection.rules_file`), else by its first line;
2. tool results of the tail, by tool, largest first;
3. the pinned items.

and what to change for each (:func:`advice`). Pure; the history and the context are given.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ctxengine.model import CompactionRecord, Entry, Message
from ctxengine.model.roles import is_real_user_message
from ctxengine.policy.defaults import THRASH_LABEL_CHARS, THRASH_TOP_CONTRIBUTORS
from ctxengine.projection.context import Context
from ctxengine.projection.injection import SYNTHETIC_REINJECTED, rules_file, rules_text
from ctxengine.projection.pins import SYNTHETIC_PINNED
from ctxengine.tokens.base import Estimator

#: Compaction reasons that count towards a streak.
AUTOMATIC: frozenset[str] = frozenset({"threshold", "overflow"})

#: What a contributor is.
ContributorKind: TypeAlias = Literal["reinjected", "reappended", "tool", "pinned"]


@dataclass(frozen=True, slots=True)
class Contributor:
    """One part of the context named in a thrash error.

    Attributes:
        kind: :data:`ContributorKind`.
        label: how the error names it.
        tokens: its estimated size in the context, in tokens.
        name: the tool's name, for a tool; else ``""``.
    """

    kind: ContributorKind
    label: str
    tokens: int
    name: str = ""


def refill_calls(entries: Sequence[Entry], *, limit: int, within: int) -> tuple[int, ...]:
    """Model calls (assistant replies) between each of the latest automatic compactions of
    ``entries`` and the next compaction (for the newest: the end of ``entries``), oldest
    first: the trailing run of at most ``limit`` compactions each followed by at most
    ``within`` calls. A manual or imported compaction ends the run."""
    gaps: list[int] = []
    replies = 0
    for entry in reversed(entries):
        body = entry.body
        if isinstance(body, CompactionRecord):
            if body.reason not in AUTOMATIC:
                break
            gaps.append(replies)
            if len(gaps) == limit:
                break
            replies = 0
        elif isinstance(body, Message) and body.role == "assistant":
            replies += 1
            if replies > within:
                break
    return tuple(reversed(gaps))


def _label(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if len(line) > THRASH_LABEL_CHARS:
        line = line[: THRASH_LABEL_CHARS - 1] + "…"
    return repr(line)


def reappended_ids(entries: Sequence[Entry], epoch_start: int) -> frozenset[str]:
    """Ids of the injected user-role messages (not a person's, no tool result) at or after
    ``epoch_start`` in ``entries`` whose text was already logged before it: blocks a harness
    appended again after a compaction."""

    def injected(m: Message | None) -> bool:
        return (
            m is not None
            and m.role == "user"
            and not m.tool_results
            and not is_real_user_message(m)
        )

    earlier = {m.text for e in entries[:epoch_start] if injected(m := e.message) and m is not None}
    return frozenset(
        e.id
        for e in entries[epoch_start:]
        if injected(m := e.message) and m is not None and m.text in earlier
    )


def contributors(
    ctx: Context, estimator: Estimator, reappended: Collection[str]
) -> tuple[Contributor, ...]:
    """What fills ``ctx``, in the order of the module docstring, at most
    :data:`~ctxengine.policy.defaults.THRASH_TOP_CONTRIBUTORS`.

    Args:
        ctx: the context that reached the trigger.
        estimator: sizes the messages and results, in tokens.
        reappended: ids of the entries that are blocks appended again after the compaction
            (:func:`reappended_ids`).
    """
    preamble = ctx.preamble if ctx.preamble is not None else 0
    state: list[Contributor] = []
    blocks: dict[str, tuple[int, int]] = {}  # label → (copies, tokens)
    tools: dict[str, tuple[int, int]] = {}  # tool → (results, tokens)
    pinned = 0
    names = {c.id: c.name for m in ctx.messages for c in m.tool_calls}
    for i, (m, src) in enumerate(zip(ctx.messages, ctx.sources, strict=True)):
        synthetic = m.meta.get("synthetic")
        if synthetic == SYNTHETIC_PINNED:
            pinned += estimator.message(m)
        elif i < preamble:
            if synthetic == SYNTHETIC_REINJECTED:
                path = rules_file(m.text)
                label = (
                    f"re-injected rules {path}"
                    if path is not None
                    else f"re-injected state {_label(m.text)}"
                )
                state.append(Contributor("reinjected", label, estimator.message(m)))
        elif m.tool_results:
            for r in m.tool_results:
                name = names.get(r.call_id, "(unknown tool)")
                n, toks = tools.get(name, (0, 0))
                tools[name] = (n + 1, toks + estimator.part(r))
        elif src is not None and src in reappended:
            rules = rules_text(m)
            path = rules_file(rules) if rules is not None else None
            label = path if path is not None else _label(m.text)
            n, toks = blocks.get(label, (0, 0))
            blocks[label] = (n + 1, toks + estimator.message(m))
    found = sorted(state, key=lambda c: -c.tokens)
    for block, (n, toks) in sorted(blocks.items(), key=lambda kv: -kv[1][1]):
        copies = "1 copy" if n == 1 else f"{n} copies"
        label = f"user block {block} appended again after the compaction ({copies})"
        found.append(Contributor("reappended", label, toks))
    for name, (n, toks) in sorted(tools.items(), key=lambda kv: (-kv[1][1], kv[0])):
        results = "1 result" if n == 1 else f"{n} results"
        found.append(Contributor("tool", f"tool results of {name} ({results})", toks, name))
    if pinned:
        found.append(Contributor("pinned", "pinned items", pinned))
    if len(found) > THRASH_TOP_CONTRIBUTORS and pinned:
        # The pinned items are always named: they stay after every compaction.
        return (*found[: THRASH_TOP_CONTRIBUTORS - 1], found[-1])
    return tuple(found[:THRASH_TOP_CONTRIBUTORS])


#: What to change, per kind of contributor named.
ADVICE: dict[str, str] = {
    "reappended": (
        "Stop appending the same block again after each compaction: keep it once in the "
        "system prompt, or let ctxengine carry it (policy.reinject, Session.pin)."
    ),
    "reinjected": "Re-inject less after a compaction (policy.reinject, reinject_max_tokens).",
    "tool": (
        "Make {tools} return less per call (smaller reads, paging), or lower the truncation "
        "cap (policy.truncate_max_chars, truncate_max_window_ratio)."
    ),
    "pinned": "Unpin items or lower policy.pins_max_tokens.",
    "always": (
        "Or use a model with a larger window. A manual compaction lets automatic compaction "
        'go on; policy.thrash_guard="off" turns this check off.'
    ),
}


def advice(found: Sequence[Contributor]) -> tuple[str, ...]:
    """One sentence per kind of contributor in ``found`` (in its order), then the one that
    always applies."""
    out: list[str] = []
    kinds = list(dict.fromkeys(c.kind for c in found))
    tools = [c.name for c in found if c.kind == "tool"]
    for kind in kinds:
        text = ADVICE[kind]
        if kind == "tool":
            text = text.format(tools=" and ".join(tools))
        out.append(text)
    out.append(ADVICE["always"])
    return tuple(out)


def refill_note(calls: Sequence[int], found: Sequence[Contributor]) -> str:
    """The detail of a ``"refill"`` event: the context refilled to the trigger within
    ``calls`` model calls of each of the latest compactions (oldest first), under a
    summarizer that costs no model call, so compaction goes on; what fills it (``found``,
    :func:`contributors`) and what to change (:func:`advice`)."""
    within = ", ".join(str(n) for n in calls)
    top = "; ".join(f"{c.label}: {c.tokens:,} tokens" for c in found) or "none found"
    return (
        f"the context refilled to the trigger within {within} model calls of each of the "
        f"last {len(calls)} compactions (automatic compaction goes on: the summarizer calls "
        f'no model; policy.thrash_guard="always" stops it). Top contributors: {top}. '
        + " ".join(advice(found)[:-1])
    ).rstrip()
