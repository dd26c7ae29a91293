"""Bedrock Converse and ConverseStream (``provider="bedrock"``).

Stream: AWS event stream messages named by their ``:event-type``: ``messageStart``,
``contentBlockStart`` (only tool calls and server-tool blocks have one; text and reasoning
blocks open with their first delta), ``contentBlockDelta``, ``contentBlockStop``,
``messageStop`` (the stop reason) and ``metadata`` (usage, metrics, guardrail trace).
Blocks are keyed by ``contentBlockIndex``. Every payload carries a random-length padding
key ``p`` against traffic analysis; nothing reads it.

A frame comes in one of two shapes, and both are read alike:

- from the binary decoder, ``event`` is the message's name and ``obj`` its payload;
- from boto3 (``converse_stream()["stream"]``, via ``feed_payload``) or a JSON-lines
  rendering, ``event`` is ``None`` and ``obj`` is ``{"<name>": payload}``.

boto3 hands exceptions over the same way (``{"throttlingException": {"message": ...}}``);
they are classified by :func:`~laminate._framing.eventstream.exception_error`, as the
binary decoder's exception messages are, so both paths raise the same
:class:`ProviderError`.

Completion: usage arrives in ``metadata`` *after* ``messageStop``, so ``messageStop``
finishes the answer (closing every block) and ``metadata`` completes it. A stream cut
after ``messageStop`` is complete (the normalizer completes a finished answer at the end
of the bytes); some proxies send ``metadata`` first, and ``messageStop`` then completes.

Deltas: ``text``; ``toolUse.input`` (argument text fragments; ``""`` alone means ``{}``);
``reasoningContent`` with ``text``, ``signature`` (kept byte for byte on the block) or
``redactedContent`` (a redacted ``Reasoning`` whose signature is the data, base64, as the
JSON wire carries it; boto3's raw bytes are encoded the same way so both paths agree);
``citation`` (a source of the text of the same block: an ``Unknown("citation")`` block
of its own, holding the citation as sent, right after that text block; one that comes
before its text waits for it, and one whose block holds no text (Nova's grounding) is
a block of its own when its block ends: no empty text). Unknown event
and delta types are ignored (documented rule); a block start of another kind (Nova's
server tools: ``toolUse`` of type ``server_tool_use``, ``toolResult``) is kept as an
``Unknown`` block.
"""

from __future__ import annotations

import base64
from collections.abc import Hashable, Mapping
from typing import Any, Final

from ..._core.assembler import Assembler
from ..._core.errors import MalformedStreamError
from ..._core.response import StopReason
from ..._framing.eventstream import exception_error, is_exception_name
from ..anthropic import API as ANTHROPIC
from ..anthropic.read import AnthropicHandler
from ..anthropic.read import parse_body as parse_anthropic_body
from ..base import (
    Handler,
    HandlerOptions,
    end_at_done_marker,
    int_or_none,
    json_text,
    shape_error,
    stop_reason_from,
    str_or_empty,
)
from ..plain import ARGUMENTS, TEXT, Plain, PlainReader
from . import _made

__all__ = [
    "EVENTS",
    "STOP_REASONS",
    "BedrockHandler",
    "parse_body",
    "usage_counts",
]

EVENTS: Final = frozenset(
    {
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    }
)

STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "end_turn": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.STOP_SEQUENCE,
    "guardrail_intervened": StopReason.CONTENT_FILTER,
    "content_filtered": StopReason.CONTENT_FILTER,
    "model_context_window_exceeded": StopReason.CONTEXT_WINDOW_EXCEEDED,
}


def usage_counts(usage: Mapping[str, Any]) -> dict[str, int | None]:
    """The counts of a Converse ``usage`` object."""
    return {
        "input_tokens": int_or_none(usage.get("inputTokens")),
        "output_tokens": int_or_none(usage.get("outputTokens")),
        "cache_read_tokens": int_or_none(usage.get("cacheReadInputTokens")),
        "cache_write_tokens": int_or_none(usage.get("cacheWriteInputTokens")),
    }


