"""A Bedrock ConverseStream stream: AWS binary event stream messages, every CRC valid.

Each event is one message (:func:`~laminate._framing.eventstream.encode_message`) with the
headers Bedrock sends, ``:event-type``, ``:content-type: application/json`` and
``:message-type: event``, and a JSON payload:

- ``messageStart`` (``{"role": "assistant"}``) first. ConverseStream names neither the
  answer's id nor its model, so neither is written.
- Blocks are numbered by ``contentBlockIndex``, 0, 1, 2... in the order they are written
  (a block that writes nothing takes no number). Text and reasoning blocks have no
  ``contentBlockStart``, as on Bedrock: their first ``contentBlockDelta`` opens them. A
  tool call opens with ``contentBlockStart`` (``toolUse``: ``toolUseId``, ``name``) and
  streams its argument text as ``toolUse.input`` fragments. Every block ends with
  ``contentBlockStop``, except a call the answer's end cut off: ``messageStop`` cuts it
  again, as the source was cut.
- Reasoning is ``reasoningContent.text``; its ``signature`` (or, for a redacted block,
  its ``redactedContent``) is a delta of its own before the block stops, written only
  for an answer that came from Bedrock. So are the blocks laminate does not model (Nova's
  server tools and their results), written back as Bedrock sent them.
- ``messageStop`` carries the ``stopReason``, then ``metadata`` the usage (the three
  counts the schema requires, 0 when unknown, and the cache counts that were reported)
  and ``metrics`` (``latencyMs``, which laminate does not know: 0).

A stream is one message per delta, so the messages are framed here on a fast path that
writes the same bytes as ``encode_message``: the header section of each event name is
encoded once, and the message CRC continues from the prelude's instead of reading the
message again.
"""

from __future__ import annotations

import struct
from functools import cache
from typing import Any, Final

from ..._core.events import ResponseStart
from ..._core.flex import FlexValue
from ..._core.response import (
    ContentBlock,
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    ToolUse,
    Unknown,
)
from ..._framing.eventstream import crc32, encode_message
from ..citations import PDF, TEXT, Source, is_text, request_document, web_source
from ..shapes import counts
from ..spec import Overflow
from ..writer import Failure, StreamWriter, cut_off, dumps, json_bytes, wire_stop
from .read import STOP_REASONS

__all__ = ["OVERFLOW", "BedrockWriter", "sources", "stop_of", "usage_of"]

_STOP: Final = {
    "end_turn": "end_turn",
    "pause_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filter": "content_filtered",
    "refusal": "content_filtered",
    "context_window_exceeded": "model_context_window_exceeded",
}
_DELTA: Final = b'{"contentBlockIndex":'
_TEXT: Final = b',"delta":{"text":'
_REASONING: Final = b',"delta":{"reasoningContent":{"text":'
_INPUT: Final = b',"delta":{"toolUse":{"input":'


_PRELUDE: Final = struct.Struct(">II")
_U32: Final = struct.Struct(">I")


@cache
def _headers(name: str) -> bytes:
    """The encoded header section of an event: the same bytes for every event of a name."""
    headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, b"")[_PRELUDE.size + _U32.size : -_U32.size]


def _event(name: str, payload: bytes) -> bytes:
    """One message, as :func:`encode_message` writes it, with its header section encoded
    once per event name and the message CRC carried on from the prelude's (the hot path:
    one message per delta)."""
    head = _headers(name)
    prelude = _PRELUDE.pack(len(head) + len(payload) + 16, len(head))
    prelude += _U32.pack(crc32(prelude))
    return b"".join(
        (prelude, head, payload, _U32.pack(crc32(payload, crc32(head, crc32(prelude)))))
    )


def stop_of(response: NormalizedResponse) -> str:
    """The ``stopReason`` written for ``response``, in a stream and in a body alike."""
    return wire_stop(response.stop_reason, STOP_REASONS, _STOP) or "end_turn"


def usage_of(response: NormalizedResponse) -> dict[str, int]:
    """The ``usage`` written for ``response`` (``metadata``'s, a body's): the three counts
    the schema requires (0 when not reported) and the cache counts that were reported;
    ``{}`` when nothing was counted. ``inputTokens`` is the uncached input, as Bedrock
    counts it, whatever API the counts came from; ``totalTokens`` counts every input
    token, cached or not, and the output."""
    u = response.usage
    if all(
        count is None
        for count in (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens)
    ):
        return {}
    usage = {
        "inputTokens": u.uncached_input_tokens or 0,
        "outputTokens": u.output_tokens or 0,
        "totalTokens": (u.total_input_tokens or 0) + (u.output_tokens or 0),
    }
    usage.update(
        counts(
            cacheReadInputTokens=u.cache_read_tokens,
            cacheWriteInputTokens=u.cache_write_tokens,
        )
    )
    return usage


# A request that does not fit the context, as Bedrock says it (and Claude Code, on
# Bedrock, compacts on).
OVERFLOW: Final = Overflow(kind="ValidationException", lead="Input is too long for requested model")


