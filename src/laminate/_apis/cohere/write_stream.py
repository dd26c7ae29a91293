"""A Cohere v2 chat stream: typed SSE events, ``data: [DONE]`` at the end.

``message-start`` (the answer's id) first, ``message-end`` (``finish_reason`` and
``usage``) last, then the bare ``[DONE]`` the API sends. Cohere numbers content items and
tool calls apart, 0, 1, 2... each, in the order they are written, whatever their block
index:

- **Text** is a content item: ``content-start`` (``{"type": "text", "text": ""}``),
  ``content-delta`` per delta, ``content-end``.
- **Reasoning** is a ``thinking`` content item, opened on its first text (so a block
  with no readable text, a redacted one, writes nothing). The tool plan (a ``Reasoning``
  block whose ``id`` is ``"tool_plan"``, as laminate reads it from Cohere) is written as
  ``tool-plan-delta`` events instead, which have no start, end or index.
- **Tool calls**: ``tool-call-start`` (id, name, empty arguments), ``tool-call-delta``
  per argument fragment, ``tool-call-end``. A call the answer's end cut off gets no
  ``tool-call-end``: ``message-end`` cuts it again, as the source was cut.
- **Citations and content types laminate does not model** (``Unknown`` blocks) are
  written back only to Cohere: ``citation-start`` / ``citation-end`` (numbered apart
  too), or a content item of their own type.

Cohere has no model name in its stream and no signatures: neither is written. Usage is
``{"billed_units", "tokens", "cached_tokens"}``: an answer from Cohere gets its own
``billed_units`` back; for another API's answer, which bills the tokens it counts, the
billed units are those counts (``tokens`` also carries the reasoning tokens).
"""

from __future__ import annotations

from typing import Any, Final

from ..._core.events import ResponseStart
from ..._core.flex import FlexValue
from ..._core.response import (
    ContentBlock,
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    Text,
    ToolUse,
    Unknown,
)
from ..base import str_or_empty
from ..citations import TEXT, Source, is_text
from ..shapes import counts
from ..spec import Overflow
from ..writer import (
    Failure,
    StreamWriter,
    cut_off,
    dumps,
    json_bytes,
    sse_event,
    wire_stop,
)
from .read import PLAN_ID, STOP_REASONS

__all__ = ["OVERFLOW", "CohereWriter", "sources", "stop_of", "usage_of"]

_FINISH: Final = {
    "end_turn": "COMPLETE",
    "pause_turn": "COMPLETE",
    "tool_use": "TOOL_CALL",
    "max_tokens": "MAX_TOKENS",
    "context_window_exceeded": "MAX_TOKENS",
    "stop_sequence": "STOP_SEQUENCE",
}
_CONTENT: Final = b'event: content-delta\ndata: {"type":"content-delta","index":'
_TEXT: Final = b',"delta":{"message":{"content":{"text":'
_THINKING: Final = b',"delta":{"message":{"content":{"thinking":'
_CONTENT_END: Final = b"}}}}\n\n"
_PLAN: Final = (
    b'event: tool-plan-delta\ndata: {"type":"tool-plan-delta","delta":{"message":{"tool_plan":'
)
_PLAN_END: Final = b"}}}\n\n"
_CALL: Final = b'event: tool-call-delta\ndata: {"type":"tool-call-delta","index":'
_ARGUMENTS: Final = b',"delta":{"message":{"tool_calls":{"function":{"arguments":'
_CALL_END: Final = b"}}}}}\n\n"
_DONE: Final = b"data: [DONE]\n\n"
_PLANNED: Final = b"plan"  # the number of a tool plan: it has none on the wire


def stop_of(response: NormalizedResponse) -> str:
    """The ``finish_reason`` written for ``response``, in a stream and in a body alike."""
    return wire_stop(response.stop_reason, STOP_REASONS, _FINISH) or "COMPLETE"


def usage_of(response: NormalizedResponse) -> dict[str, Any]:
    """The ``usage`` written for ``response`` (``message-end``'s, a body's): the token
    counts that were reported, the cache reads, and the billed units (Cohere's own, or
    another API's token counts). ``input_tokens`` counts every input token, cached or
    not, as Cohere's ``cached_tokens`` are a share of it, whatever API the counts came
    from."""
    u = response.usage
    tokens = counts(input_tokens=u.total_input_tokens, output_tokens=u.output_tokens)
    billed = u.raw.get("billed_units") if response.provider == CohereWriter.name else tokens
    usage: dict[str, Any] = {}
    if isinstance(billed, dict):
        usage["billed_units"] = billed
    usage["tokens"] = {**tokens, **counts(reasoning_tokens=u.reasoning_tokens)}
    if u.cache_read_tokens is not None:
        usage["cached_tokens"] = u.cache_read_tokens
    return usage


# A request that does not fit the context, in Cohere's words.
OVERFLOW: Final = Overflow(kind="invalid_request_error", lead="too many tokens")


