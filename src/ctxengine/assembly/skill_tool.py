"""The ``skill`` tool: its definition (sent with the agent's tools) and its answer, the text of
the tool result that activates a skill. Pure: the caller hands in the catalog and the bodies
still in the context (``Session.run_skill_tool`` finds them in the current projection).

The alternative is activation by a user message (``Session.activate_skill``): the same text,
appended as a synthetic user message. Either way a skill whose body is still in the context
is not sent twice: a second activation gets one line (:func:`~.skills.Skill.notice`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from ctxengine.errors import ConfigError
from ctxengine.policy.defaults import SKILL_TOOL_NAME

from .skills import Skill

__all__ = ["SKILL_TOOL", "answer_skill", "run_skill_tool", "skill_name_from_arguments"]

#: The tool definition (provider-neutral: ``name``, ``description``, JSON-schema
#: ``parameters``), for the agent's tool list.
SKILL_TOOL: Mapping[str, Any] = {
    "name": SKILL_TOOL_NAME,
    "description": (
        "Load a skill: a packaged set of instructions for one kind of task. The skills "
        "available are listed under '# Skills' in the system prompt, one line each (name, "
        "description, file). When the task at hand matches a skill's description, call this "
        "tool with its name first and follow the instructions it returns; files it lists "
        "are read or run only when the instructions call for them."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name, as listed."},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
}


def skill_name_from_arguments(arguments: str | Mapping[str, Any]) -> str:
    """The skill a ``skill`` call asks for.

    Args:
        arguments: the call's arguments, as JSON text or already parsed.

    Raises:
        ConfigError: arguments that are not a JSON object, an unknown field, or a ``name``
            that is missing, empty or not a string.
    """
    if isinstance(arguments, str):
        try:
            parsed = orjson.loads(arguments or "{}")
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"skill: arguments are not JSON: {exc}") from exc
    else:
        parsed = arguments
    if not isinstance(parsed, Mapping):
        raise ConfigError("skill: arguments must be a JSON object")
    unknown = sorted(k for k in parsed if k != "name")
    if unknown:
        raise ConfigError(f"skill: unknown field {unknown[0]!r}; expected 'name'")
    name = parsed.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"skill: field 'name' must be a skill's name, got {name!r}")
    return name.strip().lstrip("/")


def answer_skill(skill: Skill, loaded: Mapping[str, str]) -> str:
    """What activating ``skill`` adds, given the bodies whole in the context now
    (``loaded``: name → body): its notice when the same body is there, else its activation
    text (body and files)."""
    if loaded.get(skill.name) == skill.body:
        return skill.notice()
    return skill.activation()


def run_skill_tool(
    skills: Sequence[Skill], arguments: str | Mapping[str, Any], loaded: Mapping[str, str]
) -> tuple[str, bool]:
    """Answer one ``skill`` call: ``(text, is_error)``.

    Args:
        skills: the catalog.
        arguments: the call's arguments.
        loaded: the bodies whole in the context now, name → body
            (:func:`~ctxengine.projection.skills.skill_loads` of the current projection).

    Returns:
        The activation text (:func:`answer_skill`), or an error in words for the agent to
        correct its call (invalid arguments, an unknown name: the names available are
        listed), with ``is_error`` set.
    """
    try:
        name = skill_name_from_arguments(arguments)
    except ConfigError as exc:
        return str(exc), True
    by_name = {s.name: s for s in skills}
    skill = by_name.get(name)
    if skill is None:
        known = ", ".join(sorted(by_name)) or "none"
        return f"skill: no skill named {name!r}; the skills available are: {known}", True
    return answer_skill(skill, loaded), False
