"""The assembler: every contract rule about blocks and events, written once.

Provider modules read their own JSON and call the neutral verbs below (``text``,
``reasoning``, ``tool_start``, ``tool_input``, ``end``, ``finish``, ``usage``, ...),
keyed by whatever identifies a block in that provider's wire format. The assembler
numbers blocks by first appearance, keeps start-before-delta-before-end, closes what
the provider leaves open, and builds the final response and the ``.partial`` snapshot.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Hashable, Iterable, Iterator, Mapping
from itertools import count as numbers_from
from itertools import repeat
from operator import attrgetter
from typing import Any, Final, cast

from . import jsonlib
from .errors import MalformedStreamError
from .events import (
    BlockEnd,
    BlockStart,
    Event,
    ReasoningDelta,
    ResponseDone,
    ResponseStart,
    TextDelta,
    ToolInputDelta,
    _new,
    _reasoning_index,
    _reasoning_text,
    _text_index,
    _text_text,
    _tool_fragment,
    _tool_index,
    _tool_seq,
    _tool_view,
    text_delta,
    tool_input_delta,
    whole_input_delta,
)
from .flex import FlexValue
from .partial_json import _BLOCK, ArgumentsView, TextView, WholeView
from .response import (
    ContentBlock,
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    StopReason,
    Text,
    ToolUse,
    Unknown,
    Usage,
)

__all__ = ["Assembler", "UsageCounts", "finalize_tool_input"]

log = logging.getLogger("laminate")

_TEXT: Final = 0
_REASONING: Final = 1
_TOOL: Final = 2
_UNKNOWN: Final = 3

# Text deltas are joined every this many, so that memory follows the text, not the
# number of deltas it came in.
_CHUNK: Final = 256
# The size of a tool call's arguments sent whole whose text is not written yet: above
# any cap, so that the next fragment takes the way that writes it first.
_UNWRITTEN: Final = 1 << 60

_USAGE_FIELDS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)

UsageCounts = tuple[int | None, int | None, int | None, int | None, int | None]
"""Input, output, cache-read, cache-write and reasoning token counts (``None``: not
reported), for :meth:`Assembler.counts`."""

# Stop reasons that end a response early: a tool call still open then was cut off.
_CUTTING: Final = frozenset(
    {
        StopReason.MAX_TOKENS,
        StopReason.CONTENT_FILTER,
        StopReason.REFUSAL,
        StopReason.CONTEXT_WINDOW_EXCEEDED,
    }
)
UNFINISHED_REASON: Final = "unfinished: the stream ended before the provider finished this call"


def finalize_tool_input(raw: str) -> tuple[dict[str, Any] | None, str]:
    """Parse a finished call's argument text once.

    Returns ``(arguments, "")`` for a JSON object, ``(None, reason)`` otherwise. Empty or
    blank text means no arguments, as the official SDKs read it.
    """
    if not raw.strip():
        return {}, ""
    try:
        value = _strict_loads(raw)
    except ValueError as exc:
        return None, f"arguments are not valid JSON: {exc}"
    except RecursionError:
        return None, "arguments are nested too deeply"
    if not isinstance(value, dict):
        return None, f"arguments are JSON but not an object (got {type(value).__name__})"
    return value, ""


def _strict_loads(raw: str) -> Any:
    if jsonlib.BACKEND == "orjson":
        try:
            return jsonlib.loads_strict(raw)
        except ValueError:
            pass  # json reads it again: its values where it differs, and its error words
    return json.loads(raw, parse_constant=_reject_constant)


def _reject_constant(name: str) -> Any:
    # Python's json accepts NaN and Infinity; JSON (RFC 8259) does not.
    raise ValueError(f"{name} is not JSON")


class _Block:
    """A block being built. Private and mutable; what leaves is frozen."""

    __slots__ = (
        "chunks",
        "custom",
        "data",
        "id",
        "id_given",
        "index",
        "kind",
        "name",
        "parts",
        "redacted",
        "signature",
        "size",
        "view",
        "whole",
    )

    def __init__(self, index: int, kind: int) -> None:
        self.index = index
        self.kind = kind
        self.parts: list[str] = []  # the latest pieces of text
        self.chunks: list[str] = []  # earlier pieces, joined every _CHUNK of them
        self.id = ""
        self.id_given = False
        self.name = ""
        self.signature: list[str] | None = None
        self.redacted = False
        self.view: ArgumentsView | None = None
        self.custom = False  # a custom tool call: its input is text, not JSON
        self.size = 0
        self.data: dict[str, Any] | None = None
        # A tool call's arguments sent whole, as an object: the value its one fragment
        # (the value's JSON text) reads back as.
        self.whole: dict[str, Any] | None = None

    def snapshot(self, tool_reason: str) -> ContentBlock:
        """The block as it stands; an unfinished tool call is an ``InvalidToolUse``."""
        match self.kind:
            case 0:
                return Text(self.text(), self._signature())
            case 1:
                sig = "".join(self.signature) if self.signature is not None else None
                return Reasoning(self.text(), sig, self.redacted, self.id or None)
            case 2:
                return InvalidToolUse(self.id, self.name, self.text(), tool_reason)
            case _:
                return Unknown(self.name, FlexValue(self._unknown_data()))

    def finish(self) -> ContentBlock:
        """The final block: a tool call's arguments are parsed here, once."""
        if self.kind != _TOOL:
            return self.snapshot("")
        whole = self.whole
        if whole is not None and self.name and not self.custom and len(self.view or ()) == 1:
            return ToolUse(self.id, self.name, FlexValue(whole), self._signature())
        raw = self.text()
        if not self.name:
            return InvalidToolUse(self.id, self.name, raw, "the provider never named the tool")
        if self.custom:
            return ToolUse(self.id, self.name, FlexValue(raw), self._signature(), "custom")
        args, reason = finalize_tool_input(raw)
        if args is None:
            return InvalidToolUse(self.id, self.name, raw, reason)
        return ToolUse(self.id, self.name, FlexValue(args), self._signature())

    def _signature(self) -> str | None:
        return "".join(self.signature) if self.signature is not None else None

    def text(self) -> str:
        """All the text received, joined once."""
        if self.view is not None:
            return self.view.text()
        return "".join(self.chunks) + "".join(self.parts)

    def _unknown_data(self) -> dict[str, Any]:
        data = dict(self.data or {})
        if self.parts:
            raw = self.text()
            args, _ = finalize_tool_input(raw)
            data["input"] = args if args is not None else raw
        return data


