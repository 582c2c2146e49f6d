"""Token breakdown of a session log: by role, by tool, top consumers, epochs. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    PruneRecord,
    ToolResultPart,
    current_entries,
)
from ctxengine.tokens.base import Estimator


@dataclass(frozen=True, slots=True)
class Consumer:
    """One large entry.

    Attributes:
        entry_id: the entry.
        seq: its position in the log.
        role: message role.
        tool: tool name for tool results (else ``None``).
        tokens: estimated tokens.
        preview: the first 80 characters of its text.
    """

    entry_id: str
    seq: int
    role: str
    tool: str | None
    tokens: int
    preview: str


@dataclass(frozen=True, slots=True)
class Epoch:
    """The span of history one context was projected from: from the previous compaction's
    first kept entry (the start of the log for the first epoch) to the compaction that
    closed it. Epochs overlap by the tail each compaction kept.

    Attributes:
        index: 0 for the span before the first compaction.
        start_seq / end_seq: first and last entry seq of the span.
        messages: message entries in it.
        tokens: estimated tokens of its messages.
        compaction: the compaction record that closed it (``None`` for the last one).
        compaction_id: that record's entry id (what ``revert`` takes), or ``None``.
        state_tokens: estimated tokens of the continuation state its contexts open with
            (the text of the compaction that opened it, without the message around it); 0
            for the span before the first compaction. A context of the epoch holds these
            besides its messages.
    """

    index: int
    start_seq: int
    end_seq: int
    messages: int
    tokens: int
    compaction: CompactionRecord | None
    compaction_id: str | None = None
    state_tokens: int = 0


@dataclass(slots=True)
class Breakdown:
    """Where a log's tokens go. All values are estimated tokens.

    Attributes:
        total: all message entries.
        by_role: role → tokens.
        by_tool: tool name → (calls, tokens of its results).
        top: the largest entries, largest first.
        epochs: spans between compactions.
        counts: entries by kind, plus ``tool_calls`` and ``tool_results``.
    """

    total: int = 0
    by_role: dict[str, int] = field(default_factory=dict)
    by_tool: dict[str, tuple[int, int]] = field(default_factory=dict)
    top: list[Consumer] = field(default_factory=list)
    epochs: list[Epoch] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def _preview(m: Message) -> str:
    text = m.text or "\n".join(r.text for r in m.tool_results)
    if not text:
        text = ", ".join(f"{c.name}()" for c in m.tool_calls)
    return " ".join(text.split())[:80]


def breakdown(entries: Sequence[Entry], estimator: Estimator, *, top: int = 10) -> Breakdown:
    """Compute the :class:`Breakdown` of ``entries`` (``top`` largest entries kept); the
    entries a supersede record withdrew are not counted, nor the record."""
    entries = current_entries(entries)
    out = Breakdown()
    names: dict[str, str] = {}
    consumers: list[Consumer] = []
    seq_of = {e.id: e.seq for e in entries}
    sizes: list[tuple[int, int]] = []  # (seq, tokens) of message entries
    epoch_start = 0
    state = 0

    def close(end_seq: int, record: CompactionRecord | None, record_id: str | None) -> None:
        inside = [t for seq, t in sizes if epoch_start <= seq <= end_seq]
        out.epochs.append(
            Epoch(
                len(out.epochs),
                epoch_start,
                end_seq,
                len(inside),
                sum(inside),
                record,
                record_id,
                state,
            )
        )

    for e in entries:
        out.counts[e.kind] = out.counts.get(e.kind, 0) + 1
        body = e.body
        if isinstance(body, CompactionRecord):
            close(e.seq, body, e.id)
            state = estimator.text(body.summary)
            first = body.first_kept_id
            epoch_start = seq_of.get(first, e.seq + 1) if first is not None else e.seq + 1
            continue
        if isinstance(body, PruneRecord) or not isinstance(body, Message):
            continue
        tokens = estimator.message(body)
        out.total += tokens
        sizes.append((e.seq, tokens))
        out.by_role[body.role] = out.by_role.get(body.role, 0) + tokens
        tool: str | None = None
        for call in body.tool_calls:
            names[call.id] = call.name
            calls, toks = out.by_tool.get(call.name, (0, 0))
            out.by_tool[call.name] = (calls + 1, toks)
            out.counts["tool_calls"] = out.counts.get("tool_calls", 0) + 1
        for part in body.parts:
            if isinstance(part, ToolResultPart):
                tool = names.get(part.call_id, part.name or "?")
                calls, toks = out.by_tool.get(tool, (0, 0))
                out.by_tool[tool] = (calls, toks + estimator.part(part))
                out.counts["tool_results"] = out.counts.get("tool_results", 0) + 1
        consumers.append(Consumer(e.id, e.seq, body.role, tool, tokens, _preview(body)))
    close(entries[-1].seq if entries else 0, None, None)
    consumers.sort(key=lambda c: (-c.tokens, c.seq))
    out.top = consumers[:top]
    return out
