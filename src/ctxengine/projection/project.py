"""``project()``: the context of one model call, derived from the session log.

Layout of the result::

    head          system/developer messages at the start of the log, always kept
    retained      message entries before the cut the compaction keeps verbatim (its
                  ``retained_ids``: Codex's user messages, OpenHands ``keep_first``)
    continuation  the latest compaction's summary in its injection shape (one user message,
                  or a pair: :mod:`ctxengine.projection.injection`), if any
    reinjected    the compaction's re-injected durable state, one user message each
    pinned        the pinned items the caller gives (:mod:`ctxengine.projection.pins`), one
                  user message marking them as standing instructions
    durable       re-injected durable state (rules files, plan …), given by the caller
    tail          message entries from the compaction's first kept entry onward (or the
                  whole log without a compaction), in log order; after the entries the
                  compaction saw, its continuation message when it asked for one. A pin
                  record in the tail is shown where it stands, as a pinned-items message
                  of its own (after the results of any tool call still open there), unless
                  the entry it pins is shown verbatim

A native compaction (the record's ``native`` set: the provider compacted) is laid out as
head, its continuation state marked as the stand-in of the provider's item
(:data:`~ctxengine.model.carriage.STAND_IN`), the entry holding the item (its
``lead_ids``), pinned, durable, tail: a request to that provider leaves the stand-in out and
opens with the item; every other request drops the item and reads the stand-in. Its size
counts one of the two: the item where the estimate prices it (Anthropic's block), else the
stand-in (OpenAI's encrypted items are priced at nothing, :mod:`ctxengine.model.carriage`);
its preamble ends before the item (the item's entry is conversation a later compaction
summarizes). The item of a native compaction no longer
in force is left out wherever its message is shown, and a tail kept across a native
compaction keeps its signed reasoning (the provider's background compaction swaps the
prefix it summarized "so that thinking produced while the summary was being written stays
valid").

Then, on the retained messages and the tail: pruned tool results become one-line
placeholders, long tool results are truncated at source (head + marker + tail), stale signed
reasoning is dropped from the messages kept across the compaction, and the sanitizer repairs
broken call/result pairing.

Frame tags: the request holds exactly one opening and one closing ``<continuation-state>``
tag (and at most one ``<earlier-summary>`` pair, inside it) whatever the history says. The
summary is neutralised where it is wrapped (:func:`~ctxengine.projection.injection.
frame_messages`), an imported one quoted as data (:func:`~ctxengine.projection.frame.
quote_imported`), and the text of every other message — head, retained messages, durable
state and tail — has those two tags neutralised
(:func:`~ctxengine.projection.frame.neutralize_message`; everything else verbatim).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ctxengine.boundaries.pending import pending_calls
from ctxengine.boundaries.sanitize import sanitize
from ctxengine.model import (
    CompactionRecord,
    Entry,
    Message,
    PinRecord,
    PruneRecord,
    SupersedeRecord,
    TextPart,
    ToolCallPart,
    UnpinRecord,
    current_entries,
)
from ctxengine.model.carriage import NATIVE_LEAD, STAND_IN, carried_anywhere
from ctxengine.model.parts import NativeCompactionPart
from ctxengine.model.roles import is_real_user_message, user_text
from ctxengine.projection.context import Context, Truncation
from ctxengine.projection.frame import neutralize_message
from ctxengine.projection.injection import (
    CONTINUATION_PREFIX,
    continuation_message,
    continue_message,
    frame_messages,
    is_rules_message,
    reinjected_message,
    repeated_message,
)
from ctxengine.projection.language import detect_language
from ctxengine.projection.memo import EpochKey, EpochProjection, ProjectionMemo
from ctxengine.projection.pins import Pinned, pinned_message
from ctxengine.projection.settings import ProjectionSettings
from ctxengine.projection.transform import (
    TruncateCap,
    drop_stale_signed_reasoning,
    rewrite_results,
    without_signed_reasoning,
)
from ctxengine.projection.wording import state_language
from ctxengine.tokens.base import Estimator

_HEAD_ROLES = frozenset({"system", "developer"})
#: The cap of a message never truncated (a rules message under ``whole_rules``).
NO_CAP = 2**62
#: ``CompactionRecord.summarizer`` of a compaction imported from another system's transcript.
IMPORTED = "imported"


def _head(entries: Sequence[Entry]) -> list[Entry]:
    """Leading system/developer message entries (records in between are skipped)."""
    head: list[Entry] = []
    for entry in entries:
        msg = entry.message
        if msg is None:
            continue
        if msg.role not in _HEAD_ROLES:
            break
        head.append(entry)
    return head


def _tail_start(entries: Sequence[Entry], comp_index: int, record: CompactionRecord) -> int:
    """Index of the first entry shown verbatim after the compaction at ``comp_index``."""
    if record.first_kept_id is not None:
        for i in range(comp_index - 1, -1, -1):
            if entries[i].id == record.first_kept_id:
                return i
    return comp_index + 1


def _seen_end(entries: Sequence[Entry], comp_index: int, record: CompactionRecord) -> int:
    """Index after the newest entry the compaction at ``comp_index`` saw: after its
    ``snapshot_id`` entry (a compaction computed in the background and adopted later), else
    ``comp_index`` (the entries before the record). The entries from there on are shown as
    entries logged after the record."""
    if record.snapshot_id is not None:
        for i in range(comp_index - 1, -1, -1):
            if entries[i].id == record.snapshot_id:
                return i + 1
    return comp_index


def _tail_order(
    entries: Sequence[Entry], start: int, comp_index: int, record: CompactionRecord | None
) -> tuple[Sequence[int], int]:
    """Indexes of the entries shown after the continuation state, in order, and how many of
    them lead: the record's ``lead_ids`` entries (logged after it) first, then the kept tail
    from ``start``."""
    if record is None or not record.lead_ids:
        return range(start, len(entries)), 0
    lead = set(record.lead_ids)
    first = [i for i in range(comp_index + 1, len(entries)) if entries[i].id in lead]
    chosen = set(first)
    return first + [i for i in range(start, len(entries)) if i not in chosen], len(first)


def _first_kept_role(entries: Sequence[Entry], record: CompactionRecord) -> str | None:
    """Role of the compaction's first kept message, or ``None`` when it keeps no tail."""
    if record.first_kept_id is None:
        return None
    for entry in entries:
        if entry.id == record.first_kept_id:
            msg = entry.message
            return msg.role if msg is not None else None
    return None


