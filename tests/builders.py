"""Small stream builders for tests that pin one rule with a few frames."""

from __future__ import annotations

import json
from typing import Any

from .support import Outcome, run_chunks


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> bytes:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    body = {
        "id": "chatcmpl-t",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [choice],
    }
    body.update(top)
    return b"data: " + json.dumps(body).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


def call(
    index: Any = None, id: str | None = None, name: str | None = None, args: Any = None
) -> Any:
    element: dict[str, Any] = {"type": "function", "function": {}}
    if index is not None:
        element["index"] = index
    if id is not None:
        element["id"] = id
    if name is not None:
        element["function"]["name"] = name
    if args is not None:
        element["function"]["arguments"] = args
    return element


def openai(*frames: bytes, **options: Any) -> Outcome:
    return run_chunks([b"".join(frames)], "openai", **options)


def done_response(outcome: Outcome) -> Any:
    assert outcome.error is None, repr(outcome.error)
    assert outcome.response is not None
    return outcome.response


def anthropic(stop: str) -> bytes:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {"id": "msg_t", "model": "c", "content": [], "usage": {}},
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def ollama(done_reason: str, *, tool_call: bool = False) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": "" if tool_call else "x"}
    if tool_call:
        message["tool_calls"] = [{"function": {"name": "f", "arguments": {}}}]
    lines = [
        {"model": "o", "message": message, "done": False},
        {
            "model": "o",
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": done_reason,
        },
    ]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def sse_of(*payloads: object, event: str | None = None) -> bytes:
    """SSE events, one per payload (a JSON value, or text as it is)."""
    out = []
    for payload in payloads:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        prefix = f"event: {event}\n" if event else ""
        out.append(f"{prefix}data: {data}\n\n")
    return "".join(out).encode()


def chat_chunk(**delta: object) -> dict[str, object]:
    """A Chat Completions chunk payload whose delta is ``delta`` (``finish_reason`` aside)."""
    finish = delta.pop("finish_reason", None)
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
