"""OpenHands events to messages, following what OpenHands' ``ConversationMemory`` sends to
the model.

An event is an action (``action``) or an observation (``observation``); its arguments are in
``args`` (actions) and ``content`` / ``extras`` (observations), or, in older event streams
without ``source`` and ``id``, directly on the event.

* ``system`` action → a system message (a later run's identical system prompt is ignored).
* ``message`` action → a user message (``source: user``, images from ``image_urls``) or an
  assistant text (``source: agent``).
* An action with ``tool_call_metadata`` (function calling): its ``model_response`` (a
  litellm chat completion) gives one assistant message, emitted once per response id: the
  response text, reasoning (``reasoning_content`` / ``thinking_blocks``) and all its
  ``tool_calls``; usage (``prompt_tokens`` less cached and cache-creation tokens) and model
  with it. Without ``model_response`` the message is the action's ``thought`` and one call
  named ``function_name`` with the action's arguments. A ``finish`` action is sent as the
  assistant text of its ``thought`` (and ``final_thought``) without its call, as OpenHands
  does.
* An agent action without ``tool_call_metadata`` (event streams of agents that write
  actions as text) → an assistant message with its ``thought`` and one call (id
  ``"event-<id>"``): ``run`` → ``execute_bash {command}``, ``run_ipython`` →
  ``execute_ipython_cell {code}``, other kinds → the kind with the action's arguments.
* An observation with ``tool_call_metadata`` → a ``tool`` result for ``tool_call_id``; one
  without it answers its ``cause`` (the action's id), else the oldest unanswered call.
  ``is_error``: an ``error`` observation, a non-zero ``exit_code``, or content starting with
  ``ERROR:``. An ``error`` observation that answers nothing becomes a user message marked
  ``meta["synthetic"] = "observation:error"``.
* ``condensation`` action → a :class:`CompactionRecord` (its ``summary``; ``first_kept_id``
  is the first message after the forgotten events); ``condense`` observation → a user
  message marked ``meta["synthetic"] = "condensation"``.
* ``recall``, ``change_agent_state``, ``condensation_request`` actions and
  ``agent_state_changed``, ``null``, ``recall`` observations are not sent as messages:
  ignored.

Tolerated drift (counted, refused in strict mode): a ``tool_call_metadata`` or tool call
without an id (generated, paired by order: repaired), ``null`` arguments (repaired), an
observation whose content is not a string (structured output: repaired into parts or JSON
text), an unknown action or observation kind and an event that is not an object (skipped).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxengine.importers._build import CallIds
from ctxengine.importers._calls import arguments_text, json_text
from ctxengine.importers._chat import FINISH_REASONS
from ctxengine.importers._images import image_from_url
from ctxengine.importers._parts import SYNTHETIC, opt_dict, opt_int, opt_str
from ctxengine.importers.report import ImportReport
from ctxengine.model import (
    CompactionRecord,
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)

Where = Mapping[str, Any]
Body = Message | CompactionRecord

#: Keys of an event that are not arguments (for events without ``args`` / ``extras``).
_ENVELOPE = frozenset(
    {"id", "timestamp", "source", "message", "action", "observation", "cause", "content",
     "tool_call_metadata", "llm_metrics", "timeout", "hidden"}
)  # fmt: skip
#: Action arguments that are bookkeeping, not function arguments.
_NOT_ARGS = frozenset(
    {"thought", "impl_source", "translated_ipython_code", "is_confirmed", "action_risk",
     "confirmation_state", "security_risk", "keep_prompt", "hidden", "blocking"}
)  # fmt: skip
#: Actions and observations that never reach the model.
IGNORED_ACTIONS = frozenset({"recall", "change_agent_state", "condensation_request"})
IGNORED_OBSERVATIONS = frozenset({"agent_state_changed", "null", "recall"})
#: Actions the agent runs as tools.
TOOL_ACTIONS = frozenset(
    {"run", "run_ipython", "read", "write", "edit", "browse", "browse_interactive", "think",
     "delegate", "mcp", "task_tracking", "finish", "reject", "call_tool_mcp", "loop_recovery"}
)  # fmt: skip
TOOL_OBSERVATIONS = frozenset(
    {"run", "run_ipython", "read", "write", "edit", "browse", "think", "delegate", "mcp",
     "task_tracking", "error", "user_rejected", "download", "file_download", "loop_recovery"}
)  # fmt: skip
#: Function names of text actions.
_TEXT_CALLS = {"run": ("execute_bash", "command"), "run_ipython": ("execute_ipython_cell", "code")}


@dataclass
class Event:
    """One event with its location, the run it belongs to and ``key``, the 16-byte digest
    of its source that the ids of the entries made from it are hashed from (``None``: hash
    the entries' bodies)."""

    data: dict[str, Any]
    where: Where
    run: str | None = None
    key: bytes | None = None


def _args(ev: dict[str, Any], key: str) -> dict[str, Any]:
    found = ev.get(key)
    if isinstance(found, dict):
        return found
    return {k: v for k, v in ev.items() if k not in _ENVELOPE}


def usage_of(raw: Any) -> Usage | None:
    """litellm usage as :class:`Usage`: ``prompt_tokens`` includes cached tokens
    (``prompt_tokens_details.cached_tokens`` or Anthropic ``cache_read_input_tokens``) and
    cache writes (``cache_creation_input_tokens``), which are split out."""
    if not isinstance(raw, dict) or not isinstance(raw.get("prompt_tokens"), int):
        return None
    details = opt_dict(raw, "prompt_tokens_details")
    cached = opt_int(details, "cached_tokens") or opt_int(raw, "cache_read_input_tokens")
    written = opt_int(raw, "cache_creation_input_tokens")
    return Usage(
        input_tokens=max(0, raw["prompt_tokens"] - cached - written),
        output_tokens=opt_int(raw, "completion_tokens"),
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )


class EventReader:
    """Converts the events of one file, in order, into log bodies."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        self.calls = CallIds()
        #: ``(body, created_at, meta, key of the event it was made from)`` in log order.
        self.bodies: list[tuple[Body, str | None, dict[str, Any], bytes | None]] = []
        #: key of the event being read.
        self.key: bytes | None = None
        #: ``(unique call id, source id or None, event id)`` of unanswered calls, in order.
        self.open: list[tuple[str, str | None, Any]] = []
        self.names: dict[str, str] = {}
        self.responses: set[str] = set()
        self.system: str | None = None
        self.generated = 0
        self.model: str | None = None
        #: event id → index in :attr:`bodies` of the first body made after it.
        self.after: dict[Any, int] = {}
        self.runs: list[str] = []

    # -- entry point ----------------------------------------------------------------------

    def event(self, item: Event) -> None:
        """Take one event."""
        ev, where = item.data, item.where
        self.key = item.key
        if not isinstance(ev, dict):
            self.report.skip("malformed event", "expected an event object", **where)
            return
        if item.run is not None and item.run not in self.runs:
            self.runs.append(item.run)
        if isinstance(ev.get("id"), int | str) and ev["id"] not in self.after:
            self.after[ev["id"]] = len(self.bodies)
        created = opt_str(ev, "timestamp")
        meta = {"run": item.run} if item.run is not None else {}
        action, observation = ev.get("action"), ev.get("observation")
        if isinstance(action, str):
            self._action(ev, action, where, created, meta)
        elif isinstance(observation, str):
            self._observation(ev, observation, where, created, meta)
        else:
            self.report.skip(
                "event without kind",
                "expected an event with a string `action` or `observation`",
                **where,
            )

    def _add(self, body: Body, created: str | None, meta: dict[str, Any]) -> None:
        self.bodies.append((body, created, meta, self.key))

    # -- actions --------------------------------------------------------------------------

    def _action(
        self, ev: dict[str, Any], kind: str, where: Where, created: str | None, meta: dict[str, Any]
    ) -> None:
        args = _args(ev, "args")
        source = opt_str(ev, "source")
        if kind == "system":
            text = opt_str(args, "content") or opt_str(ev, "message") or ""
            if self.system == text:
                self.report.ignore("repeated system prompt", **where)
                return
            self.system = self.system or text
            self._add(Message("system", (TextPart(text),)), created, meta)
        elif kind == "message":
            self._message(ev, args, source, created, meta)
        elif kind == "condensation":
            self._condensation(args, created, meta)
        elif kind in IGNORED_ACTIONS:
            self.report.ignore(f"action:{kind}", **where)
        elif isinstance(ev.get("tool_call_metadata"), dict):
            self._called(ev, kind, args, where, created, meta)
        elif kind in TOOL_ACTIONS and source != "user":
            self._text_action(ev, kind, args, created, meta)
        elif kind == "run" and source == "user":
            text = f"User executed the command:\n{opt_str(args, 'command') or ''}"
            self._add(
                Message("user", (TextPart(text),), meta={SYNTHETIC: "user_command"}), created, meta
            )
        else:
            self.report.skip(
                f"action:{kind}", f"expected a known OpenHands action, got {kind!r}", **where
            )

    def _message(
        self,
        ev: dict[str, Any],
        args: dict[str, Any],
        source: str | None,
        created: str | None,
        meta: dict[str, Any],
    ) -> None:
        text = args.get("content", ev.get("content"))
        if not isinstance(text, str):
            text = opt_str(ev, "message") or ""
        parts: list[Part] = [TextPart(text)]
        urls = args.get("image_urls", args.get("images_urls"))
        for url in urls if isinstance(urls, list) else ():
            if isinstance(url, str):
                parts.append(image_from_url(url))
        role = "assistant" if source == "agent" else "user"
        stop = {"stop_reason": "stop"} if role == "assistant" else {}
        self._add(Message(role, tuple(parts), **stop), created, meta)  # type: ignore[arg-type]

    def _condensation(
        self, args: dict[str, Any], created: str | None, meta: dict[str, Any]
    ) -> None:
        forgotten = args.get("forgotten_event_ids")
        ids = [i for i in forgotten if isinstance(i, int)] if isinstance(forgotten, list) else []
        end = args.get("forgotten_events_end_id")
        last = max(ids) if ids else end if isinstance(end, int) else None
        first_kept = None
        if last is not None:
            later = sorted(k for k in self.after if isinstance(k, int) and k > last)
            index = self.after[later[0]] if later else None
            first_kept = index if index is not None and index < len(self.bodies) else None
        summary = opt_str(args, "summary") or ""
        record = CompactionRecord(
            summary=summary,
            first_kept_id=None,
            tokens_before=0,
            tokens_after=0,
            policy="openhands",
            summarizer="imported",
            reason="imported",
        )
        extra = dict(meta)
        if first_kept is not None:
            extra["first_kept_index"] = first_kept
        self._add(record, created, extra)

    def _called(
        self,
        ev: dict[str, Any],
        kind: str,
        args: dict[str, Any],
        where: Where,
        created: str | None,
        meta: dict[str, Any],
    ) -> None:
        tcm = ev["tool_call_metadata"]
        call_id = opt_str(tcm, "tool_call_id")
        response = opt_dict(tcm, "model_response")
        if kind == "finish":
            thought = opt_str(args, "thought") or ""
            final = opt_str(args, "final_thought") or ""
            content = _response_text(response)
            text = "\n".join(t for t in (thought, final) if t)
            if content and content != text:
                text = f"{text}\n{content}" if text else content
            self._add(
                Message("assistant", (TextPart(text),), stop_reason="stop", model=self.model),
                created,
                meta,
            )
            return
        rid = opt_str(response, "id")
        if rid and rid in self.responses:
            return
        if rid:
            self.responses.add(rid)
        choices = response.get("choices")
        message = (
            choices[0].get("message")
            if isinstance(choices, list) and choices and isinstance(choices[0], dict)
            else None
        )
        if isinstance(message, dict):
            self._response(response, message, where, created, meta, ev)
            return
        name = opt_str(tcm, "function_name") or kind
        arguments = {k: v for k, v in args.items() if k not in _NOT_ARGS}
        call = self._new_call(call_id, name, arguments, where, ev.get("id"))
        parts: list[Part] = []
        said = opt_str(args, "thought")
        if said:
            parts.append(TextPart(said))
        parts.append(call)
        self._add(Message("assistant", tuple(parts), stop_reason="tool_use"), created, meta)

    def _response(
        self,
        response: dict[str, Any],
        message: dict[str, Any],
        where: Where,
        created: str | None,
        meta: dict[str, Any],
        ev: dict[str, Any],
    ) -> None:
        parts: list[Part] = _reasoning(message)
        text = message.get("content")
        if isinstance(text, str) and text:
            parts.append(TextPart(text))
        calls = message.get("tool_calls")
        for tc in calls if isinstance(calls, list) else ():
            fn = tc.get("function") if isinstance(tc, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                self.report.skip(
                    "malformed tool call",
                    "expected a tool call with a `function` object holding a `name`",
                    **where,
                )
                continue
            args = fn.get("arguments")
            if args is None:
                self.report.repair(
                    "null arguments", "expected tool-call arguments, got null", **where
                )
                args = "{}"
            parts.append(self._new_call(tc.get("id"), fn["name"], args, where, ev.get("id")))
        model = opt_str(response, "model")
        self.model = model or self.model
        choice = response["choices"][0]
        finish = opt_str(choice, "finish_reason")
        has_calls = any(isinstance(p, ToolCallPart) for p in parts)
        stop = "tool_use" if has_calls else FINISH_REASONS.get(finish or "", finish)
        msg = Message(
            "assistant",
            tuple(parts),
            usage=usage_of(response.get("usage")),
            model=model,
            stop_reason=stop,
            meta={"response_id": response["id"]} if isinstance(response.get("id"), str) else {},
        )
        self._add(msg, created, meta)

    def _new_call(
        self, source: Any, name: str, args: Any, where: Where, event_id: Any
    ) -> ToolCallPart:
        if not isinstance(source, str) or not source:
            self.report.repair(
                "tool call without id", "expected a string `tool_call_id` on a tool call", **where
            )
            self.generated += 1
            source_id: str | None = None
            unique = self.calls.call(f"call_gen_{self.generated}")
        else:
            source_id = source
            unique = self.calls.call(source)
        self.open.append((unique, source_id, event_id))
        self.names[unique] = name
        return ToolCallPart(
            unique, name, arguments_text(args, self.report, "function.arguments", **where)
        )

    def _text_action(
        self,
        ev: dict[str, Any],
        kind: str,
        args: dict[str, Any],
        created: str | None,
        meta: dict[str, Any],
    ) -> None:
        name, key = _TEXT_CALLS.get(kind, (kind, ""))
        if key:
            arguments: dict[str, Any] = {key: args.get(key, "")}
        else:
            arguments = {k: v for k, v in args.items() if k not in _NOT_ARGS}
        parts: list[Part] = []
        thought = opt_str(args, "thought")
        if thought:
            parts.append(TextPart(thought))
        if kind == "finish":
            text = "\n".join(t for t in (thought or "", opt_str(args, "final_thought") or "") if t)
            self._add(Message("assistant", (TextPart(text),), stop_reason="stop"), created, meta)
            return
        event_id = ev.get("id", len(self.bodies))
        unique = self.calls.call(f"event-{event_id}")
        self.open.append((unique, None, ev.get("id")))
        self.names[unique] = name
        parts.append(ToolCallPart(unique, name, json_text(arguments)))
        self._add(Message("assistant", tuple(parts), stop_reason="tool_use"), created, meta)

    # -- observations ---------------------------------------------------------------------

    def _observation(
        self, ev: dict[str, Any], kind: str, where: Where, created: str | None, meta: dict[str, Any]
    ) -> None:
        if kind in IGNORED_OBSERVATIONS:
            self.report.ignore(f"observation:{kind}", **where)
            return
        if kind == "condense":
            text = _plain(ev.get("content")) or opt_str(ev, "message") or ""
            self._add(
                Message("user", (TextPart(text),), meta={SYNTHETIC: "condensation"}), created, meta
            )
            return
        if kind not in TOOL_OBSERVATIONS:
            self.report.skip(
                f"observation:{kind}",
                f"expected a known OpenHands observation, got {kind!r}",
                **where,
            )
            return
        content = self._content(ev, where)
        unique = self._answer(ev, where)
        if unique is None:
            text = "\n".join(p.text for p in content if isinstance(p, TextPart))
            self._add(
                Message("user", (TextPart(text),), meta={SYNTHETIC: f"observation:{kind}"}),
                created,
                meta,
            )
            return
        extras = _args(ev, "extras")
        code = opt_dict(extras, "metadata").get("exit_code", extras.get("exit_code"))
        first = content[0].text if content and isinstance(content[0], TextPart) else ""
        failed = (
            kind == "error"
            or (isinstance(code, int) and code not in (0, -1))
            or first.startswith("ERROR:")
        )
        result = ToolResultPart(
            unique, tuple(content), is_error=failed, name=self.names.get(unique)
        )
        self._add(Message("tool", (result,)), created, meta)

    def _content(self, ev: dict[str, Any], where: Where) -> list[TextPart | ImagePart]:
        raw = ev.get("content")
        if isinstance(raw, str):
            return [TextPart(raw)]
        if raw is None:
            return [TextPart(opt_str(ev, "message") or "")]
        self.report.repair(
            "structured observation content",
            f"expected observation `content` to be a string, got {type(raw).__name__}",
            **where,
        )
        if isinstance(raw, list):
            found: list[TextPart | ImagePart] = []
            for item in raw:
                if isinstance(item, dict) and isinstance(item.get("text"), str):
                    found.append(TextPart(item["text"]))
                elif isinstance(item, dict) and isinstance(item.get("image_url"), str | dict):
                    ref = item["image_url"]
                    url = ref.get("url") if isinstance(ref, dict) else ref
                    if isinstance(url, str):
                        found.append(image_from_url(url))
                else:
                    found.append(TextPart(json_text(item)))
            return found or [TextPart("")]
        return [TextPart(json_text(raw))]

    def _answer(self, ev: dict[str, Any], where: Where) -> str | None:
        """The unique id of the open call this observation answers, or ``None``."""
        tcm = ev.get("tool_call_metadata")
        if isinstance(tcm, dict):
            source = opt_str(tcm, "tool_call_id")
            if source:
                k = next((k for k, (_, s, _) in enumerate(self.open) if s == source), None)
                if k is not None:
                    return self.open.pop(k)[0]
                return None
            if not self.open:
                return None
            self.report.repair(
                "observation without tool_call_id",
                "expected a string `tool_call_id` on an observation's tool_call_metadata",
                **where,
            )
            return self.open.pop(0)[0]
        cause = ev.get("cause")
        k = next(
            (k for k, (_, _, e) in enumerate(self.open) if cause is not None and e == cause), None
        )
        if k is None and cause is None and self.open and self.open[0][1] is None:
            k = 0
        return self.open.pop(k)[0] if k is not None else None


def _response_text(response: dict[str, Any]) -> str:
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            return opt_str(message, "content") or ""
    return ""


def _reasoning(message: dict[str, Any]) -> list[Part]:
    blocks = message.get("thinking_blocks")
    if isinstance(blocks, list) and blocks:
        found: list[Part] = []
        for b in blocks:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "redacted_thinking":
                found.append(ReasoningPart("", signature=opt_str(b, "data"), redacted=True))
            else:
                found.append(
                    ReasoningPart(opt_str(b, "thinking") or "", signature=opt_str(b, "signature"))
                )
        return found
    text = message.get("reasoning_content")
    return [ReasoningPart(text)] if isinstance(text, str) and text else []


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json_text(value) if value is not None else ""