def _stand_in(message: Message, provider: str) -> Message:
    """``message`` marked as standing in for ``provider``'s native compaction item."""
    return dataclasses.replace(message, meta={**message.meta, STAND_IN: provider})


def _without_stale_item(
    message: Message, entry_id: str, in_force: frozenset[str]
) -> Message | None:
    """``message`` without the native compaction item it holds (``meta`` marked
    :data:`~ctxengine.model.carriage.NATIVE_LEAD`) unless its entry leads the compaction in
    force (``in_force``); ``None`` when nothing else is left. Other messages unchanged."""
    if NATIVE_LEAD not in message.meta or entry_id in in_force:
        return message
    parts = tuple(p for p in message.parts if not isinstance(p, NativeCompactionPart))
    if not parts:
        return None
    return dataclasses.replace(message, parts=parts)


def _is_stand_in(message: Message) -> bool:
    return STAND_IN in message.meta


def _shown_only(
    messages: Sequence[Message], truncations: list[Truncation], pruned: list[str]
) -> tuple[list[Truncation], list[str]]:
    """Truncations and pruned ids of results still shown after sanitizing, once each."""
    shown = {r.call_id for m in messages for r in m.tool_results} | {""}
    seen: set[str] = set()
    kept_truncations: list[Truncation] = []
    for t in truncations:
        if t.call_id in shown and (t.call_id not in seen or not t.call_id):
            seen.add(t.call_id)
            kept_truncations.append(t)
    kept_pruned = list(dict.fromkeys(cid for cid in pruned if cid in shown))
    return kept_truncations, kept_pruned


