"""The OpenAI Responses API (``/v1/responses``), and the servers that implement it.

Stream: typed events, dispatched on the JSON ``type`` (some servers send no ``event:``
lines). Output items are keyed by ``output_index``, never by their ids, which some
servers change from one event to the next. Blocks:

- a ``message`` item gives one ``Text`` block per content part (``output_text`` or
  ``refusal``), keyed by ``(output_index, content_index)``;
- a ``reasoning`` item gives one ``Reasoning`` block: its summary parts and
  ``reasoning_text`` parts in arrival order, joined by a blank line; the item id and its
  ``encrypted_content`` (from ``output_item.done``) are kept so it can be sent back;
- a ``function_call`` item gives a tool call whose id is the item's ``call_id``; it is
  finished by its ``output_item.done`` (or by the terminal response); a
  ``custom_tool_call`` item (a free-form tool) is read alike, its ``input`` text
  streaming in ``custom_tool_call_input`` deltas, and ends as a ``ToolUse`` of kind
  ``"custom"``;
- any other item type becomes an ``Unknown`` block when it is done, with the item's
  final data.

``.done`` events only supply text or arguments that no delta carried (a delta already
streamed is never repeated). The terminal ``response`` fills in whatever the stream
left out, by position. Unknown event types are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from typing import Any, Final

from ..._core.assembler import Assembler
from ..._core.errors import IncompleteStreamError, MalformedStreamError, ProviderError
from ..._core.response import StopReason
from ..base import (
    HandlerOptions,
    error_from_payload,
    int_or_none,
    shape_error,
    stop_reason_from,
    str_or_empty,
)
from ..plain import ARGUMENTS, TEXT, Plain, PlainReader
from . import _made

__all__ = ["STOP_REASONS", "OpenAIResponsesHandler", "parse_body", "stop_reason", "usage_counts"]

STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "completed": StopReason.END_TURN,
    "max_output_tokens": StopReason.MAX_TOKENS,
    "content_filter": StopReason.CONTENT_FILTER,
}

# Items the model emits to have the client run something: the response stops for them.
_TOOL_ITEMS: Final = frozenset({"function_call", "custom_tool_call"})
# Item statuses of a call the provider did not finish (cut off by the token limit).
_UNFINISHED: Final = frozenset({"in_progress", "incomplete"})
# Error codes of the Responses API that may succeed on retry, beyond the shared table.
_RETRYABLE_CODES: Final = frozenset({"vector_store_timeout"})
_PART_SEPARATOR: Final = "\n\n"
_ARGS: Final = "arguments"
_CUSTOM: Final = "custom_tool_call"


def usage_counts(usage: Mapping[str, Any]) -> dict[str, int | None]:
    """Responses usage as laminate's counts."""
    inputs = usage.get("input_tokens_details")
    outputs = usage.get("output_tokens_details")
    return {
        "input_tokens": int_or_none(usage.get("input_tokens")),
        "output_tokens": int_or_none(usage.get("output_tokens")),
        "cache_read_tokens": _detail(inputs, "cached_tokens"),
        "cache_write_tokens": _detail(inputs, "cache_write_tokens"),
        "reasoning_tokens": _detail(outputs, "reasoning_tokens"),
    }


def _detail(details: Any, name: str) -> int | None:
    return int_or_none(details.get(name)) if isinstance(details, Mapping) else None


def stop_reason(response: Mapping[str, Any], *, has_tool_calls: bool, refused: bool) -> StopReason:
    """The stop reason of a finished response, from its ``status``.

    ``completed`` is ``END_TURN``, or ``TOOL_USE`` when the model called tools, or
    ``REFUSAL`` when it refused (``raw`` stays ``"completed"``); ``incomplete`` is named
    by ``incomplete_details.reason``; anything else is kept as unknown.
    """
    status = str_or_empty(response.get("status")) or "completed"
    if status == "completed":
        if has_tool_calls:
            return StopReason.TOOL_USE.with_raw(status)
        if refused:
            return StopReason.REFUSAL.with_raw(status)
        return StopReason.END_TURN.with_raw(status)
    if status == "incomplete":
        details = response.get("incomplete_details")
        reason = str_or_empty(details.get("reason")) if isinstance(details, Mapping) else ""
        return stop_reason_from(reason, STOP_REASONS) if reason else StopReason.unknown(status)
    return StopReason.unknown(status)


