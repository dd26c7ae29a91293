"""The stream writer interface, and the JSON helpers every writer shares (the framings
themselves are written by ``_framing.writers`` and ``_framing.eventstream``).

A writer turns laminate's events into one API's bytes, live: each event becomes bytes at
once, so a client behind a gateway sees text and tool arguments grow as they arrive. The
interface is two methods, ``event(ev) -> bytes`` and ``close() -> bytes``
(:class:`Writer`). :class:`StreamWriter` implements them once: it checks the order of the
events (start before deltas before end, nothing after the response), then calls one short
hook per event kind, so a writer holds only its own bookkeeping (block index to output
index, open block kinds) and never re-checks the protocol.

Opaque tokens (signatures, encrypted reasoning, redacted data, unknown blocks) are only
written back to the API they came from: :attr:`StreamWriter.own` says whether the answer's
``provider`` is the writer's own.

Framing helpers build bytes from pre-encoded pieces: a delta's payload is a template with
one JSON string spliced in, so the hot path costs one string escape and a few joins.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any, ClassVar, Protocol

from .._core import jsonlib
from .._core.errors import (
    IncompleteStreamError,
    LaminateError,
    ProviderError,
    StreamReadError,
    StreamTimeoutError,
)
from .._core.events import (
    BlockEnd,
    BlockStart,
    Event,
    ReasoningDelta,
    ResponseDone,
    ResponseStart,
    TextDelta,
    ToolInputDelta,
    WholeInputDelta,
)
from .._core.flex import FlexValue
from .._core.response import (
    ContentBlock,
    InvalidToolUse,
    NormalizedResponse,
    StopReason,
    Text,
    ToolUse,
)
from .._framing.writers import ndjson_line, sse_data, sse_event
from .base import is_retryable
from .overflow import is_overflow
from .shapes import CUSTOM_INPUT as _CUSTOM_INPUT

__all__ = [
    "Failure",
    "StreamWriter",
    "Writer",
    "cut_off",
    "dumps",
    "json_bytes",
    "json_texts",
    "ndjson_line",
    "new_id",
    "sse_data",
    "sse_event",
    "wire_stop",
]


class Writer(Protocol):
    """What :class:`~laminate.StreamEncoder` needs of a target's stream writer."""

    def event(self, event: Event) -> bytes:
        """The bytes for one event (possibly empty)."""
        ...

    def events(self, events: Sequence[Event]) -> bytes:
        """The bytes for several events, joined."""
        ...

    def close(self) -> bytes:
        """The bytes that end the stream (possibly empty)."""
        ...

    def error(self, error: LaminateError) -> bytes:
        """The bytes that tell a client the answer failed; the stream ends there."""
        ...


# -- JSON and framing -----------------------------------------------------------------------


def json_bytes(text: str) -> bytes:
    """``text`` as a JSON string literal, UTF-8 encoded.

    Characters outside ASCII are written as they are; a lone surrogate (which UTF-8 cannot
    carry) makes the whole string fall back to ``\\u`` escapes, which JSON can.
    """
    try:
        return encode_basestring(text).encode()
    except UnicodeEncodeError:
        return encode_basestring_ascii(text).encode()


def json_texts(texts: Sequence[str], prefix: bytes, suffix: bytes) -> bytes:
    """Each of ``texts`` as a JSON string literal between ``prefix`` and ``suffix``, all
    joined: what ``b"".join(prefix + json_bytes(t) + suffix for t in texts)`` gives."""
    try:
        literals = [encode_basestring(text).encode() for text in texts]
    except UnicodeEncodeError:
        literals = [json_bytes(text) for text in texts]
    return prefix + (suffix + prefix).join(literals) + suffix


def dumps(value: Any) -> bytes:
    """Compact JSON bytes for a whole payload (the frames that are not on the hot path),
    written by the JSON backend in use (orjson with the ``fast`` extra)."""
    text = jsonlib.dumps(value)
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate: JSON's \u escapes can carry it
        return json.dumps(value, separators=(",", ":")).encode()


def new_id(prefix: str) -> str:
    """A fresh answer id for an answer that came without one (Ollama names none):
    ``prefix`` and 24 hex digits, unique to this answer."""
    return prefix + uuid.uuid4().hex[:24]