def _rewritten(
    msg: Message,
    entry_id: str,
    *,
    pruned: frozenset[str],
    calls: Mapping[str, ToolCallPart],
    cap: TruncateCap,
    estimator: Estimator,
    truncations: list[Truncation],
    pruned_out: list[str],
) -> Message:
    return neutralize_message(
        rewrite_results(
            msg,
            entry_id,
            pruned=pruned,
            calls=calls,
            cap=cap,
            estimator=estimator,
            truncations=truncations,
            pruned_out=pruned_out,
        )
    )


def _rewrite(
    msg: Message,
    entry_id: str,
    prune_set: frozenset[str],
    calls: Mapping[str, ToolCallPart],
    cap: TruncateCap,
    estimator: Estimator,
    memo: ProjectionMemo | None,
    truncations: list[Truncation],
    pruned_out: list[str],
) -> Message:
    """:func:`rewrite_results` then :func:`~ctxengine.projection.frame.neutralize_message`,
    reusing the memo's result for the same entry and caps."""
    if memo is None:
        return _rewritten(
            msg,
            entry_id,
            pruned=prune_set,
            calls=calls,
            cap=cap,
            estimator=estimator,
            truncations=truncations,
            pruned_out=pruned_out,
        )
    here = tuple(r.call_id for r in msg.tool_results if r.call_id in prune_set)
    key = (entry_id, cap.tokens, cap.chars, cap.head_ratio, here, cap.prune_tail)
    hit = memo.rewrites.get(key)
    if hit is None:
        t_list: list[Truncation] = []
        p_list: list[str] = []
        out = _rewritten(
            msg,
            entry_id,
            pruned=prune_set,
            calls=calls,
            cap=cap,
            estimator=estimator,
            truncations=t_list,
            pruned_out=p_list,
        )
        memo.trim()
        hit = memo.rewrites[key] = (out, tuple(t_list), tuple(p_list))
    truncations.extend(hit[1])
    pruned_out.extend(hit[2])
    return hit[0]