def provider_error(payload: Mapping[str, Any], *, default_type: str) -> ProviderError:
    error = error_from_payload(payload, default_type=default_type)
    if error.error_type in _RETRYABLE_CODES:
        error.retryable = True
    return error


class _Item:
    """What the stream said so far about one output item."""

    __slots__ = ("done", "has_text", "id", "kind", "parts", "seen")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.id = ""
        self.done = False
        # A message's text blocks by content index, in the order they opened: each
        # part's key is made once, so that its deltas all give the same key.
        self.parts: dict[int, Hashable] = {}
        self.seen: set[Hashable] = set()  # parts (or the arguments) that received text
        self.has_text = False  # a reasoning block already holds text


class OpenAIResponsesHandler(PlainReader):
    """Stream handler for Responses API events."""

    # OpenAI pads every event with random characters (`stream_options.include_obfuscation`),
    # and numbers the events.
    _padding = ("obfuscation",)
    _counted = ("sequence_number",)

    def __init__(self, assembler: Assembler, options: HandlerOptions | None = None) -> None:
        self.assembler = assembler
        self._items: dict[int, _Item] = {}
        self._ended: set[Hashable] = set()
        self._cited: set[Hashable] = set()  # the annotations kept, by item, part and number
        self._refused = False
        self._tool_items = False

    def _plain(self, name: str | None, obj: Any) -> Plain | None:
        # A text delta for a content part, or an arguments delta for a call, whose block
        # the stream has opened (see PlainReader; _ready says whether the block takes it
        # as it comes). A part's key is the one its item's state holds, the same object
        # for every delta; an item's own block is keyed by its output index.
        # Subscripts read it quickest; what fails them is not plain.
        items = self._items
        piece = None
        try:
            kind = obj["type"]
            index = obj["output_index"]
            if kind == "response.output_text.delta":
                sub = obj["content_index"]
                text = True
                key = items[index].parts[sub]
                piece = obj["delta"]
            elif kind == "response.function_call_arguments.delta":
                text = False
                key = index
                piece = obj["delta"]
        except (KeyError, TypeError, IndexError):
            pass
        if piece.__class__ is not str or index.__class__ is not int or obj.__class__ is not dict:
            return None
        if not text:
            return key, piece, ARGUMENTS
        if sub.__class__ is int:
            return key, piece, TEXT
        return None

    # Made from _plain: _made.py, written by `python -m laminate._apis.make_plain`.
    on_frame = _made.on_frame
    run = _made.run

    def _ready(self, key: Hashable, kind: bool) -> bool:
        """The block is open, in an item still being written, and has had a piece before
        (so that nothing about its item changes with this one)."""
        index = key[1] if isinstance(key, tuple) else key  # a part's item, or the item
        state = self._items.get(index) if isinstance(index, int) else None
        if state is None or not state.kind or state.done or not self.assembler.is_open(key):
            return False
        if kind is TEXT:
            return key in state.seen and key not in self._ended
        return _ARGS in state.seen

    def _on_other(self, event: str | None, obj: Any) -> None:
        if type(obj) is not dict and not isinstance(obj, Mapping):
            raise shape_error("an event is not a JSON object")
        kind = obj.get("type")
        if not isinstance(kind, str):
            kind = event
        match kind:
            case "response.created" | "response.queued" | "response.in_progress":
                self._start(obj.get("response"))
            case "response.output_item.added":
                self._item_added(_index(obj), _item(obj))
            case "response.output_item.done":
                self._item_done(_index(obj), _item(obj))
            case "response.content_part.added":
                self._part_added(obj)
            case "response.content_part.done":
                self._part_done(obj)
            case "response.output_text.delta" | "response.refusal.delta":
                refusal = kind == "response.refusal.delta"
                self._text(_index(obj), _sub(obj), obj.get("delta"), refusal=refusal)
            case "response.output_text.done":
                self._text_final(_index(obj), _sub(obj), obj.get("text"))
            case "response.refusal.done":
                self._text_final(_index(obj), _sub(obj), obj.get("refusal"), refusal=True)
            case "response.function_call_arguments.delta":
                self._arguments(_index(obj), obj.get("delta"))
            case "response.function_call_arguments.done":
                self._arguments_final(_index(obj), obj.get("arguments"))
            case "response.custom_tool_call_input.delta":
                self._arguments(_index(obj), obj.get("delta"), _CUSTOM)
            case "response.custom_tool_call_input.done":
                self._arguments_final(_index(obj), obj.get("input"), _CUSTOM)
            case "response.reasoning_summary_text.delta" | "response.reasoning_text.delta":
                self._reasoning(_index(obj), _reasoning_part(obj), obj.get("delta"))
            case "response.reasoning_summary_text.done" | "response.reasoning_text.done":
                self._reasoning_final(_index(obj), _reasoning_part(obj), obj.get("text"))
            case "response.reasoning_summary_part.done":
                part = obj.get("part")
                text = part.get("text") if isinstance(part, Mapping) else None
                self._reasoning_final(_index(obj), _reasoning_part(obj), text)
            case "response.completed" | "response.incomplete":
                self._terminal(obj)
            case "response.failed":
                self._failed(obj)
            case "error":
                raise provider_error(obj, default_type="error")
            case "response.output_text.annotation.added":
                number = obj.get("annotation_index")
                self._annotation(_index(obj), _sub(obj), number, obj.get("annotation"))
            case "response.reasoning_summary_part.added":
                pass  # parts open on their first text
            case _:
                pass  # built-in tool progress and event types added later (documented rule)

    def on_done_marker(self) -> None:
        # Some servers end with `data: [DONE]`, which the Responses API never sends. After a
        # terminal event it is never read; before one, the answer is not complete.
        raise IncompleteStreamError(
            "the stream sent [DONE] before a terminal event "
            "(response.completed, response.incomplete or response.failed)"
        )

    # -- the response -------------------------------------------------------------------

    def _start(self, response: Any) -> None:
        if isinstance(response, Mapping):
            self.assembler.start(
                str_or_empty(response.get("id")), str_or_empty(response.get("model"))
            )

    def _terminal(self, obj: Mapping[str, Any]) -> None:
        response = obj.get("response")
        if not isinstance(response, Mapping):
            raise shape_error(f"`{obj.get('type')}` without a response object")
        if "status" not in response and obj.get("type") == "response.incomplete":
            response = {**response, "status": "incomplete"}
        self.finish(response)

    def finish(self, response: Mapping[str, Any]) -> None:
        """The final ``response`` object: fill in what the stream left out, then stop."""
        asm = self.assembler
        self._start(response)
        usage = response.get("usage")
        if isinstance(usage, Mapping):
            asm.usage(dict(usage), **usage_counts(usage))
        self.replay(response.get("output"))
        has_tools = self._tool_items or asm.has_tool_calls()
        asm.finish(stop_reason(response, has_tool_calls=has_tools, refused=self._refused))
        asm.complete()

    def replay(self, output: Any) -> None:
        """Output items the stream did not finish (or never sent), read as their ``.done``."""
        if not isinstance(output, list):
            return
        for index, item in enumerate(output):
            state = self._items.get(index)
            if isinstance(item, Mapping) and (state is None or not state.done):
                self._item_done(index, item)

    def _failed(self, obj: Mapping[str, Any]) -> None:
        response = obj.get("response")
        if not isinstance(response, Mapping):
            raise provider_error({"error": None}, default_type="response_failed")
        self._start(response)
        raise provider_error(response, default_type="response_failed")

    # -- output items -----------------------------------------------------------------------

    def _state(self, index: int, kind: str) -> _Item:
        state = self._items.get(index)
        if state is None:
            state = self._items[index] = _Item(kind)
        elif not state.kind:
            state.kind = kind
        return state

    def _item_added(self, index: int, item: Mapping[str, Any]) -> None:
        kind = str_or_empty(item.get("type"))
        state = self._state(index, kind)
        if state.done:
            # A server numbering every item alike would otherwise lose all but the first.
            raise MalformedStreamError(f"a second output item at output_index {index}")
        state.id = state.id or str_or_empty(item.get("id"))
        key = index
        asm = self.assembler
        match kind:
            case "reasoning":
                asm.open_reasoning(key)
            case "function_call" | "custom_tool_call":
                if not asm.is_open(key):
                    call_id = str_or_empty(item.get("call_id"))
                    name = str_or_empty(item.get("name"))
                    asm.tool_start(key, call_id, name, custom=kind == _CUSTOM)
            case _:
                pass  # a message opens a block per content part; other items when done

    def _item_done(self, index: int, item: Mapping[str, Any]) -> None:
        kind = str_or_empty(item.get("type")) or self._state(index, "").kind
        state = self._state(index, kind)
        if state.done:
            return
        match kind:
            case "message":
                self._message_done(index, state, item)
            case "reasoning":
                self._reasoning_done(index, state, item)
            case "function_call" | "custom_tool_call":
                self._call_done(index, item, kind)
            case _:
                self._unknown_done(index, kind, item)
        state.done = True

    def _message_done(self, index: int, state: _Item, item: Mapping[str, Any]) -> None:
        content = item.get("content")
        # The item's parts are the streamed ones in order, whatever `content_index` they
        # came with (Bedrock Mantle counts from 1); parts no event carried come after.
        streamed = sorted(state.parts)
        after = streamed[-1] + 1 - len(streamed) if streamed else 0
        for position, part in enumerate(content if isinstance(content, list) else []):
            sub = streamed[position] if position < len(streamed) else after + position
            if isinstance(part, Mapping):
                self._text_part_done(index, sub, part)
        for key in state.parts.values():
            self._end_text(key)

    def _reasoning_done(self, index: int, state: _Item, item: Mapping[str, Any]) -> None:
        for field in ("summary", "content"):
            parts = item.get(field)
            for sub, part in enumerate(parts if isinstance(parts, list) else []):
                if isinstance(part, Mapping):
                    self._reasoning_final(index, (field, sub), part.get("text"))
        key = index
        asm = self.assembler
        asm.open_reasoning(key, id=str_or_empty(item.get("id")) or state.id)
        encrypted = item.get("encrypted_content")
        if isinstance(encrypted, str) and encrypted:
            asm.reasoning_signature(key, encrypted)
        asm.end(key)

    def _call_done(self, index: int, item: Mapping[str, Any], kind: str) -> None:
        key = index
        asm = self.assembler
        call_id = str_or_empty(item.get("call_id"))
        name = str_or_empty(item.get("name"))
        custom = kind == _CUSTOM
        if asm.is_open(key):
            asm.tool_identity(key, call_id, name)
        else:
            asm.tool_start(key, call_id, name, custom=custom)
        self._arguments_final(index, item.get("input" if custom else "arguments"), kind)
        if item.get("status") not in _UNFINISHED:
            asm.end(key)
        # else: left open, so the response's stop reason decides (cut off at the limit)

    def _unknown_done(self, index: int, kind: str, item: Mapping[str, Any]) -> None:
        if kind in _TOOL_ITEMS:
            self._tool_items = True
        key = index
        data = {k: v for k, v in item.items() if k != "type"}
        self.assembler.unknown(key, kind, data)
        self.assembler.end(key)

    # -- message text -----------------------------------------------------------------------

    def _part_added(self, obj: Mapping[str, Any]) -> None:
        part = obj.get("part")
        kind = part.get("type") if isinstance(part, Mapping) else None
        index = _index(obj)
        if kind == "reasoning_text":
            self._reasoning_block(index)
        elif kind in ("output_text", "refusal"):
            self._open_text(index, _sub(obj))

    def _part_done(self, obj: Mapping[str, Any]) -> None:
        part = obj.get("part")
        if not isinstance(part, Mapping):
            return
        index, sub = _index(obj), _sub(obj)
        if part.get("type") == "reasoning_text":
            self._reasoning_final(index, ("content", sub), part.get("text"))
        else:
            self._text_part_done(index, sub, part)

    def _text_part_done(self, index: int, sub: int, part: Mapping[str, Any]) -> None:
        match part.get("type"):
            case "output_text":
                self._text_final(index, sub, part.get("text"))
                annotations = part.get("annotations")
                for number, annotation in enumerate(
                    annotations if isinstance(annotations, list) else []
                ):
                    self._annotation(index, sub, number, annotation)
            case "refusal":
                self._text_final(index, sub, part.get("refusal"), refusal=True)
            case _:
                return  # audio and other part types are not modelled
        self._end_text(("part", index, sub))

    def _open_text(self, index: int, sub: int) -> Hashable | None:
        state = self._state(index, "message")
        key = state.parts.get(sub) or ("part", index, sub)
        if key in self._ended or state.done:
            return None
        if not self.assembler.is_open(key):
            self.assembler.open_text(key)
            state.parts[sub] = key
        return key

    def _text(self, index: int, sub: int, text: Any, *, refusal: bool = False) -> None:
        if not isinstance(text, str) or not text:
            return
        key = self._open_text(index, sub)
        if key is None:
            raise _late("text", index)
        self._refused = self._refused or refusal
        self._items[index].seen.add(key)
        self.assembler.text(key, text)

    def _text_final(self, index: int, sub: int, text: Any, *, refusal: bool = False) -> None:
        # An empty part is still a block, as it is in the complete body.
        key = self._open_text(index, sub)
        if key is not None and key not in self._items[index].seen:
            self._text(index, sub, text, refusal=refusal)

    def _annotation(self, index: int, sub: int, number: Any, annotation: Any) -> None:
        """A citation of a text part: an ``Unknown("citation")`` block of its own, after
        that part's text block, holding the annotation as sent; each once, though the
        stream repeats them in the part's and the item's ``.done`` and the response."""
        if not isinstance(annotation, Mapping):
            raise shape_error("an annotation that is not an object")
        key = ("citation", index, sub, number if type(number) is int else len(self._cited))
        if key in self._cited:
            return
        self._cited.add(key)
        self._open_text(index, sub)  # the part it annotates, when it has not opened yet
        self.assembler.citation(annotation)

    def _end_text(self, key: Hashable) -> None:
        if key not in self._ended:
            self._ended.add(key)
            self.assembler.end(key)

    # -- function calls ---------------------------------------------------------------------

    def _arguments(self, index: int, fragment: Any, kind: str = "function_call") -> None:
        """A fragment of a call's arguments (of a custom call's input text)."""
        if not isinstance(fragment, str) or not fragment:
            return
        state = self._state(index, kind)
        if state.done:
            raise _late(f"{kind}_input" if kind == _CUSTOM else "function_call_arguments", index)
        key = index
        if not self.assembler.is_open(key):
            # A server that skipped output_item.added.
            self.assembler.tool_start(key, "", "", custom=kind == _CUSTOM)
        state.seen.add(_ARGS)
        self.assembler.tool_input(key, fragment)

    def _arguments_final(self, index: int, arguments: Any, kind: str = "function_call") -> None:
        state = self._state(index, kind)
        if state.done or _ARGS in state.seen:
            return  # the deltas already carried them: never append them twice
        if isinstance(arguments, (Mapping, list)):
            arguments = json.dumps(arguments, ensure_ascii=False)
        self._arguments(index, arguments, kind)

    # -- reasoning --------------------------------------------------------------------------

    def _reasoning_block(self, index: int) -> _Item | None:
        state = self._state(index, "reasoning")
        if state.done:
            return None
        key = index
        if not self.assembler.is_open(key):
            self.assembler.open_reasoning(key)
        return state

    def _reasoning(self, index: int, part: Hashable, text: Any) -> None:
        if not isinstance(text, str) or not text:
            return
        state = self._reasoning_block(index)
        if state is None:
            raise _late("reasoning", index)
        if part not in state.seen:
            state.seen.add(part)
            if state.has_text:
                text = _PART_SEPARATOR + text
        state.has_text = True
        self.assembler.reasoning(index, text)

    def _reasoning_final(self, index: int, part: Hashable, text: Any) -> None:
        state = self._state(index, "reasoning")
        if not state.done and part not in state.seen:
            self._reasoning(index, part, text)


