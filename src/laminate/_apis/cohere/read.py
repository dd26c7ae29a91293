"""Cohere v2 chat (``POST /v2/chat``).

Stream: SSE whose frames carry their own ``type`` (the ``event:`` line repeats it) and a
trailing bare ``data: [DONE]``::

    message-start                    id
    content-start/delta/end          index; content {type: text | thinking, text | thinking}
    tool-plan-delta                  delta.message.tool_plan (no index)
    tool-call-start/delta/end        index; delta.message.tool_calls is ONE object
    citation-start/end               index; delta.message.citations is ONE object
    message-end                      delta {finish_reason, usage, error?}
    debug                            ignored

Cohere numbers content items, tool calls and citations separately, so each kind gets
its own keys in the assembler: a content index ``i`` is the key ``i``, a call the key
``-1 - i`` (a negative int: as cheap to hash as the content keys, on the hot path of
argument fragments), a citation ``("citation", i)``, the plan ``"plan"``. The two
frequent events (``content-delta``, ``tool-call-delta``) are read with one chain of
lookups each; anything unusual in them falls back to the checked path.

Rules, each tested:

- ``thinking`` content is a ``Reasoning`` block. The tool plan is a ``Reasoning`` block
  too, with ``id="tool_plan"`` (the message field it came from), which is how the
  request shapes know to echo it back as ``tool_plan`` rather than as thinking.
- A citation is an ``Unknown("citation", data)`` block holding the citation object as
  sent (``start``, ``end``, ``text``, ``sources``, ``type``...): citations annotate text
  that was already streamed, so they are kept beside it, never dropped.
- ``message-end`` completes the answer: its ``finish_reason`` is the stop reason
  (``COMPLETE`` and ``TOOL_CALL`` name ``END_TURN`` and ``TOOL_USE``; ``ERROR`` and
  ``TIMEOUT`` are kept as ``StopReason.unknown``), ``usage.tokens`` gives the counts,
  ``usage.cached_tokens`` the cache reads, and the whole usage object (``billed_units``
  included) is ``usage.raw``. ``[DONE]`` after it changes nothing; ``[DONE]`` before it,
  or bytes that end before it, are an :class:`IncompleteStreamError`.
- ``message-end`` with an ``error`` text is a :class:`ProviderError`, and so is one that
  says ``ERROR`` or ``TIMEOUT`` while a tool call is still open (that call was never
  finished, so it must not become a ``ToolUse``); the error's ``.partial`` keeps it as
  an ``InvalidToolUse``.
- A frame with no ``type`` but an ``error`` or ``message`` field is the server
  reporting a failure: a :class:`ProviderError`. Frame types added later are ignored.
- Cohere's v1 chat stream (``event_type`` frames) is another format: a clear
  :class:`MalformedStreamError`, never a guessed answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._core.assembler import Assembler
from ..._core.errors import MalformedStreamError, ProviderError
from ..._core.response import StopReason
from ..base import (
    HandlerOptions,
    end_at_done_marker,
    error_from_payload,
    int_or_none,
    is_retryable,
    json_text,
    shape_error,
    stop_reason_from,
    str_or_empty,
)
from ..plain import ARGUMENTS, TEXT, Plain, PlainReader
from . import _made

__all__ = [
    "PLAN_ID",
    "STOP_REASONS",
    "CohereHandler",
    "parse_body",
    "usage_counts",
    "v1_error",
]

STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "COMPLETE": StopReason.END_TURN,
    "TOOL_CALL": StopReason.TOOL_USE,
    "MAX_TOKENS": StopReason.MAX_TOKENS,
    "STOP_SEQUENCE": StopReason.STOP_SEQUENCE,
}

PLAN_ID: Final = "tool_plan"
"""The ``id`` of the ``Reasoning`` block that holds a Cohere tool plan."""

# Finish reasons that mean the generation failed rather than ended.
_FAILED: Final = frozenset({"ERROR", "TIMEOUT"})
_PLAN: Final = "plan"
_EMPTY: Final[Mapping[str, Any]] = {}


def usage_counts(usage: Mapping[str, Any]) -> dict[str, int | None]:
    """The counts of a v2 ``usage`` object: ``tokens`` (what the model processed), not
    ``billed_units`` (a different, smaller measure, kept in ``usage.raw``)."""
    tokens = usage.get("tokens")
    if not isinstance(tokens, Mapping):
        tokens = _EMPTY
    return {
        "input_tokens": int_or_none(tokens.get("input_tokens")),
        "output_tokens": int_or_none(tokens.get("output_tokens")),
        "cache_read_tokens": int_or_none(usage.get("cached_tokens")),
        "reasoning_tokens": int_or_none(tokens.get("reasoning_tokens")),
    }


def v1_error() -> MalformedStreamError:
    """Cohere's v1 chat format, which laminate does not read."""
    return MalformedStreamError(
        "this is Cohere's v1 chat format (`event_type` frames, /v1/chat), which laminate "
        "does not read; call Cohere's v2 chat endpoint (/v2/chat) instead"
    )