def project(
    entries: Sequence[Entry],
    settings: ProjectionSettings,
    estimator: Estimator,
    *,
    tools: Sequence[Mapping[str, Any]] = (),
    durable: Sequence[Message] = (),
    pins: Sequence[Pinned] = (),
    memo: ProjectionMemo | None = None,
    pruned: frozenset[str] | None = None,
) -> Context:
    """Project a session log into the context of one model call. Pure and deterministic:
    equal inputs give an equal :class:`Context`.

    Args:
        entries: the session log in append order (ascending ``seq``). It may be a subset
            holding the head, the prune records, the latest compaction record and the
            entries from its first kept entry onward; nothing else is read. Entries a
            supersede record withdrew, and pin records an unpin record withdrew, are left
            out (:func:`~ctxengine.model.current_entries`).
        settings: truncate-at-source caps.
        estimator: token estimator (sizes in placeholders and markers, ``Context.tokens``).
        tools: tool schemas sent with the request (counted in ``Context.tokens``).
        durable: re-injected durable state, placed after the continuation state (after
            the head when there is no compaction). Shown as given.
        pins: pinned items shown after the continuation state and its re-injected state,
            in one message (:func:`~ctxengine.projection.pins.pinned_message`), in the
            language of the continuation state (of the user's messages before the first
            tail entry when there is no compaction).
        memo: optional cache of per-entry work, reused across calls by one caller; the
            result is the same with or without it.
        pruned: the call ids pruned so far, when the caller keeps them (then prune records
            in ``entries`` are not read, and need not be passed).

    Returns:
        The :class:`Context`. ``epoch`` is the number of compaction records in ``entries``;
        ``tokens`` is the estimate of every message plus the tool schemas.
    """
    if any(isinstance(e.body, (SupersedeRecord, UnpinRecord)) for e in entries):
        entries = current_entries(entries)
    head = _head(entries)
    head_ids = {e.id for e in head}
    comp_index = -1
    epoch = 0
    found: set[str] = set()
    for i, entry in enumerate(entries):
        if isinstance(entry.body, CompactionRecord):
            comp_index = i
            epoch += 1
        elif pruned is None and isinstance(entry.body, PruneRecord):
            found.update(entry.body.call_ids)

    record: CompactionRecord | None = None
    if comp_index >= 0:
        comp_body = entries[comp_index].body
        assert isinstance(comp_body, CompactionRecord)
        record = comp_body
    cap_tokens = settings.truncate_tokens
    if record is not None and record.truncate_tokens is not None:
        cap_tokens = record.truncate_tokens
    cap = TruncateCap(
        cap_tokens,
        settings.truncate_max_chars,
        settings.truncate_head_ratio,
        settings.prune_tail_tokens,
    )
    prune_set = pruned if pruned is not None else frozenset(found)
    # Texts the compaction re-injected: a later message that repeats one (a harness that
    # sends its rules again after every compaction) is shown as a note, not twice.
    repeated = frozenset(record.reinjected or ()) if record is not None else frozenset()
    key: EpochKey = (
        tuple(e.id for e in head),
        entries[comp_index].id if comp_index >= 0 else None,
        cap,
        settings.whole_rules,
        tuple(durable),
        tuple(pins),
        prune_set,
        frozenset(record.lead_ids or ()) if record is not None else frozenset(),
        repeated,
    )
    if memo is not None and memo.epoch is not None:
        extended = _extend(memo, key, entries, head_ids, settings, estimator, tools)
        if extended is not None:
            return extended

    messages: list[Message] = []
    sources: list[str | None] = []
    for entry in head:
        assert entry.message is not None
        messages.append(neutralize_message(entry.message))
        sources.append(entry.id)

    truncations: list[Truncation] = []
    pruned_out: list[str] = []
    calls: dict[str, ToolCallPart] = {}
    start = 0
    if record is not None:
        start = _tail_start(entries, comp_index, record)
        if record.retained_ids:
            wanted = set(record.retained_ids) - head_ids
            for entry in entries[: min(start, comp_index)]:
                msg = entry.message
                if msg is None or entry.id not in wanted:
                    continue
                kept_msg = without_signed_reasoning(
                    _project_message(
                        msg, entry, calls, prune_set, cap, settings, estimator, memo,
                        truncations, pruned_out,
                    )
                )  # fmt: skip
                if kept_msg is not None:
                    messages.append(kept_msg)
                    sources.append(entry.id)
        imported = record.summarizer == IMPORTED
        recall = settings.recall_note
        cont_key = (
            f"{IMPORTED}\0{record.summary}" if imported else record.summary,
            f"{record.injection}\0recall" if recall else record.injection,
        )
        frame = memo.continuations.get(cont_key) if memo is not None else None
        if frame is None:
            frame = frame_messages(
                record.summary, record.injection, imported=imported, recall=recall
            )
            if memo is not None:
                memo.continuations[cont_key] = frame
        if record.injection == "acknowledged" and _first_kept_role(entries, record) == "assistant":
            frame = frame[:1]
        if record.native is not None:
            frame = tuple(_stand_in(m, record.native) for m in frame)
        messages.extend(frame)
        sources.extend([None] * len(frame))
        for text in record.reinjected or ():
            messages.append(reinjected_message(text))
            sources.append(None)
    order, n_lead = _tail_order(entries, start, comp_index, record)
    seen_end = _seen_end(entries, comp_index, record) if record is not None else comp_index
    native = record is not None and record.native is not None
    in_force = frozenset(record.lead_ids or ()) if record is not None else frozenset()

    def pinned_and_durable() -> None:
        if pins:
            language = _pins_language(entries, record, order[0] if order else len(entries))
            messages.append(neutralize_message(pinned_message(pins, language)))
            sources.append(None)
        messages.extend(neutralize_message(m) for m in durable)
        sources.extend([None] * len(durable))

    if not native:
        pinned_and_durable()
    preamble = tail_at = pre_end = len(messages)
    shown = set(sources)
    open_calls: set[str] = set()
    waiting: list[tuple[int, PinRecord]] = []
    for k, index in enumerate(order):
        if k == n_lead:
            if native:
                # A native item opens the request: the pinned and durable state follow it.
                pinned_and_durable()
            tail_at = pre_end = len(messages)
        entry = entries[index]
        body = entry.body
        if isinstance(body, PinRecord):
            if body.entry_id is None or body.entry_id not in shown:
                waiting.append((index, body))
            else:
                continue
        else:
            msg = entry.message
            if msg is not None:
                msg = _without_stale_item(msg, entry.id, in_force)
            if msg is None or entry.id in head_ids:
                continue
            msg = _project_message(
                msg, entry, calls, prune_set, cap, settings, estimator, memo,
                truncations, pruned_out, repeated,
            )  # fmt: skip
            messages.append(msg)
            sources.append(entry.id)
            shown.add(entry.id)
            if msg.role == "assistant":
                open_calls = {c.id for c in msg.tool_calls}
            elif msg.tool_results:
                open_calls.difference_update(r.call_id for r in msg.tool_results)
            else:
                open_calls = set()  # calls left unanswered before it: the sanitizer closes them
        if waiting and not open_calls:
            for at, pin in waiting:
                language = _pins_language(entries, record, at)
                messages.append(neutralize_message(pinned_message([_pin_item(pin)], language)))
                sources.append(None)
            waiting = []
        if index < seen_end:
            pre_end = len(messages)
    if native and n_lead >= len(order):
        pinned_and_durable()
        tail_at = pre_end = len(messages)
    if native:
        pre_end = tail_at  # the provider keeps the reasoning of the tail it swapped in after
    if record is not None and record.continuation:
        # After the messages the compaction saw: every later entry follows it, so the
        # context of the epoch still only grows at its tail.
        at = max(pre_end, tail_at)
        messages.insert(at, continue_message())
        sources.insert(at, None)

    kept, kept_sources, dropped_reasoning = drop_stale_signed_reasoning(
        messages, sources, tail_at, pre_end
    )
    final, final_sources, report = sanitize(kept, kept_sources)
    repaired = report.changed
    report = dataclasses.replace(report, dropped_reasoning=dropped_reasoning)
    if report.dropped_results or report.duplicate_results:
        truncations, pruned_out = _shown_only(final, truncations, pruned_out)
    # One of the two counts: the item where the estimate prices it, else its stand-in.
    provider = record.native if record is not None else None
    priced = provider is not None and carried_anywhere(NativeCompactionPart(provider, "{}"))
    message_tokens = sum(estimator.message(m) for m in final if not (priced and _is_stand_in(m)))
    tokens = message_tokens
    if tools:
        tokens += estimator.tools(tools)
    context = Context(
        messages=final,
        sources=final_sources,
        tools=tuple(tools),
        tokens=tokens,
        epoch=epoch,
        compaction_id=entries[comp_index].id if comp_index >= 0 else None,
        truncations=tuple(truncations),
        pruned=tuple(pruned_out),
        sanitize=report,
        preamble=preamble,
    )
    if memo is not None and entries:
        memo.epoch = EpochProjection(
            key=key,
            count=len(entries),
            first=entries[0],
            last=entries[-1],
            calls=calls,
            truncations=truncations,
            pruned=pruned_out,
            context=context,
            message_tokens=message_tokens,
            closed=not repaired and not pending_calls(final) and not waiting,
            tools=tuple(tools),
        )
    return context


