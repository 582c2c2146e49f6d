"""Replaying a planted session to its end and reading the final request.

A session ends with a user message; the request the benchmark checks is the one that answers
it: the session is replayed (:func:`ctxengine.replay.replay`: ``prepare()`` before every
assistant message) and then prepared once more. A policy whose summarizer needs a model is
replayed by the same loop on a session the caller builds (:data:`SessionFactory`), since
:func:`~ctxengine.replay.replay` builds its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxengine.engine import LadderEvent, Session
from ctxengine.errors import CompactionLoopError, ConfigError
from ctxengine.model import CompactionRecord, Entry, Message
from ctxengine.policy import Policy
from ctxengine.projection.context import Context
from ctxengine.projection.validate import validate
from ctxengine.replay import RENDERERS, ReplayStep, replay, source_messages

#: Builds the session a policy is replayed in, for a window in tokens.
SessionFactory = Callable[[int], Session]
#: ``CompactionRecord.summarizer`` of a compaction the session continues from.
IMPORTED = "imported"
#: Providers every request is rendered and validated for.
PROVIDERS: tuple[str, ...] = ("openai", "anthropic")


@dataclass(frozen=True, slots=True)
class Replayed:
    """A session replayed to its end.

    Attributes:
        session: the session after the final request was prepared.
        context: the final request's context.
        steps: the model calls of the replay (the final request not included).
        compactions: compactions recorded, the final request's included.
        cuts: per compaction, in order, the number of the session's messages it summarized
            (the messages before its first kept message).
    """

    session: Session
    context: Context
    steps: tuple[ReplayStep, ...]
    compactions: int
    cuts: tuple[int, ...]


def entries_of(name: str, messages: Sequence[Message]) -> list[Entry]:
    """The messages as a session log to replay (ids ``m0``, ``m1`` …)."""
    return [Entry(f"m{i}", name, i, m) for i, m in enumerate(messages)]


def _loop(session: Session, entries: Sequence[Entry], providers: Sequence[str]) -> list[ReplayStep]:
    """The loop of :func:`ctxengine.replay.replay` on a given session."""
    steps: list[ReplayStep] = []
    seen_user = False
    previous_role = ""
    for i, message in enumerate(source_messages(entries)):
        if message.role == "assistant" and previous_role != "assistant" and seen_user:
            n_events = len(session.events)
            ctx = session.prepare()
            steps.append(
                ReplayStep(
                    call=len(steps) + 1,
                    entries=i,
                    tokens=ctx.tokens,
                    messages=len(ctx.messages),
                    epoch=ctx.epoch,
                    events=tuple(session.events[n_events:]),
                    problems={p: validate(RENDERERS[p](ctx), p) for p in providers},
                )
            )
        if message.role == "user":
            seen_user = True
        previous_role = message.role
        session.append(message)
    return steps


def cuts_of(entries: Sequence[Entry]) -> tuple[int, ...]:
    """Per compaction record of a session log (an imported one aside: the session starts
    from it), the number of messages before its first kept message (all messages before
    the record when it keeps none)."""
    index: dict[str, int] = {}
    seen = 0
    cuts: list[int] = []
    for entry in entries:
        if entry.message is not None:
            index[entry.id] = seen
            seen += 1
        elif isinstance(entry.body, CompactionRecord) and entry.body.summarizer != IMPORTED:
            kept = entry.body.first_kept_id
            cuts.append(index[kept] if kept is not None and kept in index else seen)
    return tuple(cuts)


def replay_to_end(
    name: str,
    messages: Sequence[Message],
    window: int,
    policy: Policy,
    make_session: SessionFactory | None = None,
    *,
    validate_steps: bool = True,
    imported_summary: str = "",
) -> Replayed:
    """Replay ``messages`` with a ``window``-token model and prepare the final request.

    Args:
        name: the session's name (entry ids).
        messages: the session; the last one is a user message.
        window: the model window in tokens.
        policy: the policy (used by :func:`~ctxengine.replay.replay`; a factory builds its
            session with it itself).
        make_session: builds the session instead of :func:`~ctxengine.replay.replay`.
        validate_steps: render and validate every request of the replay (for
            :data:`PROVIDERS`); off when only the compactions are counted.
        imported_summary: another system's compaction the session continues from: written
            as an imported compaction record after the leading system message (the
            session's messages follow it); ``""`` for none.

    Raises:
        CompactionLoopError: the ladder failed repeatedly at this window.
        ConfigError: the window leaves no room for the policy.
    """
    entries = entries_of(name, messages)
    providers = PROVIDERS if validate_steps else ()
    if imported_summary:
        session = (
            make_session(window) if make_session is not None else Session(window, policy=policy)
        )
        head = 1 if messages and messages[0].role == "system" else 0
        for message in messages[:head]:
            session.append(message)
        session.append(imported_record(imported_summary))
        steps = tuple(_loop(session, entries[head:], providers))
    elif make_session is None:
        result = replay(entries, window=window, policy=policy, providers=providers)
        assert result.session is not None
        session = result.session
        steps = tuple(result.steps)
    else:
        session = make_session(window)
        steps = tuple(_loop(session, entries, providers))
    context = session.prepare()
    events: list[LadderEvent] = session.events
    return Replayed(
        session=session,
        context=context,
        steps=steps,
        compactions=sum(1 for e in events if e.step == "compaction"),
        cuts=cuts_of(session.entries),
    )


def imported_record(summary: str) -> CompactionRecord:
    """An imported compaction (Claude Code's) that keeps nothing before it."""
    return CompactionRecord(
        summary=summary,
        first_kept_id=None,
        tokens_before=0,
        tokens_after=0,
        policy="claude-code",
        summarizer=IMPORTED,
        reason=IMPORTED,
    )


def compactions_at(
    name: str,
    messages: Sequence[Message],
    window: int,
    policy: Policy,
    make_session: SessionFactory | None = None,
    *,
    imported_summary: str = "",
) -> int | None:
    """Compactions a replay at ``window`` records (its requests not validated), or ``None``
    when the window is too small for the ladder (a compaction loop, or a window the policy
    refuses)."""
    try:
        replayed = replay_to_end(
            name,
            messages,
            window,
            policy,
            make_session,
            validate_steps=False,
            imported_summary=imported_summary,
        )
        return replayed.compactions
    except (CompactionLoopError, ConfigError):
        return None
