"""Request bodies of the three APIs the proxy speaks, read as ctxengine messages, and the body
to forward when the context differs from the request.

=============  ==========================  ==============================================
API            history                     read by
=============  ==========================  ==============================================
``chat``       ``messages``                :class:`~ctxengine.importers._chat.ChatReader`
                                           (the chat-completions importer's reader)
``responses``  ``instructions`` + ``input``  the Codex importer's item reader: consecutive
                                           assistant-side items (``message`` of role
                                           assistant, ``reasoning``, ``function_call``,
                                           ``custom_tool_call`` …) form one assistant
                                           message, outputs one tool message each
``anthropic``  ``system`` + ``messages``   the Anthropic Messages importer's block reader
                                           (a user message with ``tool_result`` blocks
                                           becomes a tool message and, when it has other
                                           blocks, a user message)
=============  ==========================  ==============================================

Every message keeps the range of request items it came from (:attr:`Conversation.spans`); the
top-level ``system`` / ``instructions`` has the range ``(-1, -1)``. A request item the readers
do not understand (an unknown Responses item type, say) is not a message: it is not counted
in the context size, it stays in the request while nothing is compacted, and it is sent
again only when it lies in the verbatim tail of a compacted request.

Writing back (:func:`forwarded_body`): the context's longest suffix of messages that are the
request's own (equal, in the same order, starting on an item boundary) is sent as the
client's own items, byte for byte in content; what comes before it (the system prompt, the
continuation state, re-injected state, pruned or truncated messages) is rendered by the
provider's renderer (:mod:`ctxengine.projection.render`). Everything else in the body
(model, tools, sampling settings, ``stream``, provider fields) is kept as the client sent it;
the top-level ``system`` / ``instructions`` is kept when the context still holds it
unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, TypeAlias

import orjson

from ctxengine.errors import TranscriptError
from ctxengine.importers._build import CallIds
from ctxengine.importers._chat import ChatReader
from ctxengine.importers._codex_items import Items
from ctxengine.importers.anthropic_messages import _Blocks, _message
from ctxengine.importers.report import ImportReport
from ctxengine.model import Message, Part, TextPart, Usage
from ctxengine.projection.context import Context
from ctxengine.projection.render._common import CONTINUING_TEXT
from ctxengine.projection.render.anthropic import render_anthropic
from ctxengine.projection.render.openai import render_openai
from ctxengine.projection.render.openai_responses import render_openai_responses

__all__ = [
    "API_PATHS",
    "PROVIDERS",
    "Api",
    "BadRequest",
    "Conversation",
    "ConversationReader",
    "forwarded_body",
    "full_body",
    "render_chat",
    "render_responses",
    "split",
    "stable_key",
]

Api: TypeAlias = Literal["chat", "responses", "anthropic"]

#: The renderer and validator name of each API (:mod:`ctxengine.projection.render.registry`).
PROVIDERS: Mapping[Api, str] = {
    "chat": "openai",
    "responses": "openai-responses",
    "anthropic": "anthropic",
}
#: The request path of each API.
API_PATHS: Mapping[Api, str] = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "anthropic": "/v1/messages",
}
#: The body field holding each API's history items.
ITEMS_KEY: Mapping[Api, str] = {"chat": "messages", "responses": "input", "anthropic": "messages"}

#: History items read for :func:`stable_key` at most.
STABLE_ITEMS = 8
#: Range of the message read from the top-level ``system`` / ``instructions`` field.
TOP_LEVEL = (-1, -1)

#: Responses items that belong to the assistant's side of the conversation.
_ASSISTANT_ITEMS = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "tool_search_call",
        "image_generation_call",
        "compaction",
    }
)
#: Responses items that answer a call.
_OUTPUT_ITEMS = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output",
     "tool_search_output"}
)  # fmt: skip

Span: TypeAlias = tuple[int, int]
UsageOf: TypeAlias = Callable[[Message], Usage | None]
Json = dict[str, Any]


class BadRequest(ValueError):
    """A request body the proxy cannot read: it is answered with a 400 in the API's own
    error shape.

    Attributes:
        param: the JSON path of the field at fault (``$.messages[3].content``), or ``None``.
    """

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


@dataclass(frozen=True, slots=True)
class Conversation:
    """One request's history, read.

    Attributes:
        api: the API the request came in on.
        messages: the history as ctxengine messages, oldest first.
        spans: per message, the range ``[start, stop)`` of items of :attr:`items` it came
            from; :data:`TOP_LEVEL` for the top-level ``system`` / ``instructions``.
        items: the request's own history items (``messages`` or ``input``), as sent.
        tools: the request's tool declarations, as sent.
        model: the ``model`` field, or ``None``.
        max_output: the request's output cap in tokens (``max_tokens``,
            ``max_completion_tokens`` or ``max_output_tokens``), or ``None``.
        stream: the request asks for a server-sent-event stream.
    """

    api: Api
    messages: tuple[Message, ...]
    spans: tuple[Span, ...]
    items: list[Any]
    tools: tuple[Mapping[str, Any], ...]
    model: str | None
    max_output: int | None
    stream: bool


def _fail(exc: TranscriptError) -> BadRequest:
    return BadRequest(exc.expected if exc.expected else str(exc), exc.json_path)


def _check_role(item: Any, jp: str, roles: tuple[str, ...]) -> None:
    """Refuse an item whose ``role`` is a string none of ``roles`` (a message the API would
    reject, named by its JSON path); an item without a role is left to the reader.

    Raises:
        BadRequest: an unknown role.
    """
    if not isinstance(item, dict):
        return
    role = item.get("role")
    if isinstance(role, str) and role not in roles:
        expected = ", ".join(roles[:-1]) + " or " + roles[-1]
        raise BadRequest(f"unknown role {role!r} (expected {expected})", f"{jp}.role")


#: The message roles each API takes (Anthropic: ``system`` inside ``messages`` is the
#: mid-conversation system message of Claude Opus 4.8 and later).
CHAT_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
ANTHROPIC_ROLES = ("user", "assistant", "system")
RESPONSES_ROLES = ("user", "assistant", "system", "developer")


class _ChatParser:
    """Chat Completions ``messages``, one message per item."""

    def __init__(self) -> None:
        self.reader = ChatReader(Path("request"), report=ImportReport(Path("request")))

    def feed(self, i: int, item: Any, out: list[tuple[Message, Span]]) -> None:
        jp = f"$.messages[{i}]"
        _check_role(item, jp, CHAT_ROLES)
        msg = self.reader.message(item, jp)
        if msg is not None:
            out.append((msg, (i, i + 1)))

    def finish(self, out: list[tuple[Message, Span]]) -> bool:
        return True


class _AnthropicParser:
    """Anthropic ``messages``: one item gives one message, or a tool message and a user
    message (both with the item's range); a mid-conversation ``system`` item (Claude Code
    sends its "Available agent types" so) a system message."""

    def __init__(self) -> None:
        report = ImportReport(Path("request"))
        self.blocks = _Blocks(Path("request"), CallIds(), report)

    def feed(self, i: int, item: Any, out: list[tuple[Message, Span]]) -> None:
        jp = f"$.messages[{i}]"
        _check_role(item, jp, ANTHROPIC_ROLES)
        if isinstance(item, dict) and item.get("role") == "system":
            parts = self.blocks.block_content(item.get("content"), f"{jp}.content")
            if parts:
                out.append((Message("system", tuple(parts)), (i, i + 1)))
            return
        for msg in _message(self.blocks, item, jp):
            out.append((msg, (i, i + 1)))

    def finish(self, out: list[tuple[Message, Span]]) -> bool:
        return True


class _ResponsesParser:
    """Responses ``input`` items: a run of assistant-side items is one assistant message."""

    def __init__(self) -> None:
        self.items = Items(Path("request"), CallIds(), ImportReport(Path("request")))
        self.group: list[Part] = []
        self.meta: dict[str, Any] = {}
        self.start = -1
        self.stop = -1

    def feed(self, i: int, item: Any, out: list[tuple[Message, Span]]) -> None:
        if isinstance(item, str):
            item = {"type": "message", "role": "user", "content": item}
        if not isinstance(item, dict):
            raise BadRequest("expected an input item object", f"$.input[{i}]")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            _check_role(item, f"$.input[{i}]", RESPONSES_ROLES)
        if (kind == "message" and item.get("role") == "assistant") or kind in _ASSISTANT_ITEMS:
            if not self.group:
                self.start = i
            self.items.assistant(i, {**item, "type": kind}, self.group, self.meta)
            self.stop = i + 1
            return
        if kind == "message":
            self._flush(out)
            msg = self.items.message(i, item)
            if msg is not None:
                out.append((msg, (i, i + 1)))
        elif kind in _OUTPUT_ITEMS:
            self._flush(out)
            kind = "function_call_output" if kind == "local_shell_call_output" else kind
            found = self.items.output(i, {**item, "type": kind})
            if found is not None:
                out.append((found, (i, i + 1)))
        # Other items (item_reference, unknown kinds) stay in the request unread.

    def _flush(self, out: list[tuple[Message, Span]]) -> None:
        if self.group:
            calls = any(p.kind == "tool_call" for p in self.group)
            msg = Message(
                "assistant",
                tuple(self.group),
                stop_reason="tool_use" if calls else "stop",
                meta=dict(self.meta),
            )
            out.append((msg, (self.start, self.stop)))
        self.group, self.meta = [], {}

    def finish(self, out: list[tuple[Message, Span]]) -> bool:
        """Flush an open assistant run; False when there was one (the reader cannot take
        more items after it)."""
        open_run = bool(self.group)
        self._flush(out)
        return not open_run


_Parser: TypeAlias = _ChatParser | _AnthropicParser | _ResponsesParser


def _top_level(api: Api, top: Any) -> Message | None:
    """The message of the top-level ``system`` (Anthropic) or ``instructions`` (Responses)
    field, whose value is ``top`` (``None`` when absent)."""
    if top is None:
        return None
    if api == "anthropic":
        blocks = _Blocks(Path("request"), CallIds(), ImportReport(Path("request")))
        parts = blocks.block_content(top, "$.system")
        return Message("system", tuple(parts)) if parts else None
    if api == "responses":
        text = top
        if isinstance(text, str) and text:
            return Message("system", (TextPart(text),))
        if text is not None and not isinstance(text, str):
            raise BadRequest("expected `instructions` to be a string", "$.instructions")
    return None


def _items(api: Api, body: Mapping[str, Any]) -> list[Any]:
    key = ITEMS_KEY[api]
    items = body.get(key)
    if api == "responses" and isinstance(items, str):
        return [{"type": "message", "role": "user", "content": items}]
    if not isinstance(items, list):
        raise BadRequest(f"expected `{key}` to be a list", f"$.{key}")
    return items


def _max_output(body: Mapping[str, Any]) -> int | None:
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class ConversationReader:
    """Reads the requests of one conversation, continuing from the previous request when the
    new one repeats all of its items (the usual case: the client sends the whole history
    each time, with a few items more). The messages of the items already read are the very
    objects read before, so :class:`~ctxengine.engine.stateless.PrefixCache` finds them by
    identity instead of hashing them again.

    Args:
        api: the API of the conversation's requests.
        usage_of: the provider usage recorded for an assistant message (the proxy's record
            of the upstream replies), attached to the message as its usage anchor.

    Not thread-safe: one request of a conversation at a time.
    """

    def __init__(self, api: Api, usage_of: UsageOf | None = None) -> None:
        self.api = api
        self.usage_of = usage_of
        self._items: list[Any] = []
        self._read: list[tuple[Message, Span]] = []
        self._top: Any = None
        self._top_message: Message | None = None
        self._parser: _Parser | None = None

    def _new_parser(self) -> _Parser:
        if self.api == "chat":
            return _ChatParser()
        if self.api == "anthropic":
            return _AnthropicParser()
        return _ResponsesParser()

    def read(self, body: Mapping[str, Any]) -> Conversation:
        """The conversation of one request body.

        Raises:
            BadRequest: a history field or item the readers cannot take (with its JSON path).
        """
        if not isinstance(body, Mapping):
            raise BadRequest("expected a JSON object")
        api = self.api
        raw_items = _items(api, body)
        top_raw = body.get("system" if api == "anthropic" else "instructions")
        items = [_unmarked(i) for i in raw_items] if api == "anthropic" else raw_items
        if api == "anthropic":
            top_raw = _unmarked(top_raw)
        n = len(self._items)
        resumable = (
            self._parser is not None
            and n <= len(items)
            and top_raw == self._top
            and items[:n] == self._items
        )
        try:
            if not resumable:
                self._parser = self._new_parser()
                self._read = []
                self._top = top_raw
                self._top_message = _top_level(api, top_raw)
                n = 0
            parser = self._parser
            assert parser is not None
            read = self._read
            before = len(read)
            for i in range(n, len(items)):
                parser.feed(i, items[i], read)
            if not parser.finish(read):
                self._parser = None  # an open assistant run was closed: start over next time
        except TranscriptError as exc:
            self._parser = None
            raise _fail(exc) from exc
        except BadRequest:
            self._parser = None
            raise
        for k in range(before, len(self._read)):
            msg, span = self._read[k]
            if msg.role == "assistant" and msg.usage is None and self.usage_of is not None:
                usage = self.usage_of(msg)
                if usage is not None:
                    self._read[k] = (replace(msg, usage=usage), span)
        self._items = list(items)
        messages = [m for m, _ in self._read]
        spans = [s for _, s in self._read]
        if self._top_message is not None:
            messages.insert(0, self._top_message)
            spans.insert(0, TOP_LEVEL)
        tools = body.get("tools")
        return Conversation(
            api,
            tuple(messages),
            tuple(spans),
            raw_items,
            tuple(t for t in tools if isinstance(t, Mapping)) if isinstance(tools, list) else (),
            body.get("model") if isinstance(body.get("model"), str) else None,
            _max_output(body),
            body.get("stream") is True,
        )


def stable_key(api: Api, body: Mapping[str, Any]) -> str:
    """The conversation's key when the client names none: ``"proxy-"`` and a blake2b-64 hex
    digest of the API, the top-level ``system`` / ``instructions`` and the history items up
    to the first user message (at most :data:`STABLE_ITEMS`), cache markers left out: the
    stable prefix every later request of the conversation repeats.

    Raises:
        BadRequest: the history field is not a list.
    """
    h = hashlib.blake2b(api.encode(), digest_size=8)
    top = body.get("system" if api == "anthropic" else "instructions")
    h.update(orjson.dumps(_unmarked(top)))
    for item in _items(api, body)[:STABLE_ITEMS]:
        h.update(orjson.dumps(_unmarked(item)))
        if isinstance(item, dict) and item.get("role") == "user":
            break
    return f"proxy-{h.hexdigest()}"


def _unmarked(value: Any) -> Any:
    """``value`` without Anthropic ``cache_control`` markers (in a block list or a message's
    blocks): clients move them from request to request."""
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    if isinstance(value, dict):
        if "cache_control" in value:
            value = {k: v for k, v in value.items() if k != "cache_control"}
        content = value.get("content")
        if isinstance(content, list):
            value = {**value, "content": [_unmarked(b) for b in content]}
        return value
    return value


def _same(a: Message, b: Message) -> bool:
    return a is b or a == b


def _verbatim_suffix(conversation: Conversation, context: Context) -> int:
    """Messages at the end of ``context`` that are the request's own last messages, cut back
    to start on an item boundary and not on a tool message (a tool exchange is sent whole
    from one side), never the top-level message."""
    mine, theirs = conversation.messages, context.messages
    k = 0
    while k < len(theirs) and k < len(mine):
        if conversation.spans[-1 - k] == TOP_LEVEL or not _same(theirs[-1 - k], mine[-1 - k]):
            break
        k += 1
    spans = conversation.spans
    while k > 0:
        j = len(mine) - k
        if (j == 0 or spans[j - 1][1] <= spans[j][0]) and mine[j].role != "tool":
            break
        k -= 1
    return k


def _system_block(message: Message) -> Json:
    """A system message as one text block of the top-level ``system`` field."""
    text = "\n\n".join(p.text for p in message.parts if isinstance(p, TextPart))
    return {"type": "text", "text": text}


def _content_blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _sub(messages: Sequence[Message]) -> Context:
    """A context of ``messages`` alone, for a renderer."""
    return Context(tuple(messages), (None,) * len(messages), tools=(), tokens=0)


def render_chat(messages: Sequence[Message]) -> list[Json]:
    """``messages`` as Chat Completions messages (the renderer's), without the
    ``"(continuing)"`` user message the renderer adds when they hold only system messages."""
    if not messages:
        return []
    rendered: list[Json] = render_openai(_sub(messages))["messages"]
    if all(m.role in ("system", "developer") for m in messages):
        rendered = [m for m in rendered if m["role"] in ("system", "developer")]
    return rendered


def split(conversation: Conversation, context: Context) -> tuple[list[Message], int]:
    """The context as (messages to render, the index of the first of the request's items
    sent as they are): the longest suffix of the context made of the request's own last
    messages, starting on an item boundary and not on a tool message, is sent as its items
    (``items[start:]``; ``start == len(items)`` when there is none)."""
    k = _verbatim_suffix(conversation, context)
    head = list(context.messages[: len(context.messages) - k])
    if not k:
        return head, len(conversation.items)
    return head, conversation.spans[len(conversation.messages) - k][0]


def render_responses(messages: Sequence[Message]) -> list[Json]:
    """``messages`` as Responses input items (the renderer's)."""
    if not messages:
        return []
    items: list[Json] = render_openai_responses(_sub(messages))["input"]
    return items


def forwarded_body(body: Mapping[str, Any], conversation: Conversation, context: Context) -> Json:
    """The request body to forward for ``context`` (see the module docstring): the client's
    body with its history replaced, the context's verbatim tail sent as the client's own
    items and the rest rendered."""
    api = conversation.api
    head, start = split(conversation, context)
    tail = conversation.items[start:]
    top = (
        conversation.messages[0]
        if conversation.messages and conversation.spans[0] == TOP_LEVEL
        else None
    )
    out = dict(body)
    only_system = all(m.role in ("system", "developer") for m in head)
    if api == "chat":
        out["messages"] = render_chat(head) + tail
    elif api == "responses":
        keep_top = top is not None and bool(head) and _same(head[0], top)
        if keep_top:
            head = head[1:]
        elif "instructions" in out:
            del out["instructions"]
        out["input"] = render_openai_responses(_sub(head))["input"] if head else []
        out["input"] += tail
    else:
        system = [m for m in head if m.role in ("system", "developer")]
        rendered_body = render_anthropic(_sub(head))
        if top is not None and system and _same(system[0], top):
            # The client's own system field, as sent (its blocks, cache markers and all);
            # the renderer moves a mid-conversation system message it renders there too:
            # appended to the client's blocks.
            extra = [_system_block(m) for m in system[1:]]
            if extra:
                out["system"] = _content_blocks(out.get("system")) + extra
        elif "system" in rendered_body:
            out["system"] = rendered_body["system"]
        else:
            out.pop("system", None)
        turns: list[Any] = [] if only_system else rendered_body["messages"]
        for item in tail:
            role = item.get("role") if isinstance(item, dict) else None
            if turns and isinstance(role, str) and turns[-1]["role"] == role:
                merged = _content_blocks(turns[-1]["content"]) + _content_blocks(item["content"])
                turns[-1] = {**turns[-1], "content": merged}
            else:
                turns.append(item)
        if turns and isinstance(turns[0], dict) and turns[0].get("role") == "assistant":
            continuing = [{"type": "text", "text": CONTINUING_TEXT}]
            turns.insert(0, {"role": "user", "content": continuing})
        out["messages"] = turns
    return out


def full_body(body: Mapping[str, Any], conversation: Conversation, context: Context) -> Json:
    """The request body with the whole context rendered by the provider's renderer (no item
    of the client's kept): the fallback when :func:`forwarded_body` does not validate."""
    api = conversation.api
    out = dict(body)
    if api == "chat":
        out["messages"] = render_openai(_sub(context.messages))["messages"]
    elif api == "responses":
        out.pop("instructions", None)
        out["input"] = render_openai_responses(_sub(context.messages))["input"]
    else:
        rendered = render_anthropic(_sub(context.messages))
        out["messages"] = rendered["messages"]
        if "system" in rendered:
            out["system"] = rendered["system"]
        else:
            out.pop("system", None)
    return out