class CohereWriter(StreamWriter):
    """Writes Cohere v2 chat stream events."""

    name = "cohere"
    id_prefix = "msg-"

    def __init__(self) -> None:
        super().__init__()
        self._content: dict[int, bytes] = {}  # block index -> its content index, encoded
        self._calls: dict[int, bytes] = {}  # block index -> its tool-call index, encoded
        self._pending: set[int] = set()  # thinking blocks not opened yet
        self._content_count = 0
        self._call_count = 0
        self._citation_count = 0

    def _content_start(self, index: int, content: dict[str, Any]) -> bytes:
        number = str(self._content_count).encode()
        self._content_count += 1
        self._content[index] = number
        return sse_event(
            "content-start",
            b'{"type":"content-start","index":'
            + number
            + b',"delta":{"message":{"content":'
            + dumps(content)
            + b"}}}",
        )

    def _content_end(self, index: int) -> bytes:
        number = self._content.pop(index)
        return sse_event("content-end", b'{"type":"content-end","index":' + number + b"}")

    def start(self, event: ResponseStart) -> bytes:
        message = {
            "role": "assistant",
            "content": [],
            "tool_plan": "",
            "tool_calls": [],
            "citations": [],
        }
        payload = {"id": event.id, "type": "message-start", "delta": {"message": message}}
        return sse_event("message-start", dumps(payload))

    def block_start(self, index: int, block: ContentBlock) -> bytes:
        match block:
            case Text():
                return self._content_start(index, {"type": "text", "text": ""})
            case ToolUse(id, name) | InvalidToolUse(id, name):
                number = str(self._call_count).encode()
                self._call_count += 1
                self._calls[index] = number
                call = {
                    "id": id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }
                payload = (
                    b'{"type":"tool-call-start","index":'
                    + number
                    + b',"delta":{"message":{"tool_calls":'
                    + dumps(call)
                    + b"}}}"
                )
                return sse_event("tool-call-start", payload)
            case Reasoning(id=str() as id) if id == PLAN_ID:
                self._content[index] = _PLANNED
            case Reasoning():
                self._pending.add(index)
        return b""  # reasoning opens on its first text; unknown blocks are written whole

    def text(self, index: int, text: str) -> bytes:
        return _CONTENT + self._content[index] + _TEXT + json_bytes(text) + _CONTENT_END

    def reasoning(self, index: int, text: str) -> bytes:
        head = b""
        if index in self._pending:
            self._pending.discard(index)
            head = self._content_start(index, {"type": "thinking", "thinking": ""})
        number = self._content[index]
        if number is _PLANNED:
            return _PLAN + json_bytes(text) + _PLAN_END
        return head + _CONTENT + number + _THINKING + json_bytes(text) + _CONTENT_END

    def tool_input(self, index: int, fragment: str) -> bytes:
        number = self._calls.get(index)
        if number is None:
            return b""  # arguments of an unknown block: nothing to carry them
        return _CALL + number + _ARGUMENTS + json_bytes(fragment) + _CALL_END

    def block_end(self, index: int, block: ContentBlock) -> bytes:
        match block:
            case Text():
                return self._content_end(index)
            case Reasoning():
                self._pending.discard(index)
                number = self._content.get(index)
                if number is _PLANNED:
                    del self._content[index]
                    return b""  # the plan has no end event: what follows ends it
                return b"" if number is None else self._content_end(index)
            case ToolUse() | InvalidToolUse():
                number = self._calls.pop(index)
                if cut_off(block):
                    return b""  # left open: message-end's finish_reason cuts it again
                return sse_event(
                    "tool-call-end", b'{"type":"tool-call-end","index":' + number + b"}"
                )
            case Unknown("citation", FlexValue(value=dict() as data)) if self.own:
                number = str(self._citation_count).encode()
                self._citation_count += 1
                head = b'{"type":"citation-start","index":' + number
                start = head + b',"delta":{"message":{"citations":' + dumps(data) + b"}}}"
                end = b'{"type":"citation-end","index":' + number + b"}"
                return sse_event("citation-start", start) + sse_event("citation-end", end)
            case Unknown(kind, FlexValue(value=dict() as data)) if self.own:
                return self._content_start(index, {**data, "type": kind}) + self._content_end(index)
        return b""

    def done(self, response: NormalizedResponse) -> bytes:
        payload = {
            "type": "message-end",
            "delta": {"finish_reason": stop_of(response), "usage": usage_of(response)},
        }
        return sse_event("message-end", dumps(payload)) + _DONE

    def failure(self, failure: Failure) -> bytes:
        # `message-end` with the error's text: Cohere names no type, only ERROR or TIMEOUT.
        finish = "TIMEOUT" if failure.timeout else "ERROR"
        message = OVERFLOW.message(failure.message) if failure.overflow else failure.message
        payload = {
            "type": "message-end",
            "delta": {"finish_reason": finish, "error": message},
        }
        return sse_event("message-end", dumps(payload)) + _DONE


def sources(block: Unknown) -> list[Source]:
    """What a citation block cites: its ``document`` sources, each by its id and titled
    by the document's ``title`` (or the id); a tool's output is not a source to list."""
    data = block.data.value
    cited = data.get("sources") if isinstance(data, dict) else None
    if block.block_type != "citation" or not isinstance(cited, list):
        return []
    found = []
    for source in cited:
        if not isinstance(source, dict) or source.get("type") != "document":
            continue
        number = source.get("id")
        if not is_text(number):
            continue
        document = source.get("document")
        title = str_or_empty(document.get("title") if isinstance(document, dict) else None)
        found.append(Source(key=f"document:{number}", title=title or number, media_type=TEXT))
    return found
