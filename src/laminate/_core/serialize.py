"""Plain-JSON renderings of events and responses, and back.

``laminate replay`` prints these, the ``events`` stream target writes them, and
``NormalizedResponse.from_dict`` / ``event_from_dict`` read them back into equal objects:
every field that takes part in equality is written (``Usage.raw`` and the response's
``raw`` do not, and are not). Readers check the shape as they go and raise ``ValueError``
naming the first thing that is wrong, never a ``KeyError`` from deep inside.
"""

from __future__ import annotations

from typing import Any

from .events import (
    BlockEnd,
    BlockStart,
    Event,
    ReasoningDelta,
    ResponseDone,
    ResponseStart,
    TextDelta,
    ToolInputDelta,
    tool_input_delta,
)
from .flex import FlexValue
from .partial_json import ArgumentsView
from .response import (
    ContentBlock,
    InvalidToolUse,
    NormalizedResponse,
    Reasoning,
    StopReason,
    Text,
    ToolUse,
    Unknown,
    Usage,
)

__all__ = [
    "block_from_dict",
    "block_to_dict",
    "event_from_dict",
    "event_to_dict",
    "response_from_dict",
    "response_to_dict",
    "stop_reason_to_dict",
    "usage_to_dict",
]


def block_to_dict(block: ContentBlock) -> dict[str, Any]:
    match block:
        case Text(text, signature):
            # The signature key is there only when a provider sent one (Gemini).
            out = {"type": "text", "text": text}
            return out if signature is None else {**out, "signature": signature}
        case ToolUse(id, name, input, signature, kind):
            call = {"type": "tool_use", "id": id, "name": name, "input": input.value}
            if kind != "function":  # a custom call's text: the key only where it matters
                call["kind"] = kind
            return call if signature is None else {**call, "signature": signature}
        case InvalidToolUse(id, name, raw_input, reason):
            return {
                "type": "invalid_tool_use",
                "id": id,
                "name": name,
                "raw_input": raw_input,
                "reason": reason,
            }
        case Reasoning(text, signature, redacted, id):
            return {
                "type": "reasoning",
                "text": text,
                "signature": signature,
                "redacted": redacted,
                "id": id,
            }
        case Unknown(block_type, data):
            return {"type": "unknown", "block_type": block_type, "data": data.value}
    raise TypeError(f"not a content block: {block!r}")  # pragma: no cover


def stop_reason_to_dict(stop: StopReason) -> dict[str, Any]:
    return {"kind": stop.kind, "raw": stop.raw}


def usage_to_dict(usage: Usage) -> dict[str, Any]:
    data: dict[str, Any] = {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
    }
    if usage.input_includes_cache:  # written only when set: false is the default
        data["input_includes_cache"] = True
    return data


def response_to_dict(response: NormalizedResponse) -> dict[str, Any]:
    return {
        "provider": response.provider,
        "id": response.id,
        "model": response.model,
        "content": [block_to_dict(b) for b in response.content],
        "stop_reason": stop_reason_to_dict(response.stop_reason),
        "usage": usage_to_dict(response.usage),
    }


def event_to_dict(event: Event) -> dict[str, Any]:
    match event:
        case ResponseStart(id, model, provider):
            return {"event": "response_start", "id": id, "model": model, "provider": provider}
        case BlockStart(index, block):
            return {"event": "block_start", "index": index, "block": block_to_dict(block)}
        case TextDelta(index, text):
            return {"event": "text_delta", "index": index, "text": text}
        case ReasoningDelta(index, text):
            return {"event": "reasoning_delta", "index": index, "text": text}
        case ToolInputDelta(index, fragment):
            return {"event": "tool_input_delta", "index": index, "fragment": fragment}
        case BlockEnd(index, block):
            return {"event": "block_end", "index": index, "block": block_to_dict(block)}
        case ResponseDone(response):
            return {"event": "response_done", "response": response_to_dict(response)}
    raise TypeError(f"not an event: {event!r}")  # pragma: no cover


# -- reading them back ---------------------------------------------------------------------