def _message(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """``obj.delta.message`` (every v2 event keeps its payload there), or ``{}``."""
    delta = obj.get("delta")
    if delta.__class__ is not dict and not isinstance(delta, Mapping):
        return _EMPTY
    message = delta.get("message")
    if message.__class__ is not dict and not isinstance(message, Mapping):
        return _EMPTY
    return message


def _index(obj: Mapping[str, Any]) -> int:
    index = obj.get("index")
    if index.__class__ is int:
        return index
    found = int_or_none(index)
    if found is None:
        raise shape_error(f"a `{obj.get('type')}` event without an integer `index`")
    return found


class CohereHandler(PlainReader):
    """Stream handler for Cohere v2 chat events."""

    __slots__ = ("_message_id", "_open_calls", "assembler")

    def __init__(self, assembler: Assembler, options: HandlerOptions | None = None) -> None:
        self.assembler = assembler
        self._message_id: str | None = None
        self._open_calls: set[int] = set()

    def _plain(self, name: str | None, obj: Any) -> Plain | None:
        # The text of a `content-delta` that carries nothing else, or a `tool-call-delta`'s
        # argument fragment, for a block keyed by an int (see PlainReader). Subscripts
        # read it quickest; what fails them is not plain.
        piece = None
        try:
            kind = obj["type"]
            index = obj["index"]
            message = obj["delta"]["message"]
            if kind == "content-delta":
                content = message["content"]
                piece = content["text"]
            elif kind == "tool-call-delta":
                piece = message["tool_calls"]["function"]["arguments"]
        except (KeyError, TypeError, IndexError):
            pass
        if piece.__class__ is not str or index.__class__ is not int:
            return None
        if kind == "tool-call-delta":
            return -1 - index, piece, ARGUMENTS
        if len(content) == 1:
            return index, piece, TEXT
        return None

    # Made from _plain: _made.py, written by `python -m laminate._apis.make_plain`.
    on_frame = _made.on_frame
    run = _made.run

    def _on_other(self, name: str | None, obj: Any) -> None:
        if obj.__class__ is not dict and not isinstance(obj, Mapping):
            raise shape_error("an event is not a JSON object")
        kind = obj.get("type")
        if kind == "content-delta":
            self._content_delta(obj)
            return
        if kind == "tool-call-delta":
            self._call_delta(obj)
            return
        match kind:
            case "tool-plan-delta":
                self._plan_delta(obj)
            case "message-start":
                self._message_start(obj)
            case "content-start":
                self._content_start(obj)
            case "content-end":
                self.assembler.end(_index(obj))
            case "tool-call-start":
                self._call_start(obj)
            case "tool-call-end":
                index = _index(obj)
                self._open_calls.discard(index)
                self.assembler.end(-1 - index)
            case "citation-start":
                self._citation_start(obj)
            case "citation-end":
                self.assembler.end(("citation", int_or_none(obj.get("index"))))
            case "message-end":
                self._message_end(obj)
            case "error":
                raise error_from_payload(obj)
            case "debug":
                pass  # the rendered prompt, sent when asked for: nothing of the answer
            case None:
                self._untyped(obj)
            case _:
                pass  # event types added later are ignored (documented rule)

    def on_done_marker(self) -> None:
        end_at_done_marker(self.assembler, "Cohere's message-end")

    # -- events ---------------------------------------------------------------------

    def _untyped(self, obj: Mapping[str, Any]) -> None:
        if "event_type" in obj:
            raise v1_error()
        if obj.get("error") or isinstance(obj.get("message"), str):
            # What Cohere's HTTP errors look like ({"id", "message"}), sent as a frame.
            raise _error(obj)
        # A frame without a type tells nothing: ignored like an unknown type.

    def _message_start(self, obj: Mapping[str, Any]) -> None:
        message_id = str_or_empty(obj.get("id"))
        if self._message_id is not None:
            if message_id == self._message_id or not message_id:
                return
            raise MalformedStreamError(
                f"a second message-start (id {message_id!r}) inside message "
                f"{self._message_id!r}: two answers spliced into one stream"
            )
        self._message_id = message_id
        self.assembler.start(message_id, "")

    def _content_start(self, obj: Mapping[str, Any]) -> None:
        content = _message(obj).get("content")
        if not isinstance(content, Mapping):
            raise shape_error("`content-start` without a content object")
        self._close_plan()
        key = _index(obj)
        asm = self.assembler
        match content.get("type"):
            case "text" | None:
                asm.open_text(key)
                asm.text(key, str_or_empty(content.get("text")))
            case "thinking":
                asm.open_reasoning(key)
                asm.reasoning(key, str_or_empty(content.get("thinking")))
            case other:
                # A content type added later: kept whole, never dropped.
                asm.unknown(key, str(other), {k: v for k, v in content.items() if k != "type"})

    def _content_delta(self, obj: Mapping[str, Any]) -> None:
        content = _message(obj).get("content")
        if content.__class__ is not dict and not isinstance(content, Mapping):
            raise shape_error("`content-delta` without a content object")
        key = obj.get("index")
        if key.__class__ is not int:
            key = _index(obj)
        text = content.get("text")
        if text.__class__ is str:
            self.assembler.text(key, text)
        thinking = content.get("thinking")
        if thinking.__class__ is str:
            self.assembler.reasoning(key, thinking)

    def _plan_delta(self, obj: Mapping[str, Any]) -> None:
        text = str_or_empty(_message(obj).get("tool_plan"))
        if not text:
            return
        asm = self.assembler
        if not asm.is_open(_PLAN):
            asm.open_reasoning(_PLAN, id=PLAN_ID)
        asm.reasoning(_PLAN, text)

    def _call_start(self, obj: Mapping[str, Any]) -> None:
        call = _call(obj)
        self._close_plan()
        index = _index(obj)
        key = -1 - index
        function = call.get("function")
        if not isinstance(function, Mapping):
            function = _EMPTY
        asm = self.assembler
        asm.tool_start(key, str_or_empty(call.get("id")), str_or_empty(function.get("name")))
        self._open_calls.add(index)
        asm.tool_input(key, str_or_empty(function.get("arguments")))

    def _call_delta(self, obj: Mapping[str, Any]) -> None:
        function = _call(obj).get("function")
        if function.__class__ is not dict and not isinstance(function, Mapping):
            return  # a delta that adds nothing to the arguments
        arguments = function.get("arguments")
        if arguments.__class__ is not str:
            arguments = str_or_empty(arguments)
        index = obj.get("index")
        if index.__class__ is not int:
            index = _index(obj)
        self.assembler.tool_input(-1 - index, arguments)

    def _citation_start(self, obj: Mapping[str, Any]) -> None:
        citation = _message(obj).get("citations")
        if not isinstance(citation, Mapping):
            raise shape_error("`citation-start` without a citations object")
        key = ("citation", int_or_none(obj.get("index")))
        self.assembler.unknown(key, "citation", dict(citation))

    def _message_end(self, obj: Mapping[str, Any]) -> None:
        delta = obj.get("delta")
        if not isinstance(delta, Mapping):
            delta = _EMPTY
        asm = self.assembler
        asm.start(str_or_empty(obj.get("id")), "")
        usage = delta.get("usage")
        if isinstance(usage, Mapping):
            asm.usage(dict(usage), **usage_counts(usage))
        raw = str_or_empty(delta.get("finish_reason"))
        error = delta.get("error")
        if error or (raw in _FAILED and self._open_calls):
            raise _failure(raw, error, len(self._open_calls))
        if raw:
            asm.finish(stop_reason_from(raw, STOP_REASONS))
        asm.complete()

    def _close_plan(self) -> None:
        # The plan comes before the calls it announces: it is finished when they start.
        self.assembler.end(_PLAN)


def _call(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """The one tool call a ``tool-call-*`` event carries (an object, not a list)."""
    call = _message(obj).get("tool_calls")
    if call.__class__ is dict or isinstance(call, Mapping):
        return call
    if call is None:
        # Older API versions put it in `delta.tool_call`.
        delta = obj.get("delta")
        call = delta.get("tool_call") if isinstance(delta, Mapping) else None
        if isinstance(call, Mapping):
            return call
        return _EMPTY
    raise shape_error(f"`{obj.get('type')}` whose tool_calls is not one object")


def _error(obj: Mapping[str, Any]) -> ProviderError:
    if obj.get("error"):
        return error_from_payload(obj)
    message = str_or_empty(obj.get("message"))
    return ProviderError(
        message or "Cohere reported an error", error_type="error", retryable=False, raw=obj
    )


def _failure(raw: str, error: Any, open_calls: int) -> ProviderError:
    error_type = raw.lower() or "error"
    if isinstance(error, str) and error:
        message = error
    else:
        message = f"the generation ended with {raw} while {open_calls} tool call(s) were unfinished"
    return ProviderError(
        message,
        error_type=error_type,
        retryable=is_retryable(error_type),
        raw={"finish_reason": raw, "error": error},
    )


def parse_body(
    assembler: Assembler, body: Mapping[str, Any], options: HandlerOptions | None = None
) -> None:
    """A complete v2 chat body: ``message`` (``content`` items, ``citations``,
    ``tool_plan``, ``tool_calls``), ``finish_reason`` and ``usage``, read in the order a
    stream would have sent them."""
    message = body.get("message")
    if not isinstance(message, Mapping):
        if "generation_id" in body or "chat_history" in body:
            raise v1_error()
        if isinstance(body.get("message"), str):
            raise _error(body)
        raise shape_error("a Cohere response without a `message` object")
    assembler.start(str_or_empty(body.get("id")), "")
    _body_content(assembler, message.get("content"))
    citations = message.get("citations")
    for n, citation in enumerate(citations if isinstance(citations, list) else ()):
        if isinstance(citation, Mapping):
            assembler.unknown(("citation", n), "citation", dict(citation))
            assembler.end(("citation", n))
    plan = str_or_empty(message.get("tool_plan"))
    if plan:
        assembler.open_reasoning(_PLAN, id=PLAN_ID)
        assembler.reasoning(_PLAN, plan)
        assembler.end(_PLAN)
    calls = message.get("tool_calls")
    for n, call in enumerate(calls if isinstance(calls, list) else ()):
        if not isinstance(call, Mapping):
            raise shape_error("a tool call that is not an object")
        _body_call(assembler, -1 - n, call)
    usage = body.get("usage")
    if isinstance(usage, Mapping):
        assembler.usage(dict(usage), **usage_counts(usage))
    raw = str_or_empty(body.get("finish_reason"))
    if raw:
        assembler.finish(stop_reason_from(raw, STOP_REASONS))


def _body_content(assembler: Assembler, content: Any) -> None:
    if isinstance(content, str):  # the request form, accepted in a body too
        content = [{"type": "text", "text": content}]
    for n, item in enumerate(content if isinstance(content, list) else ()):
        if not isinstance(item, Mapping):
            raise shape_error("a content item that is not an object")
        match item.get("type"):
            case "text":
                assembler.open_text(n)
                assembler.text(n, str_or_empty(item.get("text")))
            case "thinking":
                assembler.open_reasoning(n)
                assembler.reasoning(n, str_or_empty(item.get("thinking")))
            case other:
                assembler.unknown(n, str(other), {k: v for k, v in item.items() if k != "type"})
        assembler.end(n)


def _body_call(assembler: Assembler, key: int, call: Mapping[str, Any]) -> None:
    function = call.get("function")
    if not isinstance(function, Mapping):
        function = _EMPTY
    assembler.tool_start(key, str_or_empty(call.get("id")), str_or_empty(function.get("name")))
    arguments = function.get("arguments")
    if isinstance(arguments, Mapping):  # some servers send the object itself
        arguments = json_text(arguments)
    assembler.tool_input(key, str_or_empty(arguments))
    assembler.end(key)
