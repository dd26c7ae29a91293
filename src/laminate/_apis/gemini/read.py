"""Gemini ``generateContent`` / ``streamGenerateContent``, on the Gemini API and Vertex AI.

Stream: every frame (an SSE ``data:`` event with ``alt=sse``, an element of the streamed
JSON array without it) is a whole ``GenerateContentResponse``: no event names, no block
indexes, no start or stop events, no ``[DONE]``. A complete body is the same object once.
So the handler keeps what the wire leaves implicit, one walk over each frame:

- **Blocks.** The current block's key and kind. A part of another kind (thought text,
  answer text, a function call, anything else) closes it and opens the next; every
  ``functionCall`` part is its own ``ToolUse``, whether parallel calls share a chunk or
  come one per chunk. A call without an ``id`` gets the assembler's stable generated one.
- **Signatures.** ``thoughtSignature`` may sit on any part; it is kept byte for byte on the
  block the part belongs to (``Text``, ``Reasoning``, ``ToolUse``). A signature-only part
  (``{"text": "", "thoughtSignature": ...}``, sent at the end of text answers) belongs to
  the block it follows and opens none, unless that block is already signed or cannot
  carry one: then it becomes an empty ``Text`` of its own, so nothing is lost.
- **Arguments.** A whole ``args`` object is one ``tool_input`` fragment (its JSON text).
  Vertex's ``streamFunctionCallArguments`` sends ``{name, willContinue}``, then
  ``partialArgs`` pieces addressed by JSON path, then ``{"functionCall": {}}`` (or
  ``willContinue`` left out); ``arguments.py``'s :class:`~.arguments.ArgumentWriter`
  turns the pieces into JSON text fragments, in order, so the live-argument views work
  as for every other API.
- **Metadata.** ``groundingMetadata``, ``citationMetadata`` and ``urlContextMetadata`` of a
  candidate are kept as one ``Unknown`` block each (lists concatenated across chunks,
  other fields replaced); other parts (``executableCode``, ``inlineData``, ...) are
  ``Unknown`` blocks holding the part as sent.
- **End.** ``finishReason`` (or ``promptFeedback.blockReason``, a blocked prompt) is the
  only sign of completion; a stream that ends without one was cut
  (``IncompleteStreamError``, raised by the normalizer at the end of the bytes). A clean
  finish while text is being written leaves the text block open, and a later finish
  replaces it: old Vertex streams repeat it on every chunk while the text goes on.
- **Usage.** ``usageMetadata`` is cumulative: each report replaces the counts it holds.
- **Errors.** ``{"error": {code, message, status}}`` in a frame is a ``ProviderError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._core.assembler import Assembler, UsageCounts
from ..._core.errors import ProviderError
from ..._core.response import StopReason
from ..base import (
    HandlerOptions,
    end_at_done_marker,
    int_or_none,
    is_retryable,
    shape_error,
    stop_reason_from,
)
from ..plain import TEXT, Plain, PlainReader
from . import _made
from .arguments import ArgumentWriter

__all__ = [
    "METADATA",
    "STOP_REASONS",
    "GeminiHandler",
    "gemini_error",
    "parse_body",
    "usage_counts",
]

_FILTERED = StopReason.CONTENT_FILTER
STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "STOP": StopReason.END_TURN,
    "MAX_TOKENS": StopReason.MAX_TOKENS,
    "SAFETY": _FILTERED,
    "RECITATION": _FILTERED,
    "BLOCKLIST": _FILTERED,
    "PROHIBITED_CONTENT": _FILTERED,
    "SPII": _FILTERED,
    "IMAGE_SAFETY": _FILTERED,
    "IMAGE_PROHIBITED_CONTENT": _FILTERED,
    "IMAGE_RECITATION": _FILTERED,
}
"""``finishReason`` values with a named kind; any other (``MALFORMED_FUNCTION_CALL``,
``OTHER``, ``LANGUAGE``, values added later) is kept as ``StopReason.unknown``."""

METADATA: Final = ("groundingMetadata", "citationMetadata", "urlContextMetadata")
"""Candidate fields kept as ``Unknown`` blocks of that name."""

# Status values of `google.rpc.Status` worth a retry (the API's own guidance).
_RETRYABLE: Final = frozenset(
    {"UNAVAILABLE", "RESOURCE_EXHAUSTED", "INTERNAL", "DEADLINE_EXCEEDED"}
)
# Part fields that qualify a part rather than make it one.
_PART_EXTRAS: Final = frozenset(
    {"thought", "thoughtSignature", "partMetadata", "videoMetadata", "mediaResolution"}
)
# The finishes that end a streamed call cleanly.
_CLEAN: Final = (StopReason.END_TURN, StopReason.TOOL_USE)

_TEXT: Final = 0
_REASONING: Final = 1
_TOOL: Final = 2
_UNKNOWN: Final = 3


def gemini_error(payload: Mapping[str, Any]) -> ProviderError:
    """``{"error": {"code", "message", "status"}}`` as a :class:`ProviderError` whose
    ``error_type`` is the ``status`` (``RESOURCE_EXHAUSTED``, ...)."""
    err = payload.get("error")
    if not isinstance(err, Mapping):
        err = {"message": str(err)}
    status = err.get("status")
    code = err.get("code")
    error_type = status if isinstance(status, str) and status else str(code or "error")
    message = err.get("message")
    return ProviderError(
        message if isinstance(message, str) and message else "the provider reported an error",
        error_type=error_type,
        retryable=error_type in _RETRYABLE or (not status and is_retryable("", code)),
        raw=payload,
    )


def usage_counts(usage: Mapping[str, Any]) -> dict[str, int | None]:
    """The counts of one ``usageMetadata``: output is everything billed as output,
    thoughts included."""
    prompt, output, cached, _, thoughts = _counts(usage)
    return {
        "input_tokens": prompt,
        "output_tokens": output,
        "reasoning_tokens": thoughts,
        "cache_read_tokens": cached,
    }


# The usage fields _counts reads.
_COUNTS: Final = (
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "promptTokenCount",
    "cachedContentTokenCount",
)


def _counts(usage: Mapping[str, Any]) -> UsageCounts:
    """The counts in the assembler's order (Gemini reports no cache writes)."""
    # Every chunk carries usage: plain ints are taken as they are, without a call each.
    candidates = usage.get("candidatesTokenCount")
    if candidates is not None and candidates.__class__ is not int:
        candidates = int_or_none(candidates)
    thoughts = usage.get("thoughtsTokenCount")
    if thoughts is not None and thoughts.__class__ is not int:
        thoughts = int_or_none(thoughts)
    prompt = usage.get("promptTokenCount")
    if prompt is not None and prompt.__class__ is not int:
        prompt = int_or_none(prompt)
    cached = usage.get("cachedContentTokenCount")
    if cached is not None and cached.__class__ is not int:
        cached = int_or_none(cached)
    output = None
    if candidates is not None or thoughts is not None:
        output = (candidates or 0) + (thoughts or 0)
    return prompt, output, cached, None, thoughts


