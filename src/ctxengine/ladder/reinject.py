"""Durable state re-injected after every compaction: what is true now, re-read from its own
record instead of remembered by the summary.

Items, in the order they are shown (one synthetic user message each, after the continuation
state):

* ``rules``: injected user-role messages that carry a rules file (a ``<system-reminder>``
  naming CLAUDE.md, Codex's ``# AGENTS.md instructions``), verbatim;
* ``opening``: what the harness put into the conversation's opening, after the leading
  system messages (which every projection keeps) and before the first assistant message:
  each system or developer message's text, and each injected text part of a user message
  (Claude Code's ``<system-reminder>`` blocks beside the first prompt and its "Available
  agent types" system message, Codex's ``<environment_context>``), verbatim, one item each
  (Claude Code re-attaches such reminders after its own compaction); the person's own text
  of the first request is not an item (the continuation state carries it as the goal);
* ``todos``: the todo list of the newest todo-tool call (Claude Code ``TodoWrite``, Codex
  ``update_plan``, Gemini CLI ``write_todos``, OpenCode ``todowrite``), whole, while any item
  is open: every open item with its status;
* ``background``: background shells and subagents started before the cut and not seen to
  finish, with their ids;
* ``plan``: the plan-mode plan (Claude Code ``ExitPlanMode``);
* ``skills``: the bodies of the skills activated in the session
  (:func:`~ctxengine.projection.skills.skill_loads`: ctxengine's skill tool results and
  activation messages, Claude Code's skill body messages), newest first, each at most
  ``reinject_skill_max_tokens`` (a longer body keeps its top and names its file for the
  rest), ``reinject_skills_max_tokens`` in all, the oldest dropped first (Claude Code's "what
  survives compaction": 5,000 tokens each, 25,000 in all). Each is framed as context, not as
  a new request (:data:`~ctxengine.projection.skills.REINJECTED_HEADER`), and carries no
  arguments of the call that loaded it;
* ``files``: up to N recently read or edited files (Claude Code's "what survives
  compaction": 5 files of at most 5,000 tokens each, 50,000 in all; a larger file comes back
  as a path only).

``rules``, ``opening``, ``todos`` and ``background`` are *required*: never cut nor dropped
for room, they count in the compaction plan's expected size and in its floor
(:class:`~ctxengine.ladder.plan.CompactionPlan`). ``plan``, ``skills`` and ``files`` fill the
room left. Duplicates are collapsed: an identical text once, nothing the kept tail already
shows (the same rules text, a newer todo call, a task started in it, a skill loaded in it,
a newer read of the file).

Pure: the caller hands in the history messages that leave the context and those kept;
nothing is read from disk, so a replay re-injects what the session itself last saw (a file's
latest read result), where a live agent would read the file again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ctxengine.model import Message, TextPart, ToolCallPart
from ctxengine.model.roles import injected_parts
from ctxengine.policy import Policy
from ctxengine.policy.defaults import (
    BACKGROUND_LABEL_MAX_CHARS,
    REINJECT_PLAN_TOOLS,
    REINJECT_TODO_TOOLS,
)
from ctxengine.projection.injection import reinjected_message, rules_file, rules_text
from ctxengine.projection.skills import (
    SkillLoad,
    reinjected_skill_name,
    reinjected_text,
    skill_loads,
    skill_notices,
)
from ctxengine.tokens.base import Estimator

#: The texts of the re-injected items.
PLAN_ITEM = "The current plan (from the latest {tool} call before the compaction):\n{plan}"
TODO_ITEM = (
    "The todo list (from the latest {tool} call before the compaction): {open} of {total} "
    "items open{done}. Keep it up to date with {tool}:\n{items}"
)
TODO_DONE = "; {n} done, not listed"
TODO_LINE = "- [{status}] {text}"
TODO_RAW_ITEM = (
    "The todo list (the arguments of the latest {tool} call before the compaction, as "
    "written):\n{arguments}"
)
BACKGROUND_ITEM = (
    "Background tasks started before the compaction and not seen to finish; read their "
    "output or stop them by id:\n{tasks}"
)
BACKGROUND_LINE = "- {kind} {id} ({tool}): {label}"
FILE_ITEM = "Contents of {path} as last read before the compaction:\n{content}"
FILE_EDITED_NOTE = "\n(The file was edited after this read: read it again before relying on it.)"
FILE_PATH_ITEM = (
    "{path} was read or edited before the compaction; its contents are not repeated here "
    "(read it again when needed)."
)

#: Kinds that are never cut (part of the floor), and the words naming each kind in reports.
REQUIRED_KINDS = frozenset({"rules", "opening", "todos", "background"})
KIND_LABELS: dict[str, str] = {
    "rules": "re-injected rules",
    "opening": "re-injected opening",
    "todos": "re-injected todo list",
    "background": "re-injected background tasks",
    "plan": "re-injected plan",
    "skills": "re-injected skill",
    "files": "re-injected files",
}


def item_label(kind: str, text: str) -> str:
    """How reports name a re-injected item of ``kind`` showing ``text``: its
    :data:`KIND_LABELS` label, followed for rules by the rules file the text carries
    (:func:`~ctxengine.projection.injection.rules_file`: ``"re-injected rules
    /home/u/proj/CLAUDE.md"``) when it names one."""
    label = KIND_LABELS[kind]
    if kind == "rules":
        path = rules_file(text)
        if path is not None:
            return f"{label} {path}"
    if kind == "skills":
        name = reinjected_skill_name(text)
        if name is not None:
            return f"{label} {name}"
    return label


@dataclass(frozen=True, slots=True)
class DurableItem:
    """One candidate item of durable state.

    Attributes:
        kind: ``"rules"``, ``"opening"``, ``"todos"``, ``"background"``, ``"plan"``,
            ``"skills"`` or ``"files"``.
        text: the text shown (one synthetic user message); ``None`` for a file offered only
            as a path (its contents are over ``reinject_file_max_tokens``).
        tokens: tokens of ``text`` as its message (0 when ``text`` is ``None``).
        short: a shorter text shown when ``text`` does not fit (a file's path line), or
            ``None``.
        short_tokens: tokens of ``short`` as its message.
    """

    kind: str
    text: str | None
    tokens: int
    short: str | None = None
    short_tokens: int = 0

    @property
    def required(self) -> bool:
        """Never cut nor dropped for room (``rules``, ``opening``, ``todos``,
        ``background``)."""
        return self.kind in REQUIRED_KINDS


@dataclass(frozen=True, slots=True)
class DurableState:
    """The durable state a compaction re-injects, fitted to its room.

    Attributes:
        texts: the texts shown, in order, one user message each.
        kinds: the kind of each text.
        sizes: tokens of each text as its message.
    """

    texts: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    sizes: tuple[int, ...] = ()

    @property
    def tokens(self) -> int:
        """Tokens of every re-injected message."""
        return sum(self.sizes)

    @property
    def required_tokens(self) -> int:
        """Tokens of the required items (those that count in the floor)."""
        return sum(n for k, n in zip(self.kinds, self.sizes, strict=True) if k in REQUIRED_KINDS)

    def labelled(self, *, required: bool = False) -> list[tuple[str, int]]:
        """Tokens per :func:`item_label` (a rules block by the file it carries), in the
        order shown (only the required kinds with ``required``)."""
        out: dict[str, int] = {}
        for text, kind, n in zip(self.texts, self.kinds, self.sizes, strict=True):
            if not required or kind in REQUIRED_KINDS:
                label = item_label(kind, text)
                out[label] = out.get(label, 0) + n
        return list(out.items())

    def by_kind(self, *, required: bool = False) -> dict[str, int]:
        """Tokens per kind, in the order shown (only the required kinds with ``required``)."""
        out: dict[str, int] = {}
        for kind, n in zip(self.kinds, self.sizes, strict=True):
            if not required or kind in REQUIRED_KINDS:
                out[kind] = out.get(kind, 0) + n
        return out


def rules_items(messages: Sequence[Message], kept: Sequence[Message] = ()) -> list[str]:
    """The rules texts (:func:`~ctxengine.projection.injection.rules_text`: an injected
    rules message whole, the rules parts of a person's message) in ``messages``, oldest
    first, each once, less those ``kept`` shows verbatim already."""
    shown = {text for m in kept if (text := rules_text(m)) is not None}
    out: list[str] = []
    for m in messages:
        text = rules_text(m)
        if text is not None and text not in shown and text not in out:
            out.append(text)
    return out


def opening_items(messages: Sequence[Message], kept: Sequence[Message] = ()) -> list[str]:
    """The opening's texts (see the module docstring) in ``messages``, in order, each once,
    less those ``kept`` shows verbatim already (a text part of the same text)."""
    start = 0
    while start < len(messages) and messages[start].role in ("system", "developer"):
        start += 1
    shown = {p.text for m in kept for p in m.parts if isinstance(p, TextPart)}
    out: list[str] = []
    for m in messages[start:]:
        if m.role == "assistant":
            break
        if m.role in ("system", "developer"):
            texts = [p.text for p in m.parts if isinstance(p, TextPart) and p.text.strip()]
        elif m.role == "user" and not m.tool_results:
            texts = [p.text for p in injected_parts(m)]
        else:
            continue
        out.extend(t for t in texts if t not in shown and t not in out)
    return out


def plan_item(messages: Sequence[Message], kept: Sequence[Message] = ()) -> str | None:
    """The latest plan-mode plan: the ``plan`` argument of the newest call of a
    :data:`~ctxengine.policy.defaults.REINJECT_PLAN_TOOLS` tool (its raw arguments when they
    hold no ``plan`` text), or ``None`` (none, or ``kept`` holds a newer one)."""
    from ctxengine.summarizers.todos import newest_call

    return plan_of(newest_call(messages, kept, REINJECT_PLAN_TOOLS))


def plan_of(call: ToolCallPart | None) -> str | None:
    """The plan item of a plan-mode ``call`` (:func:`plan_item`), ``None`` without one."""
    from ctxengine.summarizers.background import call_args

    if call is None:
        return None
    plan = call_args(call).get("plan")
    text = plan if isinstance(plan, str) and plan.strip() else call.arguments
    return PLAN_ITEM.format(tool=call.name, plan=text)


def todo_item(messages: Sequence[Message], kept: Sequence[Message] = ()) -> str | None:
    """The todo list of the newest :data:`~ctxengine.policy.defaults.REINJECT_TODO_TOOLS`
    call in ``messages``, whole (never cut): each open item (a status not in
    :data:`~ctxengine.policy.defaults.TODO_CLOSED_STATUSES`) with its status, in the list's
    order, and the number of done items. ``None`` when there is no such call, ``kept`` holds a
    newer one, or no item is open; the raw arguments when they hold no list."""
    from ctxengine.summarizers.todos import newest_call

    return todo_of(newest_call(messages, kept, REINJECT_TODO_TOOLS))


def todo_of(call: ToolCallPart | None) -> str | None:
    """The todo item of a todo-tool ``call`` (:func:`todo_item`), ``None`` without one or
    without an open item."""
    from ctxengine.summarizers.todos import open_items, todo_list

    if call is None:
        return None
    items = todo_list(call)
    if items is None:
        if not call.arguments.strip():
            return None
        return TODO_RAW_ITEM.format(tool=call.name, arguments=call.arguments)
    lines = [TODO_LINE.format(status=i.status, text=i.text) for i in open_items(items)]
    if not lines:
        return None
    done = len(items) - len(lines)
    return TODO_ITEM.format(
        tool=call.name,
        open=len(lines),
        total=len(items),
        done=TODO_DONE.format(n=done) if done else "",
        items="\n".join(lines),
    )


@dataclass(frozen=True, slots=True)
class RunningTask:
    """A background task still running.

    Attributes:
        kind: ``"shell"`` or ``"subagent"``.
        id: the id to read or stop it by (a shell id, an agent id, a call id).
        tool: the tool that started it.
        label: its command or description, on one line.
        at: position of the message that started it.
        left: it started in the history that leaves the context.
    """

    kind: str
    id: str
    tool: str
    label: str
    at: int
    left: bool


def _label(text: str) -> str:
    line = " ".join(text.split())
    if len(line) > BACKGROUND_LABEL_MAX_CHARS:
        line = line[: BACKGROUND_LABEL_MAX_CHARS - 1] + "…"
    return line


def running_tasks(messages: Sequence[Message], kept: Sequence[Message] = ()) -> list[RunningTask]:
    """Background shells and subagents started in ``messages`` and not seen to finish in
    ``messages`` nor ``kept``, in the order they started (recognised by
    :mod:`ctxengine.summarizers.background`).

    A shell: a shell tool's result matching one of
    :data:`~ctxengine.policy.defaults.BACKGROUND_LAUNCH_PATTERNS` (its id). A subagent: a
    :data:`~ctxengine.policy.defaults.BACKGROUND_SUBAGENT_TOOLS` call without a result (its
    call id), or one started with ``run_in_background`` (the id its result gives). Finished:
    a stop tool called with its id, a poll tool's result with a status other than running
    (or a Codex "Process exited"), a ``<task-notification>`` with such a status.
    """
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

    calls: dict[str, ToolCallPart] = {}
    answered: set[str] = set()
    tasks: dict[str, RunningTask] = {}
    finished: set[str] = set()
    n_left = len(messages)
    for pos, m in enumerate((*messages, *kept)):
        left = pos < n_left
        for call in m.tool_calls:
            calls[call.id] = call
            stopped = stopped_id(call)
            if stopped is not None:
                finished.add(stopped)
        for r in m.tool_results:
            answered.add(r.call_id)
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
                        "subagent", tid, call.name, _agent_label(args), pos, left
                    )
                    finished.discard(tid)
            else:
                tid_or_none = launched_id(call, r.text)
                if tid_or_none is not None:
                    tasks[tid_or_none] = RunningTask(
                        "shell", tid_or_none, call.name, _shell_label(call), pos, left
                    )
                    finished.discard(tid_or_none)
        if m.role == "user" and not m.tool_results:
            finished.update(n.id for n in notifications(m.text) if n.finished)
    for pos, m in enumerate(messages):
        for call in m.tool_calls:
            if is_subagent(call) and call.id not in answered:
                label = _agent_label(call_args(call))
                tasks.setdefault(
                    call.id, RunningTask("subagent", call.id, call.name, label, pos, True)
                )
    running = [t for tid, t in tasks.items() if t.left and tid not in finished]
    return sorted(running, key=lambda t: t.at)


