"""OpenAI Chat Completions, and every OpenAI-compatible server.

Stream: ``data: {chat.completion.chunk}`` frames, ``data: [DONE]`` at the end. Only
choice 0 is read (``choice=`` selects another of an ``n > 1`` request).

Tool-call fragments are matched to calls per element of ``delta.tool_calls``, in list
order: by ``index`` (an integer, or a string of digits), else by ``id``, else by the
element's position in the list. An empty ``id`` or ``name`` counts as absent. A call's
id and name are set once: an equal repeat changes nothing, a different one is logged and
ignored, neither is ever concatenated; only ``arguments`` accumulate (an object sent
instead of a string is one fragment, its JSON text). A custom (free-form) tool's call,
``type: "custom"`` with ``custom: {name, input}``, is matched alike; its ``input`` text
accumulates and it ends as a ``ToolUse`` of kind ``"custom"`` holding that text. One
exception, for servers that put every call at index 0: at an index whose call already
has an id and a name, an element with a *different* id *and* a name starts a new call.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Final

from ..._core.assembler import Assembler
from ..._core.errors import IncompleteStreamError, MalformedStreamError, ProviderError
from ..._core.response import StopReason
from ..base import (
    HandlerOptions,
    error_from_payload,
    int_or_none,
    json_text,
    shape_error,
    stop_reason_from,
    str_or_empty,
)
from ..plain import ARGUMENTS, TEXT, Plain, PlainReader
from ..think import ThinkSplitter
from . import _made

__all__ = ["STOP_REASONS", "OpenAIChatHandler", "parse_body", "stop_reason", "usage_counts"]

# OpenAI's documented set. Values other servers invent (`eos_token`, `eos`, `end_turn`,
# `abort`, `model_length`, ...) are kept as `StopReason.unknown(raw)`.
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
_LEGACY_CALL: Final = "function_call"  # the deprecated single-call delta's index key
_NO_FUNCTION: Final[Mapping[str, Any]] = {}


def usage_counts(usage: Mapping[str, Any]) -> dict[str, int | None]:
    """Chat Completions usage as laminate's counts (absent counts are ``None``)."""
    prompt = usage.get("prompt_tokens_details")
    completion = usage.get("completion_tokens_details")
    if not isinstance(prompt, Mapping):
        prompt = _NO_FUNCTION
    cache_read = int_or_none(prompt.get("cached_tokens"))
    if cache_read is None:
        # DeepSeek reports cache hits at the top level, Together as `cached_tokens`.
        cache_read = int_or_none(usage.get("prompt_cache_hit_tokens"))
        if cache_read is None:
            cache_read = int_or_none(usage.get("cached_tokens"))
    return {
        "input_tokens": int_or_none(usage.get("prompt_tokens")),
        "output_tokens": int_or_none(usage.get("completion_tokens")),
        "cache_read_tokens": cache_read,
        "cache_write_tokens": int_or_none(prompt.get("cache_write_tokens")),
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


class OpenAIChatHandler(PlainReader):
    """Stream handler for ``chat.completion.chunk`` frames."""

    __slots__ = (
        "_calls",
        "_choice",
        "_identified",
        "_refused",
        "_think",
        "assembler",
    )

    # OpenAI pads every chunk with random characters (`stream_options.include_obfuscation`).
    _padding = ("obfuscation",)

    def __init__(self, assembler: Assembler, options: HandlerOptions | None = None) -> None:
        self.assembler = assembler
        self._choice = options.choice if options is not None else 0
        self._think = ThinkSplitter() if options is not None and options.think_tags else None
        self._calls = _ToolCalls(assembler)
        self._identified = False
        self._refused = False

    def _plain(self, name: str | None, obj: Any) -> Plain | None:
        # A chunk of the chosen choice that adds one piece to the text, or to the arguments
        # of a known call, with no usage, finish reason or error (see PlainReader).
        # First what it reads of the handler (a run reads it once): the stream is
        # identified, its text is not split at think tags.
        if not self._identified or self._think is not None:
            return None
        wanted = self._choice
        calls = self._calls.by_index
        if name is not None:
            return None
        # Subscripts read the chunk quickest; what fails them is not plain.
        piece = None
        try:
            choices = obj["choices"]
            choice = choices[0]
            delta = choice["delta"]
            if "content" in delta:
                key: Hashable = _TEXT
                piece = delta["content"]
            else:
                elements = delta["tool_calls"]
                element = elements[0]
                function = element["function"]
                key = calls[element["index"]].key
                piece = function["arguments"]
        except (KeyError, TypeError, IndexError):
            pass
        if (
            piece.__class__ is not str
            or obj.__class__ is not dict
            or "error" in obj
            or obj.get("usage")
            or choices.__class__ is not list
            or len(choices) != 1
            or choice.__class__ is not dict
            or choice.get("finish_reason")
            or delta.__class__ is not dict
            or len(delta) != 1
        ):
            return None
        index = choice.get("index", 0)
        if index.__class__ is not int or index != wanted:
            return None
        if key is _TEXT:
            return _TEXT, piece, TEXT
        if (
            elements.__class__ is list
            and len(elements) == 1
            and element.__class__ is dict
            and len(element) == 2
            and function.__class__ is dict
            and len(function) == 1
        ):
            return key, piece, ARGUMENTS
        return None

    # Made from _plain: _made.py, written by `python -m laminate._apis.make_plain`.
    on_frame = _made.on_frame
    run = _made.run

    def _ready(self, key: Hashable, kind: bool) -> bool:
        """A call's arguments go on as they come only while the call is open."""
        return kind is TEXT or self.assembler.is_open(key)

    def _on_other(self, event: str | None, obj: Any) -> None:
        if not isinstance(obj, dict):
            raise shape_error("a chunk is not a JSON object")
        if event is not None or "error" in obj:
            self._check_error(event, obj)
        if not self._identified:
            self._identify(obj)
        usage = obj.get("usage")
        if usage:
            self._usage(usage)
        choices = obj.get("choices")
        if not choices:
            # Usage-only, moderation and prompt-filter chunks carry no choice.
            self._no_choice(obj, usage)
            return
        if choices.__class__ is not list:
            raise shape_error("`choices` is not a list")
        for choice in choices:
            if choice.__class__ is not dict:
                raise shape_error("a choice is not an object")
            index = choice.get("index", 0)
            if index != self._choice and (int_or_none(index) or 0) != self._choice:
                continue  # another choice of an `n > 1` request
            delta = choice.get("delta")
            if delta is None or ("message" in choice and obj.get("object") == "chat.completion"):
                # Servers that send whole messages, and a complete body read as a chunk
                # (Perplexity's has an empty `delta` beside its `message`).
                delta = choice.get("message")
            if delta is not None:
                self._on_delta(delta)
            finish = choice.get("finish_reason")
            if finish:
                self._on_finish(finish, choice, obj, usage)

    def on_done_marker(self) -> None:
        self._flush_think()
        asm = self.assembler
        if not asm.finished and not asm.snapshot().content:
            # Neither a finish_reason nor any content: `[DONE]` closed a stream that
            # gave no answer. Old llama.cpp servers do this after reporting an error in
            # a non-standard `error:` SSE field, which SSE readers must ignore.
            raise IncompleteStreamError(
                "the stream ended with [DONE] before any content or finish_reason arrived"
            )
        asm.complete()

    # -- the envelope ---------------------------------------------------------------

    def _check_error(self, event: str | None, obj: dict[str, Any]) -> None:
        if event == "error" or obj.get("error"):
            # OpenRouter's error chunk also carries the usage so far: keep it.
            usage = obj.get("usage")
            if usage:
                self._usage(usage)
            raise error_from_payload(obj)

    def _identify(self, obj: dict[str, Any]) -> None:
        # The first non-empty id and model win (Azure's first chunk has both empty;
        # some gateways rotate the id on every chunk).
        asm = self.assembler
        asm.start(str_or_empty(obj.get("id")), str_or_empty(obj.get("model")))
        self._identified = bool(asm.id and asm.model)

    def _usage(self, usage: Any) -> None:
        # Usage objects are running totals: the last reported value of each count wins.
        if isinstance(usage, Mapping):
            self.assembler.usage(dict(usage), **usage_counts(usage))

    def _no_choice(self, obj: dict[str, Any], usage: Any) -> None:
        if obj.get("object") == "error":  # older vLLM: the error fields at the top level
            raise error_from_payload(obj)
        if not usage:
            self._groq_usage(obj)

    def _groq_usage(self, obj: dict[str, Any]) -> None:
        extra = obj.get("x_groq")
        if isinstance(extra, Mapping) and extra.get("usage"):
            self._usage(extra["usage"])

    # -- a choice's delta ----------------------------------------------------------------

    def _on_delta(self, delta: Any) -> None:
        if not isinstance(delta, Mapping):
            raise shape_error("`delta` is not an object")
        asm = self.assembler
        reasoning = _reasoning_text(delta)
        if reasoning:
            asm.reasoning(_REASONING, reasoning)
        details = delta.get("reasoning_details")
        if details and isinstance(details, list):
            self._on_reasoning_details(details, text_sent=bool(reasoning))
        content = delta.get("content")
        if isinstance(content, str):
            self._on_text(content)
        elif isinstance(content, list):
            self._on_content_parts(content)
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            self._refused = True
            asm.text(_REFUSAL, refusal)
        annotations = delta.get("annotations")
        if annotations:
            if not isinstance(annotations, list):
                raise shape_error("`annotations` is not a list")
            for annotation in annotations:
                self._citation(annotation)
        tool_calls = delta.get("tool_calls")
        if tool_calls:
            if not isinstance(tool_calls, list):
                raise shape_error("`tool_calls` is not a list")
            for position, call in enumerate(tool_calls):
                self._calls.fragment(position, call)
        legacy = delta.get("function_call")
        if legacy:
            self._calls.legacy(legacy)

    def _citation(self, annotation: Any) -> None:
        """A search model's ``url_citation`` annotation of the text: an
        ``Unknown("citation")`` block of its own, after the text block (opened first if
        no text came yet), holding the annotation as sent."""
        if not isinstance(annotation, Mapping):
            raise shape_error("an annotation that is not an object")
        self.assembler.open_text(_TEXT)
        self.assembler.citation(annotation)

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
                if is_reasoning:
                    self.assembler.reasoning(_REASONING, piece)
                else:
                    self.assembler.text(_TEXT, piece)

    def _on_content_parts(self, parts: list[Any]) -> None:
        """``content`` sent as typed parts (Mistral's thinking models, some gateways);
        part types other than text and thinking are not modelled."""
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
        for number, item in enumerate(details):
            if not isinstance(item, Mapping):
                continue
            kind = item.get("type")
            item_id = str_or_empty(item.get("id"))
            if kind == "reasoning.encrypted":
                self._on_encrypted(item, item_id, number)
                continue
            if not text_sent:  # the same text as `reasoning`, when that was sent
                field = "summary" if kind == "reasoning.summary" else "text"
                asm.reasoning(_REASONING, str_or_empty(item.get(field)))
            signature = item.get("signature")
            if isinstance(signature, str) and signature:
                asm.reasoning_signature(_REASONING, signature)
            if item_id:
                asm.open_reasoning(_REASONING, id=item_id)

    def _on_encrypted(self, item: Mapping[str, Any], item_id: str, number: int) -> None:
        # Its own redacted block: the data is opaque and goes back as it came.
        index = int_or_none(item.get("index"))
        key: Hashable = (
            ("encrypted", item_id)
            if item_id
            else ("encrypted-index", index)
            if index is not None
            else ("encrypted", self._calls.serial())
        )
        asm = self.assembler
        asm.open_reasoning(key, redacted=True, id=item_id)
        data = item.get("data")
        if isinstance(data, str) and data:
            asm.reasoning_signature(key, data)

    # -- the end of a choice -------------------------------------------------------------

    def _on_finish(self, raw: Any, choice: dict[str, Any], obj: dict[str, Any], usage: Any) -> None:
        if not isinstance(raw, str):
            raise shape_error("`finish_reason` is not a string")
        if raw == "error":
            raise _finish_error(choice)
        if not usage:
            self._groq_usage(obj)  # Groq: usage under `x_groq` on the finishing chunk
        self._flush_think()
        asm = self.assembler
        asm.finish(stop_reason(raw, has_tool_calls=asm.has_tool_calls(), refused=self._refused))


def _reasoning_text(delta: Mapping[str, Any]) -> str:
    """``reasoning_content`` (DeepSeek, xAI, older vLLM) or ``reasoning`` (vLLM, Groq,
    OpenRouter, Ollama): servers that send both send the same text, so one is used."""
    text = delta.get("reasoning_content")
    if isinstance(text, str) and text:
        return text
    text = delta.get("reasoning")
    return text if isinstance(text, str) else ""


def _finish_error(choice: Mapping[str, Any]) -> ProviderError:
    error = choice.get("error")
    if error:  # OpenRouter puts the upstream error in the choice
        return error_from_payload({"error": error})
    return ProviderError(
        'the provider ended the answer with finish_reason "error" and no details',
        error_type="finish_reason_error",
        # A generation that failed on the server side (vLLM, Mistral, Together).
        retryable=True,
        raw=dict(choice),
    )


class _Call:
    """What the matcher knows of one call: its assembler key and the identity sent."""

    __slots__ = ("id", "key", "name")

    def __init__(self, key: Hashable, id: str, name: str) -> None:
        self.key = key
        self.id = id
        self.name = name


class _ToolCalls:
    """Matches ``delta.tool_calls`` elements to calls (the policy in the module doc)."""

    __slots__ = ("_asm", "_by_id", "_by_position", "_count", "by_index")

    def __init__(self, assembler: Assembler) -> None:
        self._asm = assembler
        self.by_index: dict[Hashable, _Call] = {}
        self._by_id: dict[str, _Call] = {}
        self._by_position: dict[int, _Call] = {}
        self._count = 0

    def serial(self) -> int:
        """A fresh number, for keys that must never collide."""
        self._count += 1
        return self._count

    def fragment(self, position: int, element: Any) -> None:
        if not isinstance(element, Mapping):
            raise shape_error("a tool call delta is not an object")
        custom = element.get("custom")
        if isinstance(custom, Mapping):
            # A custom (free-form) tool's call: `custom: {name, input}`, its input text.
            self._apply(int_or_none(element.get("index")), position, element, custom, True)
            return
        function = element.get("function")
        if not isinstance(function, Mapping):
            function = _NO_FUNCTION
        index = element.get("index")
        if index is None:
            index = function.get("index")  # Ollama Cloud puts it there
        self._apply(int_or_none(index), position, element, function)

    def legacy(self, function: Any) -> None:
        """The deprecated ``delta.function_call``: one call, no id."""
        if not isinstance(function, Mapping):
            raise shape_error("`function_call` is not an object")
        self._apply(_LEGACY_CALL, 0, _NO_FUNCTION, function)

    def _apply(
        self,
        index: Hashable | None,
        position: int,
        element: Mapping[str, Any],
        function: Mapping[str, Any],
        custom: bool = False,
    ) -> None:
        """One element for a call; ``function`` is its ``function`` (or, for a custom
        call, its ``custom``) object."""
        call_id = str_or_empty(element.get("id"))
        name = str_or_empty(function.get("name"))
        call = self._match(index, position, call_id, name)
        asm = self._asm
        if call is None:
            call = _Call(("tool", self.serial()), call_id, name)
            if index is not None:
                self.by_index[index] = call
            self._by_position[position] = call
            asm.tool_start(call.key, call_id, name, custom=custom)
        elif (call_id and call_id != call.id) or (name and name != call.name):
            call.id = call.id or call_id
            call.name = call.name or name
            asm.tool_identity(call.key, call_id, name)  # set once; a conflict is logged
        if call_id:
            self._by_id.setdefault(call_id, call)
        arguments = function.get("input" if custom else "arguments")
        if arguments is None or arguments == "":
            return
        if not asm.is_open(call.key):
            raise MalformedStreamError(
                f"tool call arguments arrived after the call {call.id or call.name!r} was finished"
            )
        asm.tool_input(call.key, arguments if isinstance(arguments, str) else json_text(arguments))

    def _match(
        self, index: Hashable | None, position: int, call_id: str, name: str
    ) -> _Call | None:
        if index is not None:
            call = self.by_index.get(index)
            if (
                call is not None
                and call_id
                and name
                and call.id
                and call.name
                and call_id != call.id
            ):
                return None  # every call at the same index, each with its own id
            return call
        if call_id:
            return self._by_id.get(call_id)
        return self._by_position.get(position)


def parse_body(
    assembler: Assembler, body: Mapping[str, Any], options: HandlerOptions | None = None
) -> None:
    """A complete ``chat.completion`` body, read as one chunk whose delta is the message."""
    handler = OpenAIChatHandler(assembler, options)
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
    assembler.complete()  # a complete body is its own terminal signal