class GeminiHandler(PlainReader):
    """Stream handler for ``GenerateContentResponse`` frames."""

    __slots__ = ("_args", "_choice", "_key", "_kind", "_meta", "_next", "_signed", "assembler")

    # Every chunk carries the usage so far, whose counts grow from chunk to chunk.
    _counted = ("usageMetadata",)

    def __init__(self, assembler: Assembler, options: HandlerOptions | None = None) -> None:
        self.assembler = assembler
        self._choice = options.choice if options is not None else 0
        self._key: int | None = None  # the current block
        self._kind = -1
        self._signed = False  # the current block has its signature
        self._args: ArgumentWriter | None = None  # the current call's streamed arguments
        self._next = 0
        self._meta: dict[str, dict[str, Any]] = {}

    def _plain(self, name: str | None, obj: Any) -> Plain | None:
        # A chunk of the chosen candidate that continues the text block with one text part,
        # with nothing else but the usage so far (kept by _took), once the answer has
        # started (see PlainReader). Subscripts read it quickest; what fails them is not
        # plain.
        if self._kind != _TEXT or not self.assembler.started:
            return None
        text = None
        try:
            candidates = obj["candidates"]
            candidate = candidates[0]
            content = candidate["content"]
            index = candidate["index"]
            parts = content["parts"]
            part = parts[0]
            text = part["text"]
        except (KeyError, TypeError, IndexError):
            pass
        if (
            text.__class__ is not str
            or obj.__class__ is not dict
            or "error" in obj
            or obj.get("promptFeedback")
            or candidates.__class__ is not list
            or len(candidates) != 1
            or candidate.__class__ is not dict
            or len(candidate) != 2
            or index.__class__ is not int
            or index != self._choice
            or content.__class__ is not dict
            or parts.__class__ is not list
            or len(parts) != 1
            or part.__class__ is not dict
            or len(part) != 1
        ):
            return None
        usage = obj.get("usageMetadata")
        if usage and usage.__class__ is not dict:
            return None
        return self._key, text, TEXT, usage

    # Made from _plain: _made.py, written by `python -m laminate._apis.make_plain`.
    on_frame = _made.on_frame
    run = _made.run

    def _took(self, extras: list[Any]) -> None:
        """The usage so far that plain chunks carried. Each one's counts replace the
        last's, so the last alone gives the same result when they all have the same keys
        and its counts are integers; otherwise each is applied in turn."""
        usages = [usage for usage in extras if usage]
        if not usages:
            return
        last = usages[-1]
        if len(usages) > 1:
            keys = last.keys()
            if all(usage.keys() == keys for usage in usages) and all(
                last.get(name).__class__ is int for name in _COUNTS if name in last
            ):
                usages = [last]
        asm = self.assembler
        for usage in usages:
            asm.counts(usage, _counts(usage))

    def _on_other(self, name: str | None, obj: Any) -> None:
        if obj.__class__ is not dict and not isinstance(obj, Mapping):
            raise shape_error("a Gemini chunk is not a JSON object")
        if "error" in obj:
            raise gemini_error(obj)
        asm = self.assembler
        if not asm.started:
            asm.start(_str(obj.get("responseId")), _str(obj.get("modelVersion")))
        candidates = obj.get("candidates")
        if candidates:
            if candidates.__class__ is not list:
                raise shape_error("`candidates` is not a list")
            for candidate in candidates:
                if candidate.__class__ is not dict and not isinstance(candidate, Mapping):
                    raise shape_error("a candidate is not an object")
                if (candidate.get("index") or 0) == self._choice:
                    self._candidate(candidate)
                    break
        usage = obj.get("usageMetadata")
        if usage:
            if usage.__class__ is not dict and not isinstance(usage, Mapping):
                raise shape_error("`usageMetadata` is not an object")
            asm.counts(usage, _counts(usage))
        feedback = obj.get("promptFeedback")
        if feedback and isinstance(feedback, Mapping):
            blocked = feedback.get("blockReason")
            if isinstance(blocked, str) and blocked:
                # The prompt was refused: a complete answer with no content.
                self._finish(_FILTERED.with_raw(blocked))

    def on_done_marker(self) -> None:
        # Gemini sends no `[DONE]`; a proxy that adds one after the finish reason ends the
        # answer, one that adds it earlier cut it short.
        end_at_done_marker(self.assembler, "the candidate's finishReason")

    # -- one candidate ----------------------------------------------------------------

    def _candidate(self, candidate: Mapping[str, Any]) -> None:
        content = candidate.get("content")
        if content:
            if content.__class__ is not dict and not isinstance(content, Mapping):
                raise shape_error("a candidate's `content` is not an object")
            parts = content.get("parts")
            if parts:
                if parts.__class__ is not list:
                    raise shape_error("`parts` is not a list")
                for part in parts:
                    self._part(part)
        if not candidate.keys().isdisjoint(METADATA):
            for name in METADATA:
                value = candidate.get(name)
                if value:
                    self._metadata(name, value)
        raw = candidate.get("finishReason")
        if raw:
            if not isinstance(raw, str):
                raise shape_error("`finishReason` is not a string")
            stop = stop_reason_from(raw, STOP_REASONS)
            if stop == StopReason.END_TURN and self.assembler.has_tool_calls():
                stop = StopReason.TOOL_USE.with_raw(raw)  # Gemini has no tool finish reason
            self._finish(stop)

    def _part(self, part: Any) -> None:
        if part.__class__ is not dict and not isinstance(part, Mapping):
            raise shape_error("a part is not an object")
        signature = part.get("thoughtSignature")
        if signature is not None and not isinstance(signature, str):
            raise shape_error("`thoughtSignature` is not a string")
        text = part.get("text")
        if text is not None:  # nearly every part
            if text.__class__ is not str:
                raise shape_error("a part's `text` is not a string")
            kind = _REASONING if part.get("thought") is True else _TEXT
            if text:
                self._text(kind, text, signature)
            elif signature:
                self._lone_signature(signature, kind)
            return
        call = part.get("functionCall")
        if call is not None:
            self._call(call, signature)
            return
        block_type = next((name for name in part if name not in _PART_EXTRAS), None)
        if block_type is not None:
            self._close()
            key = self._open(_UNKNOWN)
            self.assembler.unknown(key, block_type, dict(part))
        elif signature:
            self._lone_signature(signature, _TEXT)
        # else: an empty part, or `thought` alone: nothing to keep

    def _text(self, kind: int, text: str, signature: str | None) -> None:
        key = self._key
        if key is None or self._kind != kind or (signature and self._signed):
            self._close()
            key = self._open(kind)
        if kind == _TEXT:
            self.assembler.text(key, text)
        else:
            self.assembler.reasoning(key, text)
        if signature:
            self._sign(signature)

    def _lone_signature(self, signature: str, kind: int) -> None:
        if self._key is None or self._signed or self._kind == _UNKNOWN:
            self._close()
            key = self._open(kind)
            if kind == _TEXT:
                self.assembler.open_text(key)
            else:
                self.assembler.open_reasoning(key)
        self._sign(signature)

    def _sign(self, signature: str) -> None:
        asm = self.assembler
        key = self._key
        if self._kind == _TEXT:
            asm.text_signature(key, signature)
        elif self._kind == _REASONING:
            asm.reasoning_signature(key, signature)
        else:
            asm.tool_signature(key, signature)
        self._signed = True

    def _call(self, call: Any, signature: str | None) -> None:
        if call.__class__ is not dict and not isinstance(call, Mapping):
            raise shape_error("`functionCall` is not an object")
        asm = self.assembler
        name = call.get("name")
        writer = self._args
        if not name and writer is not None:
            # The streamed call goes on: more pieces, or its end (`{}` or no willContinue).
            pieces = call.get("partialArgs")
            if pieces:
                writer.write(pieces)
            if signature and not self._signed:
                self._sign(signature)
            if call.get("willContinue") is not True:
                self._close()
            return
        if not call:
            return  # the end marker of a streamed call that already ended
        self._close()
        key = self._open(_TOOL)
        asm.tool_start(key, _str(call.get("id")), _str(name))
        if signature:
            self._sign(signature)
        args = call.get("args")
        if args is not None:
            asm.tool_arguments(key, args)
            return
        pieces = call.get("partialArgs")
        if call.get("willContinue") is True or pieces:
            writer = self._args = ArgumentWriter(asm, key)
            if pieces:
                writer.write(pieces)
            if call.get("willContinue") is not True:
                self._close()

    def _metadata(self, name: str, value: Any) -> None:
        if not isinstance(value, Mapping):
            raise shape_error(f"`{name}` is not an object")
        seen = self._meta.get(name)
        merged = dict(value) if seen is None else _merged(seen, value)
        self._meta[name] = merged
        # Its own key: it stays open beside the parts' blocks and is replaced as it grows.
        self.assembler.unknown(("metadata", name), name, merged)

    def _finish(self, stop: StopReason) -> None:
        if self._kind == _TEXT and stop in _CLEAN:
            # The text block stays open until the stream ends: old Vertex streams put the
            # finish on every chunk while the text goes on, and each chunk continues it.
            self.assembler.finish(stop, close=False)
            return
        if self._args is None or stop in _CLEAN:
            # A part arrives whole (text, a call with its `args`): the current block is
            # finished, and so is the last streamed call when the answer ends cleanly.
            self._close()
        # A streamed call open at any other finish is left as it stood: the assembler
        # ends it as cut off (or as not valid JSON).
        self._args = None
        self._key = None
        self._kind = -1
        self.assembler.finish(stop)

    # -- the current block --------------------------------------------------------------

    def _open(self, kind: int) -> int:
        key = self._next
        self._next = key + 1
        self._key = key
        self._kind = kind
        self._signed = False
        return key

    def _close(self) -> None:
        key = self._key
        if key is None:
            return
        if self._args is not None:
            self._args.close()
            self._args = None
        self.assembler.end(key)
        self._key = None
        self._kind = -1


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _merged(seen: Mapping[str, Any], value: Mapping[str, Any]) -> dict[str, Any]:
    """Later metadata: lists extend what came before, other fields replace it. A new dict
    and new lists, so that what earlier events hold never changes."""
    merged = dict(seen)
    for name, item in value.items():
        before = merged.get(name)
        if isinstance(before, list) and isinstance(item, list):
            merged[name] = before + item
        else:
            merged[name] = item
    return merged


def parse_body(
    assembler: Assembler, body: Mapping[str, Any], options: HandlerOptions | None = None
) -> None:
    """A complete ``generateContent`` body: the one chunk that would have streamed it."""
    GeminiHandler(assembler, options).on_frame(None, body)