def _agent_label(args: dict[str, Any]) -> str:
    label = args.get("description") or args.get("prompt") or ""
    return _label(str(label))


def _shell_label(call: ToolCallPart) -> str:
    from ctxengine.summarizers.background import call_args

    args = call_args(call)
    label = args.get("command") or args.get("cmd") or call.arguments
    if isinstance(label, list):
        label = " ".join(str(x) for x in label)
    return _label(str(label))


def background_item(messages: Sequence[Message], kept: Sequence[Message] = ()) -> str | None:
    """The background tasks still running (:func:`running_tasks`) as one item, or ``None``."""
    return background_of(running_tasks(messages, kept))


def background_of(tasks: Sequence[RunningTask]) -> str | None:
    """The item naming the background ``tasks`` still running, ``None`` when none."""
    if not tasks:
        return None
    lines = [
        BACKGROUND_LINE.format(kind=t.kind, id=t.id, tool=t.tool, label=t.label or "(no label)")
        for t in tasks
    ]
    return BACKGROUND_ITEM.format(tasks="\n".join(lines))


def file_items(
    messages: Sequence[Message],
    estimator: Estimator,
    *,
    files: int,
    file_max_tokens: int,
    kept: Sequence[Message] = (),
) -> list[DurableItem]:
    """The ``files`` most recently read or edited paths in ``messages``, newest first (those
    ``kept`` reads again are left out): each with its latest read result when that is at most
    ``file_max_tokens`` tokens (its path line as the shorter text), else as its path line
    only."""
    from ctxengine.summarizers.tools import call_effects

    fresh = {
        effect.path
        for m in kept
        for call in m.tool_calls
        for effect in call_effects(call)
        if effect.action == "read"
    }
    results: dict[str, str] = {}
    for m in messages:
        for r in m.tool_results:
            results[r.call_id] = r.text
    order: list[str] = []
    content: dict[str, str] = {}
    edited_after: set[str] = set()
    for m in reversed(messages):
        for call in reversed(m.tool_calls):
            for effect in call_effects(call):
                path = effect.path
                if path in fresh:
                    continue
                if effect.action == "read":
                    if path not in content and call.id in results:
                        content[path] = results[call.id]
                elif path not in content:
                    edited_after.add(path)
                if path not in order:
                    order.append(path)
    shown = [(path, content.get(path), path in edited_after) for path in order[:files]]
    return files_of(shown, estimator, file_max_tokens)