def _pin_item(record: PinRecord) -> Pinned:
    """The pinned item a pin record shows."""
    return Pinned(record.text, "pin", record.reason, record.entry_id)


def _pins_language(entries: Sequence[Entry], record: CompactionRecord | None, before: int) -> str:
    """The language pinned items are introduced in: the continuation state's, else the
    dominant language of the real user messages among ``entries[:before]`` (entries that
    no later entry changes, so the words stay the same within an epoch)."""
    if record is not None:
        return state_language(record.summary)
    texts = (
        user_text(m)
        for e in entries[:before]
        if (m := e.message) is not None and is_real_user_message(m)
    )
    return detect_language(texts)


def _project_message(
    msg: Message,
    entry: Entry,
    calls: dict[str, ToolCallPart],
    prune_set: frozenset[str],
    cap: TruncateCap,
    settings: ProjectionSettings,
    estimator: Estimator,
    memo: ProjectionMemo | None,
    truncations: list[Truncation],
    pruned_out: list[str],
    repeated: frozenset[str] = frozenset(),
) -> Message:
    """One tail message as projected: its calls noted, its results and long texts rewritten
    (pruned placeholders, truncation at source), frame tags neutralised; an injected user
    message whose text is one of ``repeated`` (the durable state the compaction in force
    re-injected) shown as :data:`~ctxengine.projection.injection.REPEATED_NOTE`. A real user
    message (:func:`~ctxengine.model.roles.is_real_user_message`: what a person wrote) is
    never truncated: it is shown whole, or summarized with the prefix by a compaction;
    user-role text a harness injects (command output, reminders) is capped like a tool
    result."""
    if msg.role == "assistant":
        for call in msg.tool_calls:
            calls[call.id] = call
        if any(isinstance(p, TextPart | ToolCallPart) for p in msg.parts):
            return _rewrite(
                msg, entry.id, prune_set, calls, cap, estimator, memo, truncations, pruned_out
            )
        return neutralize_message(msg)
    if repeated and msg.role == "user" and not msg.tool_results and msg.text in repeated:
        return repeated_message(msg)
    if msg.tool_results or (msg.role == "user" and not is_real_user_message(msg)):
        own = cap
        if settings.whole_rules and is_rules_message(msg):
            own = TruncateCap(NO_CAP, NO_CAP, cap.head_ratio, cap.prune_tail)
        return _rewrite(
            msg, entry.id, prune_set, calls, own, estimator, memo, truncations, pruned_out
        )
    return neutralize_message(msg)


