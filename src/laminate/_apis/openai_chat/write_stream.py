"""A Chat Completions stream (``chat.completion.chunk`` SSE, ``data: [DONE]`` at the end).

Every chunk carries the answer's ``id`` and ``model``; the envelope is encoded once and
each delta is spliced into it. Tool calls get their own ``tool_calls[].index``, 0, 1, 2...
in the order they start, whatever their block index (a content-block index reused as a
tool-call index is the classic gateway bug). Reasoning is written as
``reasoning_content``; usage goes in a final chunk with ``choices: []`` (what
``stream_options.include_usage`` gives). Opaque reasoning tokens are written as
``reasoning_details`` only for an answer that came from a Chat Completions server.
"""

from __future__ import annotations

from typing import Final

from ..._core.events import ResponseStart
from ..._core.response import (
    ContentBlock,
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    ToolUse,
    Unknown,
)
from ..citations import Source, is_text, web_source
from ..shapes import counts
from ..spec import Overflow
from ..writer import Failure, StreamWriter, dumps, json_bytes, json_texts, wire_stop
from .read import STOP_REASONS

__all__ = ["OVERFLOW", "OpenAIChatWriter", "sources", "stop_of", "usage_of"]

_FINISH: Final = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "content_filter": "content_filter",
    "refusal": "stop",
    "pause_turn": "stop",
    "context_window_exceeded": "length",
}
_DONE: Final = b"data: [DONE]\n\n"


class OpenAIChatWriter(StreamWriter):
    """Writes ``chat.completion.chunk`` frames."""

    name = "openai"
    id_prefix = "chatcmpl-"
    custom_calls = True  # custom (free-form) tool calls are written as such

    def __init__(self) -> None:
        super().__init__()
        self._head = b""  # `data: {"id":...,"choices":[{"index":0,"delta":`
        self._calls: dict[int, bytes] = {}  # block index -> its tool_calls index, encoded
        self._custom: set[int] = set()  # the blocks of custom (free-form) tool calls
        self._count = 0

    def _chunk(self, delta: bytes, finish: bytes = b"null") -> bytes:
        return self._head + delta + b',"finish_reason":' + finish + b"}]}\n\n"

    def start(self, event: ResponseStart) -> bytes:
        self._head = (
            b'data: {"id":'
            + json_bytes(event.id)
            + b',"object":"chat.completion.chunk","created":0,"model":'
            + json_bytes(event.model)
            + b',"choices":[{"index":0,"delta":'
        )
        return self._chunk(b'{"role":"assistant"}')

    def block_start(self, index: int, block: ContentBlock) -> bytes:
        if not isinstance(block, ToolUse | InvalidToolUse):
            return b""  # text and reasoning need no opening frame
        number = str(self._count).encode()
        self._count += 1
        self._calls[index] = number
        if isinstance(block, ToolUse) and block.kind == "custom":
            self._custom.add(index)
            opened = {"index": self._count - 1, "id": block.id, "type": "custom"}
            custom = {"name": block.name, "input": ""}
            return self._chunk(dumps({"tool_calls": [{**opened, "custom": custom}]}))
        call = (
            b'{"tool_calls":[{"index":'
            + number
            + b',"id":'
            + json_bytes(block.id)
            + b',"type":"function","function":{"name":'
            + json_bytes(block.name)
            + b',"arguments":""}}]}'
        )
        return self._chunk(call)

    def text(self, index: int, text: str) -> bytes:
        return self._chunk(b'{"content":' + json_bytes(text) + b"}")

    def texts(self, index: int, texts: list[str]) -> bytes:
        return json_texts(texts, self._head + b'{"content":', b'},"finish_reason":null}]}\n\n')

    def reasoning(self, index: int, text: str) -> bytes:
        return self._chunk(b'{"reasoning_content":' + json_bytes(text) + b"}")

    def tool_input(self, index: int, fragment: str) -> bytes:
        number = self._calls.get(index)
        if number is None:
            return b""  # arguments of an unknown block: nothing to carry them
        if index in self._custom:  # a custom call's text
            return self._chunk(
                b'{"tool_calls":[{"index":'
                + number
                + b',"custom":{"input":'
                + json_bytes(fragment)
                + b"}}]}"
            )
        return self._chunk(
            b'{"tool_calls":[{"index":'
            + number
            + b',"function":{"arguments":'
            + json_bytes(fragment)
            + b"}}]}"
        )

    def block_end(self, index: int, block: ContentBlock) -> bytes:
        if isinstance(block, Unknown) and block.block_type == "citation" and self.own:
            # A search model's annotation, in a delta of its own, as the API sends it.
            return self._chunk(dumps({"annotations": [block.data.value]}))
        if not (isinstance(block, Reasoning) and self.own and (block.signature or block.id)):
            return b""
        # OpenRouter's `reasoning_details`: the opaque part goes back where it came from.
        detail: dict[str, object]
        if block.redacted:
            detail = {"type": "reasoning.encrypted", "data": block.signature}
        else:
            detail = {"type": "reasoning.text", "text": ""}
            if block.signature:
                detail["signature"] = block.signature
        if block.id:
            detail["id"] = block.id
        return self._chunk(dumps({"reasoning_details": [detail]}))

    def done(self, response: NormalizedResponse) -> bytes:
        out = self._chunk(b"{}", json_bytes(stop_of(response)))
        usage = usage_of(response)
        if usage:
            head = self._head[: self._head.index(b'"choices":')]
            out += head + b'"choices":[],"usage":' + dumps(usage) + b"}\n\n"
        return out + _DONE

    def failure(self, failure: Failure) -> bytes:
        # A chunk holding only `error`: what the openai SDK raises as an APIError.
        error = {
            "message": failure.message,
            "type": failure.type_for("server_error", "invalid_request_error"),
            "param": None,
            "code": None,
        }
        if failure.overflow:
            error.update(type=OVERFLOW.kind, param=OVERFLOW.param, code=OVERFLOW.code)
        return b"data: " + dumps({"error": error}) + b"\n\n"


