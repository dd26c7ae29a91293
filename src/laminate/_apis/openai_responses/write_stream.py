"""A Responses API stream: the full event family, numbered by ``sequence_number``.

``response.created`` and ``response.in_progress`` first; each block is one output item,
numbered by ``output_index`` in the order written, with its own item id: a ``message``
(one ``output_text`` part), a ``reasoning`` item (one summary part) or a
``function_call`` (``call_id`` is the tool-call id). Each item is announced
(``output_item.added``, ``content_part.added``), streamed (``output_text.delta``,
``reasoning_summary_text.delta``, ``function_call_arguments.delta``) and closed
(``*.done``, ``output_item.done`` with the item complete). The terminal event
(``response.completed``, or ``response.incomplete`` for an answer cut short) carries the
complete response, written by this API's body writer from the same blocks.

Opaque tokens (``encrypted_content``, a reasoning item's own id, unknown items) are written
only for an answer that came from the Responses API. A reasoning item that streams text is
announced before its own id is known, so it gets a new one (clients check that an item
keeps its id from ``added`` to ``done``); one that streams none keeps its own.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from ..._core.events import ResponseStart
from ..._core.flex import FlexValue
from ..._core.response import (
    ContentBlock,
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    StopReason,
    Text,
    ToolUse,
    Unknown,
)
from ..base import str_or_empty
from ..citations import Source, file_media_type, is_text, web_source
from ..spec import Overflow
from ..writer import Failure, StreamWriter, cut_off, dumps, json_bytes
from .write_body import ID_PREFIX, write_body

__all__ = ["OVERFLOW", "OpenAIResponsesWriter", "sources"]

_CUSTOM: Final = "custom_tool_call"


class _Item:
    __slots__ = ("id", "kind", "number", "opened")

    def __init__(self, kind: str, number: int, id: str) -> None:
        self.kind = kind
        self.number = number
        self.id = id
        self.opened = False


# A request that does not fit the context: the code Codex reads as one (and starts a new
# turn with its history compacted).
OVERFLOW: Final = Overflow(
    kind="invalid_request_error", code="context_length_exceeded", param="input"
)


class OpenAIResponsesWriter(StreamWriter):
    """Writes Responses API stream events."""

    name = "openai-responses"
    id_prefix = ID_PREFIX
    custom_calls = True  # custom (free-form) tool calls are written as such

    def __init__(self) -> None:
        super().__init__()
        self._seq = 0
        self._count = 0
        self._items: dict[int, _Item] = {}
        self._written: list[int] = []  # the block indexes that became output items
        self._response: dict[str, Any] = {}
        self._annotations: dict[int, list[Any]] = {}  # each text block's citations
        self._cited: set[int] = set()  # the citation blocks written as annotations

    def _event(self, kind: str, fields: dict[str, Any]) -> bytes:
        fields["sequence_number"] = self._seq
        self._seq += 1
        return (
            b"event: "
            + kind.encode()
            + b'\ndata: {"type":"'
            + kind.encode()
            + b'",'
            + (dumps(fields)[1:])
            + b"\n\n"
        )

    def _delta(self, kind: bytes, item: _Item, extra: bytes, delta: str) -> bytes:
        # The hot path: the frame is assembled from encoded pieces.
        seq = str(self._seq).encode()
        self._seq += 1
        return (
            b"event: " + kind + b'\ndata: {"type":"' + kind + b'","item_id":'
            + json_bytes(item.id) + b',"output_index":' + str(item.number).encode()
            + extra + b',"delta":' + json_bytes(delta) + b',"sequence_number":' + seq
            + b"}\n\n"
        )  # fmt: skip

    def start(self, event: ResponseStart) -> bytes:
        self._response = {
            "id": event.id,
            "object": "response",
            "created_at": 0,
            "status": "in_progress",
            "model": event.model,
            "output": [],
            "usage": None,
        }
        created = self._event("response.created", {"response": self._response})
        return created + self._event("response.in_progress", {"response": self._response})

    def _add(self, index: int, kind: str, item_id: str, item: dict[str, Any]) -> bytes:
        entry = _Item(kind, self._count, item_id)
        self._count += 1
        self._items[index] = entry
        self._written.append(index)
        entry.opened = True
        added = {"output_index": entry.number, "item": {"id": item_id, "type": kind, **item}}
        return self._event("response.output_item.added", added)

    def block_start(self, index: int, block: ContentBlock) -> bytes:
        match block:
            case Text():
                item = {"status": "in_progress", "role": "assistant", "content": []}
                out = self._add(index, "message", f"msg_{index}", item)
                part = {"type": "output_text", "text": "", "annotations": []}
                return out + self._event("response.content_part.added", self._part(index, part))
            case ToolUse(id, name, kind="custom"):  # a custom (free-form) tool's call
                item = {"status": "in_progress", "call_id": id, "name": name, "input": ""}
                return self._add(index, _CUSTOM, f"ctc_{index}", item)
            case ToolUse(id, name) | InvalidToolUse(id, name):
                item = {"status": "in_progress", "call_id": id, "name": name, "arguments": ""}
                return self._add(index, "function_call", f"fc_{index}", item)
            case Reasoning():
                self._items[index] = _Item("reasoning", -1, f"rs_{index}")
        return b""  # reasoning opens on its first text; unknown items are written whole

    def _part(self, index: int, part: dict[str, Any]) -> dict[str, Any]:
        item = self._items[index]
        return {"item_id": item.id, "output_index": item.number, "content_index": 0, "part": part}

    def _open_reasoning(self, index: int, item_id: str) -> bytes:
        out = self._add(index, "reasoning", item_id, {"summary": []})
        part = {"type": "summary_text", "text": ""}
        fields = {**self._part(index, part), "summary_index": 0}
        del fields["content_index"]
        return out + self._event("response.reasoning_summary_part.added", fields)

    def text(self, index: int, text: str) -> bytes:
        return self._delta(
            b"response.output_text.delta", self._items[index], b',"content_index":0', text
        )

    def reasoning(self, index: int, text: str) -> bytes:
        item = self._items[index]
        head = b"" if item.opened else self._open_reasoning(index, item.id)
        return head + self._delta(
            b"response.reasoning_summary_text.delta",
            self._items[index],
            b',"summary_index":0',
            text,
        )

    def tool_input(self, index: int, fragment: str) -> bytes:
        item = self._items.get(index)
        if item is not None and item.kind == _CUSTOM:
            return self._delta(b"response.custom_tool_call_input.delta", item, b"", fragment)
        if item is None or item.kind != "function_call":
            return b""
        return self._delta(b"response.function_call_arguments.delta", item, b"", fragment)

    def block_end(self, index: int, block: ContentBlock) -> bytes:
        match block:
            case Text(text):
                return self._text_end(index, text)
            case ToolUse() | InvalidToolUse():
                return self._call_end(index, block)
            case Reasoning():
                return self._reasoning_end(index, block)
            case Unknown("citation", FlexValue(value=dict() as data)) if self.own:
                return self._annotation(index, data)
            case Unknown(block_type, FlexValue(value=dict() as data)) if self.own:
                item = {**data, "type": block_type}
                entry = _Item(block_type, self._count, str(data.get("id", f"item_{index}")))
                self._count += 1
                self._written.append(index)
                fields = {"output_index": entry.number, "item": item}
                added = self._event("response.output_item.added", dict(fields))
                return added + self._event("response.output_item.done", fields)
        return b""

    def _annotation(self, index: int, data: dict[str, Any]) -> bytes:
        """A citation of the text part being written (none open: nothing to cite)."""
        text = self.text_block
        if text is None:
            return b""
        entry = self._items[text]
        annotations = self._annotations.setdefault(text, [])
        fields = {
            "item_id": entry.id,
            "output_index": entry.number,
            "content_index": 0,
            "annotation_index": len(annotations),
            "annotation": data,
        }
        annotations.append(data)
        self._cited.add(index)
        return self._event("response.output_text.annotation.added", fields)

    def _done_item(self, index: int, item: dict[str, Any]) -> bytes:
        entry = self._items[index]
        fields = {"output_index": entry.number, "item": {"id": entry.id, **item}}
        return self._event("response.output_item.done", fields)

    def _text_end(self, index: int, text: str) -> bytes:
        entry = self._items[index]
        ids = {"item_id": entry.id, "output_index": entry.number, "content_index": 0}
        annotations = self._annotations.pop(index, [])
        part = {"type": "output_text", "text": text, "annotations": annotations}
        out = self._event("response.output_text.done", {**ids, "text": text})
        out += self._event("response.content_part.done", {**ids, "part": part})
        item = {"type": "message", "status": "completed", "role": "assistant", "content": [part]}
        return out + self._done_item(index, item)

    def _call_end(self, index: int, block: ToolUse | InvalidToolUse) -> bytes:
        entry = self._items[index]
        if entry.kind == _CUSTOM and isinstance(block, ToolUse):
            ids = {"item_id": entry.id, "output_index": entry.number}
            text = block.input.value
            out = self._event("response.custom_tool_call_input.done", {**ids, "input": text})
            item = {"type": _CUSTOM, "status": "completed", "call_id": block.id}
            return out + self._done_item(index, {**item, "name": block.name, "input": text})
        if isinstance(block, ToolUse):
            arguments = dumps(block.input.value).decode()
            status = "completed"
        else:
            arguments = block.raw_input
            status = "incomplete" if cut_off(block) else "completed"
        ids = {"item_id": entry.id, "output_index": entry.number}
        out = self._event("response.function_call_arguments.done", {**ids, "arguments": arguments})
        item = {
            "type": "function_call",
            "status": status,
            "call_id": block.id,
            "name": block.name,
            "arguments": arguments,
        }
        return out + self._done_item(index, item)

    def _reasoning_end(self, index: int, block: Reasoning) -> bytes:
        entry = self._items[index]
        signature = block.signature if self.own else None
        out = b""
        if not entry.opened:
            if not signature and not (self.own and block.id):
                del self._items[index]
                return b""  # nothing this target can carry
            entry.id = block.id or entry.id
            out = self._add(index, "reasoning", entry.id, {"summary": []})
        item: dict[str, Any] = {"type": "reasoning", "summary": []}
        if block.text:
            part = {"type": "summary_text", "text": block.text}
            ids = {"item_id": entry.id, "output_index": entry.number, "summary_index": 0}
            out += self._event("response.reasoning_summary_text.done", {**ids, "text": block.text})
            out += self._event("response.reasoning_summary_part.done", {**ids, "part": part})
            item["summary"] = [part]
        if signature:
            item["encrypted_content"] = signature
        return out + self._done_item(index, item)

    def done(self, response: NormalizedResponse) -> bytes:
        body = write_body(self._written_part(response))
        body["id"] = self.answer_id  # the id `response.created` gave
        for item, index in zip(body["output"], self._written, strict=False):
            entry = self._items.get(index)
            if entry is not None and "id" in item:
                item["id"] = entry.id
        kind = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
        return self._event(kind, {"response": body})

    def failure(self, failure: Failure) -> bytes:
        # The API's `error` event: its `code` names the failure.
        code: str | None = failure.type_for("server_error", "invalid_request_error")
        param = None
        if failure.overflow:
            code, param = OVERFLOW.code, OVERFLOW.param
        return self._event("error", {"code": code, "message": failure.message, "param": param})

    def _written_part(self, response: NormalizedResponse) -> NormalizedResponse:
        """The response as far as this stream carried it, for the terminal event."""
        written = set(self._written) | self._cited
        content = [b for i, b in enumerate(response.content) if i in written]
        if not self.own:
            content = [
                replace(b, signature=None) if isinstance(b, Reasoning) else b for b in content
            ]
        stop = response.stop_reason
        if stop == StopReason.REFUSAL:  # the stream wrote the text as output_text
            stop = StopReason.END_TURN.with_raw(stop.raw)
        return replace(response, content=content, stop_reason=stop)


def sources(block: Unknown) -> list[Source]:
    """What a citation block (an annotation) cites: a web page (``url_citation``) or a
    file (``file_citation``, ``container_file_citation``, ``file_path``), each file by
    its id, titled and typed by its name when the annotation gives it."""
    data = block.data.value
    if block.block_type != "citation" or not isinstance(data, dict):
        return []
    url = data.get("url")
    if is_text(url):
        return [web_source(url, data.get("title"))]
    file_id = data.get("file_id")
    if not is_text(file_id):
        return []
    name = str_or_empty(data.get("filename"))
    title = name or file_id
    media = file_media_type(title)
    return [Source(key=f"file:{file_id}", title=title, media_type=media, filename=name)]