def wire_stop(stop: StopReason, table: Mapping[str, StopReason], by_kind: Mapping[str, str]) -> str:
    """The stop string a target writes for ``stop``.

    The provider's own string when the target's reader maps it to the same kind (so an
    answer written back to its own API keeps its exact value); else the target's value for
    the kind (``by_kind``); else the raw string, kept as sent (an unknown value stays
    unknown), or the kind's name when the raw string would read as another kind.
    """
    raw = stop.raw
    named = table.get(raw)
    if named is not None and named == stop and not stop.is_unknown:
        return raw
    kind = stop.kind
    if kind is not None and kind in by_kind:
        return by_kind[kind]
    if kind is not None and (named is not None or not raw):
        return kind  # the raw string would name another kind here: write the kind's name
    return raw


def cut_off(block: ContentBlock) -> bool:
    """Whether ``block`` is a tool call that the response's end cut off (its arguments may
    even parse): a writer leaves such a call open, so the stop reason cuts it again."""
    return isinstance(block, InvalidToolUse) and block.reason.startswith("cut off")


class Failure:
    """An error as a writer writes it (:meth:`StreamWriter.error`).

    ``message`` is the error's text; ``error_type`` the provider's own type or code (for a
    :class:`ProviderError`; ``""`` for an error laminate found itself, such as a stream cut
    short); ``retryable`` whether retrying may succeed (a :class:`ProviderError`'s own
    verdict; a stream that broke or was cut short may; malformed bytes will not);
    ``timeout`` whether it was a timeout; ``own`` whether the answer came from the
    writer's own API, so that ``error_type`` is in its vocabulary; ``server`` whether the
    fault is the server's: an error laminate found in the answer itself (cut short,
    broken, silent, unreadable), which no client's request caused; ``overflow`` whether
    the provider said the request does not fit the model's context
    (:func:`~laminate._apis.overflow.is_overflow`), which each API writes as its own
    overflow (its record's ``Http.overflow``).
    """

    __slots__ = ("error_type", "message", "overflow", "own", "retryable", "server", "timeout")

    def __init__(self, error: LaminateError, *, own: bool) -> None:
        self.message = error.message or str(error) or type(error).__name__
        self.error_type = error.error_type if isinstance(error, ProviderError) else ""
        self.retryable = (
            error.retryable
            if isinstance(error, ProviderError)
            else isinstance(error, IncompleteStreamError | StreamReadError)
        )
        self.timeout = isinstance(error, StreamTimeoutError) or "timeout" in self.error_type.lower()
        self.own = own and bool(self.error_type)
        self.server = not isinstance(error, ProviderError)
        self.overflow = is_overflow(error)

    def type_for(self, retryable: str, fatal: str, *, foreign: bool = True) -> str:
        """The error type to write: the error's own when it came from this API, or (with
        ``foreign``, for APIs whose types are free text) when this API's readers would
        judge it alike; else ``retryable`` or ``fatal``, this API's generic types (the
        server's fault, :attr:`server`, is never ``fatal``: that is the client's)."""
        if self.own or (
            foreign and self.error_type and is_retryable(self.error_type) == self.retryable
        ):
            return self.error_type
        return retryable if self.retryable or self.server else fatal


# -- the base class --------------------------------------------------------------------------


