"""The Vercel AI SDK's UI message stream (protocol ``v1``, what ``useChat`` reads).

SSE ``data: {json}`` chunks, one per event, ``data: [DONE]`` last; the response header
``x-vercel-ai-ui-message-stream: v1`` tells the client which protocol it reads. An answer
is one step of one message::

    start {messageId} · start-step
    text-start {id} · text-delta {id, delta} · text-end {id}
    reasoning-start {id} · reasoning-delta {id, delta} · reasoning-end {id}
    tool-input-start {toolCallId, toolName} · tool-input-delta {toolCallId, inputTextDelta}
    tool-input-available {toolCallId, toolName, input}   (or tool-input-error)
    finish-step · finish {finishReason}

or, when the answer fails, an ``error {errorText}`` chunk where it stopped.

Part ids are ``<kind>-<block index>``; tool calls keep their ids. Reasoning opens on its
first text, so redacted reasoning (which has none) is not written; neither are opaque
tokens, unknown blocks or usage (the protocol has no place for them), except the sources
an answer cites, each once, where the citation came: a URL (any API's citation, Gemini's
grounding and citation metadata) is a ``source-url {sourceId, url, title}`` chunk, a
document or file cited without one a ``source-document {sourceId, mediaType, title,
filename}`` chunk; each API reads its own citations (its record's ``sources``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from .._apis.citations import Source, no_sources
from .._apis.registry import APIS
from .._apis.writer import Failure, StreamWriter, dumps, json_bytes
from .._core.events import ResponseStart
from .._core.response import (
    ContentBlock,
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    Text,
    ToolUse,
    Unknown,
)

__all__ = ["FINISH_REASONS", "HEADERS", "AISDKWriter"]

HEADERS: Final = {"x-vercel-ai-ui-message-stream": "v1"}
"""The header a UI message stream response carries."""

FINISH_REASONS: Final = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool-calls",
    "max_tokens": "length",
    "context_window_exceeded": "length",
    "content_filter": "content-filter",
    "refusal": "content-filter",
}
"""Stop-reason kind to the protocol's ``finishReason`` (anything else is ``other``)."""

_TEXT_DELTA: Final = b'data: {"type":"text-delta","id":"text-'
_REASONING_DELTA: Final = b'data: {"type":"reasoning-delta","id":"reasoning-'
_TOOL_DELTA: Final = b'data: {"type":"tool-input-delta","toolCallId":'


def _chunk(number: int, source: Source) -> bytes:
    """A ``source-url`` or ``source-document`` chunk, ``source-<number>`` its id."""
    chunk: dict[str, str]
    if source.url:
        chunk = {"type": "source-url", "sourceId": f"source-{number}", "url": source.url}
        if source.title:
            chunk["title"] = source.title
    else:
        chunk = {
            "type": "source-document",
            "sourceId": f"source-{number}",
            "mediaType": source.media_type,
            "title": source.title,
        }
        if source.filename:
            chunk["filename"] = source.filename
    return b"data: " + dumps(chunk) + b"\n\n"


class AISDKWriter(StreamWriter):
    """Writes UI message stream chunks."""

    name = "ai-sdk"

    def __init__(self) -> None:
        super().__init__()
        self._calls: dict[int, bytes] = {}  # block index -> its toolCallId, encoded
        self._reasoning: dict[int, bool] = {}  # reasoning block -> whether it opened
        self._sources: set[str] = set()  # the sources written (their keys)
        self._cited: Callable[[Unknown], list[Source]] = no_sources

    def start(self, event: ResponseStart) -> bytes:
        record = APIS.get(event.provider)
        if record is not None:  # the answer's API reads its citations
            self._cited = record.sources
        start = {"type": "start", "messageId": event.id} if event.id else {"type": "start"}
        return b"data: " + dumps(start) + b'\n\ndata: {"type":"start-step"}\n\n'

    def block_start(self, index: int, block: ContentBlock) -> bytes:
        match block:
            case Text():
                return b'data: {"type":"text-start","id":"text-%d"}\n\n' % index
            case ToolUse(id, name) | InvalidToolUse(id, name):
                self._calls[index] = json_bytes(id)
                chunk = {"type": "tool-input-start", "toolCallId": id, "toolName": name}
                return b"data: " + dumps(chunk) + b"\n\n"
            case Reasoning():
                self._reasoning[index] = False
        return b""

    def text(self, index: int, text: str) -> bytes:
        return _TEXT_DELTA + b"%d" % index + b'","delta":' + json_bytes(text) + b"}\n\n"

    def reasoning(self, index: int, text: str) -> bytes:
        head = b""
        if not self._reasoning.get(index, True):
            self._reasoning[index] = True
            head = b'data: {"type":"reasoning-start","id":"reasoning-%d"}\n\n' % index
        delta = _REASONING_DELTA + b"%d" % index + b'","delta":' + json_bytes(text) + b"}\n\n"
        return head + delta

    def tool_input(self, index: int, fragment: str) -> bytes:
        call = self._calls.get(index)
        if call is None:
            return b""
        return _TOOL_DELTA + call + b',"inputTextDelta":' + json_bytes(fragment) + b"}\n\n"

    def block_end(self, index: int, block: ContentBlock) -> bytes:
        match block:
            case Text():
                return b'data: {"type":"text-end","id":"text-%d"}\n\n' % index
            case Reasoning():
                if self._reasoning.pop(index, False):
                    return b'data: {"type":"reasoning-end","id":"reasoning-%d"}\n\n' % index
            case ToolUse(id, name, input):
                self._calls.pop(index, None)
                chunk = {
                    "type": "tool-input-available",
                    "toolCallId": id,
                    "toolName": name,
                    "input": input.value,
                }
                return b"data: " + dumps(chunk) + b"\n\n"
            case InvalidToolUse(id, name, raw_input, reason):
                self._calls.pop(index, None)
                chunk = {
                    "type": "tool-input-error",
                    "toolCallId": id,
                    "toolName": name,
                    "input": raw_input,
                    "errorText": reason,
                }
                return b"data: " + dumps(chunk) + b"\n\n"
            case Unknown():
                return self._source_chunks(block)
        return b""

    def _source_chunks(self, block: Unknown) -> bytes:
        """The sources a block cites (read by the answer's API), each once: a source
        already written (the same URL, document or file) is not written again."""
        out = b""
        for source in self._cited(block):
            if source.key not in self._sources:
                self._sources.add(source.key)
                out += _chunk(len(self._sources), source)
        return out

    def done(self, response: NormalizedResponse) -> bytes:
        reason = FINISH_REASONS.get(response.stop_reason.kind or "", "other")
        finish = b'data: {"type":"finish","finishReason":"' + reason.encode() + b'"}\n\n'
        return b'data: {"type":"finish-step"}\n\n' + finish + b"data: [DONE]\n\n"

    def failure(self, failure: Failure) -> bytes:
        # The protocol's error chunk (``useChat`` sets its ``error``), then the end.
        return (
            b'data: {"type":"error","errorText":'
            + json_bytes(failure.message)
            + b"}\n\n"
            + (b"data: [DONE]\n\n")
        )