def _get(data: Any, key: str, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(data, dict):
        raise ValueError(f"{what}: expected an object, got {type(data).__name__}")
    if key not in data:
        raise ValueError(f"{what}: missing {key!r}")
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise ValueError(f"{what}: {key!r} has the wrong type ({type(value).__name__})")
    return value


def _optional_str(data: dict[str, Any], key: str, what: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{what}: {key!r} is not a string")
    return value


def block_from_dict(data: Any) -> ContentBlock:
    """The content block that :func:`block_to_dict` wrote."""
    kind = _get(data, "type", str, "block")
    what = f"{kind} block"
    match kind:
        case "text":
            return Text(_get(data, "text", str, what), _optional_str(data, "signature", what))
        case "tool_use":
            call_kind = _optional_str(data, "kind", what) or "function"
            if call_kind not in ("function", "custom"):
                raise ValueError(f"{what}: kind must be 'function' or 'custom'")
            arguments = _get(data, "input", str if call_kind == "custom" else dict, what)
            return ToolUse(
                _get(data, "id", str, what),
                _get(data, "name", str, what),
                FlexValue(arguments),
                _optional_str(data, "signature", what),
                call_kind,
            )
        case "invalid_tool_use":
            return InvalidToolUse(
                _get(data, "id", str, what),
                _get(data, "name", str, what),
                _get(data, "raw_input", str, what),
                _get(data, "reason", str, what),
            )
        case "reasoning":
            return Reasoning(
                _get(data, "text", str, what),
                _optional_str(data, "signature", what),
                _get(data, "redacted", bool, what),
                _optional_str(data, "id", what),
            )
        case "unknown":
            return Unknown(_get(data, "block_type", str, what), FlexValue(data.get("data")))
    raise ValueError(f"block: unknown type {kind!r}")


def _count(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"usage: {key!r} is not an integer")
    return value


def _flag(data: dict[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"usage: {key!r} is not a boolean")
    return value


def response_from_dict(data: Any) -> NormalizedResponse:
    """The response that :func:`response_to_dict` wrote."""
    what = "response"
    stop = _get(data, "stop_reason", dict, what)
    raw = _get(stop, "raw", str, "stop_reason")
    kind = _optional_str(stop, "kind", "stop_reason")
    if kind is not None and kind not in StopReason.KINDS:
        raise ValueError(f"stop_reason: unknown kind {kind!r}")
    usage = _get(data, "usage", dict, what)
    return NormalizedResponse(
        id=_get(data, "id", str, what),
        model=_get(data, "model", str, what),
        provider=_get(data, "provider", str, what),
        content=[block_from_dict(b) for b in _get(data, "content", list, what)],
        stop_reason=StopReason(kind, raw),
        usage=Usage(
            input_tokens=_count(usage, "input_tokens"),
            output_tokens=_count(usage, "output_tokens"),
            cache_read_tokens=_count(usage, "cache_read_tokens"),
            cache_write_tokens=_count(usage, "cache_write_tokens"),
            reasoning_tokens=_count(usage, "reasoning_tokens"),
            input_includes_cache=_flag(usage, "input_includes_cache"),
        ),
    )


def event_from_dict(data: Any, views: dict[int, ArgumentsView] | None = None) -> Event:
    """The event that :func:`event_to_dict` (``event.to_dict()``) wrote.

    A ``ToolInputDelta``'s live-argument helpers (``partial``, ``string_deltas``,
    ``is_complete``) describe the arguments as far as they were read: pass the same
    ``views`` dict for every event of one stream and they span the whole call; without
    it, each delta describes its own fragment only.
    """
    kind = _get(data, "event", str, "event")
    what = f"{kind} event"
    match kind:
        case "response_start":
            return ResponseStart(
                _get(data, "id", str, what),
                _get(data, "model", str, what),
                _get(data, "provider", str, what),
            )
        case "block_start":
            return BlockStart(_get(data, "index", int, what), block_from_dict(data.get("block")))
        case "text_delta":
            return TextDelta(_get(data, "index", int, what), _get(data, "text", str, what))
        case "reasoning_delta":
            return ReasoningDelta(_get(data, "index", int, what), _get(data, "text", str, what))
        case "tool_input_delta":
            index = _get(data, "index", int, what)
            fragment = _get(data, "fragment", str, what)
            view = ArgumentsView() if views is None else views.setdefault(index, ArgumentsView())
            return tool_input_delta(index, fragment, view, view.append(fragment))
        case "block_end":
            return BlockEnd(_get(data, "index", int, what), block_from_dict(data.get("block")))
        case "response_done":
            return ResponseDone(response_from_dict(data.get("response")))
    raise ValueError(f"event: unknown kind {kind!r}")
