"""The record that describes one API: everything the layers around an API need from it.

Each package under ``_apis`` builds one :class:`Api` in its ``__init__``; the registry
lists them. The normalizer, the complete-body reader, the tool loop, the SDK adapters, the
mock server and the demo look an API up here and never name one, so adding an API is one
package plus one line.

What only the edges need is grouped in small records beside the core fields:
:class:`Hints` (how detection recognises the API's URLs, frames and bodies), :class:`Sdk`
(how the API's SDKs are recognised without importing them), :class:`Http` (where its
clients send requests, how they present a key and read an error: what the translating
proxy serves and calls; a record without one is neither served nor called) and
:class:`Mock` (how the mock server answers as the API, which is where and as ``Http``
says unless it states otherwise, and the demo's first request to it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from .._core.assembler import Assembler
from .._core.request import Loss, Request
from .._framing import Framing
from .base import Handler, HandlerOptions
from .citations import Source, no_sources
from .overflow import Overflow

if TYPE_CHECKING:
    from .._core.errors import ProviderError
    from .._core.response import NormalizedResponse, Unknown
    from .writer import Writer

__all__ = [
    "DEFAULT_WRITE_OPTIONS",
    "Api",
    "Chunks",
    "CloudEnvelope",
    "Counting",
    "Endpoint",
    "Framing",
    "HandlerOptions",
    "Hints",
    "Http",
    "JsonObject",
    "MaxTokensField",
    "Mock",
    "Overflow",
    "Sdk",
    "SdkEvents",
    "ToolDefinition",
    "ToolOutcome",
    "WriteOptions",
    "WrittenBody",
    "answer_field",
    "common_error_body",
    "common_error_kind",
]

JsonObject = dict[str, Any]
"""A JSON object of an API's wire, as the request shapes build it (a message, a tool)."""
WrittenBody = tuple[dict[str, Any], str, list[Loss]]
"""What a request writer gives: the body, the path (and query) to send it to, the losses."""
MaxTokensField = Literal["auto", "max_tokens", "max_completion_tokens"]
"""How a request translated into Chat Completions spells its output limit (see
:class:`WriteOptions`)."""


@dataclass(frozen=True, slots=True)
class WriteOptions:
    """What the caller of a request writer chooses for the target.

    ``max_tokens_field``: the field a request translated into Chat Completions puts its
    output limit in. ``"max_tokens"`` is what every compatible server reads (some read
    nothing else); ``"max_completion_tokens"`` is what OpenAI's reasoning models require
    (they refuse ``max_tokens``); ``"auto"`` (the default) writes
    ``max_completion_tokens`` for OpenAI's reasoning models by name (``o1``, ``o3``,
    ``o4-mini``, ``gpt-5`` and later, without a ``provider/`` prefix) and ``max_tokens``
    for any other model. A request read from Chat Completions keeps the spelling its
    client used whatever this says.

    ``cache_key``: the key the target's servers group the request's prompt cache by,
    written where the target has one (Chat Completions' and Responses'
    ``prompt_cache_key``) unless the request carries its own; ignored by the others."""

    max_tokens_field: MaxTokensField = "auto"
    cache_key: str | None = None


DEFAULT_WRITE_OPTIONS: Final = WriteOptions()


