"""Which request formats carry which parts: the one definition the renderers follow and the
token estimate counts by.

Only two kinds of part are ever left out of a request, both opaque to every other provider:

=====================  =======================  ==========================================
part                   ``"openai"``             ``"anthropic"`` (Messages)
                       (Chat Completions)
=====================  =======================  ==========================================
reasoning              never: the API takes no  signed (``signature`` set) and Anthropic's
                       reasoning input          own (``meta["provider"]`` absent or
                                                ``"anthropic"``): ``thinking`` with its
                                                signature, or ``redacted_thinking``
native_compaction      never: OpenAI's items    Anthropic's own, when the payload is a JSON
                       exist only in Responses  object (passed through as a content block)
=====================  =======================  ==========================================

The OpenAI Responses format (``"openai-responses"``) carries OpenAI's own compaction items
(``provider == "openai"``, a JSON object), each as the input item it was returned as.

A native compaction (:class:`~ctxengine.model.CompactionRecord` with ``native`` set) is
projected twice over: its opaque item, and a continuation state written locally that
stands in for it (messages marked with :data:`STAND_IN` in their ``meta``). A request to the
provider that compacted sends the item and leaves the stand-in out; every other request
sends the stand-in (its own renderer drops the item): :func:`shown`.

Every other part is carried by both (as a text stand-in where a format has no place for it).
So an OpenAI reasoning item (Codex ``encrypted_content``, a Responses summary), unsigned
reasoning text (``reasoning_content``) and an OpenAI compaction item are sent by neither
rendered request, and cost nothing in the context size. The OpenAI Responses renderer
(for the Responses provider) also echoes OpenAI reasoning items (``"openai-responses"``
below); the context size follows the two formats a replay validates, :data:`RENDERED_APIS`.
"""

from __future__ import annotations

from ctxengine.model.json_depth import loads_bounded
from ctxengine.model.messages import Message
from ctxengine.model.parts import NativeCompactionPart, Part, ReasoningPart

#: Anthropic Messages.
ANTHROPIC = "anthropic"
#: OpenAI Chat Completions.
OPENAI_CHAT = "openai"
#: OpenAI Responses (stateless replay with encrypted reasoning items).
OPENAI_RESPONSES = "openai-responses"
#: The request formats the projection renders; the context size counts what they carry.
RENDERED_APIS: tuple[str, ...] = (OPENAI_CHAT, ANTHROPIC)


#: The request format that sends a provider's native compaction items, by the provider named
#: in :attr:`~ctxengine.model.NativeCompactionPart.provider`.
NATIVE_APIS: dict[str, str] = {ANTHROPIC: ANTHROPIC, "openai": OPENAI_RESPONSES}
#: ``Message.meta`` key marking the message that holds the item of a native compaction the
#: engine stored (the lead of its record): its value is the item's provider. Where that
#: compaction is no longer in force the projection leaves the item out of the message.
NATIVE_LEAD = "native_compaction"
#: ``Message.meta`` key marking a message that stands in for a native compaction item: its
#: value is the item's provider (``"anthropic"``, ``"openai"``).
STAND_IN = "native_stand_in"


def native_api(provider: str) -> str | None:
    """The request format that carries ``provider``'s native compaction items
    (``"anthropic"`` → ``"anthropic"``, ``"openai"`` → ``"openai-responses"``), or ``None``."""
    return NATIVE_APIS.get(provider)


def shown(api: str, message: Message) -> bool:
    """False when ``message`` stands in for a native compaction item that a request in
    format ``api`` sends itself (see the module docstring); True otherwise."""
    provider = message.meta.get(STAND_IN)
    return not isinstance(provider, str) or NATIVE_APIS.get(provider) != api


def reasoning_provider(part: ReasoningPart) -> str:
    """The provider whose signature or payload ``part`` holds: ``meta["provider"]``, else
    ``"anthropic"`` (reasoning without the key comes from Anthropic thinking blocks)."""
    provider = part.meta.get("provider", ANTHROPIC)
    return provider if isinstance(provider, str) else ANTHROPIC


def native_block(part: NativeCompactionPart, provider: str = ANTHROPIC) -> dict[str, object] | None:
    """The payload of ``provider``'s compaction item as the block (Anthropic) or input item
    (OpenAI Responses) to send, exactly as stored, or ``None`` when it is another provider's
    or not a JSON object."""
    if part.provider != provider:
        return None
    try:
        block = loads_bounded(part.payload)
    except ValueError:
        return None
    return block if isinstance(block, dict) else None


def carries(api: str, part: Part) -> bool:
    """True when a request in format ``api`` (``"openai"``, ``"anthropic"`` or
    ``"openai-responses"``) carries ``part`` (see the module table). Parts other than
    reasoning and native compaction are always carried."""
    if isinstance(part, ReasoningPart):
        if not part.signature:
            return False
        provider = reasoning_provider(part)
        if api == ANTHROPIC:
            return provider == ANTHROPIC
        if api == OPENAI_RESPONSES:
            return provider == "openai" and not part.redacted
        return False
    if isinstance(part, NativeCompactionPart):
        if api == ANTHROPIC:
            return native_block(part) is not None
        return api == OPENAI_RESPONSES and native_block(part, "openai") is not None
    return True


def carried_anywhere(part: Part) -> bool:
    """True when at least one of :data:`RENDERED_APIS` carries ``part``: what the context
    size counts."""
    return any(carries(api, part) for api in RENDERED_APIS)