def files_of(
    files: Sequence[tuple[str, str | None, bool]], estimator: Estimator, file_max_tokens: int
) -> list[DurableItem]:
    """The file items of ``files``, each ``(path, the text of its latest read or None,
    edited after that read)``, newest first (:func:`file_items`): the read text when it is
    at most ``file_max_tokens`` tokens (its path line as the shorter text), else the path
    line only."""
    out: list[DurableItem] = []
    for path, text, edited in files:
        short = FILE_PATH_ITEM.format(path=path)
        short_tokens = _tokens(short, estimator)
        if text is not None and estimator.text(text) <= file_max_tokens:
            full = FILE_ITEM.format(path=path, content=text)
            if edited:
                full += FILE_EDITED_NOTE
            out.append(DurableItem("files", full, _tokens(full, estimator), short, short_tokens))
        else:
            out.append(DurableItem("files", None, 0, short, short_tokens))
    return out


def _tokens(text: str, estimator: Estimator) -> int:
    """Tokens of ``text`` shown as a re-injected message."""
    return estimator.message(reinjected_message(text))


def skill_text(load: SkillLoad, estimator: Estimator, max_tokens: int) -> tuple[str, int] | None:
    """The re-injected text of a skill body (:func:`~ctxengine.projection.skills.
    reinjected_text`) and its tokens as a message, at most ``max_tokens``: the whole body
    when it fits; else its top, as many whole lines as fit (a first line alone too long is
    cut by characters), followed by the line naming the file to read for the rest; ``None``
    when not even the frame fits."""
    full = reinjected_text(load.name, load.path, load.body)
    tokens = _tokens(full, estimator)
    if tokens <= max_tokens:
        return full, tokens
    lines = load.body.split("\n")

    def shown(top: str, rest: int) -> tuple[str, int]:
        text = reinjected_text(load.name, load.path, top, rest)
        return text, _tokens(text, estimator)

    best: tuple[str, int] | None = None
    low, high = 1, len(lines) - 1  # whole lines kept; at least one line is left out
    while low <= high:
        mid = (low + high) // 2
        text, n = shown("\n".join(lines[:mid]), len(lines) - mid)
        if n <= max_tokens:
            best, low = (text, n), mid + 1
        else:
            high = mid - 1
    if best is not None:
        return best
    first = lines[0]
    low, high = 0, len(first) - 1
    while low <= high:  # the first line cut by characters; every line is left to read
        mid = (low + high) // 2
        text, n = shown(first[:mid], len(lines))
        if n <= max_tokens:
            best, low = (text, n), mid + 1
        else:
            high = mid - 1
    return best


