"""The neutral request: what a client asked for, whatever API it spoke.

A request is read from one API's JSON body (``_apis/<name>/request.py``) into the records
below, and written from them as any API's body. The content blocks of a message are the
response's own (``Text``, ``Reasoning``, ``ToolUse``, ``InvalidToolUse``, ``Unknown``)
plus the ones only a request holds (:class:`Image`, :class:`Document`,
:class:`ToolResult`, :class:`CachePoint`), so a :class:`NormalizedResponse`'s content is a
valid assistant message as it is, and a tool loop goes request, answer, request in any API.

What has no neutral name stays with the API it came from: :attr:`Request.extra` (top-level
fields), a message's or block's ``extra`` (fields beside the ones modelled), ``Unknown``
blocks, non-function tools and opaque reasoning. :attr:`Request.api` names that API, and
writers hand such things back only to it; for any other API they are a :class:`Loss`.

:class:`ToolResult` is both a block of a request (``tool_use_id``, ``content``,
``is_error``) and the outcome of one call in the tool loop (``call_id``, ``name``,
``output``, ``ok``): the same record under two sets of names, so a registry's results go
into a request as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

from .response import InvalidToolUse, Reasoning, Text, ToolUse, Unknown

__all__ = [
    "LOSS_REASONS",
    "Block",
    "CachePoint",
    "Document",
    "Image",
    "JsonSchema",
    "Loss",
    "Message",
    "Request",
    "ResultPart",
    "Role",
    "ToolChoice",
    "ToolResult",
    "ToolSpec",
]

Role: TypeAlias = Literal["user", "assistant", "system"]
ToolChoice: TypeAlias = str
"""``"auto"``, ``"any"`` (some tool must be called), ``"none"``, or one tool's name."""

LOSS_REASONS: Final[Mapping[str, str]] = {
    "unsupported": "the target API has no field or block for it",
    "source-only": "a field only the source API knows, written back only to it",
    "foreign-reasoning": "reasoning or an opaque token made by another provider",
    "not-portable": "an item that refers to state kept by the source provider",
    "reordered": "the target cannot keep this order or grouping; the content is kept",
    "schema": "a schema keyword the target's dialect refuses was removed",
    "approximated": "carried by the nearest value the target has",
}
"""Every reason a :class:`Loss` gives, with what it means."""


@dataclass(frozen=True, slots=True)
class Image:
    """An image: base64 ``data`` with its ``media_type``, or a ``url``.

    ``extra`` holds the source API's fields beside these (``detail``, ``cache_control``
    of a block that carries one is a :class:`CachePoint` instead)."""

    media_type: str
    data: str | None = None
    url: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Document:
    """A document (a PDF, a text file): base64 ``data``, a ``url`` or plain ``text``, with
    its ``media_type`` and an optional ``title``."""

    media_type: str
    data: str | None = None
    url: str | None = None
    text: str | None = None
    title: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CachePoint:
    """A prompt-cache breakpoint after the block before it (Anthropic's
    ``cache_control``, Bedrock's ``cachePoint``). ``ttl`` as sent (``"5m"``, ``"1h"``)."""

    ttl: str | None = None


ResultPart: TypeAlias = Text | Image | Document | Unknown
"""What a tool result's content list holds."""


