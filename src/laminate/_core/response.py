"""The final, provider-independent shape of an answer: blocks, stop reason, usage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from .flex import FlexValue

__all__ = [
    "ContentBlock",
    "InvalidToolUse",
    "NormalizedResponse",
    "Reasoning",
    "StopReason",
    "Text",
    "ToolUse",
    "Unknown",
    "Usage",
]


class StopReason:
    """Why the model stopped.

    Named kinds (``StopReason.END_TURN``, ``TOOL_USE``, ...) compare equal whatever the
    provider's own string, which is kept in :attr:`raw`, and equal to their name
    (``StopReason.TOOL_USE == "tool_use"``). A value no provider documents
    is kept as ``StopReason.unknown(raw)``: never rejected, never guessed.
    """

    __slots__ = ("_kind", "_raw")

    END_TURN: ClassVar[StopReason]
    TOOL_USE: ClassVar[StopReason]
    MAX_TOKENS: ClassVar[StopReason]
    STOP_SEQUENCE: ClassVar[StopReason]
    CONTENT_FILTER: ClassVar[StopReason]
    REFUSAL: ClassVar[StopReason]
    PAUSE_TURN: ClassVar[StopReason]
    CONTEXT_WINDOW_EXCEEDED: ClassVar[StopReason]

    KINDS: ClassVar[tuple[str, ...]] = (
        "end_turn",
        "tool_use",
        "max_tokens",
        "stop_sequence",
        "content_filter",
        "refusal",
        "pause_turn",
        "context_window_exceeded",
    )

    def __init__(self, kind: str | None, raw: str) -> None:
        if kind is not None and kind not in self.KINDS:
            raise ValueError(f"unknown stop reason kind {kind!r}; use StopReason.unknown()")
        self._kind = kind
        self._raw = raw

    @classmethod
    def unknown(cls, raw: str) -> StopReason:
        """A stop reason that no provider documents, kept as sent."""
        return cls(None, raw)

    def with_raw(self, raw: str) -> StopReason:
        """The same kind, carrying the provider's own string."""
        return StopReason(self._kind, raw)

    @property
    def kind(self) -> str | None:
        """The named kind (``"end_turn"``, ...), or ``None`` for an unknown value."""
        return self._kind

    @property
    def raw(self) -> str:
        """The provider's own string (empty when the provider sent none)."""
        return self._raw

    @property
    def is_unknown(self) -> bool:
        return self._kind is None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            # A named kind equals its name (`StopReason.TOOL_USE == "tool_use"`), so code
            # that compares with strings works; an unknown value is never a named one.
            return self._kind is not None and self._kind == other
        if not isinstance(other, StopReason):
            return NotImplemented
        if self._kind is None or other._kind is None:
            return self._kind is None and other._kind is None and self._raw == other._raw
        return self._kind == other._kind

    def __hash__(self) -> int:
        # A named kind hashes as its name, consistent with equality to that string.
        return hash(self._kind) if self._kind is not None else hash((None, self._raw))

    def __str__(self) -> str:
        return self._kind if self._kind is not None else self._raw

    def __repr__(self) -> str:
        if self._kind is None:
            return f"StopReason.unknown({self._raw!r})"
        return f"StopReason.{self._kind.upper()}.with_raw({self._raw!r})"

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, "_raw"):
            raise AttributeError("StopReason is immutable")
        object.__setattr__(self, name, value)

    def __reduce__(self) -> tuple[Any, ...]:
        return (StopReason, (self._kind, self._raw))


for _kind in StopReason.KINDS:
    setattr(StopReason, _kind.upper(), StopReason(_kind, _kind))


