"""What the official SDKs hand out, recognised without importing any of them.

No SDK is a dependency of laminate, so nothing here imports one: an object is known by
what it has (duck typing) and by the module its type was defined in. Two kinds matter:

- Objects that still hold the HTTP response untouched: openai's and anthropic's
  ``Stream`` / ``AsyncStream`` (``.response``), the ``APIResponse`` of
  ``with_streaming_response`` (``.http_response``), anthropic's ``MessageStream`` and
  openai's helper streams (their raw ``Stream``). Their bytes are read directly, so
  nothing the SDK would have dropped or rebuilt is lost, and the result is the one the
  same bytes give by construction.
- Iterators that hand out frames the SDK already parsed: google-genai's
  ``GenerateContentResponse`` chunks, botocore's event stream of dicts, ollama-python's
  ``ChatResponse`` chunks, litellm's OpenAI-shaped chunks. Each frame goes through
  :meth:`StreamNormalizer.feed_payload`, with the provider named by the frame's type.

Errors an SDK raises while it iterates (ollama's ``ResponseError`` for an ``{"error"}``
line, botocore's ``EventStreamError`` for an exception message, google-genai's
``APIError``) are turned into the :class:`ProviderError` the same bytes would give.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, Final

from .._apis.registry import APIS
from .._core.errors import ProviderError
from .._framing.eventstream import exception_error

__all__ = [
    "bedrock_frame",
    "botocore_error",
    "error_payload",
    "held_response",
    "is_botocore_stream",
    "is_stream_manager",
    "module_of",
    "provider_of",
]

# The first matching prefix of a type's module names the provider of its frames.
_PROVIDER_BY_MODULE: Final = (
    ("openai.types.responses", "openai-responses"),
    ("openai.lib.streaming.responses", "openai-responses"),
    ("openai", "openai"),
    ("litellm", "openai"),
    ("anthropic", "anthropic"),
    ("google.genai", "gemini"),
    ("vertexai", "gemini"),
    ("ollama", "ollama"),
    ("cohere", "cohere"),
    ("botocore", "bedrock"),
    ("aiobotocore", "bedrock"),
)
_WRAPPING_SDKS: Final = ("openai", "anthropic")


def module_of(obj: object) -> str:
    """The module that defined ``obj``'s type (``""`` when it does not say)."""
    module = getattr(type(obj), "__module__", None)
    return module if isinstance(module, str) else ""


def _root(module: str) -> str:
    return module.split(".", 1)[0]


def provider_of(obj: object) -> str | None:
    """The provider whose frames or bodies objects of this type are, when laminate reads
    that provider (``None``: the payload itself must tell)."""
    module = module_of(obj)
    for prefix, provider in _PROVIDER_BY_MODULE:
        if module == prefix or module.startswith(prefix + "."):
            return provider if provider in APIS else None
    return None


def looks_like_response(obj: object) -> bool:
    """An httpx or httpx2 response, or one shaped like it: its bytes and a way to close it
    (``headers``, ``url`` and ``status_code`` are read when it has them)."""
    return (hasattr(obj, "iter_bytes") and hasattr(obj, "close")) or (
        hasattr(obj, "aiter_bytes") and hasattr(obj, "aclose")
    )


def held_response(obj: object) -> Any | None:
    """The HTTP response an openai / anthropic stream object wraps, else ``None``.

    ``http_response``: ``APIResponse`` / ``AsyncAPIResponse`` (``with_streaming_response``)
    and the legacy raw response. ``response``: ``Stream``, ``AsyncStream``, anthropic's
    ``MessageStream``. ``_raw_stream.response``: openai's ``ChatCompletionStream`` and
    ``ResponseStream`` helpers, which expose no response of their own.
    """
    for name in ("http_response", "response"):
        held = getattr(obj, name, None)
        if held is not None and looks_like_response(held):
            return held
    if _root(module_of(obj)) in _WRAPPING_SDKS:
        raw = getattr(obj, "_raw_stream", None)
        held = getattr(raw, "response", None)
        if held is not None and looks_like_response(held):
            return held
    return None


