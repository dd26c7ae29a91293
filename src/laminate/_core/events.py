"""The events a normalizer emits: frozen, slotted dataclasses, usable with ``match``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from .flex import FlexValue
from .partial_json import ArgumentsView, JSONPath, StringDelta

if TYPE_CHECKING:
    from .response import ContentBlock, NormalizedResponse

__all__ = [
    "BlockEnd",
    "BlockStart",
    "Event",
    "ReasoningDelta",
    "ResponseDone",
    "ResponseStart",
    "StringDelta",
    "TextDelta",
    "ToolInputDelta",
]


class _EventMixin:
    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """A plain-JSON rendering; ``laminate.event_from_dict`` reads it back."""
        from .serialize import event_to_dict

        return event_to_dict(self)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class ResponseStart(_EventMixin):
    """The answer began. First, once."""

    id: str
    model: str
    provider: str


@dataclass(frozen=True, slots=True)
class BlockStart(_EventMixin):
    """Block ``index`` opened; ``block`` is its initial, empty state."""

    index: int
    block: ContentBlock


@dataclass(frozen=True, slots=True)
class TextDelta(_EventMixin):
    """Text added to the ``Text`` block ``index``."""

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta(_EventMixin):
    """Text added to the ``Reasoning`` block ``index``."""

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ToolInputDelta(_EventMixin):
    """Raw JSON text added to the arguments of the tool call ``index``.

    ``string_deltas``, ``is_complete()``, ``is_written()`` and ``partial`` describe the
    arguments as they stand after this fragment, even when read after later events. They
    are computed on first access by a parser that keeps its state across the call's
    fragments, so a consumer that reads none of them pays nothing for them.
    """

    index: int
    fragment: str
    _view: ArgumentsView = field(repr=False, compare=False)
    _seq: int = field(repr=False, compare=False)

    @property
    def string_deltas(self) -> tuple[StringDelta, ...]:
        """One ``StringDelta(path, text)`` per string value this fragment extended."""
        return self._view.string_deltas(self._seq)

    def is_complete(self, path: JSONPath = ()) -> bool:
        """Whether the value at ``path`` is finished after this fragment: nothing later in
        the arguments can change it. A member of an object is finished when its object
        closes, since the same key may be written again and replace it (the last value
        wins, as ``json.loads`` reads it); an array's element as soon as it ends."""
        return self._view.is_complete(self._seq, tuple(path))

    def is_written(self, path: JSONPath = ()) -> bool:
        """Whether a value at ``path`` has been written to its end after this fragment:
        true from the last character of the first value written there. For a live view
        (a file's path shown finished while its content streams); only ``is_complete``
        promises the value is the final one, which a repeated key can make it not."""
        return self._view.is_written(self._seq, tuple(path))

    @property
    def partial(self) -> FlexValue:
        """The arguments after this fragment: finished values, the string being written
        as far as it arrived, open containers as far as they go."""
        return FlexValue(self._view.partial(self._seq))

    @property
    def invalid(self) -> str | None:
        """Why the arguments stopped being valid JSON at or before this fragment, if so."""
        return self._view.error(self._seq)


_FRAGMENT: Final = ToolInputDelta.__dict__["fragment"]  # the field's slot


class WholeInputDelta(ToolInputDelta):
    """The ``ToolInputDelta`` of arguments sent whole (Ollama, Gemini): ``fragment`` is
    written from the parsed value when first read (see ``WholeView``), and kept. It is a
    ``ToolInputDelta`` in every way a reader can tell: equal to one with the same index
    and fragment, hashed and shown alike; only the plain class keeps attribute reads at
    their fastest for the many fragments of other calls."""

    __slots__ = ()

    @property
    def fragment(self) -> str:
        try:
            text: str = _FRAGMENT.__get__(self)
        except AttributeError:
            text = self._view.fragment(self._seq)
            _FRAGMENT.__set__(self, text)
        return text

    @fragment.setter
    def fragment(self, text: str) -> None:
        _FRAGMENT.__set__(self, text)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolInputDelta):
            return NotImplemented
        return (self.index, self.fragment) == (other.index, other.fragment)

    def __hash__(self) -> int:
        return hash((self.index, self.fragment))

    def __repr__(self) -> str:
        return f"ToolInputDelta(index={self.index!r}, fragment={self.fragment!r})"


@dataclass(frozen=True, slots=True)
class BlockEnd(_EventMixin):
    """Block ``index`` is complete; ``block`` is its final state."""

    index: int
    block: ContentBlock


@dataclass(frozen=True, slots=True)
class ResponseDone(_EventMixin):
    """The answer is complete. Last, once."""

    response: NormalizedResponse


Event = (
    ResponseStart
    | BlockStart
    | TextDelta
    | ReasoningDelta
    | ToolInputDelta
    | BlockEnd
    | ResponseDone
)


# Fast constructors for the events of the hot path. A frozen dataclass's ``__init__``
# sets each field through ``object.__setattr__``; the slot descriptors set the same
# fields directly. The objects are the same: equality, hashing, ``repr`` and ``match``
# are the dataclasses' own.
_new = object.__new__
_text_index = TextDelta.__dict__["index"].__set__
_text_text = TextDelta.__dict__["text"].__set__
_reasoning_index = ReasoningDelta.__dict__["index"].__set__
_reasoning_text = ReasoningDelta.__dict__["text"].__set__
_tool_index = ToolInputDelta.__dict__["index"].__set__
_tool_fragment = ToolInputDelta.__dict__["fragment"].__set__
_tool_view = ToolInputDelta.__dict__["_view"].__set__
_tool_seq = ToolInputDelta.__dict__["_seq"].__set__


def text_delta(index: int, text: str) -> TextDelta:
    event: TextDelta = _new(TextDelta)
    _text_index(event, index)
    _text_text(event, text)
    return event


def reasoning_delta(index: int, text: str) -> ReasoningDelta:
    event: ReasoningDelta = _new(ReasoningDelta)
    _reasoning_index(event, index)
    _reasoning_text(event, text)
    return event


def whole_input_delta(index: int, view: ArgumentsView) -> ToolInputDelta:
    """The one ``ToolInputDelta`` of arguments sent whole, its ``fragment`` written from
    the view when first read."""
    event: ToolInputDelta = _new(WholeInputDelta)
    _tool_index(event, index)
    _tool_view(event, view)
    _tool_seq(event, 0)
    return event


def tool_input_delta(index: int, fragment: str, view: ArgumentsView, seq: int) -> ToolInputDelta:
    event: ToolInputDelta = _new(ToolInputDelta)
    _tool_index(event, index)
    _tool_fragment(event, fragment)
    _tool_view(event, view)
    _tool_seq(event, seq)
    return event
