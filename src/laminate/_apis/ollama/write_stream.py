"""An Ollama ``/api/chat`` stream: NDJSON, one object per line, ``"done": true`` last.

Text and reasoning (``thinking``) lines go out as they arrive. Ollama sends a tool call
whole, with its arguments as an object, so a call is written on one line when its block
ends. Ollama has no response or tool-call ids (its reader generates them), no opaque
reasoning tokens and no call whose arguments are not an object: those are not written.
"""

from __future__ import annotations

from typing import Final

from ..._core.events import ResponseStart
from ..._core.response import ContentBlock, NormalizedResponse, ToolUse
from ..shapes import counts
from ..spec import Overflow
from ..writer import Failure, StreamWriter, dumps, json_bytes, wire_stop
from .read import STOP_REASONS

__all__ = ["OVERFLOW", "OllamaWriter", "stop_of", "usage_of"]

_STOP: Final = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "stop",
    "max_tokens": "length",
    "context_window_exceeded": "length",
}
_CREATED: Final = b'"created_at":"1970-01-01T00:00:00Z",'


def stop_of(response: NormalizedResponse) -> str:
    """The ``done_reason`` written for ``response``, on the last line and in a body alike."""
    return wire_stop(response.stop_reason, STOP_REASONS, _STOP) or "stop"


def usage_of(response: NormalizedResponse) -> dict[str, int]:
    """The counts written for ``response`` (the last line's, a body's): those reported.
    ``prompt_eval_count`` counts every input token, cached or not, as Ollama's does
    (cache writes fold into it), with ``prompt_eval_cached_count`` the cache reads,
    whatever API the counts came from."""
    u = response.usage
    return counts(
        prompt_eval_count=u.total_input_tokens,
        prompt_eval_cached_count=u.cache_read_tokens,
        eval_count=u.output_tokens,
    )


# A request that does not fit the context, in Ollama's words (its error holds a message
# only).
OVERFLOW: Final = Overflow(
    kind="invalid_request_error", lead="the input length exceeds the context length"
)


class OllamaWriter(StreamWriter):
    """Writes ``/api/chat`` lines."""

    name = "ollama"

    def __init__(self) -> None:
        super().__init__()
        self._head = b""  # `{"model":...,"created_at":...,"message":{"role":"assistant",`

    def start(self, event: ResponseStart) -> bytes:
        self._head = (
            b'{"model":' + json_bytes(event.model) + b"," + _CREATED
            + b'"message":{"role":"assistant",'
        )  # fmt: skip
        return b""  # Ollama's first line already carries content

    def block_start(self, index: int, block: ContentBlock) -> bytes:
        return b""

    def text(self, index: int, text: str) -> bytes:
        return self._head + b'"content":' + json_bytes(text) + b'},"done":false}\n'

    def reasoning(self, index: int, text: str) -> bytes:
        return self._head + b'"content":"","thinking":' + json_bytes(text) + b'},"done":false}\n'

    def tool_input(self, index: int, fragment: str) -> bytes:
        return b""  # the call is written whole when it ends

    def block_end(self, index: int, block: ContentBlock) -> bytes:
        if not isinstance(block, ToolUse):
            return b""
        call = {"function": {"name": block.name, "arguments": block.input.value}}
        return self._head + b'"content":"","tool_calls":[' + dumps(call) + b']},"done":false}\n'

    def done(self, response: NormalizedResponse) -> bytes:
        stop = json_bytes(stop_of(response))
        line = self._head + b'"content":""},"done":true,"done_reason":' + stop
        for key, value in usage_of(response).items():
            line += b',"' + key.encode() + b'":' + str(value).encode()
        return line + b"}\n"

    def failure(self, failure: Failure) -> bytes:
        # Ollama's error line holds the message alone (no type, no retry advice).
        message = OVERFLOW.message(failure.message) if failure.overflow else failure.message
        return dumps({"error": message}) + b"\n"
