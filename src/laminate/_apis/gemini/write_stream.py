"""A Gemini ``streamGenerateContent?alt=sse`` stream: ``data: <GenerateContentResponse>``.

Every chunk is a whole ``GenerateContentResponse`` (one candidate, ``index`` 0, with the
answer's ``modelVersion`` and ``responseId``), framed as the Gemini API frames it: SSE
with CRLF line endings and no ``[DONE]``. The envelope is encoded once and each part is
spliced into it. Gemini has no block events, so the blocks are told apart by their parts:

- **Text and reasoning** go out as they arrive, one part per delta: ``{"text": ...}``,
  and ``{"text": ..., "thought": true}`` for reasoning. Two blocks of the same kind in a
  row are one block to a Gemini reader (the API has no boundary between them).
- **Tool calls** are written whole when their block ends, one ``functionCall`` part with
  the call's ``id``, ``name`` and ``args`` object: the Gemini API never streams argument
  text (Vertex's ``partialArgs`` addresses values by JSON path, which raw argument text
  cannot be turned into without parsing it again as it grows). A call whose arguments
  are not a JSON object (cut off, or not JSON) cannot be a ``functionCall`` and is not
  written.
- **Signatures** (``thoughtSignature``) are written only for an answer that came from
  Gemini: on the ``functionCall`` part of a call, and for text or reasoning as a part of
  their own at the block's end (``{"text": "", "thoughtSignature": ...}``, what Gemini
  sends at the end of a text answer), which a reader puts on the block before it.
  Unknown parts (``executableCode``, ``inlineData``, ...) and candidate metadata
  (``groundingMetadata``, ...) are written back only to Gemini too.
- **The last chunk** carries ``finishReason`` and the cumulative ``usageMetadata``
  (``candidatesTokenCount`` is the output without the thoughts, which Gemini counts
  apart as ``thoughtsTokenCount``).
"""

from __future__ import annotations

from typing import Any, Final

from ..._core.events import ResponseStart
from ..._core.flex import FlexValue
from ..._core.response import (
    ContentBlock,
    NormalizedResponse,
    Reasoning,
    Text,
    ToolUse,
    Unknown,
)
from ..citations import Source, is_text, web_source
from ..shapes import counts
from ..spec import Overflow
from ..writer import Failure, StreamWriter, dumps, json_bytes, wire_stop
from .read import METADATA, STOP_REASONS

__all__ = ["OVERFLOW", "GeminiWriter", "sources", "stop_of", "usage_of"]

# The finishReason for a stop kind: Gemini has no tool, refusal or pause reason.
_FINISH: Final = {
    "end_turn": "STOP",
    "tool_use": "STOP",
    "stop_sequence": "STOP",
    "pause_turn": "STOP",
    "max_tokens": "MAX_TOKENS",
    "context_window_exceeded": "MAX_TOKENS",
    "content_filter": "SAFETY",
    "refusal": "SAFETY",
}
_HEAD: Final = b'data: {"candidates":[{"content":{"parts":['
_TEXT: Final = b'{"text":'
_THOUGHT: Final = b',"thought":true}'


# A request that does not fit the context, as Google says it: INVALID_ARGUMENT, the
# backend's message as it is.
OVERFLOW: Final = Overflow(kind="INVALID_ARGUMENT")


