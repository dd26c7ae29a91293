"""The record that describes one API: everything the layers around an API need from it.

Each package under ``_apis`` builds one :class:`Api` in its ``__init__``; the registry
lists them. The normalizer, the complete-body reader, the tool loop and the mock server
look an API up here and never name one, so adding an API is one package plus one line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .._core.assembler import Assembler
from .base import Handler

if TYPE_CHECKING:
    from .._core.response import NormalizedResponse
    from .._encode.writer import Writer
    from .._tools.registry import Tool, ToolResult

__all__ = ["Api", "Framing", "HandlerOptions", "Message"]

Message = dict[str, Any]
Framing = Literal["sse", "ndjson", "json-array", "eventstream"]


class HandlerOptions:
    """Provider options a handler may read (``choice``, ``think_tags``)."""

    __slots__ = ("choice", "think_tags")

    def __init__(self, *, choice: int = 0, think_tags: bool = False) -> None:
        self.choice = choice
        self.think_tags = think_tags


def _never(*_: Any) -> bool:
    return False


@dataclass(frozen=True, slots=True, kw_only=True)
class Api:
    """One API: how to read it, how to write it, and how to recognise it."""

    name: str
    """The ``provider`` name users pass (``"openai"``, ``"anthropic"``, ...)."""
    framing: Framing
    """How its streams are framed on the wire."""
    handler: Callable[[Assembler, HandlerOptions], Handler]
    """A new stream handler feeding ``assembler``."""
    read_body: Callable[[Assembler, Mapping[str, Any], HandlerOptions], None]
    """Reads a complete (non-streaming) body into an assembler."""
    tool: Callable[[Tool], Message]
    """One entry of the request's ``tools`` array."""
    tools_array: Callable[[list[Message]], list[Message]] = list
    """The request's ``tools`` array from the entries of ``tool`` (as they are, by
    default; Gemini nests them in one ``functionDeclarations`` tool)."""
    assistant: Callable[[NormalizedResponse, str | None], Message | list[Message]]
    """The assistant turn in this API's request shape."""
    results: Callable[[Sequence[ToolResult]], list[Message]]
    """Tool results in this API's request shape."""
    write_body: Callable[[NormalizedResponse], dict[str, Any]]
    """A complete body of this API for a normalized response."""
    matches_url: Callable[[str], bool] = _never
    """Whether an endpoint path (no query) is this API's."""
    matches_frame: Callable[[str | None, Any], bool] = _never
    """Whether a stream's parsed frame (with its SSE event name) is this API's."""
    matches_body: Callable[[Mapping[str, Any]], bool] = _never
    """Whether a complete body is this API's."""
    model_from_url: Callable[[str], str] | None = None
    """The model an endpoint path (no query) names (``""``: none), for an API whose
    streams do not name it (Bedrock's ``/model/{modelId}/converse-stream``)."""
    turn_key: str = "messages"
    """The request field a conversation is appended to (``append_turn``)."""
    whole_arguments: bool = False
    """Whether its frames carry tool arguments as whole JSON objects (not text): their
    numbers must be read exactly (see ``_core/jsonlib.py``)."""
    encoder: Callable[[], Writer] | None = None
    """A new stream writer for this API (``event(ev) -> bytes``, ``close() -> bytes``; see
    ``_encode/writer.py``), or ``None`` when laminate does not write its streams."""
    media_type: str | None = None
    """The ``Content-Type`` of its streams; ``None``: the usual one of its framing."""
