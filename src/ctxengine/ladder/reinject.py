"""Durable state re-injected after a compaction (Claude Code's "what survives compaction":
rules files, the plan, up to 5 recently read or edited files of at most 5,000 tokens each,
50,000 in all; larger files come back as a path only).

Pure: the executor hands in the history messages that leave the context; nothing is read
from disk, so a replay re-injects what the session itself last saw (a file's latest read
result), where a live agent would read the file again.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxengine.model import Message
from ctxengine.model.roles import is_real_user_message
from ctxengine.policy import Policy
from ctxengine.policy.defaults import REINJECT_PLAN_TOOLS, REINJECT_RULES_FILES
from ctxengine.summarizers.tools import call_effects
from ctxengine.tokens.base import Estimator

#: The texts of the re-injected items.
PLAN_ITEM = "The current plan (from the latest {tool} call before the compaction):\n{arguments}"
FILE_ITEM = "Contents of {path} as last read before the compaction:\n{content}"
FILE_EDITED_NOTE = "\n(The file was edited after this read: read it again before relying on it.)"
FILE_PATH_ITEM = (
    "{path} was read or edited before the compaction; its contents are not repeated here "
    "(read it again when needed)."
)


def rules_items(messages: Sequence[Message]) -> list[str]:
    """Injected user-role messages that carry a rules file (one naming a file of
    :data:`~ctxengine.policy.defaults.REINJECT_RULES_FILES`), oldest first, each once."""
    out: list[str] = []
    for m in messages:
        if m.role != "user" or m.tool_results or is_real_user_message(m):
            continue
        text = m.text
        if any(name in text for name in REINJECT_RULES_FILES) and text not in out:
            out.append(text)
    return out


def plan_item(messages: Sequence[Message]) -> str | None:
    """The latest plan: the arguments of the newest call of a
    :data:`~ctxengine.policy.defaults.REINJECT_PLAN_TOOLS` tool, or ``None``."""
    for m in reversed(messages):
        for call in reversed(m.tool_calls):
            if call.name in REINJECT_PLAN_TOOLS:
                return PLAN_ITEM.format(tool=call.name, arguments=call.arguments)
    return None


def file_items(
    messages: Sequence[Message],
    estimator: Estimator,
    *,
    files: int,
    file_max_tokens: int,
    max_tokens: int,
) -> list[str]:
    """The ``files`` most recently read or edited paths, newest first: each with its latest
    read result when that is at most ``file_max_tokens`` tokens and the items so far stay
    within ``max_tokens``, else as a path only."""
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
                if effect.action == "read":
                    if path not in content and call.id in results:
                        content[path] = results[call.id]
                elif path not in content:
                    edited_after.add(path)
                if path not in order:
                    order.append(path)
    out: list[str] = []
    used = 0
    for path in order[:files]:
        text = content.get(path)
        item = FILE_PATH_ITEM.format(path=path)
        if text is not None:
            full = FILE_ITEM.format(path=path, content=text)
            if path in edited_after:
                full += FILE_EDITED_NOTE
            size = estimator.text(full)
            if estimator.text(text) <= file_max_tokens and used + size <= max_tokens:
                item = full
        used += estimator.text(item)
        out.append(item)
    return out


def reinjected_texts(
    messages: Sequence[Message], policy: Policy, estimator: Estimator, room: int | None = None
) -> tuple[str, ...]:
    """The durable state ``policy.reinject`` names, found in ``messages`` (the history that
    leaves the context, oldest first), in the order rules, plan, files, within
    ``policy.reinject_max_tokens`` and ``room`` (the tokens the compacted context has left
    for it; ``None``: no limit besides the policy's): an item that would not fit is left
    out (a file then comes back as a path when that fits)."""
    budget = policy.reinject_max_tokens if room is None else min(policy.reinject_max_tokens, room)
    out: list[str] = []
    used = 0

    def add(text: str) -> None:
        nonlocal used
        size = estimator.text(text)
        if used + size <= budget:
            out.append(text)
            used += size

    if "rules" in policy.reinject:
        for text in rules_items(messages):
            add(text)
    if "plan" in policy.reinject:
        plan = plan_item(messages)
        if plan is not None:
            add(plan)
    if "files" in policy.reinject:
        for text in file_items(
            messages,
            estimator,
            files=policy.reinject_files,
            file_max_tokens=policy.reinject_file_max_tokens,
            max_tokens=max(0, budget - used),
        ):
            add(text)
    return tuple(out)
