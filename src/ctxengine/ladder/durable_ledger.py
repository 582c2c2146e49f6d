"""The durable-state candidates of a growing history, folded one message at a time.

:func:`~.reinject.durable_items` reads the whole history that leaves the context at every
compaction (and at every cut a plan weighs): rules texts, the newest todo and plan calls,
background tasks, skill loads and notices, file reads and edits. :class:`DurableLedger`
keeps what those reads need as the history grows, each message folded once, so that a
compaction only folds the messages appended since the previous one and reads the kept tail
(from the cut on, a part of the current epoch) again. What it answers for a cut is exactly
what :func:`~.reinject.durable_items` answers for the history before and after that cut:

* rules: each distinct rules text with its first and last position; a text leaves the
  candidates once the kept tail shows it (its last position is at or after the cut);
* opening: the messages before the first assistant message (all that
  :func:`~.reinject.opening_items` reads);
* todos, plan: the newest call of the todo and plan tools; ``None`` when it lies in the
  kept tail;
* background: the walk of :func:`~.reinject.running_tasks` over the whole history (that
  walk always reads the history before the cut and the kept tail together), each task
  with the position that started it, so that "started before the cut" is a comparison;
* skills: the loads (:func:`~ctxengine.projection.skills.skill_loads` reads a prefix the
  same way whatever follows it) and the newest notice of each name;
* files: per path, its reads and edits in the order :func:`~.reinject.file_items` walks
  them back, and per call id the positions of its results.

Pure data: messages in, items out; nothing is read from disk.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxengine.model import Message, ToolCallPart
from ctxengine.policy import Policy
from ctxengine.policy.defaults import REINJECT_PLAN_TOOLS, REINJECT_TODO_TOOLS
from ctxengine.projection.injection import rules_text
from ctxengine.projection.skills import (
    SkillLoad,
    skill_load_step,
    skill_loads,
    skill_notice_step,
)
from ctxengine.summarizers.background import (
    agent_id,
    call_args,
    is_subagent,
    launched_id,
    notifications,
    polled_id,
    read_poll,
    stopped_id,
)
from ctxengine.summarizers.tools import call_effects
from ctxengine.tokens.base import Estimator

from .reinject import (
    DurableItem,
    RunningTask,
    _agent_label,
    _shell_label,
    assemble,
    background_of,
    files_of,
    opening_items,
    plan_of,
    skills_of,
    todo_of,
)


@dataclass(slots=True)
class _PathEvents:
    """The reads and edits of one path, oldest first.

    Attributes:
        keys: each effect's place in the backward walk of :func:`~.reinject.file_items`
            (a larger key is met first), ascending.
        positions: the message position of each effect (ascending with ``keys``).
        reads: the call id of each effect that is a read, ``None`` for an edit.
    """

    keys: list[int] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    reads: list[str | None] = field(default_factory=list)


class DurableLedger:
    """What :func:`~.reinject.durable_items` reads of a history, kept as it grows.

    :meth:`observe` folds the next message of the history (message positions count from
    0, one per message, in history order); :meth:`items` answers for a cut. Folding costs
    each message once; an answer costs the kept tail and the candidates, not the history.

    Attributes:
        count: messages folded so far.
    """

    def __init__(self) -> None:
        self.count = 0
        # rules: text -> [first position, last position], in first-seen order
        self._rules: dict[str, list[int]] = {}
        # opening: the messages before the first assistant message (all opening_items reads)
        self._opening: list[Message] = []
        self._opened = False
        # the newest todo / plan call and its position
        self._todo: tuple[int, ToolCallPart] | None = None
        self._plan: tuple[int, ToolCallPart] | None = None
        # background tasks (the walk of running_tasks)
        self._calls: dict[str, ToolCallPart] = {}
        self._answered: set[str] = set()
        self._tasks: dict[str, RunningTask] = {}
        self._finished: set[str] = set()
        self._subagents: list[tuple[int, ToolCallPart]] = []
        # skills (the walks of skill_loads and skill_notices)
        self._skill_calls: dict[str, str] = {}
        self._asked: str | None = None
        self._loads: list[SkillLoad] = []
        self._noticed: dict[str, int] = {}
        # files
        self._key = 0
        self._paths: dict[str, _PathEvents] = {}
        self._latest: dict[str, int] = {}  # path -> its largest key, ascending by key
        self._results: dict[str, list[tuple[int, str]]] = {}

    def observe(self, message: Message) -> None:
        """Fold the next message of the history."""
        pos = self.count
        self.count += 1
        self._observe_rules(message, pos)
        if not self._opened:
            if message.role == "assistant":
                self._opened = True
            else:
                self._opening.append(message)
        self._observe_calls(message, pos)
        self._observe_tasks(message, pos)
        self._observe_skills(message, pos)
        self._observe_files(message, pos)

    def _observe_rules(self, message: Message, pos: int) -> None:
        text = rules_text(message)
        if text is None:
            return
        span = self._rules.get(text)
        if span is None:
            self._rules[text] = [pos, pos]
        else:
            span[1] = pos

    def _observe_calls(self, message: Message, pos: int) -> None:
        for call in message.tool_calls:
            if call.name in REINJECT_TODO_TOOLS:
                self._todo = (pos, call)
            if call.name in REINJECT_PLAN_TOOLS:
                self._plan = (pos, call)

    def _observe_tasks(self, m: Message, pos: int) -> None:
        """One step of :func:`~.reinject.running_tasks`'s walk (its ``left`` flag is the
        task's position against the cut, compared when answering)."""
        calls, tasks, finished = self._calls, self._tasks, self._finished
        for call in m.tool_calls:
            calls[call.id] = call
            stopped = stopped_id(call)
            if stopped is not None:
                finished.add(stopped)
            if is_subagent(call):
                self._subagents.append((pos, call))
        for r in m.tool_results:
            self._answered.add(r.call_id)
            call_or_none = calls.get(r.call_id)
            if call_or_none is None or r.is_error:
                continue
            call = call_or_none
            polled = polled_id(call)
            if polled is not None:
                if read_poll(r.text).finished:
                    finished.add(polled)
            elif is_subagent(call):
                args = call_args(call)
                if args.get("run_in_background") is True:
                    tid = agent_id(call, r.text)
                    tasks[tid] = RunningTask(
                        "subagent", tid, call.name, _agent_label(args), pos, True
                    )
                    finished.discard(tid)
            else:
                tid_or_none = launched_id(call, r.text)
                if tid_or_none is not None:
                    tasks[tid_or_none] = RunningTask(
                        "shell", tid_or_none, call.name, _shell_label(call), pos, True
                    )
                    finished.discard(tid_or_none)
        if m.role == "user" and not m.tool_results:
            finished.update(n.id for n in notifications(m.text) if n.finished)

    def _observe_skills(self, m: Message, pos: int) -> None:
        """One step of the walks of :func:`~ctxengine.projection.skills.skill_loads` and
        :func:`~ctxengine.projection.skills.skill_notices`."""
        self._asked = skill_load_step(m, pos, self._skill_calls, self._asked, self._loads)
        notices: list[tuple[str, int]] = []
        skill_notice_step(m, pos, self._skill_calls, notices)
        for name, at in notices:
            self._noticed[name] = max(self._noticed.get(name, at), at)

    def _observe_files(self, m: Message, pos: int) -> None:
        for r in m.tool_results:
            self._results.setdefault(r.call_id, []).append((pos, r.text))
        for call in m.tool_calls:
            effects = call_effects(call)
            base = self._key
            self._key += len(effects)
            # the backward walk meets a call's effects in their own order: the first
            # effect gets the largest key of the call
            for k in range(len(effects) - 1, -1, -1):
                effect = effects[k]
                key = base + (len(effects) - 1 - k)
                events = self._paths.get(effect.path)
                if events is None:
                    events = self._paths[effect.path] = _PathEvents()
                events.keys.append(key)
                events.positions.append(pos)
                events.reads.append(call.id if effect.action == "read" else None)
                self._latest.pop(effect.path, None)
                self._latest[effect.path] = key

    # ------------------------------------------------------------------ answers

    def items(
        self,
        cut: int,
        kept: Sequence[Message],
        policy: Policy,
        estimator: Estimator,
    ) -> tuple[DurableItem, ...]:
        """:func:`~.reinject.durable_items` of the first ``cut`` messages folded (the
        history that leaves the context) and ``kept`` (every message folded from ``cut``
        on, in order).

        Raises:
            ValueError: ``cut`` is past the messages folded, or ``kept`` is not the
                history folded from ``cut`` on (by count).
        """
        if not 0 <= cut <= self.count or len(kept) != self.count - cut:
            raise ValueError(
                f"cut {cut} with {len(kept)} kept messages does not split the "
                f"{self.count} messages folded"
            )
        return assemble(
            policy,
            estimator,
            rules=lambda: self.rules(cut),
            opening=lambda: opening_items(self._opening[:cut], kept),
            todos=lambda: todo_of(_before(self._todo, cut)),
            background=lambda: background_of(self.running(cut)),
            plan=lambda: plan_of(_before(self._plan, cut)),
            skills=lambda: self.skills(cut, kept, policy, estimator),
            files=lambda: self.files(cut, kept, policy, estimator),
        )

    def rules(self, cut: int) -> list[str]:
        """:func:`~.reinject.rules_items`: the rules texts first seen before ``cut`` and
        not seen again from it on, in first-seen order."""
        return [text for text, (_first, last) in self._rules.items() if last < cut]

    def running(self, cut: int) -> list[RunningTask]:
        """:func:`~.reinject.running_tasks` of the history split at ``cut`` (the tasks'
        ``left`` flags as that walk sets them)."""
        tasks = {
            tid: t if t.at < cut else RunningTask(t.kind, t.id, t.tool, t.label, t.at, False)
            for tid, t in self._tasks.items()
        }
        for pos, call in self._subagents:
            if pos >= cut:
                break
            if call.id not in self._answered:
                label = _agent_label(call_args(call))
                tasks.setdefault(
                    call.id, RunningTask("subagent", call.id, call.name, label, pos, True)
                )
        running = [t for tid, t in tasks.items() if t.left and tid not in self._finished]
        return sorted(running, key=lambda t: t.at)

    def skills(
        self, cut: int, kept: Sequence[Message], policy: Policy, estimator: Estimator
    ) -> list[DurableItem]:
        """:func:`~.reinject.skill_items` of the history split at ``cut``."""
        latest: dict[str, SkillLoad] = {}
        used_at: dict[str, int] = {}
        for load in self._loads:
            if load.at >= cut:
                break
            latest[load.name] = load
            used_at[load.name] = load.at
        if not latest:
            return []
        for name, at in self._noticed.items():
            if name in used_at:
                used_at[name] = max(used_at[name], at)
        shown = {load.name for load in skill_loads(kept) if load.whole}
        return skills_of(
            latest,
            used_at,
            shown,
            estimator,
            each_max=policy.reinject_skill_max_tokens,
            total_max=policy.reinject_skills_max_tokens,
        )

    def files(
        self, cut: int, kept: Sequence[Message], policy: Policy, estimator: Estimator
    ) -> list[DurableItem]:
        """:func:`~.reinject.file_items` of the history split at ``cut``: the
        ``policy.reinject_files`` paths met first walking back from ``cut`` (less those
        ``kept`` reads), each with its latest read answered before ``cut``."""
        wanted = policy.reinject_files
        fresh = {
            effect.path
            for m in kept
            for call in m.tool_calls
            for effect in call_effects(call)
            if effect.action == "read"
        }
        found: list[tuple[int, str]] = []  # (largest key before the cut, path)
        if wanted > 0:
            for path, latest in reversed(self._latest.items()):
                if len(found) >= wanted and min(found)[0] > latest:
                    break  # every later path was last met before the ones found
                if path in fresh:
                    continue
                events = self._paths[path]
                n = bisect_left(events.positions, cut)
                if n == 0:
                    continue
                found.append((events.keys[n - 1], path))
                if len(found) > wanted:
                    found.remove(min(found))
        found.sort(reverse=True)
        shown = [(path, *self._read_before(path, cut)) for _, path in found]
        return files_of(shown, estimator, policy.reinject_file_max_tokens)

    def _read_before(self, path: str, cut: int) -> tuple[str | None, bool]:
        """The text of ``path``'s latest read answered before ``cut`` (``None``: none) and
        whether an edit of it comes after that read, walking back from ``cut``."""
        events = self._paths[path]
        edited = False
        for k in range(bisect_left(events.positions, cut) - 1, -1, -1):
            call_id = events.reads[k]
            if call_id is None:
                edited = True
                continue
            answers = self._results.get(call_id, ())
            text = next((t for p, t in reversed(answers) if p < cut), None)
            if text is not None:
                return text, edited
        return None, edited


def _before(newest: tuple[int, ToolCallPart] | None, cut: int) -> ToolCallPart | None:
    """The newest call when it lies before ``cut`` (:func:`~ctxengine.summarizers.todos.
    newest_call`: a newer one in the kept tail shows the list itself)."""
    if newest is None or newest[0] >= cut:
        return None
    return newest[1]