class StreamWriter:
    """Events in, one API's bytes out. Subclasses implement the hooks.

    ``name`` is the target's name (an API's ``provider`` name, ``"ai-sdk"``, ``"events"``).
    The hooks receive what they need and return bytes: :meth:`start`, :meth:`block_start`,
    :meth:`text`, :meth:`reasoning`, :meth:`tool_input`, :meth:`block_end`, :meth:`done`,
    :meth:`cut` (the events stopped before ``ResponseDone``; by default nothing is
    written, so a reader sees the stream cut short as it was) and :meth:`failure` (the
    answer failed: the API's own in-stream error).
    """

    name: ClassVar[str] = ""
    id_prefix: ClassVar[str] = ""
    """How this API's answer ids begin: an answer that came without an id (Ollama's)
    gets one so begun (:func:`new_id`), for an API whose answers carry one."""
    custom_calls: ClassVar[bool] = False
    """Whether the API has custom (free-form) tool calls. A writer whose API has none is
    handed such a call as a function call of one string parameter, ``input``: its text
    as the JSON ``{"input": "..."}``, streamed as it arrives."""

    def __init__(self) -> None:
        self.provider = ""
        """The ``provider`` of the answer being written (from ``ResponseStart``)."""
        self.answer_id = ""
        """The id written for the answer: its own, or, for one that came without an id,
        a fresh one (:attr:`id_prefix`)."""
        self._live: set[int] = set()
        self._held: dict[int, list[str]] = {}  # calls not named yet: their fragments
        self._wrapped: set[int] = set()  # custom calls written as functions of one string
        self.text_block: int | None = None
        """The text block being written (the last one opened, while it is open): where a
        citation that comes during it belongs."""
        self._started = False
        self._done = False
        self._closed = False

    @property
    def own(self) -> bool:
        """Whether the answer came from this writer's own API: only then are opaque
        tokens (signatures, encrypted or redacted reasoning, unknown blocks) written."""
        return self.provider == self.name

    def event(self, event: Event) -> bytes:
        """The bytes for one event."""
        cls = event.__class__
        if cls is WholeInputDelta:
            cls = ToolInputDelta
        if cls is TextDelta or cls is ToolInputDelta or cls is ReasoningDelta:
            index: int = event.index  # type: ignore[union-attr]
            if index not in self._live:
                raise self._order_error(event, f"block {index} is not open")
            if cls is TextDelta:
                return self.text(index, event.text)  # type: ignore[union-attr]
            if cls is ToolInputDelta:
                if self._held and index in self._held:
                    self._held[index].append(event.fragment)  # type: ignore[union-attr]
                    return b""
                if self._wrapped and index in self._wrapped:  # text inside a JSON string
                    return self.tool_input(index, json.dumps(event.fragment)[1:-1])  # type: ignore[union-attr]
                return self.tool_input(index, event.fragment)  # type: ignore[union-attr]
            return self.reasoning(index, event.text)  # type: ignore[union-attr]
        if self._done or self._closed:
            raise self._order_error(event, "the response is already complete")
        match event:
            case ResponseStart():
                if self._started:
                    raise self._order_error(event, "the response already started")
                self._started = True
                self.provider = event.provider
                return self.start(self._named(event))
            case BlockStart(index, block):
                if index in self._live:
                    raise self._order_error(event, f"block {index} is already open")
                head = self._implicit_start()
                self._live.add(index)
                if isinstance(block, Text):
                    self.text_block = index
                if isinstance(block, ToolUse) and not block.name:
                    # Named later (some compatible servers): every API wants the name
                    # first, so the call is written whole once it is known.
                    self._held[index] = []
                    return head
                if isinstance(block, ToolUse) and block.kind == "custom" and not self.custom_calls:
                    self._wrapped.add(index)
                    opened = self.block_start(index, ToolUse(block.id, block.name, FlexValue({})))
                    return head + opened + self.tool_input(index, '{"' + _CUSTOM_INPUT + '":"')
                return head + self.block_start(index, block)
            case BlockEnd(index, block):
                if index not in self._live:
                    raise self._order_error(event, f"block {index} is not open")
                self._live.discard(index)
                if index == self.text_block:
                    self.text_block = None
                if self._wrapped and index in self._wrapped:
                    self._wrapped.discard(index)
                    if isinstance(block, ToolUse):
                        text = {_CUSTOM_INPUT: block.input.value}
                        block = ToolUse(block.id, block.name, FlexValue(text), block.signature)
                    return self.tool_input(index, '"}') + self.block_end(index, block)
                held = self._held.pop(index, None)
                if held is None:
                    return self.block_end(index, block)
                return self._held_call(index, block, "".join(held))
            case ResponseDone(response):
                if self._live:
                    raise self._order_error(event, f"blocks {sorted(self._live)} are still open")
                head = self._implicit_start(response)
                self._done = True
                return head + self.done(response)
        raise TypeError(f"not a laminate event: {event!r}")

    def events(self, events: Sequence[Event]) -> bytes:
        """The bytes for several events: what :meth:`event` gives for each, joined. A run
        of text deltas of one block is written by one call (:meth:`texts`), so a batch of
        an answer's tokens costs few calls per token."""
        out: list[bytes] = []
        size = len(events)
        at = 0
        while at < size:
            event = events[at]
            end = at + 1
            if event.__class__ is TextDelta:
                index = event.index
                while (
                    end < size and events[end].__class__ is TextDelta and events[end].index == index  # type: ignore[union-attr]
                ):
                    end += 1
            if end - at > 1:
                if index not in self._live:
                    raise self._order_error(event, f"block {index} is not open")
                out.append(self.texts(index, [e.text for e in events[at:end]]))  # type: ignore[union-attr]
            else:
                out.append(self.event(event))
            at = end
        return b"".join(out)

    def close(self) -> bytes:
        """The bytes that end the stream: nothing after ``ResponseDone``; :meth:`cut`
        before it."""
        if self._closed:
            return b""
        self._closed = True
        return b"" if self._done else self.cut()

    def error(self, error: LaminateError) -> bytes:
        """The bytes that tell a client the answer failed with ``error``, as this API says
        it inside a stream (:meth:`failure`); the stream ends there, and :meth:`close`
        adds nothing."""
        if not isinstance(error, LaminateError):
            raise TypeError(f"error() takes a LaminateError, not {type(error).__name__}")
        if self._done or self._closed:
            raise LaminateError(f"{self.name} writer: an error after the stream ended")
        self._closed = True
        return self.failure(Failure(error, own=self.own))

    def _held_call(self, index: int, block: ContentBlock, arguments: str) -> bytes:
        if not isinstance(block, ToolUse | InvalidToolUse):
            raise LaminateError(f"{self.name} writer: block {index} started as a tool call")
        out = self.block_start(index, ToolUse(block.id, block.name, FlexValue({})))
        if arguments:
            out += self.tool_input(index, arguments)
        return out + self.block_end(index, block)

    def _implicit_start(self, response: NormalizedResponse | None = None) -> bytes:
        # Events built by hand may leave out ResponseStart: the answer still needs one.
        if self._started:
            return b""
        self._started = True
        start = ResponseStart("", "", "")
        if response is not None:
            start = ResponseStart(response.id, response.model, response.provider)
        self.provider = start.provider
        return self.start(self._named(start))

    def _named(self, start: ResponseStart) -> ResponseStart:
        """``start`` with a non-empty id: an answer without one gets a fresh one."""
        if not start.id:
            start = ResponseStart(new_id(self.id_prefix), start.model, start.provider)
        self.answer_id = start.id
        return start

    def _order_error(self, event: Event, why: str) -> LaminateError:
        return LaminateError(
            f"{self.name} writer: {type(event).__name__} out of order: {why}", partial=None
        )

    # -- hooks ---------------------------------------------------------------------------------

    def start(self, event: ResponseStart) -> bytes:
        """The answer began."""
        raise NotImplementedError

    def block_start(self, index: int, block: ContentBlock) -> bytes:
        """Block ``index`` opened (``block`` is its empty initial state)."""
        raise NotImplementedError

    def texts(self, index: int, texts: list[str]) -> bytes:
        """The bytes for several text deltas of block ``index`` in a row: :meth:`text`'s
        for each, joined (a writer whose text frames differ only in the text writes
        them at once)."""
        return b"".join([self.text(index, text) for text in texts])

    def text(self, index: int, text: str) -> bytes:
        """Text added to a ``Text`` block."""
        raise NotImplementedError

    def reasoning(self, index: int, text: str) -> bytes:
        """Text added to a ``Reasoning`` block."""
        raise NotImplementedError

    def tool_input(self, index: int, fragment: str) -> bytes:
        """Raw JSON text added to a tool call's arguments."""
        raise NotImplementedError

    def block_end(self, index: int, block: ContentBlock) -> bytes:
        """Block ``index`` is complete (``block`` is its final state)."""
        raise NotImplementedError

    def done(self, response: NormalizedResponse) -> bytes:
        """The answer is complete: stop reason, usage, the terminal frames."""
        raise NotImplementedError

    def cut(self) -> bytes:
        """The events ended before the answer was complete."""
        return b""

    def failure(self, failure: Failure) -> bytes:
        """The answer failed: the API's own in-stream error, what its clients raise."""
        raise NotImplementedError