class ToolDefinition(Protocol):
    """What the request shapes read of a tool: the tool loop's ``Tool`` is one."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> dict[str, Any]: ...
    @property
    def strict(self) -> bool: ...
    @property
    def input_format(self) -> dict[str, Any] | None:
        """A custom (free-form) tool's input format (``{"type": "text"}``, or a grammar);
        ``None`` for a function tool. The OpenAI APIs declare such a tool as custom;
        the others as a function of one string parameter, ``parameters``."""


class ToolOutcome(Protocol):
    """What the request shapes read of a tool's result: the tool loop's ``ToolResult``
    is one."""

    @property
    def call_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def output(self) -> str: ...
    @property
    def ok(self) -> bool: ...
    @property
    def kind(self) -> str:
        """The kind of the call it answers: ``"function"``, or ``"custom"``."""


def _never(*_: Any) -> bool:
    return False


def _no_error(_: BaseException) -> None:
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class SdkEvents:
    """An SDK iterator of events the SDK decoded itself, read item by item (each item is
    not a frame as on the wire, so it is unwrapped first)."""

    is_stream: Callable[[object], bool]
    """Whether an object is such an iterator."""
    response_keys: tuple[str, ...] = ()
    """Keys of the SDK's response dict that may hold the iterator."""
    frame: Callable[[Any], tuple[Any, str | None, str]]
    """One item as ``(payload, event name, provider)``, the provider being the API whose
    frame the payload is (an API may carry another's frames)."""
    sync_note: str = ""
    """Said when a sync iterator is handed to the async adapters."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Sdk:
    """How the official SDKs of an API (and SDKs that speak it) are recognised, by duck
    typing and by the module a type was defined in: no SDK is ever imported."""

    modules: tuple[str, ...] = ()
    """Module prefixes whose objects are this API's frames or bodies (the longest prefix
    that matches, over every API, names the provider)."""
    accepted: str = ""
    """What of these SDKs the adapters read, as their type errors list it."""
    holds_response: tuple[str, ...] = ()
    """Top-level packages whose stream objects hold the HTTP response untouched (read
    directly) and whose errors carry the error ``body`` as sent."""
    error_payload: Callable[[BaseException], tuple[Mapping[str, Any], int | None] | None] = (
        _no_error
    )
    """The error frame or body an SDK exception was raised for, with the HTTP status when
    that was not 2xx (``None`` status: the error came inside a stream)."""
    error: Callable[[BaseException], ProviderError | None] = _no_error
    """An SDK exception as the :class:`ProviderError` the same bytes give, for SDKs that
    keep no frame to hand back."""
    events: SdkEvents | None = None
    """Its iterator of decoded events, when it has one."""


def common_error_body(status: int, kind: str, message: str) -> dict[str, Any]:
    """The error body most APIs and compatible servers send (OpenAI's shape)."""
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


_COMMON_KINDS: Final[Mapping[int, str]] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
}


# An overflow as most APIs' clients read one: a 400 `invalid_request_error`.
_COMMON_OVERFLOW: Final = Overflow(kind="invalid_request_error")


def common_error_kind(status: int) -> str:
    """The error type most APIs give an HTTP status (OpenAI's words)."""
    return _COMMON_KINDS.get(status, "server_error" if status >= 500 else "invalid_request_error")


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunks:
    """A stream written in AWS's binary event stream, each of the API's stream events a
    ``chunk`` message holding its JSON in base64 (``{"bytes": ...}``; see
    :class:`~laminate._framing.writers.ChunkWriter`)."""

    error: Callable[[str | None, str], tuple[str, str] | None]
    """For one of the API's SSE events (its name and data): ``(exception name,
    message)`` when it is the stream's error, written as an ``exception`` message; else
    ``None``."""
    failure: str
    """The exception name of a stream that cannot be read."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CloudEnvelope:
    """How a cloud serves an API's requests on endpoints of its own (Anthropic Messages
    on Bedrock's InvokeModel and on Vertex's rawPredict): the path names the model and
    whether the answer streams, the body carries the cloud's fields instead, the answer
    is the API's own, its stream maybe framed anew, its errors maybe in the cloud's shape.
    The proxy answers such an endpoint as the API's own endpoint :attr:`path`, once the
    request is unwrapped."""

    path: str
    """The API's own endpoint (one of :attr:`Http.endpoints`) the request is for once
    unwrapped."""
    unwrap: Callable[[Mapping[str, Any], str | None, bool], tuple[dict[str, Any], dict[str, str]]]
    """The API's own request from the cloud's body, the model the path names (``None``: a
    counting request, whose body names it) and whether the answer streams; with the
    request headers the API's own endpoint takes what the body moved out of it in."""
    count_tokens: str | None = None
    """The cloud's token-counting endpoint, answered as the API's :attr:`Http.count_tokens`
    (``{name}``: a path segment not read)."""
    chunks: Chunks | None = None
    """How its streams are framed when not as the API's own."""
    error_body: Callable[[int, str, str], dict[str, Any]] | None = None
    """Its error body, from ``(status, error type, message)``, when not the API's."""
    error_kind: Callable[[int], str] = common_error_kind
    """The error type it gives an HTTP status (read with :attr:`error_body`)."""
    error_type_header: str | None = None
    """A response header that names the error's type (with :attr:`error_body`)."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A path the mock server or the proxy answers as an API."""

    path: str
    """The path; ``{model}`` stands for a model the path names (it takes the place of the
    request's ``model``), any other ``{name}`` for one path segment that is not read (a
    cloud's project)."""
    streams: bool
    """Whether the answer streams when the request has no ``stream`` field."""
    model: str = "[^/]+"
    """What a model named in the path may be: a regular expression."""
    envelope: CloudEnvelope | None = None
    """The cloud's wrapping of the API's request and answer on this endpoint; ``None``:
    the API's own endpoint."""


