"""``validate(body, provider, strict=False)``: every protocol invariant of a rendered
request body.

OpenAI Chat Completions (``"openai"``):
  - roles are ``system``, ``developer``, ``user``, ``assistant`` or ``tool``; at least one
    user message;
  - every ``tool`` message answers a call of the nearest preceding assistant message with
    ``tool_calls``, with only tool messages in between; no orphan and no duplicate result;
  - every call of such a message is answered before the next non-tool message (or the end);
  - ``tool_calls`` entries are ``{id, type: "function", function: {name, arguments}}`` with
    string arguments and distinct ids; an assistant message has content or tool calls;
  - tool-call ids (in ``tool_calls`` and ``tool_call_id``) are at most 40 characters; tool
    names (called and declared) match ``^[a-zA-Z0-9_-]{1,64}$``;
  - content is a string or a non-empty list of parts allowed for the role.

Anthropic Messages (``"anthropic"``):
  - only ``user`` and ``assistant`` roles (no ``system`` inside ``messages``); the first
    message is a user message, or an assistant message opening with a ``compaction`` block
    (a compaction block opens its message); roles alternate;
  - no empty content and no blank text block;
  - every ``tool_use`` is answered by a ``tool_result`` in the immediately following user
    message, where ``tool_result`` blocks come before every other block; no orphan or
    duplicate ``tool_result``; ``tool_use`` ids are unique in the request and inputs are
    objects;
  - ids (``tool_use.id``, ``tool_use_id``) match ``^[a-zA-Z0-9_-]+$``; tool names (used and
    declared) match ``^[a-zA-Z0-9_-]{1,64}$``; ``max_tokens``, when present, is a positive
    integer;
  - ``thinking`` and ``redacted_thinking`` blocks appear only in assistant messages, before
    every other block, a thinking block always with a signature, a redacted one with data;
  - image and document blocks have a valid source.

Both check the ``tools`` list's shape and that no name is declared twice. The limits are
those of :mod:`ctxengine.projection.render.ids`.

``strict=True`` adds what a body needs to be sent as is: a ``model``; for Anthropic a
``max_tokens``; and a ``tools`` list declaring every tool the messages call (Anthropic
also rejects ``tool_result`` blocks without a ``tools`` list).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from ctxengine.errors import InvalidRequest

# The render package first: the checkers import its ``ids`` module, whose package imports
# the Anthropic renderer, which imports the Anthropic checker's constants (a cycle that
# fails when this module is the first of them imported).
from ctxengine.projection import render as _render  # noqa: F401
from ctxengine.projection._check_anthropic import check_anthropic
from ctxengine.projection._check_openai import check_openai
from ctxengine.projection._check_openai_responses import check_openai_responses

PROVIDERS: dict[str, Callable[[Any, bool, Collection[str]], list[str]]] = {
    "openai": check_openai,
    "openai-responses": check_openai_responses,
    "anthropic": check_anthropic,
}


def validate(
    body: Any, provider: str, *, strict: bool = False, known_ids: Collection[str] = ()
) -> list[str]:
    """Check a request body against the protocol of ``provider``.

    Args:
        body: the request body as plain JSON values (``render_openai`` /
            ``render_anthropic`` output, or any hand-made body).
        provider: ``"openai"`` (Chat Completions), ``"openai-responses"`` (Responses:
            :mod:`ctxengine.projection._check_openai_responses`) or ``"anthropic"``
            (Messages).
        strict: also require the fields a body needs to be sent as is: ``model``,
            ``max_tokens`` (Anthropic) and a ``tools`` list declaring every tool called.
            Without it, only the messages' protocol (ids and names included) and the shape
            of the fields present are checked.
        known_ids: tool-call ids (as sent) of messages that come before ``body``'s in the
            same request, for a body that holds only the tail of a request: Anthropic
            rejects a ``tool_use`` id used twice in a request, so one of these is reported
            as used twice. OpenAI ids need only be unique within one message.

    Returns:
        One line per violated invariant, naming where (``messages[3].content[0]: …``);
        an empty list when the body is valid.

    Raises:
        ValueError: unknown ``provider``.
    """
    check = PROVIDERS.get(provider)
    if check is None:
        raise ValueError(f"unknown provider {provider!r}; expected one of {sorted(PROVIDERS)}")
    return check(body, strict, known_ids)


def ensure_valid(body: Any, provider: str, *, strict: bool = False) -> None:
    """Like :func:`validate`, but raise when anything is wrong.

    Raises:
        InvalidRequest: the body breaks the protocol (``.problems`` lists every violation).
        ValueError: unknown ``provider``.
    """
    problems = validate(body, provider, strict=strict)
    if problems:
        raise InvalidRequest(provider, problems)