class BedrockHandler(PlainReader):
    """Stream handler for ConverseStream events.

    An InvokeModelWithResponseStream stream (``chunk`` events, each wrapping one of the
    model's own events: Anthropic's, the only models it streams that laminate reads) is
    not ConverseStream: its chunks go to the Anthropic reader, and the response names
    Anthropic, the API its turn is written back in, when no ConverseStream event came
    before.
    """

    __slots__ = ("_cited", "_described", "_inner", "_unknown", "assembler")

    # AWS pads every event's payload with characters of a varying length.
    _padding = ("p",)

    def __init__(self, assembler: Assembler, options: HandlerOptions | None = None) -> None:
        self.assembler = assembler
        self._inner: Handler | None = None  # the reader of the chunks, once one came
        self._described = False  # a `metadata` event arrived
        # Open Unknown blocks (server tools): their type and data, which deltas extend.
        self._unknown: dict[int, tuple[str, dict[str, Any]]] = {}
        # Citations that came before any text of their block: given after its text opens.
        self._cited: dict[int, list[Mapping[str, Any]]] = {}

    def _plain(self, name: str | None, obj: Any) -> Plain | None:
        # One text or argument fragment, alone in its delta, for an int-keyed block (see
        # PlainReader). Subscripts read it quickest; what fails them is not plain.
        if name != "contentBlockDelta":
            return None
        piece = None
        try:
            delta = obj["delta"]
            key = obj["contentBlockIndex"]
            is_text = "text" in delta
            piece = delta["text"] if is_text else delta["toolUse"]["input"]
        except (KeyError, TypeError, IndexError):
            pass
        if piece.__class__ is not str or key.__class__ is not int or len(delta) != 1:
            return None
        if is_text:
            return key, piece, TEXT
        return key, piece, ARGUMENTS

    # Made from _plain: _made.py, written by `python -m laminate._apis.make_plain`.
    on_frame = _made.on_frame
    run = _made.run

    def _on_other(self, name: str | None, obj: Any) -> None:
        if name == "contentBlockDelta" and obj.__class__ is dict:
            self._block_delta(obj)
            return
        if obj.__class__ is not dict and not isinstance(obj, Mapping):
            raise shape_error("a ConverseStream event is not a JSON object")
        if name == "chunk" or (name is None and "chunk" in obj) or self._inner is not None:
            self._chunk(name, obj)
            return
        if name is None:
            # boto3's shape: one key, the event's name, around the payload.
            for event, payload in obj.items():
                if event in EVENTS or is_exception_name(event):
                    self._dispatch(event, payload)
                    return
            return  # an event type added later (documented rule: ignored)
        self._dispatch(name, obj)

    def _chunk(self, event: str | None, obj: Any) -> None:
        """An InvokeModelWithResponseStream frame: handed to the carried model's reader."""
        inner = self._inner
        if inner is None:
            if self.assembler.started:
                raise MalformedStreamError(
                    "an InvokeModelWithResponseStream `chunk` event in a ConverseStream "
                    "stream: read a model's own events with its provider's name"
                )
            self.assembler.provider = ANTHROPIC.name
            inner = self._inner = AnthropicHandler(self.assembler)
        inner.on_frame(event, obj)

    def on_done_marker(self) -> None:
        if self._inner is not None:
            self._inner.on_done_marker()
            return
        # ConverseStream has no `[DONE]`; read as the end of the answer only after its stop.
        end_at_done_marker(self.assembler, "the message's stop reason")

    def _dispatch(self, name: str, payload: Any) -> None:
        if name == "contentBlockDelta":  # nearly every event: checked first
            self._block_delta(_mapping(payload, name))
            return
        match name:
            case "messageStart":
                self.assembler.start("", "")  # the stream names neither an id nor a model
            case "contentBlockStart":
                self._block_start(_mapping(payload, name))
            case "contentBlockStop":
                key = _key(_mapping(payload, name))
                self._unknown.pop(key, None)
                self._cite(key)  # a block of citations alone
                self.assembler.end(key)
            case "messageStop":
                self._message_stop(_mapping(payload, name))
            case "metadata":
                self._metadata(_mapping(payload, name))
            case _ if is_exception_name(name):
                raise exception_error(name, payload)
            case _:
                pass  # event types added later are ignored (documented rule)

    def _block_start(self, obj: Mapping[str, Any]) -> None:
        key = _key(obj)
        start = obj.get("start")
        if not isinstance(start, Mapping):
            raise shape_error("`contentBlockStart` without a `start`")
        if not start:
            return  # nothing to open: the block's first delta will
        kind, value = next(iter(start.items()))
        data = dict(value) if isinstance(value, Mapping) else {"value": value}
        block_type = str(kind)
        if kind == "toolUse":
            if data.get("type", "tool_use") == "tool_use":
                identity = str_or_empty(data.get("toolUseId")), str_or_empty(data.get("name"))
                self.assembler.tool_start(key, *identity)
                return
            block_type = str_or_empty(data.get("type")) or block_type  # server_tool_use
        self._unknown[key] = (block_type, data)
        self.assembler.unknown(key, block_type, data)

    def _block_delta(self, obj: Mapping[str, Any]) -> None:
        delta = obj.get("delta")
        if delta.__class__ is not dict and not isinstance(delta, Mapping):
            raise shape_error("`contentBlockDelta` without a `delta`")
        key = obj.get("contentBlockIndex")
        if key.__class__ is not int:
            key = _key(obj)
        asm = self.assembler
        for kind, value in delta.items():
            match kind:
                case "text":
                    asm.text(key, value if value.__class__ is str else str_or_empty(value))
                    if key in self._cited and asm.is_open(key):
                        self._cite(key)
                case "toolUse":
                    is_mapping = value.__class__ is dict or isinstance(value, Mapping)
                    fragment = value.get("input") if is_mapping else None
                    if not isinstance(fragment, str):
                        fragment = "" if fragment is None else json_text(fragment)
                    asm.tool_input(key, fragment)
                case "reasoningContent" if isinstance(value, Mapping):
                    self._reasoning(key, value)
                case "toolResult" if key in self._unknown:
                    self._extend_unknown(key, value)
                case "citation":
                    self._citation(key, value)
                case _:
                    pass  # delta types added later are ignored (documented rule)

    def _citation(self, key: int, citation: Any) -> None:
        if not isinstance(citation, Mapping):
            raise shape_error("a `citation` delta that is not an object")
        if self.assembler.is_open(key) and key not in self._cited:
            self.assembler.citation(citation)  # after the text it annotates
        else:
            self._cited.setdefault(key, []).append(citation)  # its text comes after it

    def _cite(self, key: int) -> None:
        for citation in self._cited.pop(key, ()):
            self.assembler.citation(citation)

    def _ready(self, key: Hashable, kind: bool) -> bool:
        """Text goes on as it comes, except the first of a block whose citations wait
        for it (read one by one, so that they follow its opening)."""
        return key not in self._cited

    def _reasoning(self, key: int, value: Mapping[str, Any]) -> None:
        asm = self.assembler
        text = value.get("text")
        if isinstance(text, str):
            asm.reasoning(key, text)
        signature = value.get("signature")
        if isinstance(signature, str) and signature:
            asm.reasoning_signature(key, signature)
        redacted = value.get("redactedContent")
        if redacted is not None:
            asm.open_reasoning(key, redacted=True)
            asm.reasoning_signature(key, _blob_text(redacted))

    def _extend_unknown(self, key: int, value: Any) -> None:
        block_type, data = self._unknown[key]
        parts = value if isinstance(value, list) else [value]
        data = {**data, "content": [*data.get("content", ()), *parts]}
        self._unknown[key] = (block_type, data)
        self.assembler.unknown(key, block_type, data)

    def _message_stop(self, obj: Mapping[str, Any]) -> None:
        raw = obj.get("stopReason")
        if not isinstance(raw, str) or not raw:
            raise shape_error("`messageStop` without a `stopReason`")
        for key in list(self._cited):
            self._cite(key)  # of a block that was never stopped
        self.assembler.finish(stop_reason_from(raw, STOP_REASONS))
        if self._described:
            self.assembler.complete()  # `metadata` came first (seen behind some proxies)

    def _metadata(self, obj: Mapping[str, Any]) -> None:
        self._described = True
        usage = obj.get("usage")
        if isinstance(usage, Mapping):
            self.assembler.usage(dict(usage), **usage_counts(usage))
        if self.assembler.finished:
            self.assembler.complete()