_index_of: Final = attrgetter("index")
_view_of: Final = attrgetter("view")


class Assembler:
    """Turns neutral verbs into events and, at the end, one :class:`NormalizedResponse`."""

    def __init__(self, provider: str, *, max_tool_input_size: int) -> None:
        self.provider = provider
        self.events: list[Event] = []
        self.max_tool_input_size = max_tool_input_size
        self.id = ""
        self.model = ""
        self.started = False
        self.stop_reason: StopReason | None = None
        self._stop_may_change = False  # set by finish(close=False): a later finish replaces it
        self.done = False  # ResponseDone emitted
        self.response: NormalizedResponse | None = None
        self.raw_frames: list[Any] | None = None
        self.whole_bound = 0
        """While the reader hands over a frame it read with :func:`jsonlib.loads_whole`:
        that reading's bound on the written text of any value in the frame (``0``: none
        known, the value itself is measured). Set before the frame's handler runs and
        cleared after it."""
        self._blocks: list[_Block] = []
        self._finals: list[ContentBlock | None] = []
        self._open: dict[Hashable, _Block] = {}
        self._tool_ids: set[str] = set()
        self._usage: dict[str, int | None] = dict.fromkeys(_USAGE_FIELDS)
        self._usage_raw: dict[str, Any] = {}
        self.input_includes_cache = False
        """Whether the API's input count holds its cached tokens (``Usage``'s field of the
        same name): set by whoever picks the API's reader."""
        self.merge = False
        """Whether the pieces of one block handed over in one call (:meth:`texts`,
        :meth:`tool_inputs`: a run of plain deltas read at once) make one delta event
        rather than one per piece: for a writer that needs no more (the proxy), whose
        client gets the same content in fewer, longer deltas."""

    # -- response-level verbs -------------------------------------------------

    def start(self, id: str, model: str) -> None:
        """Record the response id and model; the first non-empty value of each wins."""
        if id and not self.id:
            self.id = id
        if model and not self.model:
            self.model = model
        if self.id and not self.started:
            self._emit_start()

    def usage(self, raw: Mapping[str, Any] | None = None, **counts: int | None) -> None:
        """Merge reported counts: a later report of a count replaces an earlier one.
        ``raw`` is merged into the response's ``usage.raw`` (copied, never kept)."""
        for name, value in counts.items():
            if value is not None:
                self._usage[name] = value
        if raw:
            self._usage_raw.update(raw)

    def counts(self, raw: Mapping[str, Any] | None, counts: UsageCounts) -> None:
        """:meth:`usage` with the counts as one tuple, in the order of :data:`UsageCounts`:
        for a provider that reports its usage in every frame (Gemini), this spares the
        keyword dictionary and its loop, which cost about four times the merge itself."""
        usage = self._usage
        input_tokens, output_tokens, cache_read, cache_write, reasoning = counts
        if input_tokens is not None:
            usage["input_tokens"] = input_tokens
        if output_tokens is not None:
            usage["output_tokens"] = output_tokens
        if cache_read is not None:
            usage["cache_read_tokens"] = cache_read
        if cache_write is not None:
            usage["cache_write_tokens"] = cache_write
        if reasoning is not None:
            usage["reasoning_tokens"] = reasoning
        if raw:
            self._usage_raw.update(raw)

    def finish(self, stop_reason: StopReason, *, close: bool = True) -> None:
        """The provider said why it stopped: every open block is closed now.

        A tool call still open when the response ends early (token limit, content
        filter, refusal, context window) was cut off, so it becomes an ``InvalidToolUse``
        even if its text happens to parse. ``close=False`` (a clean stop only) keeps the
        open blocks open until :meth:`complete`, for a provider that may send more of
        them after its finish; a later finish then replaces this one (the last one wins).
        """
        if self.stop_reason is None or self._stop_may_change:
            self.stop_reason = stop_reason
            self._stop_may_change = not close
        elif stop_reason != self.stop_reason:
            log.warning(
                "laminate: second stop reason %r ignored (kept %r)",
                stop_reason.raw,
                self.stop_reason.raw,
            )
        if not close:
            return
        cut_off = self.stop_reason in _CUTTING
        for key in list(self._open):
            self._close(key, cut_off=cut_off)

    @property
    def finished(self) -> bool:
        """Whether the provider signalled why it stopped."""
        return self.stop_reason is not None

    def complete(self, default_stop: StopReason | None = None) -> None:
        """The provider's terminal signal: close everything and emit ``ResponseDone``."""
        if self.done:
            return
        if self.stop_reason is None:
            if default_stop is None:
                default_stop = self._inferred_stop()
            self.finish(default_stop)
        for key in list(self._open):
            self._close(key, cut_off=False)
        self._ensure_started()
        self.response = self._build(self.stop_reason or default_stop or _NO_STOP)
        self.done = True
        self.events.append(ResponseDone(self.response))

    def _inferred_stop(self) -> StopReason:
        # Some servers end with a terminal marker and no stop reason at all: the kind
        # follows from the content, the raw string stays empty (nothing was sent).
        has_tools = any(b.kind == _TOOL for b in self._blocks)
        return (StopReason.TOOL_USE if has_tools else StopReason.END_TURN).with_raw("")

    def has_tool_calls(self) -> bool:
        return any(b.kind == _TOOL for b in self._blocks)

    # -- block verbs ------------------------------------------------------------

    def open_text(self, key: Hashable) -> None:
        self._block(key, _TEXT)

    def text(self, key: Hashable, text: str) -> None:
        if not text:
            return
        block = self._open.get(key) or self._open_block(key, _TEXT)
        if block.kind != _TEXT:
            self._check_kind(block, _TEXT)
        parts = block.parts
        parts.append(text)
        if len(parts) == _CHUNK:
            block.chunks.append("".join(parts))
            parts.clear()
        # events.text_delta, inline: the delta verbs run once per frame.
        event = _new(TextDelta)
        _text_index(event, block.index)
        _text_text(event, text)
        self.events.append(event)

    def texts(self, key: Hashable, texts: list[str]) -> bool:
        """:meth:`text` for several pieces in a row, in one call (a handler's ``run``).
        ``False``, with nothing done, where :meth:`text` would raise: the caller then
        hands the pieces over one by one, and the error names the right frame."""
        if "" in texts:
            texts = [text for text in texts if text]
            if not texts:
                return True
        block = self._open.get(key)
        if block is None:
            block = self._open_block(key, _TEXT)
        elif block.kind != _TEXT:
            return False
        parts = block.parts
        parts += texts
        if len(parts) >= _CHUNK:
            block.chunks.append("".join(parts))
            parts.clear()
        count = len(texts)
        if count == 1 or self.merge:
            self.events.append(text_delta(block.index, texts[0] if count == 1 else "".join(texts)))
            return True
        # One event per piece, built field by field over all of them (events.text_delta).
        events: list[TextDelta] = list(map(_new, repeat(TextDelta, count)))
        any(map(_text_index, events, repeat(block.index, count)))
        any(map(_text_text, events, texts))
        self.events += events
        return True

    def tool_inputs(self, key: Hashable, fragments: list[str]) -> bool:
        """:meth:`tool_input` for several fragments of one call in a row, in one call.
        ``False``, with nothing done, where :meth:`tool_input` would raise or the block
        is not a tool call: the caller then hands the fragments over one by one."""
        block = self._open.get(key)
        if block is None or block.view is None:
            return False
        if "" in fragments:
            fragments = [fragment for fragment in fragments if fragment]
            if not fragments:
                return True
        size = block.size + sum(map(len, fragments))
        if size > self.max_tool_input_size:
            return False
        block.size = size
        view = block.view
        count = len(fragments)
        if count == 1 or self.merge:
            fragment = fragments[0] if count == 1 else "".join(fragments)
            self.events.append(tool_input_delta(block.index, fragment, view, view.append(fragment)))
            return True
        first = view.extend(fragments)
        indexes, views = repeat(block.index, count), repeat(view, count)
        self._tool_events(fragments, indexes, views, range(first, first + count))
        return True

    def tool_inputs_mixed(self, keys: list[Hashable], fragments: list[str]) -> bool:
        """:meth:`tool_input` for fragments of several calls sent turn about (parallel
        calls interleaved): fragment ``i`` is for call ``keys[i]``, the events come in
        the fragments' order. ``False``, with nothing done, where :meth:`tool_inputs`
        would refuse any call's share: the caller then hands them over one by one."""
        if "" in fragments:
            kept = [i for i, fragment in enumerate(fragments) if fragment]
            keys = [keys[i] for i in kept]
            fragments = [fragments[i] for i in kept]
            if not fragments:
                return True
        found = list(map(self._open.get, keys))
        if None in found:
            return False
        blocks = cast("list[_Block]", found)
        shares: dict[_Block, list[str]] = {}
        views: list[ArgumentsView] = []
        for block in dict.fromkeys(blocks):
            if block.view is None:
                return False
            shares[block] = []
            views.append(block.view)
        # Each call's fragments, in order, with no Python step per fragment.
        any(map(list.append, map(shares.__getitem__, blocks), fragments))
        sizes = [sum(map(len, share)) for share in shares.values()]
        limit = self.max_tool_input_size
        if any(block.size + size > limit for block, size in zip(shares, sizes, strict=True)):
            return False
        numbers: dict[_Block, Iterator[int]] = {}
        for (block, share), size, view in zip(shares.items(), sizes, views, strict=True):
            block.size += size
            numbers[block] = numbers_from(view.extend(share))
        seqs = map(next, map(numbers.__getitem__, blocks))
        self._tool_events(fragments, map(_index_of, blocks), map(_view_of, blocks), seqs)
        return True

    def _tool_events(
        self,
        fragments: list[str],
        indexes: Iterable[int],
        views: Iterable[ArgumentsView | None],
        seqs: Iterable[int],
    ) -> None:
        """One ``ToolInputDelta`` per fragment, built field by field over all of them
        (``events.tool_input_delta`` for many), in the fragments' order."""
        events: list[ToolInputDelta] = list(map(_new, repeat(ToolInputDelta, len(fragments))))
        any(map(_tool_index, events, indexes))
        any(map(_tool_fragment, events, fragments))
        any(map(_tool_view, events, views))
        any(map(_tool_seq, events, seqs))
        self.events += events

    def open_reasoning(
        self, key: Hashable, *, signature: str | None = None, redacted: bool = False, id: str = ""
    ) -> None:
        block = self._open.get(key)
        if block is None:
            # Opened here: its id is part of the initial state a writer sees at BlockStart.
            block = self._new_block(key, _REASONING)
            block.id = id
            self.events.append(BlockStart(block.index, Reasoning("", id=id or None)))
        else:
            self._check_kind(block, _REASONING)
        block.redacted = block.redacted or redacted
        if id and not block.id:
            block.id = id
        if signature:
            self.reasoning_signature(key, signature)

    def reasoning(self, key: Hashable, text: str) -> None:
        if not text:
            return
        block = self._open.get(key) or self._open_block(key, _REASONING)
        if block.kind != _REASONING:
            self._check_kind(block, _REASONING)
        parts = block.parts
        parts.append(text)
        if len(parts) == _CHUNK:
            block.chunks.append("".join(parts))
            parts.clear()
        event = _new(ReasoningDelta)  # events.reasoning_delta, inline
        _reasoning_index(event, block.index)
        _reasoning_text(event, text)
        self.events.append(event)

    def reasoning_signature(self, key: Hashable, signature: str) -> None:
        """Append to a reasoning block's opaque signature, kept byte for byte."""
        block = self._block(key, _REASONING)
        if block.signature is None:
            block.signature = []
        block.signature.append(signature)

    def text_signature(self, key: Hashable, signature: str) -> None:
        """Set the opaque signature of an open text block (Gemini's ``thoughtSignature``),
        kept byte for byte; a text block has one, so a later one replaces it."""
        self._block(key, _TEXT).signature = [signature]

    def tool_signature(self, key: Hashable, signature: str) -> None:
        """Set the opaque signature of an open tool call, kept byte for byte."""
        block = self._open.get(key)
        if block is None:
            raise MalformedStreamError("a signature for a tool call that is not open")
        self._check_kind(block, _TOOL)
        block.signature = [signature]

    def tool_start(self, key: Hashable, id: str, name: str, *, custom: bool = False) -> None:
        """Open a tool call. An empty or repeated id is replaced by a stable generated one.

        A ``custom`` call (a free-form tool) takes text, not JSON: it ends as a
        ``ToolUse`` of kind ``"custom"`` whose input is that text."""
        if key in self._open:
            self._tool_identity(self._open[key], id, name)
            return
        block = self._new_block(key, _TOOL)
        block.view = TextView() if custom else ArgumentsView()
        block.custom = custom
        block.name = name
        block.id_given = bool(id)
        block.id = self._unique_tool_id(id, block.index)
        initial = ToolUse(block.id, name, FlexValue(""), None, "custom") if custom else None
        start = initial or ToolUse(block.id, name, FlexValue({}))
        self.events.append(BlockStart(block.index, start))

    def tool_input(self, key: Hashable, fragment: str) -> None:
        """Append raw JSON text to a tool call's arguments (or to an unknown block's input)."""
        block = self._open.get(key)
        if block is None:
            raise MalformedStreamError("tool input for a block that is not open")
        if not fragment:
            return
        size = block.size = block.size + len(fragment)
        if size > self.max_tool_input_size:
            if size >= _UNWRITTEN and isinstance(block.view, WholeView):
                block.size = block.view.written()  # arguments sent whole, then more
                self.tool_input(key, fragment)
                return
            limit = self.max_tool_input_size
            raise MalformedStreamError(
                f"tool call arguments exceed max_tool_input_size ({limit} characters)"
            )
        view = block.view
        if view is None:  # only a tool call has a view
            if block.kind == _UNKNOWN:
                block.parts.append(fragment)
                return
            self._check_kind(block, _TOOL)  # raises: a delta for a text or reasoning block
            return
        # ArgumentsView.append and events.tool_input_delta, inline: one call per fragment
        # instead of three. The view's size is the block's (every fragment comes here).
        recent = view._recent
        recent.append(fragment)
        view._size = size
        ends = view._ends
        ends.append(size)
        if len(recent) == _BLOCK:
            view._blocks.append("".join(recent))
            recent.clear()
        event = _new(ToolInputDelta)
        _tool_index(event, block.index)
        _tool_fragment(event, fragment)
        _tool_view(event, view)
        _tool_seq(event, len(ends) - 1)
        self.events.append(event)

    def tool_arguments(self, key: Hashable, value: Any) -> None:
        """A tool call's arguments sent whole, as a parsed JSON value rather than text:
        :meth:`tool_input` of the value's JSON text. When that text is the call's first
        fragment the value itself is kept, and the call's arguments are not parsed again
        from the text when it ends: JSON text written from a parsed value reads back as
        that value (the one exception, a float the text spells ``NaN`` or ``Infinity``,
        which JSON has not, is parsed, and refused, as before)."""
        block = self._open.get(key)
        if (
            block is not None
            and block.view.__class__ is ArgumentsView
            and not len(block.view)
            and value.__class__ is dict
        ):
            bound: int | None = self.whole_bound
            if not bound or bound > self.max_tool_input_size:
                bound = jsonlib.written_size_bound(value)
            if bound is not None and bound <= self.max_tool_input_size:
                # The text is written only when something reads it (WholeView); until
                # then the block's size is unknown, and above any cap: a fragment added
                # after it takes tool_input's slow way, which writes it first.
                view = block.view = WholeView(value)
                block.whole = value
                block.size = _UNWRITTEN
                self.events.append(whole_input_delta(block.index, view))
                return
        text = jsonlib.dumps_parsed(value)
        self.tool_input(key, text)
        block = self._open.get(key)
        if (
            block is not None
            and block.view is not None
            and len(block.view) == 1
            and value.__class__ is dict
            and "NaN" not in text
            and "Infinity" not in text
        ):
            block.whole = value

    def tool_identity(self, key: Hashable, id: str, name: str) -> None:
        """A later fragment repeated the call's id or name: set once, never concatenated."""
        block = self._open.get(key)
        if block is not None and block.kind == _TOOL:
            self._tool_identity(block, id, name)

    def unknown(self, key: Hashable, block_type: str, data: dict[str, Any]) -> None:
        """Open a block of a type laminate does not model; it is kept as ``Unknown``.

        Called again while the block is open, it replaces the block's data (a provider
        that sends an item when it starts and again, complete, when it is done).
        """
        open_block = self._open.get(key)
        if open_block is not None:
            self._check_kind(open_block, _UNKNOWN)
            open_block.data = data
            return
        block = self._new_block(key, _UNKNOWN)
        block.name = block_type
        block.data = data
        self.events.append(BlockStart(block.index, Unknown(block_type, FlexValue(data))))

    def citation(self, data: Mapping[str, Any]) -> None:
        """A citation of the text being written: an ``Unknown("citation")`` block of its
        own, opened and closed at once (after the text block it annotates), holding the
        citation as sent."""
        key = ("citation", len(self._blocks))  # a fresh key: the block count only grows
        self.unknown(key, "citation", dict(data))
        self.end(key)

    def end(self, key: Hashable) -> None:
        """The provider closed this block."""
        if key in self._open:
            self._close(key, cut_off=False)

    def is_open(self, key: Hashable) -> bool:
        return key in self._open

    # -- results ------------------------------------------------------------------

    def snapshot(self) -> NormalizedResponse:
        """Everything received so far, for an error's ``.partial``."""
        if self.response is not None:
            return self.response
        content: list[ContentBlock] = []
        for block, final in zip(self._blocks, self._finals, strict=True):
            content.append(final if final is not None else block.snapshot(UNFINISHED_REASON))
        return self._response(content, self.stop_reason or _NO_STOP)

    # -- internals --------------------------------------------------------------

    def _emit_start(self) -> None:
        self.started = True
        self.events.append(ResponseStart(self.id, self.model, self.provider))

    def _ensure_started(self) -> None:
        if not self.started:
            self._emit_start()

    def _block(self, key: Hashable, kind: int) -> _Block:
        block = self._open.get(key)
        if block is None:
            return self._open_block(key, kind)
        self._check_kind(block, kind)
        return block

    def _open_block(self, key: Hashable, kind: int) -> _Block:
        block = self._new_block(key, kind)
        initial: ContentBlock = Text("") if kind == _TEXT else Reasoning("")
        self.events.append(BlockStart(block.index, initial))
        return block

    def _new_block(self, key: Hashable, kind: int) -> _Block:
        self._ensure_started()
        block = _Block(len(self._blocks), kind)
        self._blocks.append(block)
        self._finals.append(None)
        self._open[key] = block
        return block

    def _check_kind(self, block: _Block, kind: int) -> None:
        if block.kind != kind:
            raise MalformedStreamError("a delta does not match the type of the block it names")

    def _close(self, key: Hashable, *, cut_off: bool) -> None:
        block = self._open.pop(key)
        if cut_off and block.kind == _TOOL:
            final = block.snapshot(self._cut_off_reason())
        else:
            final = block.finish()
        self._finals[block.index] = final
        self.events.append(BlockEnd(block.index, final))

    def _cut_off_reason(self) -> str:
        stop = self.stop_reason or _NO_STOP
        why = "hit its token limit" if stop == StopReason.MAX_TOKENS else "ended early"
        return f"cut off: the response {why} ({stop.raw}) before this call was finished"

    def _unique_tool_id(self, id: str, index: int) -> str:
        candidate = id or f"call_{index}"
        if candidate in self._tool_ids:
            candidate = f"{candidate}_{index}"
            n = 2
            while candidate in self._tool_ids:  # only a hostile stream gets here twice
                candidate = f"{id or 'call'}_{index}_{n}"
                n += 1
        self._tool_ids.add(candidate)
        return candidate

    def _tool_identity(self, block: _Block, id: str, name: str) -> None:
        if id and id != block.id:
            if not block.id_given:
                # The call was opened before any id arrived: adopt the provider's.
                self._tool_ids.discard(block.id)
                block.id = self._unique_tool_id(id, block.index)
                block.id_given = True
            else:
                log.warning(
                    "laminate: tool call %r sent a different id %r; kept the first", block.id, id
                )
        if name and name != block.name:
            if not block.name:
                block.name = name
            else:
                log.warning(
                    "laminate: tool call %r sent a different name %r; kept the first",
                    block.id,
                    name,
                )

    def _build(self, stop_reason: StopReason) -> NormalizedResponse:
        content = [f for f in self._finals if f is not None]
        return self._response(content, stop_reason)

    def _response(self, content: list[ContentBlock], stop_reason: StopReason) -> NormalizedResponse:
        usage = Usage(
            **self._usage,
            raw=dict(self._usage_raw),
            input_includes_cache=self.input_includes_cache,
        )
        raw = FlexValue(self.raw_frames)
        return NormalizedResponse(
            self.id, self.model, self.provider, content, stop_reason, usage, raw
        )


_NO_STOP: Final = StopReason.unknown("")
