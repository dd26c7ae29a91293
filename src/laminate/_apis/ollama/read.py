"""Ollama's native ``/api/chat`` (and ``/api/generate``): NDJSON, one object per line.

Tool calls arrive whole, with arguments as an object and usually no id (a stable one is
generated); they are finished by the line with ``"done": true``. An ``{"error": ...}``
line is the server reporting a failure mid-stream (the HTTP status stays 200).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..._core.assembler import Assembler
from ..._core.response import StopReason
from ..base import (
    HandlerOptions,
    error_from_payload,
    int_or_none,
    shape_error,
    stop_reason_from,
    str_or_empty,
)
from ..plain import TEXT, Plain, PlainReader
from ..think import ThinkSplitter
from . import _made

__all__ = ["STOP_REASONS", "OllamaHandler", "parse_body", "stop_reason", "usage_counts"]

# `load` (an empty request that only loaded the model) and `unload` (keep_alive 0) are
# not reasons a generation stops: they are kept as `StopReason.unknown(raw)`.
STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_TOKENS,
}

_TEXT: Final = "text"
_REASONING: Final = "thinking"


def usage_counts(obj: Mapping[str, Any]) -> dict[str, int | None]:
    # `prompt_eval_count` is left out when the whole prompt came from the cache; where
    # sent it counts the cached tokens too, which `prompt_eval_cached_count` gives.
    return {
        "input_tokens": int_or_none(obj.get("prompt_eval_count")),
        "output_tokens": int_or_none(obj.get("eval_count")),
        "cache_read_tokens": int_or_none(obj.get("prompt_eval_cached_count")),
    }


def stop_reason(raw: str, *, has_tool_calls: bool) -> StopReason:
    """Ollama says ``"stop"`` after tool calls too: that names ``TOOL_USE``."""
    if raw == "stop" and has_tool_calls:
        return StopReason.TOOL_USE.with_raw(raw)
    return stop_reason_from(raw, STOP_REASONS)


_USAGE_KEYS: Final = (
    "prompt_eval_count",
    "prompt_eval_cached_count",
    "eval_count",
    "total_duration",
    "load_duration",
    "prompt_eval_duration",
    "eval_duration",
)


class OllamaHandler(PlainReader):
    """Stream handler for ``/api/chat`` and ``/api/generate`` lines."""

    __slots__ = ("_calls", "_think", "assembler")

    # Every line carries the time it was written.
    _padding = ("created_at",)

    def __init__(self, assembler: Assembler, options: HandlerOptions | None = None) -> None:
        self.assembler = assembler
        self._think = ThinkSplitter() if options is not None and options.think_tags else None
        self._calls = 0

    def _plain(self, name: str | None, obj: Any) -> Plain | None:
        # A line of text alone, `{"role": "assistant", "content": "..."}`, once the answer
        # has started, that neither ends nor fails it (see PlainReader). Subscripts read
        # it quickest; what fails them is not plain.
        if obj.__class__ is not dict or self._think is not None or not self.assembler.started:
            return None
        text = None
        try:
            message = obj["message"]
            if len(message) == 2 and "role" in message:
                text = message["content"]
        except (KeyError, TypeError, IndexError):
            pass
        if text.__class__ is not str or obj.get("error") or obj.get("done") is True:
            return None
        return _TEXT, text, TEXT

    # Made from _plain: _made.py, written by `python -m laminate._apis.make_plain`.
    on_frame = _made.on_frame
    run = _made.run

    def _on_other(self, name: str | None, obj: Any) -> None:
        if not isinstance(obj, dict):
            raise shape_error("a line is not a JSON object")
        if obj.get("error"):
            raise error_from_payload(obj)
        asm = self.assembler
        if not asm.started:
            asm.start(str_or_empty(obj.get("id")), str_or_empty(obj.get("model")))
        message = obj.get("message")
        if message is not None:
            if not isinstance(message, Mapping):
                raise shape_error("`message` is not an object")
            self._on_message(message)
        else:
            self._on_generate(obj)
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
        if calls:
            if not isinstance(calls, list):
                raise shape_error("`tool_calls` is not a list")
            for call in calls:
                self._on_tool_call(call)

    def _on_generate(self, obj: Mapping[str, Any]) -> None:
        """``/api/generate`` lines: ``response`` text, ``thinking`` at the top level."""
        thinking = obj.get("thinking")
        if isinstance(thinking, str):
            self.assembler.reasoning(_REASONING, thinking)
        response = obj.get("response")
        if isinstance(response, str):
            self._on_text(response)

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
        # Every element is a whole call: it gets its own block (Ollama Cloud's
        # `function.index` only repeats the order).
        key = ("tool", self._calls)
        self._calls += 1
        asm = self.assembler
        asm.tool_start(key, str_or_empty(call.get("id")), str_or_empty(function.get("name")))
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            asm.tool_input(key, arguments)
        elif arguments is not None:
            asm.tool_arguments(key, arguments)

    def _on_done(self, obj: Mapping[str, Any]) -> None:
        asm = self.assembler
        if self._think is not None:
            for is_reasoning, piece in self._think.flush():
                if is_reasoning:
                    asm.reasoning(_REASONING, piece)
                else:
                    asm.text(_TEXT, piece)
        asm.usage({k: obj[k] for k in _USAGE_KEYS if k in obj}, **usage_counts(obj))
        raw = obj.get("done_reason")
        if isinstance(raw, str) and raw:
            asm.finish(stop_reason(raw, has_tool_calls=asm.has_tool_calls()))
        # Older servers send no `done_reason`: the stop follows from the content.
        asm.complete()


def parse_body(
    assembler: Assembler, body: Mapping[str, Any], options: HandlerOptions | None = None
) -> None:
    """A complete ``/api/chat`` body (``"stream": false``): one line with ``done``."""
    OllamaHandler(assembler).on_frame(None, dict(body))
    if not assembler.done:
        raise shape_error('an Ollama response without `"done": true`')