# A request that does not fit the context: the code OpenAI's clients (Codex, the agents'
# SDKs) read as one.
OVERFLOW: Final = Overflow(
    kind="invalid_request_error", code="context_length_exceeded", param="messages"
)


def stop_of(response: NormalizedResponse) -> str:
    """The ``finish_reason`` written for ``response``, in a stream and in a body alike."""
    return wire_stop(response.stop_reason, STOP_REASONS, _FINISH) or "stop"


def usage_of(response: NormalizedResponse) -> dict[str, object]:
    """The ``usage`` written for ``response`` (the last chunk's, a body's), ``{}`` when
    nothing was counted: the three counts the schema requires (0 when not reported) and
    the cache and reasoning counts that were reported. ``prompt_tokens`` counts every
    input token, cached or not, as OpenAI's does, whatever API the counts came from."""
    u = response.usage
    kept = (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens)
    if all(count is None for count in (*kept, u.reasoning_tokens)):
        return {}
    prompt_tokens = u.total_input_tokens or 0
    usage: dict[str, object] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": u.output_tokens or 0,
        "total_tokens": prompt_tokens + (u.output_tokens or 0),
    }
    prompt = counts(cached_tokens=u.cache_read_tokens, cache_write_tokens=u.cache_write_tokens)
    if prompt:
        usage["prompt_tokens_details"] = prompt
    if u.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": u.reasoning_tokens}
    return usage


def sources(block: Unknown) -> list[Source]:
    """What a citation block cites: a search model's ``url_citation``, a web page."""
    data = block.data.value
    if block.block_type != "citation" or not isinstance(data, dict):
        return []
    inner = data.get("url_citation")
    cited = inner if isinstance(inner, dict) else data
    url = cited.get("url")
    return [web_source(url, cited.get("title"))] if is_text(url) else []
