"""What every provider module shares: the handler protocol and small readers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from .._core import jsonlib
from .._core.assembler import Assembler
from .._core.errors import IncompleteStreamError, MalformedStreamError, ProviderError
from .._core.response import StopReason
from .._framing.eventstream import exception_error

__all__ = [
    "Handler",
    "HandlerOptions",
    "RunHandler",
    "aws_error",
    "aws_error_body",
    "aws_error_kind",
    "bare_error",
    "end_at_done_marker",
    "error_from_payload",
    "int_or_none",
    "is_retryable",
    "json_text",
    "module_of",
    "module_root",
    "non_2xx",
    "plain_error",
    "shape_error",
    "stop_reason_from",
    "str_or_empty",
]


class HandlerOptions:
    """Provider options a handler may read (``choice``, ``think_tags``)."""

    __slots__ = ("choice", "think_tags")

    def __init__(self, *, choice: int = 0, think_tags: bool = False) -> None:
        self.choice = choice
        self.think_tags = think_tags


class Handler(Protocol):
    """Reads one provider's frames and calls the assembler's verbs.

    Every handler is built as ``Handler(assembler, options)`` (``options`` may be left
    out), and every complete-body reader is called as ``parse_body(assembler, body,
    options)``: the registry records them as they are."""

    assembler: Assembler

    def on_frame(self, event: str | None, obj: Any) -> None:
        """One parsed frame (``event`` is the SSE event name, if any)."""

    def on_done_marker(self) -> None:
        """The SSE payload ``[DONE]``."""


class RunHandler(Handler, Protocol):
    """A handler that also reads many frames at once (see :class:`~laminate._framing.Batch`)."""

    def run(self, names: Sequence[str | None] | None, objs: Sequence[Any], start: int) -> int:
        """Read the frames from ``start`` on that are plain text or argument deltas of
        open blocks, a run at a time (the assembler's ``texts`` / ``tool_inputs``), and
        return the index of the first frame left to :meth:`on_frame` (``start`` when
        there is none to read). It never raises and never completes the answer: a run
        the assembler refuses is left to :meth:`on_frame`, frame by frame. ``names``
        are the frames' event names, or ``None`` when they have none."""


def end_at_done_marker(assembler: Assembler, missing: str) -> None:
    """``[DONE]`` where the API sends none (a proxy added it): the end of the answer after
    its stop reason, a stream cut short before it (``missing``: what had not arrived)."""
    if not assembler.finished:
        raise IncompleteStreamError(f"[DONE] arrived before {missing}")
    assembler.complete()


_RETRYABLE_TYPES: Final = frozenset(
    {
        "overloaded_error",
        "rate_limit_error",
        "rate_limit_exceeded",
        "ratelimitreached",  # Azure AI Foundry's `code`
        "api_error",
        "server_error",
        "internal_server_error",
        "internal_error",
        "service_unavailable",
        "service_unavailable_error",
        "timeout",
        "timeout_error",
        "request_timeout",
        "too_many_requests",
        "overloaded",
        "engine_overloaded",
        "slow_down",
        "provider_overloaded",
        "provider_unavailable",
    }
)


def is_retryable(error_type: str, code: Any = None) -> bool:
    """Overload, rate limits, timeouts and server-side faults may succeed on retry;
    everything else (bad request, auth, quota, content policy) will not."""
    if error_type.lower() in _RETRYABLE_TYPES:
        return True
    status = int_or_none(code)
    return status is not None and (status in (408, 429) or 500 <= status <= 599)


def error_from_payload(payload: Any, *, default_type: str = "error") -> ProviderError:
    """Classify an error object as sent (``{"type", "message", "code"}`` in any of the
    usual places) into a :class:`ProviderError`."""
    err: Any = payload
    if isinstance(payload, Mapping) and "error" in payload:
        err = payload["error"]
    if isinstance(err, Mapping):
        message = str_or_empty(err.get("message")) or str_or_empty(err.get("error"))
        code = err.get("code")
        metadata = err.get("metadata")
        error_type = (
            str_or_empty(err.get("type"))
            # OpenRouter names the upstream failure in `metadata.error_type`.
            or (str_or_empty(metadata.get("error_type")) if isinstance(metadata, Mapping) else "")
            # Google names it in `status` ("INVALID_ARGUMENT") beside a numeric `code`.
            or str_or_empty(err.get("status"))
            or (str(code) if code is not None and code != "" else default_type)
        )
    else:
        message = str(err) if err is not None else ""
        code = None
        error_type = default_type
    if error_type == "error" and isinstance(payload, Mapping):
        # Responses-style `{"type": "error", "code": ...}` keeps its code at the top.
        top_code = payload.get("code")
        if isinstance(top_code, str) and top_code:
            error_type = top_code
    return ProviderError(
        message or "the provider reported an error",
        error_type=error_type,
        retryable=is_retryable(error_type, code),
        raw=payload,
    )


# What an AWS service's JSON error body holds, and nothing else: the message (spelled
# either way), the error's type in ``__type`` (the JSON protocols) and sometimes a code.
_AWS_ERROR_KEYS: Final = frozenset({"message", "Message", "__type", "code", "Code"})


def aws_error(payload: Any, error_type: str = "") -> ProviderError | None:
    """The :class:`ProviderError` of a body that is only an AWS service's error
    (``{"message": ...}``, ``{"Message": ...}``, ``{"__type": ..., "message": ...}``),
    else ``None``. Its type is ``__type`` without its namespace
    (``com.amazon.coral.validate#ValidationException``), else ``error_type`` (what the
    ``x-amzn-ErrorType`` header said), else ``"error"``."""
    if not isinstance(payload, Mapping) or not payload or not payload.keys() <= _AWS_ERROR_KEYS:
        return None
    message = payload.get("message", payload.get("Message"))
    kind = str_or_empty(payload.get("__type")).rpartition("#")[2]
    if not isinstance(message, str) and not kind:
        return None
    # A header's value may carry a URL after a colon ("ThrottlingException:http://...").
    name = kind.split(":", 1)[0] or error_type.split(":", 1)[0] or "error"
    return exception_error(name, payload)


def aws_error_body(status: int, kind: str, message: str) -> dict[str, Any]:
    """An error body as AWS sends one: the type goes in a header, not the body."""
    return {"message": message}


# What AWS names in the `x-amzn-errortype` header; boto3 raises a ClientError with it.
_AWS_KINDS: Final[Mapping[int, str]] = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    413: "ValidationException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    503: "ServiceUnavailableException",
    504: "ModelTimeoutException",
}