@dataclass(frozen=True, slots=True)
class Counting:
    """An API's endpoint that counts a chat request's input tokens (the translating proxy
    answers Anthropic's ``/v1/messages/count_tokens`` with it when this API is the
    backend): its path, its request built from a chat request of this API, and where its
    answer holds the count."""

    path: Callable[[str], str]
    """Its path for a model (with the prefix the SDKs' base URL holds)."""
    body: Callable[[Mapping[str, Any], str], dict[str, Any]]
    """Its request, from a chat request written for this API and the model."""
    count: Callable[[Any], object]
    """The count in its answer (anything but an ``int`` is an answer it cannot read)."""


def answer_field(name: str) -> Callable[[Any], object]:
    """``Counting.count`` for a count at the top of the answer, under ``name``."""
    return lambda answer: answer.get(name) if isinstance(answer, dict) else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Http:
    """How an API's clients reach it over HTTP: where they send requests, how they
    present a key, and how they read an error. The translating proxy serves these
    endpoints and calls them on a backend."""

    endpoints: tuple[Endpoint, ...]
    """Its chat endpoints; exact paths are tried before paths that name a model."""
    base_path: str = ""
    """The start of every endpoint path that the official SDKs' base URL already holds
    (``"/v1"`` when the base URL ends in ``/v1``)."""
    key_headers: tuple[str, ...] = ("authorization",)
    """The request headers a client may present its key in, the one to send first
    (``authorization`` holds ``Bearer <key>``, every other header the key itself)."""
    key_query: str | None = None
    """A query parameter a client may present its key in instead."""
    headers: tuple[tuple[str, str], ...] = ()
    """Headers every request to the API must carry (a version, for one)."""
    error_body: Callable[[int, str, str], dict[str, Any]] = common_error_body
    """An error body, from ``(status, error type, message)``, in the shape its clients
    read."""
    error_kind: Callable[[int], str] = common_error_kind
    """The error type its clients expect for an HTTP status."""
    stream_usage: Callable[[Mapping[str, Any]], bool] | None = None
    """Whether a streamed request (its body) asks for the usage in its stream, for an API
    whose streams carry usage only when asked (``None``: its streams always carry it)."""
    overflow: Overflow = _COMMON_OVERFLOW
    """How its clients are told that a request does not fit the model's context (a
    backend's overflow, whatever the backend's API said, is written so)."""
    count_tokens: str | None = None
    """The path of its token-counting endpoint that takes a chat request as it is (the
    one the proxy serves to clients of this API), when it has one."""
    sse_query: str | None = None
    """A query parameter that asks for SSE: without it a streamed answer is one streamed
    JSON array (``None``: streams are always in the API's own framing). The proxy and the
    mock server ask :meth:`streams_array`."""
    usage_keys: tuple[bytes, ...] = ()
    """The JSON keys (quoted, as bytes) of the frames of its streams that carry usage: a
    passing stream's token counts are read from those frames alone (``()``: read it
    whole)."""
    usage_split: bool = False
    """Whether its streams' counts are split between the first frame that carries usage
    and the last (Anthropic: the input tokens in ``message_start``); else the last one
    holds them all (final or cumulative)."""
    counting: Counting | None = None
    """Its token-counting endpoint for a chat request, when it has one and it wants
    the request wrapped (see :class:`Counting`)."""
    signing: str | None = None
    """The AWS service name its requests are signed for with SigV4 when no key is given
    (``None``: the API takes a key only)."""
    output_limits: tuple[tuple[str, ...], ...] = ()
    """Where a request body of the API holds its output limit: the key paths of every
    field that can (``("max_tokens",)``, ``("generationConfig", "maxOutputTokens")``).
    The proxy lowers them to a backend's cap."""
    keepalive: bytes | None = None
    """What a streamed answer of the API carries while the model is silent, written
    between two of its events, which its clients skip (an SSE comment line, Anthropic's
    ``ping`` event); ``None``: nothing its clients would skip (a JSON stream, NDJSON, a
    binary event stream, or a parser that reads any other line as data)."""

    def streams_array(self, query: str) -> bool:
        """Whether a stream request with this query string (``a=1&b=2``, undecoded) is
        answered as one streamed JSON array: when the API has an :attr:`sse_query` and
        the query does not hold it."""
        return self.sse_query is not None and self.sse_query not in query.split("&")


