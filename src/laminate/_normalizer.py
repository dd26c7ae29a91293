"""The sans-IO core: bytes in, events out. No I/O, no async, no threads.

This is laminate's one error boundary: whatever goes wrong inside becomes a
:class:`LaminateError` carrying what was received so far (``.partial``), and the
normalizer stays failed from then on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, cast

from ._apis.base import Handler, error_from_payload
from ._apis.detect import (
    body_provider,
    describe,
    provider_from_frame,
    provider_from_url,
)
from ._apis.plain import PlainReader
from ._apis.registry import APIS, read_body
from ._apis.spec import HandlerOptions
from ._apis.templates import TRIES, Template, learn
from ._core import jsonlib
from ._core.assembler import Assembler
from ._core.errors import (
    IncompleteStreamError,
    LaminateError,
    MalformedStreamError,
    UnknownProviderError,
)
from ._core.events import Event
from ._core.response import NormalizedResponse
from ._framing import Batch, Decoder, Frame, error_from_frame, make_decoder
from ._framing.document import BodyBuffer, snippet
from ._framing.sniff import Sniffer, Tail
from ._framing.sse import SSEDecoder

__all__ = ["StreamNormalizer", "merging"]

DEFAULT_MAX_FRAME_SIZE: Final = 16 * 1024 * 1024
DEFAULT_MAX_TOOL_INPUT_SIZE: Final = 16 * 1024 * 1024
# Frames held while the provider is not yet known; past this, detection gives up.
_DETECT_FRAMES: Final = 8
# Payloads some servers send as keep-alives instead of SSE comments.
_KEEPALIVE: Final = frozenset({"", "ping", "keep-alive", "keepalive", "heartbeat", ":"})
# How many frames of a long batch are read the usual way when no template is learned yet
# (then one learned from the last of them takes the rest).
_SAMPLE: Final = 16
# And how many bytes of a long feed to an SSE stream (a feed's events are cut out by the
# template's bytes where one holds: see StreamNormalizer._sampled).
_SAMPLE_BYTES: Final = 2048
_SKIP: Final = object()  # _parse's answer for a keep-alive frame
_scan: Final = jsonlib.scan


class StreamNormalizer:
    """Feed it the bytes of one streamed answer; it returns events.

    ``feed(data)`` returns the events the new bytes completed; ``close()`` the last ones,
    ending with :class:`ResponseDone`. Events depend only on the bytes, never on how
    they were split. Options:

    - ``provider``: ``"openai"``, ``"openai-responses"``, ``"anthropic"``, ``"ollama"``,
      ``"gemini"``, ``"bedrock"``, ``"cohere"``, or ``None`` to detect it (from ``url``
      and ``content_type`` when given, else from the first frames).
    - ``keep_raw``: keep every parsed frame in ``response.raw`` (off by default, so
      memory follows the content, not the number of frames).
    - ``max_frame_size``: the largest line or frame accepted, in bytes (16 MiB).
    - ``max_tool_input_size``: the largest tool-call argument text, in characters (16 Mi).
    - ``choice``: which choice of an ``n > 1`` Chat Completions stream to normalize (0).
    - ``think_tags``: split ``<think>...</think>`` in text into a ``Reasoning`` block.
    - ``url``, ``content_type``: what the HTTP response said, as detection hints.

    If a call fails after it had completed some events, it returns those events and
    the error is raised by the next call: nothing received is withheld.
    """

    def __init__(
        self,
        provider: str | None = None,
        *,
        keep_raw: bool = False,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        max_tool_input_size: int = DEFAULT_MAX_TOOL_INPUT_SIZE,
        choice: int = 0,
        think_tags: bool = False,
        url: str | None = None,
        content_type: str | None = None,
    ) -> None:
        if provider is not None and provider not in APIS:
            raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(APIS)}")
        if provider is None and url:
            provider = provider_from_url(_url_path(url))
        self._url_path = _url_path(url) if url else ""
        self._provider = provider
        self._keep_raw = keep_raw
        self._max_frame_size = max_frame_size
        self._handler_options = HandlerOptions(choice=choice, think_tags=think_tags)
        self._content_type = (content_type or "").split(";")[0].strip().lower()
        self._decoder: Decoder | None = None
        self._sniffer = Sniffer(max_frame_bytes=max_frame_size, content_type=self._content_type)
        # An NDJSON stream's first bytes, kept until its first line parses, in case the
        # whole body is one pretty-printed document; and such a document.
        self._head: BodyBuffer | None = None
        self._document: BodyBuffer | None = None
        # Why the body was taken for one document (its first line is not JSON): the error
        # to raise if that document then grows past the cap, as when it came all at once.
        self._not_a_stream: MalformedStreamError | None = None
        self._assembler = Assembler(provider or "", max_tool_input_size=max_tool_input_size)
        self._handler: Handler | None = None
        self._held: list[tuple[Frame, Any]] = []
        self._frame: Frame | None = None
        self._error: LaminateError | None = None
        self._deferred: LaminateError | None = None
        self._closed = False
        self._payloads = 0
        self._loads = jsonlib.loads_exact  # until the provider is known
        self._quick = jsonlib.quick_loads(None)
        self._read_batch = jsonlib.batch_loads()
        self._recheck: bytes | None = None  # the arguments marker, while orjson reads batches
        self._whole: bytes | None = None  # the marker of arguments that arrive whole
        # Plain deltas read from their bytes (_apis/templates.py): the template that
        # holds, and how many more may be learned (0: this stream's are not read so).
        self._template: Template | None = None
        self._learning = 0
        # The template's frames as the stream's bytes: the template, the bytes before and
        # after a piece.
        self._shape: tuple[Template, bytes, bytes] | None = None
        # Whether a batch was read: templates are learned from the next one on, so that
        # the first one's events (an answer's first bytes) do not wait for one. Where
        # that first batch ends a feed with a plain delta, the template is learned from
        # it when the next feed begins (``_learn_later``): the batch, and ``_learn``'s
        # arguments.
        self._batched = False
        self._later: tuple[Batch, tuple[Any, ...]] | None = None
        self._tail = Tail()
        self._batching = False
        if provider is not None:
            self._start_handler(provider)

    # -- public API ---------------------------------------------------------------

    @property
    def provider(self) -> str | None:
        """The provider, once known."""
        return self._provider

    @property
    def response(self) -> NormalizedResponse | None:
        """The final response, after ``ResponseDone``."""
        return self._assembler.response

    @property
    def finished(self) -> bool:
        """Whether the provider has said why it stopped (a finish reason, a stop reason,
        ``done``): the answer is then complete even if its terminal marker never comes."""
        return self._assembler.finished

    def snapshot(self) -> NormalizedResponse:
        """Everything received so far (what an error's ``.partial`` holds)."""
        return self._assembler.snapshot()

    def feed(self, data: bytes | str) -> list[Event]:
        """Take the next bytes (a ``str`` is encoded as UTF-8); return completed events."""
        self._check_usable()
        if isinstance(data, str):
            data = data.encode("utf-8")
        return self._guarded(self._feed, data)

    def feed_payload(self, payload: Any, *, event: str | None = None) -> list[Event]:
        """Take one frame that something else already parsed, and return completed events.

        ``payload`` is a ``dict`` (one frame's JSON object), an SDK's model object (it is
        converted with ``model_dump()`` or ``to_dict()``), or the frame's JSON text as
        ``str`` / ``bytes`` (``"[DONE]"`` included). ``event`` is the SSE event name, or
        the binary frame's event type, where the format needs it. Frames fed this way
        give the same events as the bytes they came from.
        """
        self._check_usable()
        if not isinstance(payload, bytes | bytearray | str):
            payload = plain_payload(payload)  # a wrong type is the caller's TypeError
        return self._guarded(self._feed_payload, (payload, event))

    def close(self) -> list[Event]:
        """The bytes ended: return the last events, or raise if the answer is incomplete
        (what the last bytes completed is then in the error's ``.partial``)."""
        events, error = self.close_events()
        if error is not None:
            raise error
        return events

    def close_events(self) -> tuple[list[Event], LaminateError | None]:
        """Like :meth:`close`, but return the events the last bytes completed together
        with the error that followed them, if any, instead of raising it. The adapters
        use it to hand out every event before raising."""
        self._check_usable()
        self._closed = True
        return self._run(self._close, b"")

    # -- the error boundary ---------------------------------------------------------

    def _check_usable(self) -> None:
        if self._deferred is not None:
            error, self._deferred = self._deferred, None
            raise error
        if self._error is not None:
            raise LaminateError(
                f"the normalizer failed earlier ({type(self._error).__name__}: {self._error})",
                partial=self._error.partial,
            ) from self._error
        if self._closed:
            raise LaminateError("the normalizer is closed", partial=self._assembler.snapshot())

    def _guarded(self, step: Any, data: Any) -> list[Event]:
        events, error = self._run(step, data)
        if error is None:
            return events
        if events:
            self._deferred = error
            return events
        raise error

    def _run(self, step: Any, data: Any) -> tuple[list[Event], LaminateError | None]:
        asm = self._assembler
        error: LaminateError | None = None
        try:
            step(data)
        except LaminateError as exc:
            error = self._fail(exc)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as exc:
            error = self._fail(
                MalformedStreamError(f"unreadable stream: {type(exc).__name__}: {exc}")
            )
            error.__cause__ = exc
        events, asm.events = asm.events, []
        return events, error

    def _fail(self, exc: LaminateError) -> LaminateError:
        if isinstance(exc, MalformedStreamError):
            if exc.offset is None and self._frame is not None:
                exc.offset = self._frame.offset
                exc.snippet = snippet(self._frame.data)
            if exc.offset is not None:
                exc.offset += self._sniffer.offset_base
        if exc.partial is None:
            exc.partial = self._assembler.snapshot()
        self._error = exc
        return exc

    # -- steps --------------------------------------------------------------------------

    def _feed(self, data: bytes) -> None:
        if self._handler is None:  # the tail is asked for only while the provider is unknown
            self._tail.note(data)
        if self._assembler.done:
            return  # after the provider's terminal event the bytes cannot change the answer
        if self._document is not None:
            try:
                self._document.add(data)
            except MalformedStreamError:
                if self._not_a_stream is not None:
                    raise self._not_a_stream from None
                raise
            return
        if self._decoder is None:
            data = self._choose_framing(data, final=False)
            if self._decoder is None:
                return
        if self._head is not None:
            self._record_head(data)
        decoder = self._decoder
        try:
            if self._batching:
                if self._later is not None:
                    self._learn_later()
                if isinstance(decoder, SSEDecoder):
                    data = self._sampled(decoder, data)
                    if self._template is not None:
                        data = self._take_shaped(decoder, data)
                items = decoder.feed_batched(data)
                self._on_frames(items)
                later = self._later
                if later is not None and (not items or items[-1] is not later[0]):
                    self._later = None  # frames came after that batch: too late to learn
                return
            self._on_frames(decoder.feed(data))
        except _NotAStream as exc:
            self._switch_to_document(exc.error)
            return
        self._batching = self._may_batch()

    def _sampled(self, decoder: SSEDecoder, data: bytes) -> bytes:
        """Where a template may be learned but none is yet, and ``data`` is long: its
        first events (about ``_SAMPLE_BYTES``) read the usual way, so that a template
        learned from them takes the rest from its bytes; what is left of ``data``."""
        if (
            self._template is not None
            or not self._learning
            or not self._batched
            or len(data) < 4 * _SAMPLE_BYTES
        ):
            return data
        at, line_end = _line_end(data, _SAMPLE_BYTES)
        end = _event_end(data, at, line_end) if at >= 0 else -1
        if end < 0:
            return data
        self._on_frames(decoder.feed_batched(data[:end]))
        return data[end:]

    def _take_shaped(self, decoder: SSEDecoder, data: bytes) -> bytes:
        """The template's frames in ``data`` read straight from the stream's bytes, before
        the decoder cuts them into frames; what is left of ``data`` for the decoder.

        The event the last bytes left open is first completed by the decoder (up to the
        first blank line). Then, between events, the template's frames written the
        plainest way (:meth:`~._framing.sse.SSEDecoder.frame_bytes`: the template's bytes
        with the event's around them, its lines ending as the bytes' first line does) are
        taken in a row by :meth:`Template.take`."""
        if len(data) > self._max_frame_size:
            return data  # a frame may be over the cap: the decoder says so
        at, line_end = _line_end(data)
        if at < 0:
            return data  # no line ends here: no event does (a long frame's middle)
        if not decoder.resting:
            end = _event_end(data, at, line_end)
            if end < 0:
                return data
            self._on_frames(decoder.feed_batched(data[:end]))
            data = data[end:]
            if not decoder.resting:
                return data
        template = self._template
        if template is None or self._assembler.done:
            return data
        shape = self._shape
        if shape is None or shape[0] is not template or not shape[2].endswith(line_end * 2):
            head, tail = decoder.frame_bytes(
                template.name, template.opening, template.closing, line_end
            )
            shape = self._shape = (template, head, tail)
        _, head, tail = shape
        if not data.startswith(head):
            return data
        size = template.take(data, head, tail)
        if not size:
            return data
        decoder.skip(size)
        return data[size:]

    def _may_batch(self) -> bool:
        """Whether runs of frames may come as one Batch: once the provider is known, the
        frames are not kept, and the body is surely a stream (no frame needs a look of
        its own)."""
        return self._handler is not None and self._head is None and not self._keep_raw

    def _close(self, _: bytes) -> None:
        asm = self._assembler
        if not asm.done and self._decoder is None and self._document is None:
            held = self._choose_framing(b"", final=True)
            if held:
                self._feed(held)  # bytes held to tell a binary prelude, now read as a stream
        if not asm.done and self._document is not None:
            self._read_document()
        decoder = self._decoder
        if decoder is not None and not asm.done:
            try:
                self._on_frames(decoder.close(), at_end=True)
            except _NotAStream as exc:
                self._switch_to_document(exc.error)
                self._read_document()
        if asm.done:
            return
        if self._handler is None:
            if not self._held and self._frame is None and self._tail.blank():
                # White space only (a body's leading keep-alive lines): cut before it began.
                raise IncompleteStreamError("the stream ended before its first frame")
            if all(_is_ping(frame, obj) for frame, obj in self._held) and (
                self._held or self._tail.cut_in_first_frame()
            ):
                # Cut inside the first frame, or after keep-alives only: a retry may succeed.
                raise IncompleteStreamError(
                    "the stream ended inside its first frame, before the provider could be told"
                )
            if len(self._held) == 1 and isinstance(self._held[0][1], dict):
                # One undetected JSON line: a compact complete body.
                self._read_body(self._held[0][1])
                return
            self._undetected()
        if asm.finished:
            asm.complete()
            return
        raise IncompleteStreamError(
            "the stream ended before the provider signalled completion"
            if self._payloads or (decoder is not None and decoder.bytes_seen)
            else "the stream ended before any byte arrived"
        )

    def _choose_framing(self, data: bytes, *, final: bool) -> bytes:
        """Start the decoder (or a document) once the first bytes tell which; returns the
        bytes for the decoder, ``b""`` while they are held."""
        record = APIS.get(self._provider or "")
        chosen = self._sniffer.take(data, record.framing if record else None, final=final)
        if chosen is None:
            return b""
        kind, data = chosen
        if kind == "document":
            self._document = BodyBuffer(self._max_frame_size, data)
            return b""
        if kind == "ndjson":
            self._head = BodyBuffer(self._max_frame_size)
        self._decoder = make_decoder(kind, self._max_frame_size)
        self._batching = self._may_batch()
        return data

    # -- one JSON document instead of a stream -------------------------------------------

    def _record_head(self, data: bytes) -> None:
        head = self._head
        if head is None:
            return
        if head.fits(len(data)):
            head.add(data)
        else:
            self._head = None  # too big to be read again as one document

    def _switch_to_document(self, error: MalformedStreamError) -> None:
        if self._head is None:
            raise MalformedStreamError("a line is not JSON, and the body is too big to be one")
        self._document, self._head, self._decoder = self._head, None, None
        self._not_a_stream = error
        self._frame = None

    def _read_document(self) -> None:
        document = self._document or BodyBuffer(self._max_frame_size)
        self._read_body(document.parse(provider_known=self._provider is not None))

    def _read_body(self, data: dict[str, Any]) -> None:
        provider = self._provider or body_provider(data)
        if self._handler is None:
            self._start_handler(provider)
        if self._keep_raw:
            self._raw_frames().append(data)
        read_body(self._assembler, data, provider, self._handler_options)

    def _on_frames(self, frames: Iterable[Frame | Batch], *, at_end: bool = False) -> None:
        """Parse each frame and hand it to the handler (one call per feed, not per frame)."""
        asm = self._assembler
        events_headers = None  # binary frames share their headers: an event's, checked once
        # The state read per frame, in locals; only detection (``_dispatch``) and a
        # ``[DONE]`` before it can change it, and it is read again after either.
        quick = self._quick
        handler = None if self._keep_raw else self._handler
        head = self._head is not None
        for frame in frames:
            if asm.done:
                return  # after the provider's terminal event nothing can change the answer
            if isinstance(frame, Batch):
                self._on_batch(frame)
                continue
            self._frame = frame
            event, data, _, _, headers = frame
            if headers is not None and headers is not events_headers:
                if headers.get(":message-type", "event") != "event":
                    error = error_from_frame(frame)  # an exception or error frame, not an event
                    if error is not None:
                        raise error
                else:
                    events_headers = headers
            if data == "[DONE]":
                self._template = None
                if self._handler is None:
                    self._undetected()
                if self._handler is not None:
                    self._handler.on_done_marker()
                quick = self._quick
                handler = None if self._keep_raw else self._handler
                continue
            # The usual frame is parsed by the reader itself, with no wrapper's call; anything
            # it leaves (blanks around the value, errors, what orjson reads differently) is
            # read again by ``_parse``, as it always was.
            if quick is None:
                try:
                    obj, end = _scan(data, 0)
                except (StopIteration, ValueError):  # no value there, or a broken one
                    end = -1
                if end != len(data):
                    obj = self._parse(data, at_end)
                    if obj is _SKIP:
                        continue
            else:
                try:
                    obj = quick(data)
                except ValueError:
                    obj = self._parse(data, at_end)
                    if obj is _SKIP:
                        continue
            if head:
                self._head = None  # a line parsed: a stream after all
                head = False
            if self._template is not None and self._template.after(event, obj) is None:
                self._drop_template()
            if handler is not None:
                handler.on_frame(event, obj)  # nearly every frame: no further call
                continue
            self._dispatch(frame, obj)
            quick = self._quick
            handler = None if self._keep_raw else self._handler

    def _on_batch(self, batch: Batch) -> None:
        """Many frames at once: their payloads parsed together, then handed over; those
        that the template of the last plain delta matches, from their bytes alone.

        A long batch with no template yet (a stream's first long read) is read the usual
        way for its first ``_SAMPLE`` frames only: a template learned from them takes
        the rest."""
        payloads = batch.payloads
        if len(payloads) == 1 and self._whole is not None and self._on_long(batch):
            return
        names = batch.names
        start, total = 0, len(payloads)
        sampled = False
        while start < total:
            template = self._template
            if template is not None:
                taken, holds = template.run(
                    names[start:] if start and names is not None else names,
                    payloads[start:] if start else payloads,
                )
                if not holds:
                    self._drop_template()
                start += taken
                if start == total:
                    return
            learns = self._batched
            self._batched = True
            end = total
            if (
                not sampled
                and learns
                and self._learning
                and self._template is None
                and total - start > 2 * _SAMPLE
            ):
                end, sampled = start + _SAMPLE, True
            if not self._read_frames(batch, start, end, learns=learns):
                return
            start = end

    def _read_frames(self, batch: Batch, start: int, end: int, *, learns: bool) -> bool:
        """Frames ``start`` to ``end`` of ``batch``, parsed together and handed over (a
        template learned from the last, ``learns``); ``False`` where the batch's other
        frames are not to be read after them (the answer is done, or the batch went to
        the frame-by-frame reader whole)."""
        payloads = batch.payloads
        whole = start == 0 and end == len(payloads)
        objs = self._read_batch(payloads if whole else payloads[start:end])
        if objs is None:  # a payload the fast reader does not take: one by one, as always
            frames, error = batch.frames()
            self._on_frames(frames[start:] if start else frames)
            if error is not None:
                raise error
            return False
        if start:
            objs = [None] * start + list(objs)  # the frame indexes stay the batch's
        asm = self._assembler
        handler = self._handler
        if handler is None:  # never: the decoder batches once the handler is known
            raise MalformedStreamError("frames in a batch before the provider is known")
        on_frame = handler.on_frame
        names = batch.names
        run = getattr(handler, "run", None)
        i = start  # the frame being read, for an error's offset
        try:
            while i < end:
                if run is not None:
                    # The handler reads the runs of plain deltas at once (never tool
                    # arguments sent as objects); the frames between them, one by one.
                    i = run(names, objs, i)
                    if i == end:
                        if self._learning and self._template is None:
                            if learns:
                                self._learn(names, objs, payloads, end - 1)
                            elif end == len(payloads):
                                self._keep_for_later(batch, names, objs, payloads, end - 1)
                        break
                on_frame(names[i] if names is not None else None, self._exact(batch, objs, i))
                if asm.whole_bound:
                    asm.whole_bound = 0  # it was this frame's
                if asm.done:
                    return False
                i += 1
        except Exception:
            asm.whole_bound = 0
            frames, error = batch.frames()
            if i < len(frames):
                self._frame = frames[i]  # where the error is: the frame it came from
            elif error is not None:
                raise error from None  # the bytes end before frame i: that is the error
            raise
        return True

    def _drop_template(self) -> None:
        """The template no longer holds; one that took no frame used up one of the
        stream's tries (``TRIES``)."""
        template, self._template = self._template, None
        if template is not None and not template.taken:
            self._learning = max(self._learning - 1, 0)  # learned for nothing

    def _learn(
        self,
        names: Sequence[str | None] | None,
        objs: Sequence[Any],
        payloads: Sequence[bytes | bytearray],
        at: int,
    ) -> None:
        """The template of a batch's frame ``at``, a plain delta the handler just took;
        with a key place where the frame before it was a plain delta of the same kind for
        another block (pieces that come turn about)."""
        handler = cast("PlainReader", self._handler)
        name = names[at] if names is not None else None
        keyed = False
        if at and objs[at - 1] is not None:
            hit = handler._plain(name, objs[at])
            before = handler._plain(names[at - 1] if names is not None else None, objs[at - 1])
            keyed = (
                hit is not None
                and before is not None
                and before[0] != hit[0]
                and before[2] is hit[2]
            )
        self._template = learn(handler, name, objs[at], payloads[at], keyed=keyed)
        if self._template is None:
            self._learning -= 1

    def _keep_for_later(
        self,
        batch: Batch,
        names: Sequence[str | None] | None,
        objs: Sequence[Any],
        payloads: Sequence[bytes | bytearray],
        at: int,
    ) -> None:
        """What ``_learn`` needs of a stream's first batch, whose last frame ``at`` is a
        plain delta: kept (that frame and the one before it, the payload copied) for the
        next feed to learn the template from, before its first frame."""
        first = max(at - 1, 0)
        kept_names = None if names is None else list(names[first : at + 1])
        kept = (
            kept_names,
            list(objs[first : at + 1]),
            [bytes(p) for p in payloads[first : at + 1]],
        )
        self._later = (batch, (*kept, at - first))

    def _learn_later(self) -> None:
        """The template of the first batch's last frame, learned as that batch would
        have learned it: nothing was read since."""
        later, self._later = self._later, None
        if later is not None and self._learning and self._template is None:
            self._learn(*later[1])

    def _on_long(self, batch: Batch) -> bool:
        """A long frame, alone in its batch (see ``Batch``), of an API whose tool arguments
        arrive whole: if it may carry some, it is read from its bytes by the one reader
        that also bounds their text, so that nothing writes it unless something reads it.
        ``False``: it carries none, and is read as any batch."""
        data = batch.payloads[0]
        marker = self._whole
        if marker is None or (marker not in data and b"\\u" not in data):
            return False
        asm = self._assembler
        handler = self._handler
        if handler is None:  # never: the decoder batches once the handler is known
            raise MalformedStreamError("frames in a batch before the provider is known")
        try:
            obj, asm.whole_bound = jsonlib.loads_whole(bytes(data))
        except ValueError:  # not UTF-8, not JSON, a keep-alive: read as the frame it is
            frames, error = batch.frames()
            self._on_frames(frames)
            if error is not None:
                raise error from None
            return True
        try:
            handler.on_frame(batch.names[0] if batch.names is not None else None, obj)
        except Exception:
            frames, error = batch.frames()
            if frames:
                self._frame = frames[0]  # where the error is: the frame it came from
            elif error is not None:
                raise error from None
            raise
        finally:
            asm.whole_bound = 0
        return True

    def _exact(self, batch: Batch, objs: Sequence[Any], i: int) -> Any:
        """Frame ``i``'s value, read again exactly if orjson read it and it may carry
        whole-object tool arguments (as ``_parse``'s reader does for one frame)."""
        marker = self._recheck
        if marker is not None:
            data = batch.payloads[i]
            if marker in data or b"\\u" in data:
                obj, self._assembler.whole_bound = jsonlib.loads_whole(bytes(data))
                return obj
        return objs[i]

    def _parse(self, data: str, at_end: bool) -> Any:
        """A frame's JSON, read by the full reader; ``_SKIP`` for a keep-alive."""
        try:
            return self._loads(data)
        except ValueError as exc:
            if data.strip().lower() in _KEEPALIVE:
                return _SKIP
            if self._head is not None:
                # What the first line is, unless the body turns out to be one document.
                frame = self._frame
                error = MalformedStreamError(f"a frame is not JSON: {exc}")
                if frame is not None:
                    error.offset, error.snippet = frame.offset, snippet(frame.data)
                raise _NotAStream(error) from exc
            if at_end:
                raise IncompleteStreamError("the stream ended inside a frame") from exc
            raise MalformedStreamError(f"a frame is not JSON: {exc}") from exc

    def _dispatch(self, frame: Frame, obj: Any) -> None:
        if self._handler is None:
            self._detect(frame, obj)
            return
        if self._keep_raw:
            self._raw_frames().append(obj)
        self._handler.on_frame(frame.event, obj)

    def _feed_payload(self, item: tuple[Any, str | None]) -> None:
        if self._assembler.done:
            return
        payload, event = item
        self._payloads += 1
        self._frame = None
        self._template = None
        if isinstance(payload, bytes | bytearray | str):
            text = payload.decode("utf-8") if not isinstance(payload, str) else payload
            self._on_frames((Frame(event, text, 0, None),))
            return
        obj = payload
        frame = Frame(event, "", 0, None)
        if self._handler is None:
            frame = Frame(event, _short_json(obj), 0, None)  # for detection's error message
        self._dispatch(frame, obj)

    # -- detection --------------------------------------------------------------------

    def _detect(self, frame: Frame, obj: Any) -> None:
        provider = provider_from_frame(frame.event, obj)
        if provider is None:
            # An error, not a body that has an `error` field (a Responses body's is null,
            # or beside the `output` its reader reads).
            if isinstance(obj, dict) and (
                (obj.get("error") and "output" not in obj) or obj.get("type") == "error"
            ):
                raise error_from_payload(obj)
            self._held.append((frame, obj))
            if len(self._held) >= _DETECT_FRAMES:
                self._undetected()
            return
        self._start_handler(provider)
        held, self._held = self._held, []
        for old_frame, old_obj in [*held, (frame, obj)]:
            self._frame = old_frame
            if self._keep_raw:
                self._raw_frames().append(old_obj)
            assert self._handler is not None  # set by _start_handler just above
            self._handler.on_frame(old_frame.event, old_obj)

    def _undetected(self) -> None:
        seen = "; ".join(describe(f.event, f.data) for f, _ in self._held[:3]) or (
            describe(self._frame.event, self._frame.data) if self._frame else "no frame"
        )
        raise UnknownProviderError(
            f"could not detect the provider from the stream (saw {seen}); pass provider=...",
            seen=seen,
        )

    def _start_handler(self, provider: str) -> None:
        if provider not in APIS:
            raise UnknownProviderError(f"provider {provider!r} is not supported yet", seen=provider)
        self._provider = provider
        self._assembler.provider = provider
        record = APIS[provider]
        self._assembler.input_includes_cache = record.input_includes_cache
        self._handler = record.handler(self._assembler, self._handler_options)
        if record.model_from_url is not None and self._url_path:
            self._assembler.start("", record.model_from_url(self._url_path))  # no id yet
        # Whole-object tool arguments keep their numbers exact; other frames hold none
        # that a faster reader would change.
        marker = record.arguments_marker
        self._loads = jsonlib.exact_where(marker) if marker else jsonlib.loads
        self._quick = jsonlib.quick_loads(marker)
        self._read_batch = jsonlib.batch_loads()
        self._recheck = marker.encode() if marker and jsonlib.BACKEND == "orjson" else None
        self._whole = marker.encode() if marker else None
        # Templates for readers of plain deltas (their frames are read from their bytes,
        # so not where every frame is kept as it was parsed).
        if isinstance(self._handler, PlainReader) and not self._keep_raw:
            self._learning = TRIES

    def _raw_frames(self) -> list[Any]:
        asm = self._assembler
        if asm.raw_frames is None:
            asm.raw_frames = []
        return asm.raw_frames


def merging(normalizer: StreamNormalizer) -> StreamNormalizer:
    """``normalizer``, made to give the pieces of one block that one feed holds in a row
    as one delta event rather than one per frame (``Assembler.merge``): the same content
    and answer, for a writer that needs no more than that (the proxy's)."""
    normalizer._assembler.merge = True
    return normalizer


def _line_end(data: bytes, start: int = 0) -> tuple[int, bytes]:
    """Where the first LF of ``data`` from ``start`` is (``-1``: none), and how that line
    ends: CRLF, or LF (also where no line ends)."""
    at = data.find(b"\n", start)
    return at, b"\r\n" if at > 0 and data[at - 1] == 13 else b"\n"  # 13: CR


def _event_end(data: bytes, at: int, line_end: bytes) -> int:
    """Where the first blank line of ``data`` from the line end at ``at`` (as
    :func:`_line_end` found it) ends: the end of the event it closes (``-1``: none)."""
    blank = line_end * 2
    found = data.find(blank, max(at - 1, 0))
    return found + len(blank) if found >= 0 else -1


def _is_ping(frame: Frame, obj: Any) -> bool:
    """A keep-alive event (Anthropic's ``ping``), which tells nothing yet."""
    return frame.event == "ping" or (isinstance(obj, dict) and obj.get("type") == "ping")


def plain_payload(payload: Any) -> Any:
    """A parsed frame as plain JSON-like data: a mapping as it is, an SDK model object
    through ``model_dump()`` (pydantic: aliases, only the fields the wire set) or
    ``to_dict()``."""
    if isinstance(payload, dict):
        return payload
    dump = getattr(payload, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_unset=True)
    to_dict = getattr(payload, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    if isinstance(payload, Mapping):
        return dict(payload)
    raise TypeError(
        "feed_payload() takes a dict, an SDK model object (model_dump() or to_dict()), "
        f"or the frame's JSON text; got {type(payload).__name__}"
    )


def _short_json(obj: Any) -> str:
    try:
        text = json.dumps(obj, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(obj)
    return text[:200]


class _NotAStream(Exception):
    """The first NDJSON line is not JSON: the bytes may be one pretty-printed document.
    ``error``: what the line is if they are not."""

    def __init__(self, error: MalformedStreamError) -> None:
        super().__init__(str(error))
        self.error = error


def _url_path(url: str) -> str:
    path = url.split("://", 1)[-1]
    slash = path.find("/")
    path = path[slash:] if slash >= 0 else "/"
    return path.split("?", 1)[0]
