"""The requests of a replay, rendered and validated incrementally within an epoch.

Within an epoch a context only grows at its tail (DESIGN invariant 3), so the request of one
call is the request of the previous call plus the messages appended since. A
:class:`RenderedRequest` keeps, per provider, the rendered request of the previous call and,
when the new context starts with the previous one's messages, renders and validates only the
new tail: the tail alone behind a one-message stand-in for the prefix (:data:`SENTINEL`), the
problems found renumbered to the whole request's messages, and the ``tool_use`` ids of the
prefix passed on so that an id used again in the tail is still reported
(``validate(..., known_ids=...)``). Anything else — the first call, a compaction or a prune
(earlier messages change), changed tool schemas, a prefix that did not validate, a tail that
does not start with an assistant message after a user or tool message, a tail that would
merge into the prefix's last message — renders and validates the whole request once.

Why the tail alone finds exactly the whole request's problems (non-strict validation): both
renderers map messages left to right, and the only things carried from one message to the
next are the role of the previous rendered message, the calls still awaiting results, the
pending tool-result images (OpenAI) and the ids already used (Anthropic). At a clean boundary
— the previous request validated and ended with a user or tool message; the tail opens with
an assistant message — the prefix leaves no call open and no image pending, its last rendered
message has the user role exactly as the stand-in has, and the used ids are passed on. Tools
and the system prompt are checked per entry; entries the tail declares are checked with it,
the others were checked with the prefix. A tail whose problems name anything but its
messages (``tools[...]``) is validated again in full. ``tests/replay/test_render.py`` checks
the equivalence on constructed broken tails and on every corpus transcript.

With ``blocks=True`` it also keeps the request cut into cache blocks
(:class:`~ctxengine.cost.Block`): the head (Anthropic: tools, then the system prompt;
OpenAI: tools, then the leading system and developer messages) and one block per rendered
message, each with a digest of its JSON and its size in estimated tokens.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

import orjson

from ctxengine.cost import Block
from ctxengine.model import Message, TextPart, ToolCallPart
from ctxengine.projection.context import Context
from ctxengine.projection.render.registry import renderer_for
from ctxengine.projection.validate import validate
from ctxengine.tokens.base import Estimator
from ctxengine.tokens.constants import MESSAGE_OVERHEAD_TOKENS

#: Providers a replayed request is rendered and validated for (those ``validate`` checks).
VALIDATED_PROVIDERS: tuple[str, ...] = ("openai", "anthropic")
#: Their renderers (from :mod:`ctxengine.projection.render.registry`) as a replay uses them:
#: every tool the context calls is declared (a transcript rarely records the schemas, and
#: Anthropic rejects tool blocks without them). Looked up at each call, so a caller may wrap
#: them (the golden record hashes every body rendered in full).
RENDERERS: dict[str, Callable[[Context], dict[str, Any]]] = {
    name: partial(renderer_for(name), declare_tools=True) for name in VALIDATED_PROVIDERS
}
#: The user message that stands for the already validated prefix when a tail is rendered
#: alone.
SENTINEL = Message("user", (TextPart("(the validated prefix of this request)"),))
#: How a request was checked: its new tail only, in full, or not at all.
Checked = Literal["tail", "full", "none"]

_INDEX = re.compile(r"messages\[(\d+)\]")
#: Keys of rendered JSON whose strings are framing, not content the model reads as text.
_FRAMING_KEYS = frozenset(
    {"type", "role", "id", "tool_use_id", "tool_call_id", "media_type", "signature"}
)
_HEAD_ROLES = frozenset({"system", "developer"})


@dataclass(frozen=True, slots=True)
class RenderUpdate:
    """One call's request, as far as the replay needs it.

    Attributes:
        checked: ``"tail"``, ``"full"`` or ``"none"`` (not validated: ``--sample``).
        problems: the protocol violations found (empty when valid or not checked).
        blocks: the request's cache blocks, head first (empty without ``blocks=True``).
        head_blocks: how many leading blocks form the head.
        reuse: how many leading blocks are unchanged from the previous call's (known
            without comparing them: the tail was appended).
    """

    checked: Checked
    problems: list[str]
    blocks: list[Block]
    head_blocks: int
    reuse: int


@dataclass(slots=True)
class RenderedRequest:
    """The previous call's request for one provider, extended call by call.

    Args:
        provider: ``"openai"`` or ``"anthropic"`` (a key of :data:`RENDERERS`).
        estimator: sizes the cache blocks (tokens).
        blocks: keep the cache blocks.
        tools: the tool list the cache blocks' head holds (:func:`session_tools`: every tool
            the session ever calls, as an agent declares its tools from the first request
            on); ``None``: the tools each request declares (they grow as new tools are
            called, and each new one changes the head).
    """

    provider: str
    estimator: Estimator
    blocks: bool = False
    tools: Sequence[Mapping[str, Any]] | None = None
    _messages: tuple[Message, ...] = ()
    _tools_in: tuple[Mapping[str, Any], ...] = ()
    _rendered: list[dict[str, Any]] = field(default_factory=list)
    _system: list[str] = field(default_factory=list)
    _tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    _ids: set[str] = field(default_factory=set)
    _message_blocks: list[Block] = field(default_factory=list)
    _head: list[Block] = field(default_factory=list)
    _clean: bool = False
    _sentinel: dict[str, Any] | None = None

    def update(self, ctx: Context, *, check: bool = True, full: bool = False) -> RenderUpdate:
        """The request of ``ctx``, rendered (and validated when ``check``) from its new tail
        when it extends the previous call's context at a clean boundary, else in full (always
        in full with ``full``)."""
        n = len(self._messages)
        tail = ctx.messages[n:]
        if not full and self._extends(ctx, check):
            if not tail:
                reuse = len(self._head) + len(self._rendered)
                return self._result("tail" if check else "none", [], reuse)
            update = self._tail(ctx, tail, check)
            if update is not None:
                return update
        return self._full(ctx, check)

    def _extends(self, ctx: Context, check: bool) -> bool:
        """``ctx`` starts with the previous context, at a clean boundary."""
        prev = self._messages
        n = len(prev)
        if not n or (check and not self._clean) or len(ctx.messages) < n:
            return False
        if ctx.tools != self._tools_in:
            return False
        if not all(a is b or a == b for a, b in zip(prev, ctx.messages, strict=False)):
            return False
        if len(ctx.messages) == n:
            return True
        last = next((m.role for m in reversed(prev) if m.role not in _HEAD_ROLES), None)
        return last in ("user", "tool") and ctx.messages[n].role == "assistant"

    def _tail(self, ctx: Context, tail: Sequence[Message], check: bool) -> RenderUpdate | None:
        """Render (and validate) ``tail`` alone; ``None`` when it cannot stand alone."""
        window = Context(
            messages=(SENTINEL, *tail), sources=(None,) * (len(tail) + 1), tools=ctx.tools
        )
        body = RENDERERS[self.provider](window)
        rendered: list[dict[str, Any]] = body["messages"]
        if self._sentinel is None:
            self._sentinel = RENDERERS[self.provider](
                Context(messages=(SENTINEL,), sources=(None,))
            )["messages"][0]
        if not rendered or rendered[0] != self._sentinel:
            return None
        if len(rendered) > 1 and self.provider == "anthropic" and rendered[1]["role"] == "user":
            return None
        problems: list[str] = []
        if check:
            found = validate(body, self.provider, known_ids=self._ids)
            if any(not p.startswith("messages[") for p in found):
                return None
            offset = len(self._rendered) - 1
            problems = [
                _INDEX.sub(lambda m: f"messages[{int(m.group(1)) + offset}]", p) for p in found
            ]
        reuse = len(self._head) + len(self._rendered)
        new = rendered[1:]
        self._messages = ctx.messages
        self._rendered.extend(new)
        self._note_ids(new)
        head_changed = False
        system = body.get("system")
        if isinstance(system, str) and system:
            self._system.append(system)
            head_changed = True
        for tool in body.get("tools", ()):
            name = _tool_name(tool)
            if name not in self._tools:
                self._tools[name] = tool
                head_changed = head_changed or self.tools is None
        self._clean = check and not problems
        if self.blocks:
            self._message_blocks.extend(self._block(m) for m in new)
            if head_changed:
                self._head = self._head_blocks()
                reuse = 0
        return self._result("tail" if check else "none", problems, reuse)

    def _full(self, ctx: Context, check: bool) -> RenderUpdate:
        body = RENDERERS[self.provider](ctx)
        problems = validate(body, self.provider) if check else []
        self._messages = ctx.messages
        self._tools_in = ctx.tools
        self._rendered = list(body["messages"])
        system = body.get("system")
        self._system = [system] if isinstance(system, str) and system else []
        self._tools = {_tool_name(t): t for t in body.get("tools", ())}
        self._ids = set()
        self._note_ids(self._rendered)
        self._clean = check and not problems
        if self.blocks:
            self._message_blocks = [self._block(m) for m in self._rendered]
            self._head = self._head_blocks()
        return self._result("full" if check else "none", problems, 0)

    def _result(self, checked: Checked, problems: list[str], reuse: int) -> RenderUpdate:
        if not self.blocks:
            return RenderUpdate(checked, problems, [], 0, 0)
        head = len(self._head)
        if self.provider == "openai":
            head += self._leading_head_messages()
        return RenderUpdate(checked, problems, [*self._head, *self._message_blocks], head, reuse)

    def body(self) -> dict[str, Any]:
        """The whole request as the renderer would write it for the latest context (the
        tail renderings joined to the prefix's)."""
        out: dict[str, Any] = {}
        if self._system:
            out["system"] = "\n\n".join(self._system)
        out["messages"] = list(self._rendered)
        if self._tools:
            out["tools"] = list(self._tools.values())
        return out

    def _note_ids(self, rendered: Sequence[Mapping[str, Any]]) -> None:
        """Remember the tool-call ids of ``rendered`` messages (Anthropic ``tool_use``)."""
        if self.provider != "anthropic":
            return
        for message in rendered:
            if message.get("role") != "assistant":
                continue
            for block in message.get("content") or ():
                if isinstance(block, Mapping) and block.get("type") == "tool_use":
                    uid = block.get("id")
                    if isinstance(uid, str):
                        self._ids.add(uid)

    def _leading_head_messages(self) -> int:
        count = 0
        for message in self._rendered:
            if message.get("role") not in _HEAD_ROLES:
                break
            count += 1
        return count

    def _head_blocks(self) -> list[Block]:
        """Tools, then (Anthropic) the system prompt."""
        tools = list(self._tools.values()) if self.tools is None else list(self.tools)
        key = hash(orjson.dumps(tools, option=orjson.OPT_SORT_KEYS))
        head = [Block(key, self.estimator.tools(tools))]
        if self.provider == "anthropic":
            system = "\n\n".join(self._system)
            head.append(Block(hash(system), self.estimator.text(system)))
        return head

    def _block(self, message: Mapping[str, Any]) -> Block:
        """One rendered message as a cache block: the hash of its JSON, and its tokens."""
        key = hash(orjson.dumps(message, option=orjson.OPT_SORT_KEYS))
        return Block(key, MESSAGE_OVERHEAD_TOKENS + self._tokens(message))

    def _tokens(self, value: Any) -> int:
        """Estimated tokens of the text a rendered value carries: its strings (framing keys
        such as ``type``, ``id`` and ``role`` left out), a tool call's input as JSON."""
        if isinstance(value, str):
            return self.estimator.text(value)
        if isinstance(value, Mapping):
            total = 0
            for key, item in value.items():
                if key in _FRAMING_KEYS and isinstance(item, str):
                    continue
                if key == "input" and isinstance(item, Mapping):
                    total += self.estimator.text(orjson.dumps(item).decode())
                else:
                    total += self._tokens(item)
            return total
        if isinstance(value, list):
            return sum(self._tokens(item) for item in value)
        return 0


def session_tools(
    messages: Iterable[Message], provider: str, schemas: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, Any]]:
    """The tools a request for ``provider`` declares when it holds every call of
    ``messages``: ``schemas``, then each tool called, in order of first call, as the replay's
    renderer declares them."""
    names = dict.fromkeys(c.name for m in messages if m.role == "assistant" for c in m.tool_calls)
    calls = tuple(ToolCallPart(f"call_{i}", name, "{}") for i, name in enumerate(names))
    probe = Context(
        messages=(SENTINEL, Message("assistant", calls)) if calls else (SENTINEL,),
        sources=(None, None) if calls else (None,),
        tools=tuple(schemas),
    )
    tools: list[dict[str, Any]] = RENDERERS[provider](probe).get("tools", [])
    return tools


def _tool_name(tool: Mapping[str, Any]) -> str:
    """The declared name of a rendered tool (OpenAI ``function.name`` or Anthropic
    ``name``)."""
    function = tool.get("function")
    if isinstance(function, Mapping):
        return str(function.get("name", ""))
    return str(tool.get("name", ""))
