"""Ollama's native ``/api/chat`` (and ``/api/generate``): NDJSON, one object per line.

Tool calls arrive whole, with arguments as an object and no id (a stable one is
generated); they are finished by the line with ``"done": true``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from .._assembler import Assembler
from .._response import StopReason
from ._common import error_from_payload, int_or_none, shape_error, stop_reason_from, str_or_empty
from ._think import ThinkSplitter

__all__ = ["STOP_REASONS", "OllamaHandler", "usage_counts"]

STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_TOKENS,
}

_TEXT: Final = "text"
_REASONING: Final = "thinking"


def usage_counts(obj: Mapping[str, Any]) -> dict[str, int | None]:
    return {
        "input_tokens": int_or_none(obj.get("prompt_eval_count")),
        "output_tokens": int_or_none(obj.get("eval_count")),
    }


def stop_reason(raw: str, *, has_tool_calls: bool) -> StopReason:
    if raw == "stop" and has_tool_calls:
        return StopReason.TOOL_USE.with_raw(raw)
    return stop_reason_from(raw, STOP_REASONS)


_USAGE_KEYS: Final = (
    "prompt_eval_count",
    "eval_count",
    "total_duration",
    "load_duration",
    "prompt_eval_duration",
    "eval_duration",
)


class OllamaHandler:
    """Stream handler for ``/api/chat`` lines."""

    def __init__(self, assembler: Assembler, *, think_tags: bool = False) -> None:
        self.assembler = assembler
        self._think = ThinkSplitter() if think_tags else None
        self._calls = 0

    def on_frame(self, event: str | None, obj: Any) -> None:
        if not isinstance(obj, Mapping):
            raise shape_error("a line is not a JSON object")
        if "error" in obj:
            raise error_from_payload(obj)
        asm = self.assembler
        asm.start(str_or_empty(obj.get("id")), str_or_empty(obj.get("model")))
        message = obj.get("message")
        if isinstance(message, Mapping):
            self._on_message(message)
        elif isinstance(obj.get("response"), str):  # /api/generate
            self._on_text(obj["response"])
        if obj.get("done") is True:
            self._on_done(obj)

    def on_done_marker(self) -> None:
        raise shape_error("`[DONE]` in an NDJSON stream")

    def _on_message(self, message: Mapping[str, Any]) -> None:
        thinking = message.get("thinking")
        if isinstance(thinking, str):
            self.assembler.reasoning(_REASONING, thinking)
        content = message.get("content")
        if isinstance(content, str):
            self._on_text(content)
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            for call in calls:
                self._on_tool_call(call)

    def _on_text(self, text: str) -> None:
        if self._think is None:
            self.assembler.text(_TEXT, text)
            return
        for is_reasoning, piece in self._think.feed(text):
            if is_reasoning:
                self.assembler.reasoning(_REASONING, piece)
            else:
                self.assembler.text(_TEXT, piece)

    def _on_tool_call(self, call: Any) -> None:
        if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
            raise shape_error("a tool call without a function")
        function = call["function"]
        key = ("tool", self._calls)
        self._calls += 1
        asm = self.assembler
        asm.tool_start(key, str_or_empty(call.get("id")), str_or_empty(function.get("name")))
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            asm.tool_input(key, arguments)
        elif arguments is not None:
            asm.tool_input(key, json.dumps(arguments, ensure_ascii=False))

    def _on_done(self, obj: Mapping[str, Any]) -> None:
        asm = self.assembler
        if self._think is not None:
            for is_reasoning, piece in self._think.flush():
                if is_reasoning:
                    asm.reasoning(_REASONING, piece)
                else:
                    asm.text(_TEXT, piece)
        asm.usage({k: obj[k] for k in _USAGE_KEYS if k in obj}, **usage_counts(obj))
        raw = str_or_empty(obj.get("done_reason"))
        if raw:
            asm.finish(stop_reason(raw, has_tool_calls=asm.has_tool_calls()))
        asm.complete()


def parse_body(assembler: Assembler, body: Mapping[str, Any]) -> None:
    """A complete ``/api/chat`` body (``"stream": false``): one line with ``done``."""
    OllamaHandler(assembler).on_frame(None, body)
    if not assembler.done:
        raise shape_error('an Ollama response without `"done": true`')