@dataclass(frozen=True, slots=True, eq=False)
class Usage:
    """Token counts as the provider reported them: ``None`` where it reported nothing.

    ``input_tokens`` keeps the provider's own meaning, which ``input_includes_cache``
    states: ``True`` where the API's input count already holds the cached tokens (Chat
    Completions' ``prompt_tokens``, the Responses API's and Cohere's ``input_tokens``,
    Gemini's ``promptTokenCount``, Ollama's ``prompt_eval_count``), ``False`` where cache
    reads and writes are counted apart from it (Anthropic's ``input_tokens``, Bedrock's
    ``inputTokens``; the default). :attr:`total_input_tokens` and
    :attr:`uncached_input_tokens` give the count in either meaning.

    Two usages are equal when they mean the same counts (the same uncached input, cache
    reads and writes, output and reasoning), whichever meaning each one's
    ``input_tokens`` has. ``raw`` keeps the provider's usage objects merged as received;
    it takes no part in equality, so a stream and the complete body of the same answer
    compare equal.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    input_includes_cache: bool = False
    """Whether ``input_tokens`` already counts ``cache_read_tokens`` and
    ``cache_write_tokens`` (the meaning of the API the counts came from)."""

    @property
    def total_input_tokens(self) -> int | None:
        """Every input token, cached or not (OpenAI's and Gemini's meaning of their input
        count); ``None`` when no input count was reported."""
        if self.input_tokens is None or self.input_includes_cache:
            return self.input_tokens
        return self.input_tokens + (self.cache_read_tokens or 0) + (self.cache_write_tokens or 0)

    @property
    def uncached_input_tokens(self) -> int | None:
        """The input tokens neither read from nor written to a cache (Anthropic's and
        Bedrock's meaning of their input count); ``None`` when no input count was
        reported. Never below 0, even for a provider that reports more cached tokens
        than input tokens."""
        if self.input_tokens is None or not self.input_includes_cache:
            return self.input_tokens
        cached = (self.cache_read_tokens or 0) + (self.cache_write_tokens or 0)
        return max(0, self.input_tokens - cached)

    def _meaning(self) -> tuple[int | None, ...]:
        return (
            self.uncached_input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.reasoning_tokens,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Usage):
            return NotImplemented
        return self._meaning() == other._meaning()

    def __hash__(self) -> int:
        return hash(self._meaning())


class _BlockMixin:
    __slots__ = ()

    def as_tool_use(self) -> tuple[str, str, FlexValue] | None:
        """``(id, name, input)`` for a finished, valid tool call; ``None`` otherwise."""
        return None

    def as_text(self) -> str | None:
        """The text of a ``Text`` block; ``None`` otherwise."""
        return None


@dataclass(frozen=True, slots=True)
class Text(_BlockMixin):
    """Answer text. ``signature`` is an opaque token the provider wants back with the
    text (Gemini's ``thoughtSignature``), kept byte for byte."""

    text: str
    signature: str | None = None

    def as_text(self) -> str | None:
        return self.text


@dataclass(frozen=True, slots=True)
class ToolUse(_BlockMixin):
    """A tool call that the provider finished and whose arguments are a JSON object.

    A custom (free-form) tool call, OpenAI's ``type: "custom"`` tools, has ``kind ==
    "custom"`` and its text as ``input`` (``input.value`` is a ``str``); every other
    call has ``kind == "function"``.
    """

    id: str
    name: str
    input: FlexValue
    signature: str | None = None
    """An opaque token the provider wants back with the call (Gemini's
    ``thoughtSignature``), kept byte for byte."""
    kind: str = "function"
    """``"function"`` (JSON arguments) or ``"custom"`` (free-form text)."""

    def as_tool_use(self) -> tuple[str, str, FlexValue] | None:
        return (self.id, self.name, self.input)


@dataclass(frozen=True, slots=True)
class InvalidToolUse(_BlockMixin):
    """A tool call that was cut off or whose arguments are not a JSON object.

    ``raw_input`` is the argument text exactly as received; ``reason`` says what is wrong.
    It is never returned by :meth:`NormalizedResponse.tool_uses`.
    """

    id: str
    name: str
    raw_input: str
    reason: str


@dataclass(frozen=True, slots=True)
class Reasoning(_BlockMixin):
    """The model's reasoning.

    ``signature`` is the opaque token the provider wants back with the block (Anthropic's
    signature or redacted data, the Responses API's ``encrypted_content``, encrypted
    ``reasoning_details``), kept byte for byte. ``redacted`` marks reasoning the provider
    only sent encrypted. ``id`` is the provider's item id where it has one.
    """

    text: str
    signature: str | None = None
    redacted: bool = False
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Unknown(_BlockMixin):
    """A block of a type laminate does not model, kept as sent."""

    block_type: str
    data: FlexValue


ContentBlock = Text | ToolUse | InvalidToolUse | Reasoning | Unknown


@dataclass(frozen=True, slots=True)
class NormalizedResponse:
    """One answer, whatever the provider: content blocks, stop reason and usage."""

    id: str
    model: str
    provider: str
    content: list[ContentBlock]
    stop_reason: StopReason
    usage: Usage
    raw: FlexValue = field(default_factory=lambda: FlexValue(None), compare=False, repr=False)

    def text(self) -> str:
        """All text blocks joined, in order."""
        return "".join(b.text for b in self.content if isinstance(b, Text))

    def tool_uses(self) -> list[ToolUse]:
        """The finished, valid tool calls in order (never an ``InvalidToolUse``)."""
        return [b for b in self.content if isinstance(b, ToolUse)]

    def has_tool_use(self) -> bool:
        return any(isinstance(b, ToolUse) for b in self.content)

    def reasoning(self) -> list[Reasoning]:
        """The reasoning blocks in order."""
        return [b for b in self.content if isinstance(b, Reasoning)]

    def to_dict(self) -> dict[str, Any]:
        """A plain-JSON rendering (what ``laminate replay`` prints); :meth:`from_dict`
        reads it back into an equal response (``raw`` and ``usage.raw`` are not kept)."""
        from .serialize import response_to_dict

        return response_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NormalizedResponse:
        """The response that :meth:`to_dict` wrote; ``ValueError`` names what is wrong."""
        from .serialize import response_from_dict

        return response_from_dict(data)
