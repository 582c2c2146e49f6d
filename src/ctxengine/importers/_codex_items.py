"""Codex (OpenAI Responses API) rollout items to message parts.

Calls: ``function_call`` (arguments verbatim; ``null`` or missing arguments are ``{}``,
repaired), ``custom_tool_call`` (a freeform tool such as ``apply_patch``: the raw ``input``
text is carried as the JSON arguments ``{"input": <text>}``, the shape of Codex's JSON
``apply_patch`` tool, with ``meta["freeform"]``), ``local_shell_call`` (``local_shell`` with
the action as arguments), client-run ``tool_search_call`` (``tool_search``) and the
``tool_call`` / ``tool_result`` pair of older format samples (``function.name``, an
``arguments`` object, a ``result`` object given as JSON text, no ids). A call
without ``call_id`` gets ``"call_gen_<line>"`` (repaired); an output whose ``call_id`` names
no call answers the oldest unanswered call of those (repaired: Codex answers calls in order),
and an output without ``call_id`` the oldest unanswered call (repaired).

Outputs: ``output`` text, the 0.3x ``{"content", "success"}`` object, or (structured,
repaired) a list of content items or a single content object ``{"type": "input_text", …}``;
content items become text and image parts. ``tool_search_output`` gives the tools found as
JSON text.

Provider-side items answered by the provider itself become parts of the assistant message:
``web_search_call`` a text part ``[provider-side tool call] web_search({…})`` (the item in
``meta["provider_item"]``), ``image_generation_call`` an image part (its base64 ``result``),
an encrypted ``compaction`` item a native-compaction part.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson

from ctxengine.importers._build import CallIds
from ctxengine.importers._calls import arguments_text, json_text
from ctxengine.importers._images import image_from_base64, image_from_url
from ctxengine.importers._parts import SYNTHETIC, opt_dict, opt_str
from ctxengine.importers.report import ImportReport
from ctxengine.model import (
    ImagePart,
    Message,
    NativeCompactionPart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ctxengine.model.codec import canonical_json

#: Opening tags of user-role messages that Codex writes itself.
_SYNTHETIC_TAGS = ("environment_context", "user_instructions", "user_shell_command", "turn_aborted")
_AGENTS_MD = "# AGENTS.md instructions"
_EXIT_HEADER = re.compile(r"\AExit code: (-?\d+)")
#: How a 0.3x JSON output whose command exited with 0 ends, as Codex writes it. Such a text
#: is no failure whether it is JSON or not: if it is, the ``metadata`` that ends it is the
#: last member of the top-level object (it holds no braces, and only the top-level object
#: closes at the end of the text), so its ``exit_code`` 0 is the one read (the last of
#: duplicate keys counts); if it is not, it opens with ``{``, which no failure does.
_EXIT_ZERO_END = re.compile(r'[{,]"metadata":\{"exit_code":0,"duration_seconds":[0-9.eE+-]+\}\}\Z')
#: Output prefixes of tool failures reported as plain text (sandbox denials, patch errors).
_FAILURE_PREFIXES = ("failed in sandbox", "error:", "execution error:")
#: Characters of an output's head compared with :data:`_FAILURE_PREFIXES` (one more than the
#: longest, so that lowering a cut head never differs from lowering the whole text there).
_FAILURE_HEAD = max(map(len, _FAILURE_PREFIXES)) + 1
_TEXT_ITEMS = frozenset({"input_text", "output_text", "text", "refusal"})
#: Key of the part meta holding a provider-side item.
PROVIDER_ITEM = "provider_item"

Content = TextPart | ImagePart


def tool_output_is_error(text: str) -> bool:
    """True when a Codex tool output reports failure: JSON ``metadata.exit_code`` ≠ 0 (0.3x),
    an ``Exit code: N`` header with N ≠ 0 (later versions), or a sandbox / patch failure."""
    starts_json = text.startswith("{")
    # the usual success, told first and without parsing the whole output (a match holds
    # ``"exit_code"`` in the last 120 characters, so the search below would find it too)
    if (
        starts_json
        and text.endswith("}}")
        and _EXIT_ZERO_END.search(text, max(0, len(text) - 120)) is not None
    ):
        return False
    if starts_json and text.find('"exit_code"', len(text) - 400) >= 0:
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError:
            data = None
        if isinstance(data, dict):
            code = opt_dict(data, "metadata").get("exit_code")
            return isinstance(code, int) and code != 0
    match = _EXIT_HEADER.match(text)
    if match:
        return int(match.group(1)) != 0
    # only the head is lowered: a prefix of the lowered text is the lowered prefix
    return text.lstrip()[:_FAILURE_HEAD].lower().startswith(_FAILURE_PREFIXES)


class Items:
    """Converts the response items of one rollout, counting what it skips and repairs."""

    def __init__(self, path: Path, calls: CallIds, report: ImportReport) -> None:
        self.path = path
        self.calls = calls
        self.report = report
        self.names: dict[str, str] = {}
        #: ``(source id, unique id)`` of every call, in order, and the answered unique ids.
        self.order: list[tuple[str, str]] = []
        self.answered: set[str] = set()
        #: source ids generated for calls without ``call_id``.
        self.generated: set[str] = set()

    def content(self, line: int, content: Any, what: str) -> list[Content] | None:
        """Content items as parts; ``None`` (skipped) when ``content`` is not a list or a
        string."""
        if isinstance(content, str):
            return [TextPart(content)]
        if not isinstance(content, list):
            self.report.skip(
                f"{what} without content", f"expected a `content` list on a {what}", line=line
            )
            return None
        parts: list[Content] = []
        for item in content:
            part = self._content_item(line, item)
            if part is not None:
                parts.append(part)
        return parts

    def _content_item(self, line: int, item: Any) -> Content | None:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind in _TEXT_ITEMS:
            assert isinstance(item, dict)
            text = item.get("text", item.get("refusal"))
            if isinstance(text, str):
                return TextPart(text, meta={"refusal": True} if kind == "refusal" else {})
            self.report.skip(
                f"{kind} without text", f"expected a string `text` on a {kind} item", line=line
            )
            return None
        if kind == "input_image":
            assert isinstance(item, dict)
            url = item.get("image_url")
            if isinstance(url, str):
                return image_from_url(url)
            self.report.skip(
                "input_image without image_url",
                "expected a string `image_url` on an input_image item",
                line=line,
            )
            return None
        self.report.skip(
            f"content:{kind}" if isinstance(kind, str) else "malformed content item",
            f"expected a text or image content item, got {kind!r}",
            line=line,
        )
        return None

    def message(self, line: int, payload: dict[str, Any]) -> Message | None:
        """A user, developer or system ``message`` item; ``None`` (skipped) for another
        role or no content."""
        role = payload.get("role")
        if role not in ("user", "developer", "system"):
            self.report.skip(
                f"message role {role}" if isinstance(role, str) else "message without role",
                "expected `role` user, assistant, developer or system",
                line=line,
            )
            return None
        parts = self.content(line, payload.get("content"), "message item")
        if parts is None:
            return None
        meta: dict[str, Any] = {}
        first = parts[0].text.lstrip() if parts and isinstance(parts[0], TextPart) else ""
        for tag in _SYNTHETIC_TAGS:
            if first.startswith(f"<{tag}>"):
                meta[SYNTHETIC] = tag
        if first.startswith(_AGENTS_MD):
            meta[SYNTHETIC] = "user_instructions"
        return Message(role, tuple(parts), meta=meta)

    def assistant(
        self, line: int, payload: dict[str, Any], parts: list[Part], meta: dict[str, Any]
    ) -> None:
        """Append the parts of one assistant-side item to the open response."""
        kind = payload["type"]
        if kind == "message":
            found = self.content(line, payload.get("content"), "message item")
            parts.extend(found or ())
        elif kind == "reasoning":
            parts.append(self._reasoning(payload))
        elif kind == "web_search_call" or (kind == "tool_search_call" and not _call_id(payload)):
            parts.append(_provider_text(payload))
        elif kind == "image_generation_call":
            part = self._image(line, payload)
            if part is not None:
                parts.append(part)
        elif kind == "compaction":
            parts.append(NativeCompactionPart("openai", canonical_json(payload).decode()))
        else:
            call = self._call(line, kind, payload)
            if call is not None:
                parts.append(call)

    def _reasoning(self, payload: dict[str, Any]) -> ReasoningPart:
        texts = [
            s["text"]
            for s in payload.get("summary") or ()
            if isinstance(s, dict) and isinstance(s.get("text"), str)
        ]
        raw = [
            c["text"]
            for c in payload.get("content") or ()
            if isinstance(c, dict) and isinstance(c.get("text"), str)
        ]
        meta: dict[str, str] = {"provider": "openai"}
        if raw:
            meta["content"] = "\n\n".join(raw)
        signature = opt_str(payload, "encrypted_content") or None
        return ReasoningPart("\n\n".join(texts), signature=signature, meta=meta)

    def _image(self, line: int, payload: dict[str, Any]) -> ImagePart | None:
        result = payload.get("result")
        if not isinstance(result, str) or not result:
            self.report.ignore("image_generation_call without result", line=line)
            return None
        meta = {k: payload[k] for k in ("id", "revised_prompt") if isinstance(payload.get(k), str)}
        meta[PROVIDER_ITEM] = "image_generation_call"
        return image_from_base64(None, result, meta)

    def _call(self, line: int, kind: str, payload: dict[str, Any]) -> ToolCallPart | None:
        source_id = _call_id(payload)
        meta: dict[str, Any] = {}
        arguments: Any
        if kind == "function_call":
            name = opt_str(payload, "name")
            arguments = payload.get("arguments")
            if arguments is None:
                self.report.repair(
                    "null arguments",
                    "expected `arguments` (a JSON string) on a function_call item",
                    line=line,
                )
                arguments = "{}"
        elif kind == "custom_tool_call":
            name, raw = opt_str(payload, "name"), payload.get("input")
            arguments = {"input": raw} if isinstance(raw, str) else raw
            meta["freeform"] = True
        elif kind == "tool_search_call":
            name = "tool_search"
            arguments = payload.get("arguments", {})
        elif kind == "tool_call":
            fn = opt_dict(payload, "function")
            name = opt_str(payload, "name") or opt_str(fn, "name")
            arguments = payload.get("arguments", fn.get("arguments", {}))
        else:
            name, arguments = "local_shell", opt_dict(payload, "action")
        if name is None or arguments is None:
            self.report.skip(
                f"{kind} without name",
                f"expected `name` and arguments on a {kind} item",
                line=line,
            )
            return None
        if source_id is None:
            self.report.repair(
                f"{kind} without call_id",
                f"expected a string `call_id` on a {kind} item",
                line=line,
            )
            source_id = f"call_gen_{line}"
            self.generated.add(source_id)
        unique = self.calls.call(source_id)
        self.order.append((source_id, unique))
        self.names[unique] = name
        text = arguments_text(arguments, self.report, "arguments", line=line)
        return ToolCallPart(unique, name, text, meta=meta)

    def output(self, line: int, payload: dict[str, Any]) -> Message | None:
        """A ``function_call_output`` / ``custom_tool_call_output`` / ``tool_search_output``
        item as a tool message; ``None`` (skipped) when it holds no output."""
        kind = payload["type"]
        source_id = payload.get("call_id")
        out = payload.get("output")
        # the usual output, text answering a known call: what the general path below gives
        if (
            type(out) is str
            and kind == "function_call_output"
            and type(source_id) is str
            and self.calls.known(source_id)
        ):
            call = self.calls.result(source_id)
            self.answered.add(call)
            answer = ToolResultPart(
                call,
                (TextPart(out),),
                is_error=tool_output_is_error(out),
                name=self.names.get(call),
            )
            return Message("tool", (answer,))
        unique = self._answer(line, kind, source_id if isinstance(source_id, str) else None)
        if unique is None:
            return None
        if kind == "tool_search_output":
            tools = payload.get("tools", payload.get("output"))
            parts: list[Content] | None = [TextPart(json_text(tools if tools is not None else []))]
        elif kind == "tool_result":
            out = payload.get("result", payload.get("output"))
            parts = [TextPart(json_text(out if out is not None else ""))]
        else:
            parts = self._output_parts(line, out)
        if parts is None:
            return None
        if len(parts) == 1 and type(parts[0]) is TextPart:
            text = parts[0].text  # the usual single text, not copied by a join
        else:
            text = "\n".join(p.text for p in parts if isinstance(p, TextPart))
        result = ToolResultPart(
            unique, tuple(parts), is_error=tool_output_is_error(text), name=self.names.get(unique)
        )
        return Message("tool", (result,))

    def _answer(self, line: int, kind: str, source_id: str | None) -> str | None:
        """The unique id of the call an output answers: by ``call_id``; an output whose
        ``call_id`` names no call answers the oldest unanswered call that had no
        ``call_id`` (its id generated; repaired, ``"<kind> paired by order"``); an output
        without ``call_id`` answers the oldest unanswered call (repaired). ``None``
        (skipped) when there is none."""
        if source_id is not None and not self.calls.known(source_id):
            generated = next(
                ((s, u) for s, u in self.order if u not in self.answered and s in self.generated),
                None,
            )
            if generated is not None:
                self.report.repair(
                    f"{kind} paired by order",
                    f"expected the `call_id` of a {kind} item ({source_id!r}) to name a call",
                    line=line,
                )
                source, unique = generated
                self.calls.answer(source, unique)
                self.answered.add(unique)
                return unique
        if source_id is not None:
            unique = self.calls.result(source_id)
        else:
            pending = next(((s, u) for s, u in self.order if u not in self.answered), None)
            if pending is None:
                self.report.skip(
                    f"{kind} without a call",
                    f"expected a string `call_id` on a {kind} item",
                    line=line,
                )
                return None
            self.report.repair(
                f"{kind} without call_id", f"expected a string `call_id` on a {kind} item",
                line=line,
            )  # fmt: skip
            source_id, unique = pending
            self.calls.answer(source_id, unique)
        self.answered.add(unique)
        return unique

    def _output_parts(self, line: int, out: Any) -> list[Content] | None:
        if isinstance(out, dict) and isinstance(out.get("type"), str):
            self.report.repair(
                "structured tool output",
                "expected `output` text or a list of content items on a tool output item, "
                f"got one content object of type {out['type']!r}",
                line=line,
            )
            out = [out]
        elif isinstance(out, dict):
            out = out.get("content", out.get("output"))
        elif isinstance(out, list):
            self.report.repair(
                "structured tool output",
                "expected `output` text on a tool output item, got a list of "
                f"{len(out)} content item{'s' if len(out) != 1 else ''}",
                line=line,
            )
        if isinstance(out, str):
            return [TextPart(out)]
        if isinstance(out, list):
            return [p for p in (self._content_item(line, i) for i in out) if p is not None]
        self.report.skip(
            "tool output without output",
            "expected `output` text on a tool output item",
            line=line,
        )
        return None


#: Call items whose item ``id`` is their call id when ``call_id`` is absent: Codex answers a
#: ``local_shell_call`` without ``call_id`` under its ``id`` (``call_id`` is optional there),
#: and the older ``tool_call`` samples have only an ``id``. A ``function_call`` or
#: ``custom_tool_call`` always has ``call_id``; its ``id`` (``fc_…``) is the Responses item
#: id, which no output names.
_ID_IS_CALL_ID = frozenset({"local_shell_call", "tool_call"})


def _call_id(payload: dict[str, Any]) -> str | None:
    """The call id of a call item: ``call_id``, else the item ``id`` for the kinds in
    :data:`_ID_IS_CALL_ID`; ``None`` otherwise (a provider-run tool search has none)."""
    found = opt_str(payload, "call_id")
    if found is None and payload.get("type") in _ID_IS_CALL_ID:
        found = opt_str(payload, "id")
    return found


def _provider_text(payload: dict[str, Any]) -> TextPart:
    """A provider-side call (web search, server-run tool search) as a text part."""
    kind = str(payload.get("type", "")).removesuffix("_call")
    action = payload.get("action", payload.get("arguments", {}))
    args = json.dumps(action, ensure_ascii=False, sort_keys=True)
    return TextPart(f"[provider-side tool call] {kind}({args})", meta={PROVIDER_ITEM: payload})