def _mapping(payload: Any, name: str) -> Mapping[str, Any]:
    if payload.__class__ is dict or isinstance(payload, Mapping):
        return payload
    raise shape_error(f"`{name}` is not a JSON object")


def _key(obj: Mapping[str, Any]) -> int:
    """A block's key is its ``contentBlockIndex`` (a digit string is accepted)."""
    index = int_or_none(obj.get("contentBlockIndex"))
    if index is None:
        raise shape_error("a content block event without an integer `contentBlockIndex`")
    return index


def _blob_text(value: Any) -> str:
    """A blob as the JSON wire carries it: base64 text (boto3 hands over the raw bytes)."""
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    return str_or_empty(value)


# -- complete bodies ------------------------------------------------------------------


def parse_body(
    assembler: Assembler, body: Mapping[str, Any], options: HandlerOptions | None = None
) -> None:
    """A complete ``converse()`` output, read as the events that would have streamed it.

    An error body (``{"message": ...}``, the type in a header AWS sends beside it, or in
    ``__type`` where a proxy folds it in) is the :class:`ProviderError` it reports.
    InvokeModel's body of an Anthropic model is the model's own, read as Anthropic's."""
    output = body.get("output")
    if output is None and ANTHROPIC.hints.matches_body(body):
        assembler.provider = ANTHROPIC.name
        parse_anthropic_body(assembler, body)
        return
    if output is None and isinstance(body.get("message"), str):
        error_type = str_or_empty(body.get("__type")).rpartition("#")[2] or "error"
        raise exception_error(error_type, body)
    message = output.get("message") if isinstance(output, Mapping) else None
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, list):
        raise shape_error("a Converse output without `output.message.content`")
    handler = BedrockHandler(assembler)
    handler.on_frame("messageStart", {"role": "assistant"})
    for index, block in enumerate(content):
        if not isinstance(block, Mapping):
            raise shape_error("a content block is not a JSON object")
        for frame in _block_frames(index, block):
            handler.on_frame(
                "contentBlockDelta" if "delta" in frame else "contentBlockStart", frame
            )
        handler.on_frame("contentBlockStop", {"contentBlockIndex": index})
    handler.on_frame("messageStop", {"stopReason": body.get("stopReason")})
    handler.on_frame("metadata", {"usage": body.get("usage")})


