"""Replies in the documented shapes of provider-native compaction, written as raw JSON text
so that a test can compare what ctxengine stores with the exact bytes the server sent.

Anthropic: a ``compaction`` content block at the start of the reply (``content``,
``encrypted_content``, a field the SDK does not know, key order not the SDK's), its usage
in ``usage.iterations``; streamed as ``content_block_start`` + ``compaction_delta``. OpenAI
Responses: an encrypted ``compaction`` item in ``output``; ``/responses/compact``: the user
messages then the item.
"""

from __future__ import annotations

import json
from typing import Any

from servers import Step

#: The Anthropic compaction block exactly as the server writes it (compact JSON, keys in an
#: order the SDK's model does not use, a field it does not declare, non-ASCII text).
ANTHROPIC_BLOCK = (
    '{"type":"compaction","content":"Résumé: the user asked for a parser; tests pass — next:'
    ' \\"wire it\\".","encrypted_content":"EqQBCkYIBRgCKkB9x","zz_extra":{"b":1,"a":[2,3]}}'
)
#: The same block as a stream writes it: ``content_block_start`` then one delta.
STREAM_START = {"type": "compaction"}
STREAM_DELTA = {
    "type": "compaction_delta",
    "content": "Résumé: streamed summary.",
    "encrypted_content": "EqQBstream",
}
#: The block a stream assembles: the start block with the delta's fields, in that order.
ANTHROPIC_STREAMED_BLOCK = (
    '{"type":"compaction","content":"Résumé: streamed summary.","encrypted_content":"EqQBstream"}'
)
#: An OpenAI encrypted compaction item exactly as the server writes it.
OPENAI_ITEM = (
    '{"id":"cmp_68c9","type":"compaction","encrypted_content":"gAAAAABo-enc-Ω","created_by":"srv"}'
)


def anthropic_body(
    blocks: list[str],
    *,
    stop_reason: str = "end_turn",
    input_tokens: int = 900,
    output_tokens: int = 40,
    compaction_usage: tuple[int, int] | None = (61_000, 700),
) -> str:
    """A Messages reply as raw JSON text holding ``blocks`` (raw JSON texts) in order; with
    ``compaction_usage`` (input, output tokens of the compaction) ``usage.iterations`` holds
    a compaction entry and a message entry."""
    usage: dict[str, Any] = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    if compaction_usage is not None:
        usage["iterations"] = [
            {
                "type": "compaction",
                "input_tokens": compaction_usage[0],
                "output_tokens": compaction_usage[1],
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
            {
                "type": "message",
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
        ]
    head = (
        '{"id":"msg_n1","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":['
    )
    tail = (
        f'],"stop_reason":{json.dumps(stop_reason)},"stop_sequence":null,'
        f'"usage":{json.dumps(usage)}}}'
    )
    return head + ",".join(blocks) + tail


def anthropic_text(text: str) -> str:
    """A text block as raw JSON text."""
    return json.dumps({"type": "text", "text": text})


def anthropic_reply_step(blocks: list[str], **kwargs: Any) -> Step:
    """A whole Messages reply holding ``blocks``."""
    return Step(body=anthropic_body(blocks, **kwargs), headers={"content-type": "application/json"})


def anthropic_stream_step(text: str, *, compaction: bool = True) -> Step:
    """A streamed Messages reply: a compaction block (start + delta) when ``compaction``,
    then a text block, then usage with iterations."""
    start = {
        "id": "msg_s1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 800, "output_tokens": 1},
    }
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    index = 0
    if compaction:
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": STREAM_START},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": STREAM_DELTA},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]
        index = 1
    events += [
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": text},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {
                    "output_tokens": 30,
                    "iterations": [
                        {
                            "type": "compaction",
                            "input_tokens": 70_000,
                            "output_tokens": 500,
                            "cache_read_input_tokens": 0,
                            "cache_creation_input_tokens": 0,
                        },
                        {
                            "type": "message",
                            "input_tokens": 800,
                            "output_tokens": 30,
                            "cache_read_input_tokens": 0,
                            "cache_creation_input_tokens": 0,
                        },
                    ],
                },
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return Step(events=events)


def responses_body(items: list[str], *, input_tokens: int = 1_200, output_tokens: int = 30) -> str:
    """A Responses object as raw JSON text whose ``output`` holds ``items`` (raw JSON)."""
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input_tokens + output_tokens,
    }
    return (
        '{"id":"resp_n1","object":"response","created_at":1700000000,"model":"gpt-5.2",'
        '"status":"completed","output":['
        + ",".join(items)
        + '],"parallel_tool_calls":true,"tool_choice":"auto","tools":[],'
        + f'"usage":{json.dumps(usage)}}}'
    )


def responses_message(text: str) -> str:
    """An assistant message output item as raw JSON text."""
    return json.dumps(
        {
            "type": "message",
            "id": "msg_r1",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    )


def responses_reply_step(items: list[str]) -> Step:
    """A whole Responses reply holding ``items``."""
    return Step(body=responses_body(items), headers={"content-type": "application/json"})


def responses_stream_step(items: list[str]) -> Step:
    """A streamed Responses reply: created, then completed carrying the whole response (its
    data written as raw text so the items keep their bytes)."""
    whole = responses_body(items)
    created = json.dumps(
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {**json.loads(whole), "output": [], "status": "in_progress"},
        }
    )
    done = '{"type":"response.completed","sequence_number":1,"response":' + whole + "}"
    return Step(events=[("response.created", created), ("response.completed", done)])


def compacted_body(user_texts: list[str]) -> str:
    """A ``/responses/compact`` reply: the user messages, then :data:`OPENAI_ITEM`."""
    users = [
        json.dumps(
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": t}],
            }
        )
        for t in user_texts
    ]
    usage = {
        "input_tokens": 5_000,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 300,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 5_300,
    }
    return (
        '{"id":"cmpr_1","object":"response.compaction","created_at":1700000000,"output":['
        + ",".join([*users, OPENAI_ITEM])
        + f'],"usage":{json.dumps(usage)}}}'
    )


def anthropic_compaction_stream_step(block: str, *, stop_reason: str = "compaction") -> Step:
    """A streamed reply holding only the compaction ``block`` (raw JSON text whose first key
    is ``type``): ``content_block_start`` carries ``{"type": "compaction"}``, one
    ``compaction_delta`` the block's other fields in their order, so the stream assembles
    exactly ``block``."""
    fields = json.loads(block)
    start = {
        "id": "msg_c1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
    rest = ",".join(
        f"{json.dumps(k)}:{json.dumps(v, ensure_ascii=False, separators=(',', ':'))}"
        for k, v in fields.items()
        if k != "type"
    )
    delta = (
        '{"type":"content_block_delta","index":0,"delta":{"type":"compaction_delta",' + rest + "}}"
    )
    usage = {
        "output_tokens": 0,
        "iterations": [
            {
                "type": "compaction",
                "input_tokens": 9_000,
                "output_tokens": 400,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            }
        ],
    }
    return Step(
        events=[
            ("message_start", {"type": "message_start", "message": start}),
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "compaction"},
                },
            ),
            ("content_block_delta", delta),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": usage,
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )
