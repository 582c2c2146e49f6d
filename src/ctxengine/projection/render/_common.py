"""Helpers shared by the renderers: tool schemas, arguments, image and document stand-ins."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ctxengine.model import DocumentPart, ImagePart, Message
from ctxengine.model.json_depth import JsonTooDeep, loads_bounded, opaque_arguments
from ctxengine.projection.render.ids import wire_name

#: User message put first when a context would otherwise open with an assistant message.
CONTINUING_TEXT = "(continuing)"
#: Description of a tool declared only because the transcript calls it
#: (``declare_tools=True``).
UNDECLARED_TOOL_DESCRIPTION = "(schema not recorded in the transcript)"


def tool_schema(schema: Mapping[str, Any]) -> tuple[str, str | None, dict[str, Any]]:
    """``(name, description, parameters)`` of a tool schema in any of the accepted shapes:
    neutral ``{name, description, parameters}``, OpenAI ``{type: "function", function: {…}}``
    or Anthropic ``{name, description, input_schema}``. Missing parameters become an empty
    object schema."""
    inner = schema.get("function")
    if schema.get("type") == "function" and isinstance(inner, Mapping):
        schema = inner
    params = schema.get("parameters", schema.get("input_schema"))
    if not isinstance(params, Mapping):
        params = {"type": "object", "properties": {}}
    description = schema.get("description")
    return (
        str(schema.get("name", "")),
        description if isinstance(description, str) else None,
        dict(params),
    )


def tool_declarations(
    schemas: Sequence[Mapping[str, Any]],
    messages: Sequence[Message],
    provider: str,
    *,
    declare_tools: bool,
) -> list[tuple[str, str | None, dict[str, Any]]]:
    """``(name, description, parameters)`` of every tool to declare, names as sent to
    ``provider`` (see :func:`~ctxengine.projection.render.ids.wire_name`).

    The schemas come first, in order; a later schema with an already declared name is
    dropped (the APIs reject duplicate names). With ``declare_tools``, every tool an
    assistant message calls that no schema declares follows, in order of first call, with
    :data:`UNDECLARED_TOOL_DESCRIPTION` and an empty object schema ``{"type": "object"}``.
    """
    out: dict[str, tuple[str, str | None, dict[str, Any]]] = {}
    for schema in schemas:
        name, description, params = tool_schema(schema)
        name = wire_name(name, provider)
        out.setdefault(name, (name, description, params))
    if declare_tools:
        for msg in messages:
            if msg.role != "assistant":
                continue
            for call in msg.tool_calls:
                name = wire_name(call.name, provider)
                out.setdefault(name, (name, UNDECLARED_TOOL_DESCRIPTION, {"type": "object"}))
    return list(out.values())


def called_tool_schemas(messages: Iterable[Message]) -> tuple[dict[str, Any], ...]:
    """A provider-neutral schema (``name``, :data:`UNDECLARED_TOOL_DESCRIPTION`, an empty
    object schema) for every tool an assistant message of ``messages`` calls, in order of
    first call: the tool list of a transcript that recorded no schemas, so that a request
    built from it declares the same tools before and after a compaction drops the calls."""
    names = dict.fromkeys(c.name for m in messages if m.role == "assistant" for c in m.tool_calls)
    return tuple(
        {"name": n, "description": UNDECLARED_TOOL_DESCRIPTION, "parameters": {"type": "object"}}
        for n in names
    )


def parse_arguments(arguments: str) -> dict[str, Any]:
    """Tool-call arguments as a JSON object: blank text is ``{}``, a JSON object is itself,
    JSON nested deeper than :data:`~ctxengine.model.json_depth.MAX_JSON_DEPTH` is
    :func:`~ctxengine.model.json_depth.opaque_arguments` (``{"_raw": arguments, "_note":
    …}``, never parsed), anything else (invalid JSON, a list, a number) is kept as
    ``{"_raw": arguments}``."""
    if not arguments.strip():
        return {}
    try:
        value = loads_bounded(arguments)
    except JsonTooDeep:
        return dict(opaque_arguments(arguments))
    except ValueError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}


def image_stand_in(image: ImagePart) -> str:
    """Text shown instead of an image where the target cannot carry one."""
    size = f", {image.width}×{image.height}" if image.width and image.height else ""
    return f"[image: {image.media_type}{size}]"


def document_text(doc: DocumentPart) -> str | None:
    """A document's inline text with its title as a first line, or ``None`` when the
    document has no inline text."""
    if doc.text is None:
        return None
    return f"{doc.title}\n{doc.text}" if doc.title else doc.text


def document_stand_in(doc: DocumentPart) -> str:
    """Text shown instead of a document the target cannot carry."""
    where = f" {doc.url}" if doc.url else ""
    title = f" {doc.title!r}" if doc.title else ""
    return f"[document{title}: {doc.media_type}{where}]"


def data_url(image: ImagePart) -> str | None:
    """``data:`` URL of an inline image, its remote URL, or ``None`` when it has neither."""
    if image.data is not None:
        return f"data:{image.media_type};base64,{image.data}"
    return image.url
