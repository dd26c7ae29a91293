"""An Anthropic Messages stream: ``message_start`` ... ``message_stop``.

Blocks are numbered 0, 1, 2... in the order they are written (a block that is not written,
such as a foreign opaque block, takes no number), and one is open at a time: each is
stopped before the next starts (see :class:`AnthropicWriter`). Text is ``text_delta``,
tool arguments ``input_json_delta``, reasoning a ``thinking`` block with
``thinking_delta`` and, for an answer that came from Anthropic, its ``signature_delta``
before the block stops; a redacted block is written whole as ``redacted_thinking`` at
its end. A reasoning block opens on its first text, so one that turns out to be redacted
never opens as ``thinking``. A tool call that ends invalid (cut off, or arguments that
are not JSON) gets no ``content_block_stop``: the stop reason ends it, as it ended the
source.

Usage: ``message_start`` carries zero placeholders (the schema requires both counts and
they are not known yet); ``message_delta`` carries every count that was reported, as a
complete body does (:func:`usage_of`; the stop reason is :func:`stop_of` in both).
"""

from __future__ import annotations

from typing import Any, Final

from ..._core.events import ResponseStart
from ..._core.flex import FlexValue
from ..._core.response import (
    ContentBlock,
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    Text,
    ToolUse,
    Unknown,
)
from ..base import str_or_empty
from ..citations import PDF, TEXT, Source, is_text, request_document, web_source
from ..shapes import counts
from ..spec import Overflow
from ..writer import Failure, StreamWriter, dumps, json_bytes, json_texts, sse_event, wire_stop
from .read import STOP_REASONS

__all__ = ["OVERFLOW", "AnthropicWriter", "sources", "stop_of", "usage_of"]

_STOP: Final = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "content_filter": "refusal",
    "context_window_exceeded": "model_context_window_exceeded",
}
_DELTA: Final = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":'
_TEXT: Final = b',"delta":{"type":"text_delta","text":'
_THINKING: Final = b',"delta":{"type":"thinking_delta","thinking":'
_JSON: Final = b',"delta":{"type":"input_json_delta","partial_json":'
_END: Final = b"}}\n\n"
_CITATION: Final = b',"delta":{"type":"citations_delta","citation":'


# A request that does not fit the context: Claude Code compacts its conversation on an
# `invalid_request_error` whose message says "prompt is too long".
OVERFLOW: Final = Overflow(kind="invalid_request_error", lead="prompt is too long")


def stop_of(response: NormalizedResponse) -> str:
    """The ``stop_reason`` written for ``response``, in a stream and in a body alike."""
    return wire_stop(response.stop_reason, STOP_REASONS, _STOP) or "end_turn"


def usage_of(response: NormalizedResponse) -> dict[str, int]:
    """The ``usage`` written for ``response`` (``message_delta``'s, a body's): every count
    that was reported, and the two the schema requires (0 when not reported).
    ``input_tokens`` is the uncached input, as Anthropic counts it, whatever API the
    counts came from; cache reads and writes have their own counts."""
    u = response.usage
    usage = {"input_tokens": u.uncached_input_tokens or 0, "output_tokens": u.output_tokens or 0}
    usage.update(
        counts(
            cache_creation_input_tokens=u.cache_write_tokens,
            cache_read_input_tokens=u.cache_read_tokens,
        )
    )
    return usage