def _index(obj: Mapping[str, Any]) -> int:
    index = obj.get("output_index")
    if type(index) is int:
        return index
    index = int_or_none(index)
    if index is None:
        raise shape_error(f"`{obj.get('type')}` without an integer `output_index`")
    return index


def _sub(obj: Mapping[str, Any]) -> int:
    """The content part's index; servers that send a single part may leave it out."""
    index = obj.get("content_index")
    if type(index) is int:
        return index
    return int_or_none(index) or 0


def _reasoning_part(obj: Mapping[str, Any]) -> tuple[str, int]:
    if "summary_index" in obj:
        return ("summary", int_or_none(obj.get("summary_index")) or 0)
    return ("content", _sub(obj))


def _late(what: str, index: int) -> MalformedStreamError:
    return MalformedStreamError(f"a {what} delta for output_index {index}, which is already done")


def _item(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    item = obj.get("item")
    if not isinstance(item, Mapping):
        raise shape_error(f"`{obj.get('type')}` without an item object")
    return item


def parse_body(
    assembler: Assembler, body: Mapping[str, Any], options: HandlerOptions | None = None
) -> None:
    """A complete ``response`` object, read as the terminal event of a stream that sent
    nothing else."""
    handler = OpenAIResponsesHandler(assembler)
    status = str_or_empty(body.get("status"))
    if status == "failed":
        handler.on_frame(None, {"type": "response.failed", "response": body})
    if status in ("queued", "in_progress"):
        handler._start(body)
        handler.replay(body.get("output"))
        raise IncompleteStreamError(f"the response is not finished (status {status!r})")
    handler.finish(body)