def _as_http(status: int, kind: str, message: str) -> dict[str, Any]:
    """The default of :attr:`Mock.error_body`: a mark that its :class:`Api` puts its
    :attr:`Http.error_body` in its place (it is never called)."""
    raise TypeError("a Mock's error body is its Api's Http error body, set when the Api is built")


@dataclass(frozen=True, slots=True, kw_only=True)
class Mock:
    """How the mock server answers as an API, and the demo's first request to it.

    The mock server answers where the API's clients send requests and as the API answers
    them, so it takes its endpoints and its error body from the API's :class:`Http`
    record: a record states them here only where the mock server answers otherwise (the
    :class:`Api` built with it fills them in, and refuses a ``Mock`` that leaves them to
    an ``Http`` it does not have)."""

    endpoints: tuple[Endpoint, ...] = ()
    """Where it answers; exact paths are tried before paths that name a model (``()``,
    the default: the :attr:`Http.endpoints`)."""
    error_body: Callable[[int, str, str], dict[str, Any]] = _as_http
    """An error body, from ``(status, error type, message)``, in the shape its clients
    read (by default, the :attr:`Http.error_body`)."""
    demo_model: str
    """The model the demo asks for."""
    demo_path: str
    """The endpoint the demo asks (``{model}``: the model), with its query."""
    demo_request: Callable[[str, str, list[JsonObject]], JsonObject]
    """The demo's first request body from ``(model, prompt, tools array)``."""

    def demo_endpoint(self) -> str:
        """The path (and query) the demo posts to."""
        return self.demo_path.format(model=self.demo_model)