class GeminiWriter(StreamWriter):
    """Writes ``GenerateContentResponse`` chunks."""

    name = "gemini"
    id_prefix = "resp-"

    def __init__(self) -> None:
        super().__init__()
        self._tail = b""  # `],"role":"model"},"index":0}],"modelVersion":...}\r\n\r\n`
        self._names = b""  # `"modelVersion":...,"responseId":...`

    def _chunk(self, part: bytes) -> bytes:
        return _HEAD + part + self._tail

    def start(self, event: ResponseStart) -> bytes:
        self._names = (
            b'"modelVersion":' + json_bytes(event.model) + b',"responseId":' + json_bytes(event.id)
        )
        self._tail = b'],"role":"model"},"index":0}],' + self._names + b"}\r\n\r\n"
        return b""  # Gemini's first chunk already carries content

    def block_start(self, index: int, block: ContentBlock) -> bytes:
        return b""  # a part opens its block; calls and unknown parts are written at the end

    def text(self, index: int, text: str) -> bytes:
        return _HEAD + _TEXT + json_bytes(text) + b"}" + self._tail

    def reasoning(self, index: int, text: str) -> bytes:
        return _HEAD + _TEXT + json_bytes(text) + _THOUGHT + self._tail

    def tool_input(self, index: int, fragment: str) -> bytes:
        return b""  # the call is written whole, with its `args` object, when it ends

    def block_end(self, index: int, block: ContentBlock) -> bytes:
        own = self.own
        match block:
            case ToolUse(id, name, FlexValue(value=args), signature):
                part: dict[str, Any] = {"functionCall": {"id": id, "name": name, "args": args}}
                if own and signature:
                    part["thoughtSignature"] = signature
                return self._chunk(dumps(part))
            case Text(signature=str() as signature) if own:
                return self._chunk(b'{"text":"","thoughtSignature":' + json_bytes(signature) + b"}")
            case Reasoning(signature=str() as signature, redacted=False) if own:
                return self._chunk(
                    b'{"text":"","thought":true,"thoughtSignature":' + json_bytes(signature) + b"}"
                )
            case Unknown(kind, FlexValue(value=dict() as data)) if own:
                if kind in METADATA:
                    candidate = b'{"' + kind.encode() + b'":' + dumps(data) + b',"index":0}'
                    return b'data: {"candidates":[' + candidate + b"]," + self._names + b"}\r\n\r\n"
                if kind in data:  # a part Gemini sent, kept as it was
                    return self._chunk(dumps(data))
        return b""  # text and reasoning went out as they arrived; nothing else is carried

    def done(self, response: NormalizedResponse) -> bytes:
        candidate: dict[str, Any] = {
            "content": {"role": "model"},  # as Gemini's last chunk: a role, no parts
            "finishReason": stop_of(response),
            "index": 0,
        }
        chunk: dict[str, Any] = {"candidates": [candidate]}
        usage = usage_of(response)
        if usage:
            chunk["usageMetadata"] = usage
        return b"data: " + dumps(chunk)[:-1] + b"," + self._names + b"}\r\n\r\n"

    def failure(self, failure: Failure) -> bytes:
        # Google's error object: an HTTP status and the name of its RPC code.
        if failure.overflow:
            code, status = 400, OVERFLOW.kind
        elif failure.own:
            code, status = (503 if failure.retryable else 400), failure.error_type
        elif failure.retryable:
            code, status = 503, "UNAVAILABLE"
        elif failure.server:  # the backend's answer broke: the server's fault
            code, status = 500, "INTERNAL"
        else:
            code, status = 400, "INVALID_ARGUMENT"
        error = {"code": code, "message": failure.message, "status": status}
        return b"data: " + dumps({"error": error}) + b"\r\n\r\n"


def stop_of(response: NormalizedResponse) -> str:
    """The ``finishReason`` written for ``response``, in a stream and in a body alike:
    Gemini's own value back to Gemini; another API's value named by its kind, and one
    Gemini does not know as ``OTHER`` (its clients check the enum)."""
    stop = response.stop_reason
    if response.provider == GeminiWriter.name:
        return wire_stop(stop, STOP_REASONS, _FINISH) or "STOP"
    if stop.kind is None:
        named = STOP_REASONS.get(stop.raw)  # a value another reader did not know
        return stop.raw if named is not None else "OTHER" if stop.raw else "STOP"
    return _FINISH[stop.kind]


def usage_of(response: NormalizedResponse) -> dict[str, int]:
    """The ``usageMetadata`` written for ``response`` (the last chunk's, a body's): the
    counts that were reported, the thoughts apart from the answer. ``promptTokenCount``
    counts every input token, cached or not, as Gemini's does (cache writes fold into
    it), whatever API the counts came from."""
    u = response.usage
    prompt = u.total_input_tokens
    candidates = u.output_tokens
    thoughts = u.reasoning_tokens
    if candidates is not None and thoughts is not None:
        candidates -= thoughts  # Gemini counts the thoughts apart from the answer
    elif candidates is None:
        thoughts = None  # a reader adds them to the output: no output, no share of it
    usage = counts(
        promptTokenCount=prompt,
        candidatesTokenCount=candidates,
        thoughtsTokenCount=thoughts,
        cachedContentTokenCount=u.cache_read_tokens,
    )
    if prompt is not None and u.output_tokens is not None:
        usage["totalTokenCount"] = prompt + u.output_tokens
    return usage


def sources(block: Unknown) -> list[Source]:
    """What a metadata block cites: the web pages of ``groundingMetadata``'s chunks, and
    the sources of ``citationMetadata`` that have a URL (``citationSources`` in the Gemini
    API, ``citations`` in Vertex AI)."""
    data = block.data.value
    if not isinstance(data, dict):
        return []
    found = []
    if block.block_type == "groundingMetadata":
        chunks = data.get("groundingChunks")
        for chunk in chunks if isinstance(chunks, list) else []:
            web = chunk.get("web") if isinstance(chunk, dict) else None
            if isinstance(web, dict) and is_text(uri := web.get("uri")):
                found.append(web_source(uri, web.get("title")))
    elif block.block_type == "citationMetadata":
        cited = data.get("citationSources", data.get("citations"))
        found.extend(
            web_source(uri, source.get("title"))
            for source in (cited if isinstance(cited, list) else [])
            if isinstance(source, dict) and is_text(uri := source.get("uri"))
        )
    return found