def skill_items(
    messages: Sequence[Message],
    estimator: Estimator,
    *,
    each_max: int,
    total_max: int,
    kept: Sequence[Message] = (),
) -> list[DurableItem]:
    """The bodies of the skills activated in ``messages``
    (:func:`~ctxengine.projection.skills.skill_loads`), the latest load of each name, the
    most recently used first (a second activation that only added a notice,
    :func:`~ctxengine.projection.skills.skill_notices`, counts as a use, in ``kept`` too),
    less those ``kept`` shows whole: each as :func:`skill_text` within ``each_max`` tokens,
    while the items together stay within ``total_max`` tokens (the first that does not fit
    and every older one are dropped)."""
    latest: dict[str, SkillLoad] = {}
    used_at: dict[str, int] = {}
    for load in skill_loads(messages):
        latest[load.name] = load
        used_at[load.name] = load.at
    for name, at in skill_notices((*messages, *kept)):
        if name in used_at:
            used_at[name] = max(used_at[name], at)
    shown = {load.name for load in skill_loads(kept) if load.whole}
    return skills_of(latest, used_at, shown, estimator, each_max=each_max, total_max=total_max)


def skills_of(
    latest: dict[str, SkillLoad],
    used_at: dict[str, int],
    shown: set[str],
    estimator: Estimator,
    *,
    each_max: int,
    total_max: int,
) -> list[DurableItem]:
    """The skill items (:func:`skill_items`) of the ``latest`` load of each skill name (in
    the order the names were first loaded), each last used at ``used_at[name]`` (a
    position), less the names ``shown`` (the kept history shows their bodies whole)."""
    out: list[DurableItem] = []
    used = 0
    for load in sorted(latest.values(), key=lambda x: -used_at[x.name]):
        if load.name in shown:
            continue
        found = skill_text(load, estimator, each_max)
        if found is None:
            continue
        text, tokens = found
        if used + tokens > total_max:
            break
        used += tokens
        out.append(DurableItem("skills", text, tokens))
    return out


