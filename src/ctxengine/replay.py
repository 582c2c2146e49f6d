"""Replay a recorded session as a live agent under ctxengine would have run it.

Every message entry of the source log is appended to a fresh :class:`~ctxengine.Session`;
before each assistant message the context is ``prepare()``-d (running the ladder when the
trigger is reached), rendered for each provider and validated. The source's own compactions
are not replayed: the session is compacted by ctxengine's policy alone.

Provider usage recorded in the source is dropped by default: it measured the source agent's
context, not ours, and would make a wrong usage anchor after our first compaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from ctxengine.engine import LadderEvent, Session
from ctxengine.model import Entry, Message, current_entries
from ctxengine.policy import DEFAULT_POLICY, Policy
from ctxengine.projection.context import Context
from ctxengine.projection.render.registry import renderer_for
from ctxengine.projection.validate import validate
from ctxengine.tokens.base import Estimator

#: Providers a replayed request is rendered and validated for (those ``validate`` checks).
VALIDATED_PROVIDERS: tuple[str, ...] = ("openai", "anthropic")
#: Their renderers (from :mod:`ctxengine.projection.render.registry`) as a replay uses them:
#: every tool the context calls is declared (a transcript rarely records the schemas, and
#: Anthropic rejects tool blocks without them).
RENDERERS: dict[str, Callable[[Context], dict[str, Any]]] = {
    name: partial(renderer_for(name), declare_tools=True) for name in VALIDATED_PROVIDERS
}


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One model call of the replay.

    Attributes:
        call: 1-based call number.
        entries: history entries (source messages) seen before this call.
        tokens: estimated context size in tokens sent on this call.
        messages: number of messages in the context.
        epoch: compactions so far.
        events: ladder steps taken while preparing this call.
        problems: per provider, the protocol violations found (empty when valid).
    """

    call: int
    entries: int
    tokens: int
    messages: int
    epoch: int
    events: tuple[LadderEvent, ...]
    problems: dict[str, list[str]]


@dataclass(slots=True)
class ReplayResult:
    """A whole replay.

    Attributes:
        steps: one per model call.
        session: the session after the last message (its history holds the ladder's records).
        window: the window replayed under, in tokens.
    """

    steps: list[ReplayStep] = field(default_factory=list)
    session: Session | None = None
    window: int = 0

    @property
    def compactions(self) -> int:
        """Compactions recorded during the replay."""
        return sum(1 for s in self.steps for e in s.events if e.step == "compaction")

    @property
    def prunes(self) -> int:
        """Prunes recorded during the replay."""
        return sum(1 for s in self.steps for e in s.events if e.step == "prune")

    @property
    def invalid(self) -> int:
        """Calls whose request failed validation for at least one provider."""
        return sum(1 for s in self.steps if any(s.problems.values()))

    @property
    def max_tokens(self) -> int:
        """Largest context sent, in tokens."""
        return max((s.tokens for s in self.steps), default=0)


def source_messages(entries: Iterable[Entry], *, keep_usage: bool = False) -> list[Message]:
    """The message entries of a log, without its compaction/prune records and the entries a
    supersede record withdrew (and without provider usage unless ``keep_usage``)."""
    out: list[Message] = []
    for e in current_entries(list(entries)):
        m = e.message
        if m is None:
            continue
        out.append(m if keep_usage or m.usage is None else replace(m, usage=None))
    return out


def replay(
    entries: Sequence[Entry],
    *,
    window: int,
    policy: Policy = DEFAULT_POLICY,
    estimator: Estimator | None = None,
    providers: Sequence[str] = VALIDATED_PROVIDERS,
    keep_usage: bool = False,
    on_step: Callable[[ReplayStep], None] | None = None,
) -> ReplayResult:
    """Replay ``entries`` under ``policy`` with a ``window``-token model.

    Args:
        entries: a session log (e.g. ``ImportedSession.entries``).
        window: the model's context window in tokens.
        policy: ladder configuration.
        estimator: token estimator (default heuristic).
        providers: providers to render and validate each request for (a subset of
            :data:`VALIDATED_PROVIDERS`).
        keep_usage: keep the source's usage on assistant messages as usage anchors.
        on_step: called after each model call (progress bars).

    Returns:
        The :class:`ReplayResult`.

    Raises:
        ConfigError: the policy's reserve leaves no room in ``window``.
        CompactionLoopError: the ladder failed repeatedly.
    """
    session = Session(window, policy=policy, estimator=estimator)
    result = ReplayResult(session=session, window=window)
    seen_user = False
    previous_role = ""
    for i, message in enumerate(source_messages(entries, keep_usage=keep_usage)):
        # A reply written as several assistant messages is one model call: prepare before
        # its first piece only.
        if message.role == "assistant" and previous_role != "assistant" and seen_user:
            n_events = len(session.events)
            ctx = session.prepare()
            problems = {p: validate(RENDERERS[p](ctx), p) for p in providers}
            step = ReplayStep(
                call=len(result.steps) + 1,
                entries=i,
                tokens=ctx.tokens,
                messages=len(ctx.messages),
                epoch=ctx.epoch,
                events=tuple(session.events[n_events:]),
                problems=problems,
            )
            result.steps.append(step)
            if on_step is not None:
                on_step(step)
        if message.role == "user":
            seen_user = True
        previous_role = message.role
        session.append(message)
    return result