@dataclass(frozen=True, slots=True, init=False)
class ToolResult:
    """A tool's result: a block of a user turn, and the tool loop's outcome of one call.

    Request names: ``tool_use_id`` (the call it answers), ``content`` (a string, or a list
    of :class:`~laminate.Text`, :class:`Image`, :class:`Document` and ``Unknown`` blocks)
    and ``is_error``. Tool-loop names: ``call_id``, ``output`` (the content as text) and
    ``ok``. ``name`` is the tool's name where known (``""`` otherwise): some APIs need it
    with the result.

    Both spellings construct it: ``ToolResult(call_id, name, output, ok)`` and
    ``ToolResult(tool_use_id=..., content=..., is_error=...)``. ``kind`` is the kind of the
    call it answers (``"custom"`` for a custom tool's call), so that the result is written
    in that call's shape.
    """

    tool_use_id: str
    content: str | list[ResultPart]
    is_error: bool
    name: str
    kind: str

    def __init__(
        self,
        call_id: str | None = None,
        name: str = "",
        output: str | None = None,
        ok: bool | None = None,
        kind: str = "function",
        *,
        tool_use_id: str | None = None,
        content: str | list[ResultPart] | None = None,
        is_error: bool | None = None,
    ) -> None:
        ident = _one("call_id", call_id, "tool_use_id", tool_use_id)
        body = _one("output", output, "content", content)
        if ok is not None and is_error is not None:
            raise TypeError("ToolResult takes ok or is_error, not both")
        failed = (not ok) if ok is not None else bool(is_error)
        if not isinstance(ident, str):
            raise TypeError(f"ToolResult's call id must be a str, not {type(ident).__name__}")
        if not isinstance(body, str | list):
            raise TypeError(
                f"ToolResult's content must be a str or a list of Text and Image blocks, "
                f"not {type(body).__name__}"
            )
        if not isinstance(name, str):
            raise TypeError(f"ToolResult's name must be a str, not {type(name).__name__}")
        object.__setattr__(self, "tool_use_id", ident)
        object.__setattr__(self, "content", body)
        object.__setattr__(self, "is_error", failed)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "kind", kind)

    @property
    def call_id(self) -> str:
        """The id of the call this answers (``tool_use_id``)."""
        return self.tool_use_id

    @property
    def output(self) -> str:
        """The content as text (the text blocks joined when it is a list)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(b.text for b in self.content if isinstance(b, Text))

    @property
    def ok(self) -> bool:
        """Whether the call succeeded (``not is_error``)."""
        return not self.is_error


def _one(first: str, a: Any, second: str, b: Any) -> Any:
    if a is not None and b is not None:
        raise TypeError(f"ToolResult takes {first} or {second}, not both")
    if a is None and b is None:
        raise TypeError(f"ToolResult needs {first} (or {second})")
    return a if a is not None else b


Block: TypeAlias = (
    Text
    | Reasoning
    | ToolUse
    | InvalidToolUse
    | Unknown
    | Image
    | Document
    | ToolResult
    | CachePoint
)
"""A block of a message's content."""


@dataclass(frozen=True, slots=True)
class Message:
    """One turn: ``role`` and its blocks (a list; any sequence of blocks is taken, so a
    response's ``content`` is a message's as it is). ``extra`` keeps the source API's fields
    of the message that have no neutral name (Chat Completions' ``name``, ...)."""

    role: Role
    content: Sequence[Block]
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call: its ``name``, ``description`` and JSON ``schema`` of
    the arguments; ``strict`` asks the API to enforce the schema (``None``: not said).

    ``kind`` is ``"function"``, ``"custom"`` (a free-form tool whose input is text;
    ``extra["format"]`` holds its grammar where it has one) or the source API's own type
    of a built-in tool (kept whole in ``extra``, written back only to that API)."""

    name: str
    description: str = ""
    schema: Mapping[str, Any] = field(default_factory=dict)
    strict: bool | None = None
    kind: str = "function"
    extra: Mapping[str, Any] = field(default_factory=dict)
    cache: CachePoint | None = None
    """A prompt-cache breakpoint after this tool (the tools before it and it cached)."""


@dataclass(frozen=True, slots=True)
class JsonSchema:
    """Structured output: answer with JSON that follows ``schema``."""

    name: str
    schema: Mapping[str, Any]
    strict: bool | None = None


@dataclass(frozen=True, slots=True)
class Loss:
    """Something of the request the target API cannot carry: where it was in the source
    body (``path``, e.g. ``"messages[2].content[0]"``) and why (one of
    :data:`LOSS_REASONS`)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """A request, whatever API it came in.

    ``system`` holds the system text (with the cache breakpoints placed in it);
    ``reasoning`` is ``None``, an effort (``"low"``, ``"medium"``, ``"high"``, or the
    source API's own word) or a token budget; ``response_format`` is ``None``,
    ``"json"`` or a :class:`JsonSchema`. ``api`` is the API the request was read from
    (``None`` for one built by hand): ``extra`` and opaque content go back only to it.
    """

    model: str = ""
    system: list[Text | CachePoint] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    tools: list[ToolSpec] = field(default_factory=list)
    tool_choice: ToolChoice | None = None
    allowed_tools: list[str] | None = None
    """The names of the only tools the model may call (with ``tool_choice`` ``"auto"``
    or ``"any"`` as the mode); ``None``: any of ``tools``. Carried as the Responses
    API's and Chat Completions' ``allowed_tools`` and Gemini's ``allowedFunctionNames``;
    another API keeps every tool and lists the subset as a loss."""
    parallel_tool_calls: bool | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    stop: list[str] = field(default_factory=list)
    reasoning: str | int | None = None
    response_format: JsonSchema | Literal["json"] | None = None
    user: str | None = None
    stream: bool | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    api: str | None = None
