"""OpenAI Chat Completions, and every OpenAI-compatible server.

Stream: ``data: {chat.completion.chunk}`` frames, ``data: [DONE]`` at the end. Tool-call
fragments are matched to calls by ``index``, then by ``id``, then by their position in
the delta's list; a call's id and name are set once and never concatenated.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from typing import Any, Final

from .._assembler import Assembler
from .._response import StopReason
from ._common import error_from_payload, int_or_none, shape_error, stop_reason_from, str_or_empty
from ._think import ThinkSplitter

__all__ = ["STOP_REASONS", "OpenAIChatHandler", "usage_counts"]

STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_TOKENS,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
    "content_filter": StopReason.CONTENT_FILTER,
}

_TEXT: Final = "text"
_REFUSAL: Final = "refusal"
_REASONING: Final = "reasoning"


def usage_counts(usage: Mapping[str, Any]) -> dict[str, int | None]:
    """Chat Completions usage as laminate's counts."""
    prompt = usage.get("prompt_tokens_details")
    completion = usage.get("completion_tokens_details")
    return {
        "input_tokens": int_or_none(usage.get("prompt_tokens")),
        "output_tokens": int_or_none(usage.get("completion_tokens")),
        "cache_read_tokens": int_or_none(prompt.get("cached_tokens"))
        if isinstance(prompt, Mapping)
        else None,
        "reasoning_tokens": (
            int_or_none(completion.get("reasoning_tokens"))
            if isinstance(completion, Mapping)
            else None
        ),
    }


def stop_reason(raw: str, *, has_tool_calls: bool, refused: bool) -> StopReason:
    """``"stop"`` on a message that carries tool calls (or a refusal) names that kind."""
    if raw == "stop" and has_tool_calls:
        return StopReason.TOOL_USE.with_raw(raw)
    if raw == "stop" and refused:
        return StopReason.REFUSAL.with_raw(raw)
    return stop_reason_from(raw, STOP_REASONS)