def aws_error_kind(status: int) -> str:
    """The exception name AWS's model runtime gives an HTTP status (in the
    ``x-amzn-errortype`` header)."""
    return _AWS_KINDS.get(
        status, "InternalServerException" if status >= 500 else "ValidationException"
    )


# An error body of an id, the message and (sometimes) the error's type alone (Cohere v2's).
_ID_MESSAGE_KEYS: Final = frozenset({"id", "message", "error_type"})


def plain_error(payload: Any) -> ProviderError | None:
    """The :class:`ProviderError` of an error body without an ``error`` object, else
    ``None``: ``{"detail": ...}`` and nothing else (FastAPI servers, Mistral's auth
    errors), or Cohere's ``{"id", "message"}`` with its ``error_type`` when it has one.
    The type is the ``error_type`` as sent, else ``"error"``."""
    if not isinstance(payload, Mapping) or not payload:
        return None
    if payload.keys() == {"detail"}:
        detail = payload["detail"]
        message = detail if isinstance(detail, str) else jsonlib.dumps(detail)
        return ProviderError(
            message or "the provider reported an error",
            error_type="error",
            retryable=False,
            raw=payload,
        )
    if "id" in payload and payload.keys() <= _ID_MESSAGE_KEYS:
        text = payload.get("message")
        if not isinstance(text, str):
            return None
        error_type = str_or_empty(payload.get("error_type")) or "error"
        return ProviderError(
            text or "the provider reported an error",
            error_type=error_type,
            retryable=is_retryable(error_type),
            raw=payload,
        )
    return None


def bare_error(payload: Mapping[str, Any]) -> ProviderError | None:
    """The :class:`ProviderError` of a complete body that is only an error, whoever sent
    it: an ``error`` object (a Responses body carries ``error`` beside its ``output``
    and is read by its own reader), an AWS error, or one of :func:`plain_error`'s
    shapes; ``None`` for anything else."""
    if payload.get("error") and "output" not in payload:
        return error_from_payload(payload)
    return aws_error(payload) or plain_error(payload)


def json_text(value: Any) -> str:
    """The JSON text of arguments a provider sent as an object rather than a string."""
    return jsonlib.dumps(value)


def module_of(obj: object) -> str:
    """The module that defined ``obj``'s type (``""`` when it does not say): how an SDK's
    objects are told apart without importing the SDK."""
    module = getattr(type(obj), "__module__", None)
    return module if isinstance(module, str) else ""


def module_root(obj: object) -> str:
    """The top-level package of ``obj``'s type (``"openai"`` for ``openai.Stream``)."""
    return module_of(obj).split(".", 1)[0]


def non_2xx(status: Any) -> int | None:
    """``status`` when it is an HTTP status that is not 2xx, else ``None``."""
    if isinstance(status, int) and 100 <= status <= 599 and not 200 <= status <= 299:
        return status
    return None


def shape_error(what: str) -> MalformedStreamError:
    return MalformedStreamError(f"unexpected payload shape: {what}")


def int_or_none(value: Any) -> int | None:
    """An integer count as sent (a numeric string is accepted; a bool is not a count)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def str_or_empty(value: Any) -> str:
    return value if isinstance(value, str) else ""


def stop_reason_from(raw: str, table: Mapping[str, StopReason]) -> StopReason:
    """Map a provider's stop string through its table; anything else is kept as unknown."""
    named = table.get(raw)
    return named.with_raw(raw) if named is not None else StopReason.unknown(raw)