def _block_frames(index: int, block: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``contentBlockStart`` / ``contentBlockDelta`` payloads that stream ``block``."""

    def delta(value: dict[str, Any]) -> dict[str, Any]:
        return {"contentBlockIndex": index, "delta": value}

    if "text" in block:
        return [delta({"text": str_or_empty(block["text"])})]
    tool = block.get("toolUse")
    if isinstance(tool, Mapping):
        identity = {k: v for k, v in tool.items() if k != "input"}
        arguments = tool.get("input")
        fragment = arguments if isinstance(arguments, str) else json_text(arguments or {})
        return [
            {"contentBlockIndex": index, "start": {"toolUse": identity}},
            delta({"toolUse": {"input": fragment}}),
        ]
    reasoning = block.get("reasoningContent")
    if isinstance(reasoning, Mapping):
        text = reasoning.get("reasoningText")
        if isinstance(text, Mapping):
            parts = {"text": text.get("text"), "signature": text.get("signature")}
            return [delta({"reasoningContent": {k: v for k, v in parts.items() if v}})]
        return [delta({"reasoningContent": dict(reasoning)})]
    citations = block.get("citationsContent")
    if isinstance(citations, Mapping):
        # Text with its sources: the stream sends the sources as citation deltas, then
        # the same text as text deltas.
        pieces = citations.get("content")
        text = "".join(str_or_empty(p.get("text")) for p in pieces or () if isinstance(p, Mapping))
        sources = citations.get("citations")
        cited = [delta({"citation": c}) for c in sources or () if isinstance(c, Mapping)]
        return [*cited, delta({"text": text})]
    # Anything else (server tool results, images, documents, blocks added later).
    return [{"contentBlockIndex": index, "start": dict(block)}]