def durable_items(
    messages: Sequence[Message],
    policy: Policy,
    estimator: Estimator,
    kept: Sequence[Message] = (),
) -> tuple[DurableItem, ...]:
    """The candidate items ``policy.reinject`` names, found in ``messages`` (the history
    that leaves the context, oldest first) less what ``kept`` (the history kept from the
    cut on) shows, in the order rules, opening, todos, background, plan, skills, files;
    identical texts once (:func:`assemble`)."""
    return assemble(
        policy,
        estimator,
        rules=lambda: rules_items(messages, kept),
        opening=lambda: opening_items(messages, kept),
        todos=lambda: todo_item(messages, kept),
        background=lambda: background_item(messages, kept),
        plan=lambda: plan_item(messages, kept),
        skills=lambda: skill_items(
            messages,
            estimator,
            each_max=policy.reinject_skill_max_tokens,
            total_max=policy.reinject_skills_max_tokens,
            kept=kept,
        ),
        files=lambda: file_items(
            messages,
            estimator,
            files=policy.reinject_files,
            file_max_tokens=policy.reinject_file_max_tokens,
            kept=kept,
        ),
    )


def assemble(
    policy: Policy,
    estimator: Estimator,
    *,
    rules: Callable[[], Sequence[str]],
    opening: Callable[[], Sequence[str]],
    todos: Callable[[], str | None],
    background: Callable[[], str | None],
    plan: Callable[[], str | None],
    skills: Callable[[], Sequence[DurableItem]],
    files: Callable[[], Sequence[DurableItem]],
) -> tuple[DurableItem, ...]:
    """The candidate items of the kinds ``policy.reinject`` names, in the order rules,
    opening, todos, background, plan, skills, files, each kind asked of its function only
    when named (:func:`rules_items`, :func:`opening_items`, :func:`todo_item`,
    :func:`background_item`, :func:`plan_item`, :func:`skill_items`, :func:`file_items` or
    the same answers found otherwise: :class:`~.durable_ledger.DurableLedger`); identical
    texts once, a file offered as a path only always."""
    out: list[DurableItem] = []
    seen: set[str] = set()

    def add(kind: str, text: str | None) -> None:
        if text is not None and text not in seen:
            seen.add(text)
            out.append(DurableItem(kind, text, _tokens(text, estimator)))

    wanted = policy.reinject
    if "rules" in wanted:
        for text in rules():
            add("rules", text)
    if "opening" in wanted:
        for text in opening():
            add("opening", text)
    if "todos" in wanted:
        add("todos", todos())
    if "background" in wanted:
        add("background", background())
    if "plan" in wanted:
        add("plan", plan())
    if "skills" in wanted:
        for item in skills():
            add("skills", item.text)
    if "files" in wanted:
        for item in files():
            if item.text is None or item.text not in seen:
                out.append(item)
    return tuple(out)


