"""Anthropic Messages.

Stream: typed SSE events (``message_start``, ``content_block_start/delta/stop``,
``message_delta``, ``message_stop``, ``ping``, ``error``); blocks are keyed by the
event's ``index``. Unknown event types are ignored; unknown block types become
``Unknown`` blocks; unknown delta types are ignored. A repeated ``message_start`` is
ignored, a second one with another id (two answers spliced together) is an error. The
stop reason in ``message_delta`` completes the answer even if ``message_stop`` never
comes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any, Final

from ..._core.assembler import Assembler
from ..._core.errors import MalformedStreamError
from ..._core.response import StopReason
from ..._framing.eventstream import exception_error, is_exception_name
from ..base import (
    HandlerOptions,
    end_at_done_marker,
    error_from_payload,
    int_or_none,
    shape_error,
    stop_reason_from,
    str_or_empty,
)
from ..plain import ARGUMENTS, TEXT, Plain, PlainReader
from . import _made

__all__ = ["STOP_REASONS", "AnthropicHandler", "usage_counts"]

# Bedrock's InvokeModelWithResponseStream adds these to the last event it wraps.
_BEDROCK_METRICS: Final = "amazon-bedrock-invocationMetrics"

STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "end_turn": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.STOP_SEQUENCE,
    "pause_turn": StopReason.PAUSE_TURN,
    "refusal": StopReason.REFUSAL,
    "model_context_window_exceeded": StopReason.CONTEXT_WINDOW_EXCEEDED,
}


def usage_counts(usage: Mapping[str, Any]) -> dict[str, int | None]:
    """The counts of a Messages ``usage`` object (``output_tokens`` includes thinking;
    ``output_tokens_details.thinking_tokens``, where sent, is its share)."""
    details = usage.get("output_tokens_details")
    thinking = details.get("thinking_tokens") if isinstance(details, Mapping) else None
    return {
        "input_tokens": int_or_none(usage.get("input_tokens")),
        "output_tokens": int_or_none(usage.get("output_tokens")),
        "cache_read_tokens": int_or_none(usage.get("cache_read_input_tokens")),
        "cache_write_tokens": int_or_none(usage.get("cache_creation_input_tokens")),
        "reasoning_tokens": int_or_none(thinking),
    }


class AnthropicHandler(PlainReader):
    """Stream handler for Messages events."""

    __slots__ = ("_message_id", "assembler")

    def __init__(self, assembler: Assembler, options: HandlerOptions | None = None) -> None:
        self.assembler = assembler
        self._message_id: str | None = None

    def _plain(self, name: str | None, obj: Any) -> Plain | None:
        # A text or argument fragment for a block keyed by an int (see PlainReader); one
        # that names its type only by its SSE event is _on_other's. Subscripts read it
        # quickest; what fails them is not plain.
        piece = None
        try:
            if obj["type"] == "content_block_delta":
                delta = obj["delta"]
                key = obj["index"]
                delta_type = delta["type"]
                if delta_type == "text_delta":
                    piece = delta["text"]
                elif delta_type == "input_json_delta":
                    piece = delta["partial_json"]
        except (KeyError, TypeError, IndexError):
            pass
        if piece.__class__ is not str or key.__class__ is not int:
            return None
        if delta_type == "text_delta":
            return key, piece, TEXT
        return key, piece, ARGUMENTS

    # Made from _plain: _made.py, written by `python -m laminate._apis.make_plain`.
    on_frame = _made.on_frame
    run = _made.run

    def _on_other(self, name: str | None, obj: Any) -> None:
        if obj.__class__ is not dict and not isinstance(obj, Mapping):
            raise shape_error("an event is not a JSON object")
        kind = obj.get("type", name)
        if kind is None or kind == "chunk":
            obj = self._unwrap(name, obj)
            if obj is None:
                return
            kind = obj.get("type")
        if kind == "content_block_delta":  # nearly every event: checked first
            self._block_delta(obj)
            return
        match kind:
            case "message_start":
                self._message_start(obj)
            case "content_block_start":
                self._block_start(obj)
            case "content_block_stop":
                self.assembler.end(_key(obj))
            case "message_delta":
                self._message_delta(obj)
            case "message_stop":
                self.assembler.complete()
            case "error":
                raise error_from_payload(obj)
            case "ping":
                pass  # sent anywhere, even between the deltas of one block
            case _:
                pass  # event types added later by the API are ignored (documented rule)

    def _unwrap(self, event: str | None, obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The Messages event inside a Bedrock InvokeModelWithResponseStream ``chunk``:
        ``{"bytes": "<base64>"}`` from the binary stream, ``{"chunk": {"bytes": b"..."}}``
        from boto3. Bedrock adds its invocation metrics to the last event; they are kept
        in raw usage. A chunk that holds no Messages event (another model family's
        frame) is a :class:`MalformedStreamError` that says so; a frame that is no chunk
        is ignored, as unknown events are."""
        if event is None and "chunk" in obj:
            obj = obj["chunk"]
        elif event is None and len(obj) == 1 and is_exception_name(next(iter(obj))):
            name, payload = next(iter(obj.items()))
            raise exception_error(name, payload)  # boto3 hands stream exceptions over so
        if not isinstance(obj, Mapping) or "bytes" not in obj:
            return None
        data = obj["bytes"]
        try:
            if isinstance(data, str):
                data = base64.b64decode(data, validate=True)
            inner = json.loads(data)
        except (ValueError, TypeError) as exc:  # binascii.Error is a ValueError
            raise MalformedStreamError(f"a Bedrock chunk is not base64 JSON: {exc}") from exc
        if not isinstance(inner, dict):
            raise shape_error("a Bedrock chunk does not hold a JSON object")
        if "type" not in inner:
            # Another model family's own frames (Titan's `outputText`, Llama's
            # `generation`, the legacy Text Completions' `completion`, ...): not Messages
            # events, so nothing here could read them, and dropping them would only end
            # in a stream reported cut short.
            keys = ", ".join(sorted(map(str, inner))[:6])
            raise MalformedStreamError(
                "an InvokeModelWithResponseStream chunk that is not an Anthropic Messages "
                f"event (keys: {keys}): only Anthropic models' Messages streams are read "
                "there; call ConverseStream for other models"
            )
        metrics = inner.get(_BEDROCK_METRICS)
        if metrics is not None:
            self.assembler.usage({_BEDROCK_METRICS: metrics})
        return inner

    def on_done_marker(self) -> None:
        # Messages streams have no `[DONE]`; a proxy that appends one after the stop
        # reason ends the answer, one that appends it earlier cut the answer short.
        end_at_done_marker(self.assembler, "the message's stop reason")

    def _message_start(self, obj: Mapping[str, Any]) -> None:
        message = obj.get("message")
        if not isinstance(message, Mapping):
            raise shape_error("`message_start` without a message")
        message_id = str_or_empty(message.get("id"))
        if self._message_id is not None:
            if message_id == self._message_id:
                return  # the same message_start repeated (a retrying proxy): nothing new
            raise MalformedStreamError(
                f"a second message_start (id {message_id!r}) inside message "
                f"{self._message_id!r}: two answers spliced into one stream"
            )
        self._message_id = message_id
        self.assembler.start(message_id, str_or_empty(message.get("model")))
        self._usage(message.get("usage"))

    def _block_start(self, obj: Mapping[str, Any]) -> None:
        block = obj.get("content_block")
        if not isinstance(block, Mapping):
            raise shape_error("`content_block_start` without a content_block")
        key = _key(obj)
        asm = self.assembler
        match block.get("type"):
            case "text":
                asm.open_text(key)
                asm.text(key, str_or_empty(block.get("text")))
                citations = block.get("citations")
                if isinstance(citations, list):  # a complete body's block has them here
                    for citation in citations:
                        self._citation(citation)
            case "thinking":
                asm.open_reasoning(key, signature=str_or_empty(block.get("signature")) or None)
                asm.reasoning(key, str_or_empty(block.get("thinking")))
            case "redacted_thinking":
                asm.open_reasoning(
                    key, redacted=True, signature=str_or_empty(block.get("data")) or None
                )
            case "tool_use":
                asm.tool_start(key, str_or_empty(block.get("id")), str_or_empty(block.get("name")))
                initial = block.get("input")
                if isinstance(initial, Mapping) and initial:  # a complete body's block
                    asm.tool_arguments(key, initial)
            case other:
                # Server tools, their results and any block type added later.
                data = {k: v for k, v in block.items() if k != "type"}
                asm.unknown(key, str(other), data)

    def _block_delta(self, obj: Mapping[str, Any]) -> None:
        delta = obj.get("delta")
        if delta.__class__ is not dict and not isinstance(delta, Mapping):
            raise shape_error("`content_block_delta` without a delta")
        key = obj.get("index")
        if key.__class__ is not int:
            key = _key(obj)
        asm = self.assembler
        match delta.get("type"):
            case "text_delta":
                text = delta.get("text")
                asm.text(key, text if text.__class__ is str else "")
            case "input_json_delta":
                json_part = delta.get("partial_json")
                asm.tool_input(key, json_part if json_part.__class__ is str else "")
            case "thinking_delta":
                asm.reasoning(key, str_or_empty(delta.get("thinking")))
            case "signature_delta":
                asm.reasoning_signature(key, str_or_empty(delta.get("signature")))
            case "citations_delta":
                self._citation(delta.get("citation"))
            case _:
                pass  # delta types added later are ignored (documented rule)

    def _citation(self, citation: Any) -> None:
        """One citation of the text block being written: an ``Unknown("citation")`` block
        of its own, right after that text block, holding the citation as sent."""
        if not isinstance(citation, Mapping):
            raise shape_error("a citation is not an object")
        self.assembler.citation(citation)

    def _message_delta(self, obj: Mapping[str, Any]) -> None:
        self._usage(obj.get("usage"))
        delta = obj.get("delta")
        if isinstance(delta, Mapping):
            raw = delta.get("stop_reason")
            if isinstance(raw, str) and raw:
                self.assembler.finish(stop_reason_from(raw, STOP_REASONS))

    def _usage(self, usage: Any) -> None:
        if isinstance(usage, Mapping):
            self.assembler.usage(dict(usage), **usage_counts(usage))


def _key(obj: Mapping[str, Any]) -> int:
    """A block's key is the event's ``index`` (a digit string is accepted)."""
    index = int_or_none(obj.get("index"))
    if index is None:
        raise shape_error("a content block event without an integer `index`")
    return index


def parse_body(
    assembler: Assembler, body: Mapping[str, Any], options: HandlerOptions | None = None
) -> None:
    """A complete Messages body, read as the events that would have streamed it."""
    if body.get("type") == "error":
        raise error_from_payload(body)
    handler = AnthropicHandler(assembler)
    handler.on_frame(None, {"type": "message_start", "message": body})
    content = body.get("content")
    if not isinstance(content, list):
        raise shape_error("a message without a `content` list")
    for index, block in enumerate(content):
        handler.on_frame(
            None, {"type": "content_block_start", "index": index, "content_block": block}
        )
        handler.on_frame(None, {"type": "content_block_stop", "index": index})
    handler.on_frame(
        None, {"type": "message_delta", "delta": {"stop_reason": body.get("stop_reason")}}
    )
    handler.on_frame(None, {"type": "message_stop"})