class BedrockWriter(StreamWriter):
    """Writes ConverseStream event stream messages."""

    name = "bedrock"

    def __init__(self) -> None:
        super().__init__()
        self._numbers: dict[int, bytes] = {}  # block index -> its contentBlockIndex, encoded
        self._count = 0

    def _number(self, index: int) -> bytes:
        number = self._numbers.get(index)
        if number is None:
            number = self._numbers[index] = str(self._count).encode()
            self._count += 1
        return number

    def _stop(self, index: int) -> bytes:
        number = self._numbers.pop(index, None)
        if number is None:
            return b""  # nothing was written for this block
        return _event("contentBlockStop", _DELTA + number + b"}")

    def start(self, event: ResponseStart) -> bytes:
        return _event("messageStart", b'{"role":"assistant"}')

    def block_start(self, index: int, block: ContentBlock) -> bytes:
        if not isinstance(block, ToolUse | InvalidToolUse):
            return b""  # text and reasoning open with their first delta
        start = {"toolUse": {"toolUseId": block.id, "name": block.name}}
        payload = _DELTA + self._number(index) + b',"start":' + dumps(start) + b"}"
        return _event("contentBlockStart", payload)

    def text(self, index: int, text: str) -> bytes:
        payload = _DELTA + self._number(index) + _TEXT + json_bytes(text) + b"}}"
        return _event("contentBlockDelta", payload)

    def reasoning(self, index: int, text: str) -> bytes:
        payload = _DELTA + self._number(index) + _REASONING + json_bytes(text) + b"}}}"
        return _event("contentBlockDelta", payload)

    def tool_input(self, index: int, fragment: str) -> bytes:
        number = self._numbers.get(index)
        if number is None:
            return b""  # arguments of an unknown block: nothing to carry them
        payload = _DELTA + number + _INPUT + json_bytes(fragment) + b"}}}"
        return _event("contentBlockDelta", payload)

    def block_end(self, index: int, block: ContentBlock) -> bytes:
        match block:
            case Reasoning(signature=str() as signature, redacted=redacted) if self.own:
                field = "redactedContent" if redacted else "signature"
                delta = {"reasoningContent": {field: signature}}
                payload = _DELTA + self._number(index) + b',"delta":' + dumps(delta) + b"}"
                return _event("contentBlockDelta", payload) + self._stop(index)
            case ToolUse() | InvalidToolUse() if cut_off(block):
                self._numbers.pop(index, None)
                return b""  # left open: messageStop's stopReason cuts it again
            case Unknown("citation", FlexValue(value=dict() as data)) if self.own:
                # A source of the text block being written (none open: nothing to cite).
                if self.text_block is None:
                    return b""
                cited = dumps({"citation": data})
                payload = _DELTA + self._number(self.text_block) + b',"delta":' + cited + b"}"
                return _event("contentBlockDelta", payload)
            case Unknown(kind, FlexValue(value=dict() as data)) if self.own:
                return self._unknown(index, kind, data) + self._stop(index)
        return self._stop(index)

    def _unknown(self, index: int, kind: str, data: dict[str, Any]) -> bytes:
        """A block Bedrock sent that laminate keeps as ``Unknown``, as it was sent: a start
        without what the deltas carried (a server tool's ``input``, a result's
        ``content``), then those deltas."""
        number = self._number(index)
        if kind == "server_tool_use":
            start = {k: v for k, v in data.items() if k != "input"}
            arguments = data.get("input")
            if not isinstance(arguments, str):  # parsed: written back as its JSON text
                arguments = None if arguments is None else dumps(arguments).decode()
            deltas = [] if arguments is None else [{"toolUse": {"input": arguments}}]
            kind = "toolUse"
        elif kind == "toolResult":
            start = {k: v for k, v in data.items() if k != "content"}
            deltas = [{"toolResult": data["content"]}] if "content" in data else []
        else:
            start, deltas = data, []
        out = _event(
            "contentBlockStart", _DELTA + number + b',"start":' + dumps({kind: start}) + b"}"
        )
        for delta in deltas:
            out += _event("contentBlockDelta", _DELTA + number + b',"delta":' + dumps(delta) + b"}")
        return out

    def done(self, response: NormalizedResponse) -> bytes:
        # The event needs its usage even when nothing was counted.
        usage = usage_of(response) or {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
        metadata = {"usage": usage, "metrics": {"latencyMs": 0}}
        stop = json_bytes(stop_of(response))
        stopped = _event("messageStop", b'{"stopReason":' + stop + b"}")
        return stopped + _event("metadata", dumps(metadata))

    def failure(self, failure: Failure) -> bytes:
        # An exception message: its type in a header, the message in the payload.
        name = failure.type_for("internalServerException", "validationException", foreign=False)
        message = failure.message
        if failure.overflow:  # a stream's exception names begin in lower case
            name, message = "validationException", OVERFLOW.message(message)
        headers = {
            ":exception-type": name,
            ":content-type": "application/json",
            ":message-type": "exception",
        }
        return encode_message(headers, dumps({"message": message}))


def sources(block: Unknown) -> list[Source]:
    """What a citation block cites: its one ``location`` is a web page's (``web``) or a
    document's of the request (``documentChar``, ``documentChunk``: text;
    ``documentPage``: a PDF), by its ``documentIndex``."""
    data = block.data.value
    location = data.get("location") if isinstance(data, dict) else None
    if block.block_type != "citation" or not isinstance(location, dict):
        return []
    for kind, where in location.items():
        if not isinstance(where, dict):
            continue
        url = where.get("url")
        if kind == "web" and is_text(url):
            return [web_source(url, data.get("title"))]
        if isinstance(kind, str) and kind.startswith("document"):
            media = PDF if kind == "documentPage" else TEXT
            return [request_document(where.get("documentIndex"), data.get("title"), media)]
    return []