class AnthropicWriter(StreamWriter):
    """Writes Messages stream events.

    One block at a time is open on the wire, as the Messages API sends them: a block
    that starts while another is open stops it first (``content_block_stop`` before the
    next ``content_block_start``), though the source (Chat Completions, Ollama) ends
    every block at the end of its answer. A text or reasoning block is stopped early;
    more of its text, should any come, goes on in a block of its own. A tool call is
    never stopped early (its arguments could not go on): a block that starts while one
    is open is held, with its deltas, and written once the call ends, so that calls
    whose argument deltas interleave (parallel calls) each keep every byte of their own.
    """

    name = "anthropic"
    id_prefix = "msg_"

    def __init__(self) -> None:
        super().__init__()
        self._numbers: dict[int, bytes] = {}  # block index -> its written index, encoded
        self._pending: set[int] = set()  # reasoning blocks not opened yet
        self._count = 0
        self._calls: set[int] = set()  # blocks that are tool calls
        self._wire: int | None = None  # the block open on the wire
        self._queue: list[int] = []  # held blocks, in the order they started
        self._holding: dict[int, list[tuple[str, Any]]] = {}  # a held block's events
        self._stopped: set[int] = set()  # text and reasoning stopped before their end
        self._next: dict[int, int] = {}  # such a block -> the block its text goes on in
        self._keys = -1  # keys of those blocks (below the source's indices)

    # -- one block at a time ------------------------------------------------------------------

    def block_start(self, index: int, block: ContentBlock) -> bytes:
        if isinstance(block, Unknown):
            return b""  # written whole at its end
        if isinstance(block, ToolUse | InvalidToolUse):
            self._calls.add(index)
        return self._begin(index, block)

    def text(self, index: int, text: str) -> bytes:
        return self._delta(index, "text", text)

    def reasoning(self, index: int, text: str) -> bytes:
        return self._delta(index, "reasoning", text)

    def tool_input(self, index: int, fragment: str) -> bytes:
        return self._delta(index, "json", fragment)

    def block_end(self, index: int, block: ContentBlock) -> bytes:
        out = b""
        follower = self._next.pop(index, None)
        if follower is not None:  # its text went on in another block: end that one
            kind = Reasoning("") if isinstance(block, Reasoning) else Text("")
            out = self.block_end(follower, kind)
        if index in self._holding:
            self._holding[index].append(("end", block))
            return out
        if index in self._stopped:
            self._stopped.discard(index)
            return out
        if index != self._wire:
            return out + self._end(index, block)  # a block written whole
        self._wire = None
        return out + self._end(index, block) + self._flush()

    def _begin(self, index: int, block: ContentBlock) -> bytes:
        if self._queue or (self._wire is not None and self._wire in self._calls):
            self._queue.append(index)
            self._holding[index] = [("start", block)]
            return self._flush()
        out = self._stop_early()
        self._wire = index
        return out + self._open_block(index, block)

    def _delta(self, index: int, kind: str, piece: str) -> bytes:
        follower = self._next.get(index)
        if follower is not None:
            return self._delta(follower, kind, piece)
        if index == self._wire:
            return self._write(index, kind, piece)
        if index in self._holding:
            self._holding[index].append((kind, piece))
            return b""
        if index in self._stopped:  # more text after it was stopped: a block of its own
            key = self._keys
            self._keys -= 1
            self._next[index] = key
            out = self._begin(key, Reasoning("") if kind == "reasoning" else Text(""))
            return out + self._delta(key, kind, piece)
        return self._write(index, kind, piece)

    def _stop_early(self) -> bytes:
        """Stop the text or reasoning block open on the wire, before its end."""
        index = self._wire
        if index is None:
            return b""
        self._wire = None
        self._stopped.add(index)
        if index in self._pending:  # never opened
            self._pending.discard(index)
            return b""
        return self._stop(index) if index in self._numbers else b""

    def _flush(self) -> bytes:
        """Write the held blocks, in order, while no tool call is open on the wire."""
        out = b""
        while self._queue and (self._wire is None or self._wire not in self._calls):
            out += self._stop_early()
            index = self._queue.pop(0)
            for kind, item in self._holding.pop(index):
                if kind == "start":
                    self._wire = index
                    out += self._open_block(index, item)
                elif kind == "end":
                    self._wire = None
                    out += self._end(index, item)
                else:
                    out += self._write(index, kind, item)
        return out

    # -- the wire -----------------------------------------------------------------------------

    def _open(self, index: int, block: dict[str, Any]) -> bytes:
        number = str(self._count).encode()
        self._count += 1
        self._numbers[index] = number
        payload = (
            b'{"type":"content_block_start","index":'
            + number
            + b',"content_block":'
            + dumps(block)
            + b"}"
        )
        return sse_event("content_block_start", payload)

    def _stop(self, index: int) -> bytes:
        number = self._numbers.pop(index)
        payload = b'{"type":"content_block_stop","index":' + number + b"}"
        return sse_event("content_block_stop", payload)

    def start(self, event: ResponseStart) -> bytes:
        message: dict[str, Any] = {
            "id": event.id,
            "type": "message",
            "role": "assistant",
            "model": event.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return sse_event("message_start", dumps({"type": "message_start", "message": message}))

    def _open_block(self, index: int, block: ContentBlock) -> bytes:
        match block:
            case Text():
                return self._open(index, {"type": "text", "text": ""})
            case ToolUse(id, name) | InvalidToolUse(id, name):
                return self._open(index, {"type": "tool_use", "id": id, "name": name, "input": {}})
            case Reasoning():
                self._pending.add(index)
        return b""  # reasoning opens on its first text

    def texts(self, index: int, texts: list[str]) -> bytes:
        if index in self._next or index in self._holding or index in self._stopped:
            return super().texts(index, texts)  # moved or held back: as each one goes
        return json_texts(texts, _DELTA + self._numbers[index] + _TEXT, _END)

    def _write(self, index: int, kind: str, piece: str) -> bytes:
        if kind == "text":
            return _DELTA + self._numbers[index] + _TEXT + json_bytes(piece) + _END
        if kind == "reasoning":
            head = b""
            if index in self._pending:
                self._pending.discard(index)
                head = self._open(index, {"type": "thinking", "thinking": "", "signature": ""})
            return head + _DELTA + self._numbers[index] + _THINKING + json_bytes(piece) + _END
        number = self._numbers.get(index)
        if number is None:
            return b""
        return _DELTA + number + _JSON + json_bytes(piece) + _END

    def _end(self, index: int, block: ContentBlock) -> bytes:
        match block:
            case Reasoning():
                return self._reasoning_end(index, block)
            case Unknown("citation", FlexValue(value=dict() as data)) if self.own:
                # A source of the text block being written (none open: nothing to cite).
                number = self._numbers.get(self.text_block) if self.text_block is not None else None
                if number is None:
                    return b""
                return _DELTA + number + _CITATION + dumps(data) + _END
            case Unknown(block_type, FlexValue(value=dict() as data)) if self.own:
                return self._open(index, {**data, "type": block_type}) + self._stop(index)
            case InvalidToolUse():
                # Left open: a cut-off call as the source left it (message_delta's stop
                # reason cuts it again), and arguments that are not JSON never reach a
                # content_block_stop, where Anthropic's clients parse them and fail.
                self._numbers.pop(index, None)
                return b""
        return self._stop(index) if index in self._numbers else b""

    def _reasoning_end(self, index: int, block: Reasoning) -> bytes:
        opened = index not in self._pending
        self._pending.discard(index)
        signature = block.signature if self.own else None
        if block.redacted:
            if opened or signature is None:
                return self._stop(index) if opened else b""
            return self._open(index, {"type": "redacted_thinking", "data": signature}) + (
                self._stop(index)
            )
        out = b""
        if not opened:
            if not signature:
                return b""  # an empty block: nothing to write
            out = self._open(index, {"type": "thinking", "thinking": "", "signature": ""})
        if signature:
            delta = {"type": "signature_delta", "signature": signature}
            payload = b'{"type":"content_block_delta","index":' + self._numbers[index]
            out += sse_event("content_block_delta", payload + b',"delta":' + dumps(delta) + b"}")
        return out + self._stop(index)

    def done(self, response: NormalizedResponse) -> bytes:
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_of(response), "stop_sequence": None},
            "usage": usage_of(response),
        }
        return sse_event("message_delta", dumps(delta)) + sse_event(
            "message_stop", b'{"type":"message_stop"}'
        )

    def failure(self, failure: Failure) -> bytes:
        # The `error` event the Messages API sends mid-stream (overloaded, for one).
        kind = failure.type_for("api_error", "invalid_request_error")
        message = failure.message
        if failure.overflow:
            kind, message = OVERFLOW.kind, OVERFLOW.message(message)
        error = {"type": "error", "error": {"type": kind, "message": message}}
        return sse_event("error", dumps(error))


# A document cited by characters is text, by pages a PDF, by content blocks custom content
# (text blocks the request gave).
_DOCUMENT_LOCATIONS: Final = {
    "char_location": TEXT,
    "page_location": PDF,
    "content_block_location": TEXT,
}


def sources(block: Unknown) -> list[Source]:
    """What a citation block cites: a web page (a web search result's ``url``, or a
    search result whose ``source`` is a URL), a document of the request (by its
    ``document_index``) or a search result named by its ``source``."""
    data = block.data.value
    if block.block_type != "citation" or not isinstance(data, dict):
        return []
    kind = data.get("type")
    if not isinstance(kind, str):
        kind = ""  # not a location this knows
    url = data.get("url")
    if is_text(url):
        return [web_source(url, data.get("title"))]
    if kind in _DOCUMENT_LOCATIONS:
        number, title = data.get("document_index"), data.get("document_title")
        return [request_document(number, title, _DOCUMENT_LOCATIONS[kind])]
    source = data.get("source")
    if kind == "search_result_location" and is_text(source):
        if source.startswith(("https://", "http://")):
            return [web_source(source, data.get("title"))]
        title = str_or_empty(data.get("title")) or source
        return [Source(key=f"search:{source}", title=title, media_type=TEXT)]
    return []