class OpenAIChatHandler:
    """Stream handler for ``chat.completion.chunk`` frames."""

    def __init__(self, assembler: Assembler, *, choice: int = 0, think_tags: bool = False) -> None:
        self.assembler = assembler
        self._choice = choice
        self._think = ThinkSplitter() if think_tags else None
        self._calls_by_id: dict[str, Hashable] = {}
        self._refused = False

    def on_frame(self, event: str | None, obj: Any) -> None:
        if not isinstance(obj, Mapping):
            raise shape_error("a chunk is not a JSON object")
        if event == "error" or obj.get("error"):
            raise error_from_payload(obj)
        asm = self.assembler
        asm.start(str_or_empty(obj.get("id")), str_or_empty(obj.get("model")))
        usage = obj.get("usage")
        if isinstance(usage, Mapping) and usage:
            asm.usage(dict(usage), **usage_counts(usage))
        choices = obj.get("choices")
        if not choices:
            return  # usage-only, moderation and prompt-filter chunks carry no choice
        if not isinstance(choices, list):
            raise shape_error("`choices` is not a list")
        for choice in choices:
            if not isinstance(choice, Mapping):
                raise shape_error("a choice is not an object")
            if (int_or_none(choice.get("index")) or 0) == self._choice:
                self._on_choice(choice)

    def on_done_marker(self) -> None:
        self._flush_think()
        self.assembler.complete()

    def _on_choice(self, choice: Mapping[str, Any]) -> None:
        delta = choice.get("delta")
        if delta is None:
            delta = choice.get("message")  # some servers stream whole messages
        if isinstance(delta, Mapping):
            self._on_delta(delta)
        elif delta is not None:
            raise shape_error("`delta` is not an object")
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            self._on_finish(finish, choice)

    def _on_delta(self, delta: Mapping[str, Any]) -> None:
        asm = self.assembler
        for field in ("reasoning_content", "reasoning"):
            value = delta.get(field)
            if isinstance(value, str):
                asm.reasoning(_REASONING, value)
        details = delta.get("reasoning_details")
        if isinstance(details, list):
            self._on_reasoning_details(
                details, text_sent="reasoning" in delta or "reasoning_content" in delta
            )
        content = delta.get("content")
        if isinstance(content, str):
            self._on_text(content)
        elif isinstance(content, list):
            self._on_content_parts(content)
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self._refused = True
            asm.text(_REFUSAL, refusal)
        tool_calls = delta.get("tool_calls")
        if isinstance(tool_calls, list):
            for position, call in enumerate(tool_calls):
                self._on_tool_call(position, call)
        elif tool_calls is not None:
            raise shape_error("`tool_calls` is not a list")

    def _on_text(self, text: str) -> None:
        if self._think is None:
            self.assembler.text(_TEXT, text)
            return
        for is_reasoning, piece in self._think.feed(text):
            if is_reasoning:
                self.assembler.reasoning(_REASONING, piece)
            else:
                self.assembler.text(_TEXT, piece)

    def _flush_think(self) -> None:
        if self._think is not None:
            for is_reasoning, piece in self._think.flush():
                (self.assembler.reasoning if is_reasoning else self.assembler.text)(
                    _REASONING if is_reasoning else _TEXT, piece
                )

    def _on_content_parts(self, parts: list[Any]) -> None:
        """``content`` sent as typed parts (Mistral's thinking models, some gateways)."""
        for part in parts:
            if not isinstance(part, Mapping):
                continue
            kind = part.get("type")
            if kind == "text":
                self._on_text(str_or_empty(part.get("text")))
            elif kind == "thinking":
                thinking = part.get("thinking")
                if isinstance(thinking, str):
                    self.assembler.reasoning(_REASONING, thinking)
                elif isinstance(thinking, list):
                    for inner in thinking:
                        if isinstance(inner, Mapping):
                            self.assembler.reasoning(_REASONING, str_or_empty(inner.get("text")))

    def _on_reasoning_details(self, details: list[Any], *, text_sent: bool) -> None:
        """OpenRouter's ``reasoning_details``: text (with a signature), summaries, and
        encrypted blobs that must be sent back as they came."""
        asm = self.assembler
        for item in details:
            if not isinstance(item, Mapping):
                continue
            kind = item.get("type")
            if kind == "reasoning.encrypted":
                key = ("encrypted", item.get("id") or item.get("index") or 0)
                asm.open_reasoning(key, redacted=True, id=str_or_empty(item.get("id")))
                data = item.get("data")
                if isinstance(data, str) and data:
                    asm.reasoning_signature(key, data)
                continue
            if not text_sent:
                field = "summary" if kind == "reasoning.summary" else "text"
                asm.reasoning(_REASONING, str_or_empty(item.get(field)))
            signature = item.get("signature")
            if isinstance(signature, str) and signature:
                asm.reasoning_signature(_REASONING, signature)

    def _on_tool_call(self, position: int, call: Any) -> None:
        if not isinstance(call, Mapping):
            raise shape_error("a tool call delta is not an object")
        function = call.get("function")
        if not isinstance(function, Mapping):
            function = {}
        call_id = str_or_empty(call.get("id"))
        name = str_or_empty(function.get("name"))
        key = self._tool_key(position, call, call_id)
        asm = self.assembler
        if not asm.is_open(key):
            asm.tool_start(key, call_id, name)
        else:
            asm.tool_identity(key, call_id, name)
        if call_id:
            self._calls_by_id.setdefault(call_id, key)
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            asm.tool_input(key, arguments)
        elif isinstance(arguments, (Mapping, list)):
            # A whole object instead of OpenAI's JSON string: one fragment of its text.
            asm.tool_input(key, json.dumps(arguments, ensure_ascii=False))

    def _tool_key(self, position: int, call: Mapping[str, Any], call_id: str) -> Hashable:
        index = call.get("index")
        if index is None and isinstance(call.get("function"), Mapping):
            index = call["function"].get("index")  # Ollama Cloud puts it there
        number = int_or_none(index)
        if number is not None:
            return ("tool", number)
        if call_id:
            return self._calls_by_id.get(call_id, ("tool-id", call_id))
        return ("tool-position", position)

    def _on_finish(self, raw: str, choice: Mapping[str, Any]) -> None:
        if raw == "error":
            raise error_from_payload(
                choice.get("error") or {"message": "finish_reason error"}, default_type="error"
            )
        self._flush_think()
        asm = self.assembler
        asm.finish(stop_reason(raw, has_tool_calls=asm.has_tool_calls(), refused=self._refused))


def parse_body(assembler: Assembler, body: Mapping[str, Any], *, choice: int = 0) -> None:
    """A complete ``chat.completion`` body, read as one chunk whose delta is the message."""
    handler = OpenAIChatHandler(assembler, choice=choice)
    choices = body.get("choices")
    if not isinstance(choices, list):
        raise shape_error("a chat completion without `choices`")
    chunk = {k: v for k, v in body.items() if k != "choices"}
    chunk["choices"] = [
        {
            "index": c.get("index"),
            "delta": c.get("message"),
            "finish_reason": c.get("finish_reason"),
        }
        for c in choices
        if isinstance(c, Mapping)
    ]
    handler.on_frame(None, chunk)
    handler.on_done_marker()