def _extend(
    memo: ProjectionMemo,
    key: EpochKey,
    entries: Sequence[Entry],
    head_ids: set[str],
    settings: ProjectionSettings,
    estimator: Estimator,
    tools: Sequence[Mapping[str, Any]],
) -> Context | None:
    """The previous projection of this epoch extended by the message entries appended since,
    or ``None`` when it cannot be: another epoch or other settings, an entry list that does
    not start with the one projected, a record among the new entries (or one the compaction
    shows before its kept tail, ``lead_ids``), a previous projection
    that was not closed, or new messages the sanitizer would repair on their own (whatever
    it repairs, the whole projection is made again). Equal to the full projection: the
    prefix is closed, so the sanitizer passes it through unchanged and the new messages
    (which answer no call of the prefix) are sanitized as they would be behind it; stale
    reasoning is dropped only before the compaction."""
    state = memo.epoch
    assert state is not None
    n = state.count
    if (
        not state.closed
        or state.key != key
        or state.tools != tuple(tools)
        or len(entries) < n
        or entries[0] is not state.first
        or entries[n - 1] is not state.last
    ):
        return None
    if len(entries) == n:
        return state.context
    cap: TruncateCap = key[2]
    prune_set: frozenset[str] = key[6]
    lead: frozenset[str] = key[7]
    repeated: frozenset[str] = key[8]
    calls = dict(state.calls)
    truncations: list[Truncation] = []
    pruned_out: list[str] = []
    messages: list[Message] = []
    sources: list[str | None] = []
    for entry in entries[n:]:
        msg = entry.message
        if msg is None or entry.id in head_ids or entry.id in lead:
            return None
        msg = _without_stale_item(msg, entry.id, lead)
        if msg is None:
            return None
        messages.append(
            _project_message(
                msg, entry, calls, prune_set, cap, settings, estimator, memo,
                truncations, pruned_out, repeated,
            )
        )  # fmt: skip
        sources.append(entry.id)
    tail, tail_sources, report = sanitize(messages, sources)
    if report.changed:
        return None
    previous = state.context
    message_tokens = state.message_tokens + sum(estimator.message(m) for m in tail)
    all_truncations = [*state.truncations, *truncations]
    all_pruned = [*state.pruned, *pruned_out]
    context = dataclasses.replace(
        previous,
        messages=previous.messages + tail,
        sources=previous.sources + tail_sources,
        tokens=message_tokens + (estimator.tools(tools) if tools else 0),
        truncations=tuple(all_truncations),
        pruned=tuple(all_pruned),
    )
    memo.epoch = dataclasses.replace(
        state,
        count=len(entries),
        last=entries[-1],
        calls=calls,
        truncations=all_truncations,
        pruned=all_pruned,
        context=context,
        message_tokens=message_tokens,
        closed=not pending_calls(tail),
    )
    return context


__all__ = ["CONTINUATION_PREFIX", "IMPORTED", "continuation_message", "project"]
