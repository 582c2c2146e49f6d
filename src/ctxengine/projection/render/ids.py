"""Tool-call ids and tool names as each provider accepts them.

Limits, from the providers' documentation and the errors their APIs return:

- Anthropic Messages: ``tool_use.id`` and ``tool_result.tool_use_id`` must match
  ``^[a-zA-Z0-9_-]+$`` (a 400 reads ``messages.N.content.M.tool_use.id: String should match
  pattern '^[a-zA-Z0-9_-]+$'``); no length limit is documented.
- Anthropic tool names: ``^[a-zA-Z0-9_-]{1,64}$`` ("Define tools" docs; some API versions
  answer with ``{1,128}``, so 64 is the limit every version accepts).
- OpenAI Chat Completions: ``tool_calls[].id`` at most 40 characters (a 400 reads
  ``Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum
  length 40``); no character rule. Function names: ``a-z, A-Z, 0-9, underscores and dashes,
  with a maximum length of 64`` (API reference; a 400 quotes ``^[a-zA-Z0-9_-]+$``).

:func:`wire_id` and :func:`wire_name` return a value unchanged when the provider accepts
it, else a deterministic valid replacement: every other character becomes ``_``, then
``_`` and 10 hex digits of the BLAKE2b hash of the original are appended, cut to the limit
with the hash kept. Equal inputs give equal outputs, so a call and its result still match;
distinct inputs keep distinct outputs through the hash.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

#: Pattern of an Anthropic ``tool_use`` id.
ANTHROPIC_ID_PATTERN = "^[a-zA-Z0-9_-]+$"
#: Longest OpenAI Chat Completions tool-call id, in characters.
OPENAI_ID_MAX = 40
#: Pattern of a tool name, for both providers.
NAME_PATTERN = "^[a-zA-Z0-9_-]{1,64}$"
#: Longest tool name, in characters.
NAME_MAX = 64
#: Hex digits of the hash appended to a replaced value.
HASH_HEX = 10

PROVIDERS = ("openai", "anthropic")
_ALLOWED = re.compile(r"[a-zA-Z0-9_-]+")
_DISALLOWED = re.compile(r"[^a-zA-Z0-9_-]")


def _check_provider(provider: str) -> None:
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}; expected one of {list(PROVIDERS)}")


def _replacement(value: str, limit: int | None) -> str:
    digest = hashlib.blake2b(value.encode("utf-8"), digest_size=HASH_HEX // 2).hexdigest()
    suffix = f"_{digest}"
    clean = _DISALLOWED.sub("_", value)
    if limit is not None:
        clean = clean[: limit - len(suffix)]
    return clean + suffix


def id_problem(call_id: str, provider: str) -> str | None:
    """Why ``provider`` would reject ``call_id`` as a tool-call id, or ``None`` when it
    accepts it. The reason reads after the id: ``"must match ^[a-zA-Z0-9_-]+$"``
    (Anthropic), ``"is 46 characters long (at most 40)"`` or ``"must not be empty"``
    (OpenAI).

    Raises:
        ValueError: unknown ``provider`` (``"openai"`` or ``"anthropic"``).
    """
    _check_provider(provider)
    if provider == "anthropic":
        return None if _ALLOWED.fullmatch(call_id) else f"must match {ANTHROPIC_ID_PATTERN}"
    if not call_id:
        return "must not be empty"
    if len(call_id) > OPENAI_ID_MAX:
        return f"is {len(call_id)} characters long (at most {OPENAI_ID_MAX})"
    return None


def name_problem(name: str, provider: str) -> str | None:
    """Why ``provider`` would reject ``name`` as a tool name, or ``None`` when it accepts
    it. The reason reads after the name: ``"must match ^[a-zA-Z0-9_-]{1,64}$"``.

    Raises:
        ValueError: unknown ``provider``.
    """
    _check_provider(provider)
    if _ALLOWED.fullmatch(name) and len(name) <= NAME_MAX:
        return None
    return f"must match {NAME_PATTERN}"


def wire_id(call_id: str, provider: str) -> str:
    """``call_id`` as sent to ``provider``: unchanged when valid there, else its
    replacement (see the module docstring). Anthropic: ``"t.1:x"`` becomes
    ``"t_1_x_"`` plus the hash; OpenAI: an id over 40 characters keeps its first 29
    (invalid characters replaced) plus ``_`` and the hash, 40 characters in all.

    Raises:
        ValueError: unknown ``provider``.
    """
    if id_problem(call_id, provider) is None:
        return call_id
    return _replacement(call_id, OPENAI_ID_MAX if provider == "openai" else None)


def wire_name(name: str, provider: str) -> str:
    """Tool ``name`` as sent to ``provider``: unchanged when valid, else its replacement
    cut to 64 characters (``"my.tool/v2"`` becomes ``"my_tool_v2_"`` plus the hash). The
    same name maps the same way in ``tools``, ``tool_use`` blocks and ``tool_calls``; a
    reply calls the replacement, which the providers map back through
    :func:`original_names` (``CompletionRequest.tool_names``).

    Raises:
        ValueError: unknown ``provider``.
    """
    if name_problem(name, provider) is None:
        return name
    return _replacement(name, NAME_MAX)


def original_names(names: Iterable[str], provider: str) -> dict[str, str]:
    """``{wire name: name}`` for each of ``names`` that :func:`wire_name` replaces for
    ``provider`` (names sent unchanged are left out), to map the tool names of a model's
    reply back to the caller's own. Empty when no name is replaced.

    Raises:
        ValueError: unknown ``provider``.
    """
    _check_provider(provider)
    return {wire: name for name in names if (wire := wire_name(name, provider)) != name}