@dataclass(frozen=True, slots=True, kw_only=True)
class Hints:
    """How detection (``_apis/detect.py``) recognises an API its caller did not name: by
    the endpoint path, by a stream's frames, by a complete body's shape. Detection asks
    the records in the registry's order and takes the first that says yes (a body that
    two claim is refused), so a record whose hints are generic goes after the records
    whose hints are specific. Each hint says no by default."""

    matches_url: Callable[[str], bool] = _never
    """Whether an endpoint path (no query) is this API's."""
    matches_frame: Callable[[str | None, Any], bool] = _never
    """Whether a stream's parsed frame (with its SSE event name) is this API's."""
    matches_body: Callable[[Mapping[str, Any]], bool] = _never
    """Whether a complete body is this API's."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Api:
    """One API: how to read it, how to write it, and how to recognise it."""

    name: str
    """The ``provider`` name users pass (``"openai"``, ``"anthropic"``, ...)."""
    title: str
    """Its name in a message for people (``"Chat Completions"``, ``"Ollama"``)."""
    framing: Framing
    """How its streams are framed on the wire."""
    handler: Callable[[Assembler, HandlerOptions], Handler]
    """A new stream handler feeding ``assembler``."""
    read_body: Callable[[Assembler, Mapping[str, Any], HandlerOptions], None]
    """Reads a complete (non-streaming) body into an assembler."""
    input_includes_cache: bool = False
    """Whether its input count already holds the cached tokens (``Usage``'s field of the
    same name; the assembler of each of its answers is told)."""
    tool: Callable[[ToolDefinition], JsonObject]
    """One entry of the request's ``tools`` array."""
    tools_array: Callable[[list[JsonObject]], list[JsonObject]] = list
    """The request's ``tools`` array from the entries of ``tool`` (as they are, by
    default; Gemini nests them in one ``functionDeclarations`` tool)."""
    assistant: Callable[[NormalizedResponse, str | None], JsonObject | list[JsonObject]]
    """The assistant turn in this API's request shape."""
    results: Callable[[Sequence[ToolOutcome]], list[JsonObject]]
    """Tool results in this API's request shape."""
    write_body: Callable[[NormalizedResponse], dict[str, Any]]
    """A complete body of this API for a normalized response."""
    hints: Hints = Hints()
    """How detection recognises it."""
    model_from_url: Callable[[str], str] | None = None
    """The model an endpoint path (no query) names (``""``: none), for an API whose
    streams do not name it (Bedrock's ``/model/{modelId}/converse-stream``)."""
    turn_key: str = "messages"
    """The request field a conversation is appended to (``append_turn``)."""
    arguments_marker: str = ""
    """Text every frame that carries tool arguments as a whole JSON object (not as text)
    contains (``"functionCall"``), or ``""`` for an API whose frames never do: such frames
    are read with their numbers exact (see ``_core/jsonlib.py``); the others need not be."""
    encoder: Callable[[], Writer] | None = None
    """A new stream writer for this API (``event(ev) -> bytes``, ``close() -> bytes``; see
    ``_apis/writer.py``), or ``None`` when laminate does not write its streams."""
    sources: Callable[[Unknown], list[Source]] = no_sources
    """What one of its ``Unknown`` blocks cites (a citation, Gemini's grounding): web
    pages and documents, for writers that list sources (the AI SDK stream)."""
    media_type: str | None = None
    """The ``Content-Type`` of its streams; ``None``: the usual one of its framing."""
    error_type_header: str | None = None
    """A response header that names an error's type when its error body does not."""
    read_request: Callable[[Mapping[str, Any], str | None], Request] | None = None
    """Reads a request body of this API, with the path (and query) it was sent to when
    known, into the neutral :class:`~laminate.Request` (``TranslationError`` naming
    the path of anything that is not a valid request)."""
    write_request: Callable[[Request, WriteOptions], WrittenBody] | None = None
    """Writes a neutral request as a body of this API with the caller's
    :class:`WriteOptions`: ``(body, path, losses)``. Names and
    ids are already acceptable to the API (see ``tool_name_rule``, ``call_id_rule``)."""
    tool_name_rule: str = r"[A-Za-z0-9_-]{1,64}"
    """The tool names it accepts (a regular expression matched whole); others are
    renamed reversibly before writing."""
    call_id_rule: str = r".+"
    """The tool-call ids it accepts; others are renamed reversibly before writing."""
    sdk: Sdk = Sdk()
    """How its SDKs' objects are recognised."""
    http: Http | None = None
    """How its clients reach it over HTTP (``None``: the proxy neither serves nor calls
    it)."""
    mock: Mock | None = None
    """How the mock server answers as this API (``None``: it does not)."""

    def __post_init__(self) -> None:
        # What the Mock leaves out is the Http record's: the mock server answers where and
        # as the API's clients expect.
        mock = self.mock
        if mock is None or (mock.endpoints and mock.error_body is not _as_http):
            return
        if self.http is None:
            raise TypeError(
                f"the {self.name!r} record's Mock takes its endpoints or its error body from "
                "an Http record, and it has none"
            )
        filled = replace(
            mock,
            endpoints=mock.endpoints or self.http.endpoints,
            error_body=self.http.error_body if mock.error_body is _as_http else mock.error_body,
        )
        object.__setattr__(self, "mock", filled)