def is_stream_manager(obj: object) -> bool:
    """``client.messages.stream(...)`` and the like, not yet entered: the request is sent
    when the manager is entered, which the adapters do when iteration starts."""
    return (
        _root(module_of(obj)) in _WRAPPING_SDKS
        and type(obj).__name__.endswith("StreamManager")
        and (hasattr(obj, "__enter__") or hasattr(obj, "__aenter__"))
    )


def is_botocore_stream(obj: object) -> bool:
    """botocore's (or aiobotocore's) ``EventStream``: an iterator of parsed event dicts."""
    return _root(module_of(obj)) in ("botocore", "aiobotocore") and type(obj).__name__.endswith(
        "EventStream"
    )


def bedrock_frame(item: Any) -> tuple[Any, str | None, str]:
    """One botocore event dict as ``(payload, event, provider)``.

    ConverseStream events are ``{"contentBlockDelta": {...}}``: the key is the message's
    ``:event-type``. InvokeModelWithResponseStream events are ``{"chunk": {"bytes":
    b'{...}'}}``: the bytes are the model's own frame (an Anthropic Messages event).
    Blobs botocore decoded (``redactedContent``) are base64 again, as on the wire.
    """
    if not isinstance(item, Mapping) or len(item) != 1:
        raise TypeError(f"expected a botocore event dict with one key, got {item!r:.80}")
    ((event, payload),) = item.items()
    if event == "chunk" and isinstance(payload, Mapping) and "bytes" in payload:
        return payload["bytes"], None, "anthropic"
    return _as_wire(payload), str(event), "bedrock"


def _as_wire(value: Any) -> Any:
    """Values botocore decoded, encoded back as the JSON on the wire carried them."""
    if isinstance(value, Mapping):
        return {key: _as_wire(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_wire(item) for item in value]
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def error_payload(exc: BaseException) -> tuple[Mapping[str, Any], int | None] | None:
    """The error frame or body an SDK's exception was raised for, with the HTTP status
    when that was not 2xx (``None``: the error came inside a stream), else ``None``.

    Handing the frame itself to the normalizer gives the error the same bytes give.
    """
    root, name = _root(module_of(exc)), type(exc).__name__
    if root == "ollama" and name == "ResponseError":
        # Raised for an `{"error": ...}` line (status -1), or for a non-2xx answer.
        error = getattr(exc, "error", None) or str(exc)
        return {"error": error}, _non_2xx(getattr(exc, "status_code", None))
    if root == "google" and isinstance(getattr(exc, "details", None), Mapping):
        details: Mapping[str, Any] = exc.details  # type: ignore[attr-defined]
        status = getattr(getattr(exc, "response", None), "status_code", None)
        payload = details if "error" in details else {"error": details}
        return payload, _non_2xx(status)
    if root in _WRAPPING_SDKS and isinstance(getattr(exc, "body", None), Mapping):
        body: Mapping[str, Any] = exc.body  # type: ignore[attr-defined]
        payload = body if "error" in body else {"error": body}
        return payload, _non_2xx(getattr(exc, "status_code", None))
    return None


def botocore_error(exc: BaseException) -> ProviderError | None:
    """botocore's ``EventStreamError`` (an exception message in the stream) or
    ``ClientError`` as the :class:`ProviderError` the same message gives."""
    if _root(module_of(exc)) not in ("botocore", "aiobotocore"):
        return None
    if not isinstance(getattr(exc, "response", None), Mapping):
        return None
    return _botocore_error(exc, in_stream=type(exc).__name__ == "EventStreamError")


def _botocore_error(exc: BaseException, *, in_stream: bool) -> ProviderError:
    response: Mapping[str, Any] = exc.response  # type: ignore[attr-defined]
    details = response.get("Error") or {}
    code = str(details.get("Code") or "exception")
    message = str(details.get("Message") or code)
    # The same classification as the exception message read from the wire.
    error = exception_error(code, {"message": message})
    if not in_stream:
        metadata = response.get("ResponseMetadata") or {}
        error.status_code = _non_2xx(metadata.get("HTTPStatusCode"))
    return error


def _non_2xx(status: Any) -> int | None:
    if isinstance(status, int) and 100 <= status <= 599 and not 200 <= status <= 299:
        return status
    return None