def fit(items: Sequence[DurableItem], room: int | None, max_tokens: int) -> DurableState:
    """The state shown from the candidate ``items``: every required item, whole; then, in
    order, each other item whose text (else its shorter text) still fits both ``room`` (the
    tokens the compacted context has left for them; ``None``: no limit) and ``max_tokens``
    (``policy.reinject_max_tokens``, counted with the required items)."""
    texts: list[str] = []
    kinds: list[str] = []
    sizes: list[int] = []
    required = sum(i.tokens for i in items if i.required)
    left = max_tokens - required if room is None else min(max_tokens - required, room)
    for item in items:
        if item.required:
            assert item.text is not None
            texts.append(item.text)
            kinds.append(item.kind)
            sizes.append(item.tokens)
            continue
        if item.text is not None and item.tokens <= left:
            texts.append(item.text)
            kinds.append(item.kind)
            sizes.append(item.tokens)
            left -= item.tokens
        elif item.short is not None and item.short_tokens <= left:
            texts.append(item.short)
            kinds.append(item.kind)
            sizes.append(item.short_tokens)
            left -= item.short_tokens
    return DurableState(tuple(texts), tuple(kinds), tuple(sizes))


def reinjected_texts(
    messages: Sequence[Message],
    policy: Policy,
    estimator: Estimator,
    room: int | None = None,
    kept: Sequence[Message] = (),
) -> tuple[str, ...]:
    """The texts re-injected when ``messages`` leave the context and ``kept`` stays:
    :func:`fit` of :func:`durable_items` within ``room`` and ``policy.reinject_max_tokens``."""
    return fit(
        durable_items(messages, policy, estimator, kept), room, policy.reinject_max_tokens
    ).texts
