"""botocore's side of Bedrock, recognised without importing it.

boto3's ``converse_stream()`` and ``invoke_model_with_response_stream()`` return a dict
whose ``"stream"`` / ``"body"`` is botocore's ``EventStream``: an iterator of event dicts
botocore already decoded from the binary event stream. Each dict is unwrapped into the
frame the same bytes carry, so the stream is read as it would be from the wire. botocore's
errors (``EventStreamError`` for an exception message in the stream, ``ClientError``) get
the classification the same exception message gets.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, Final

from ..._core.errors import ProviderError
from ..._framing.eventstream import exception_error
from ..base import module_root, non_2xx
from ..spec import Sdk, SdkEvents

__all__ = ["SDK"]

_ROOTS: Final = ("botocore", "aiobotocore")


def is_event_stream(obj: object) -> bool:
    """botocore's (or aiobotocore's) ``EventStream``: an iterator of parsed event dicts."""
    return module_root(obj) in _ROOTS and type(obj).__name__.endswith("EventStream")


def frame(item: Any) -> tuple[Any, str | None, str]:
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


def error(exc: BaseException) -> ProviderError | None:
    """botocore's ``EventStreamError`` (an exception message in the stream) or
    ``ClientError`` as the :class:`ProviderError` the same message gives."""
    if module_root(exc) not in _ROOTS:
        return None
    response = getattr(exc, "response", None)
    if not isinstance(response, Mapping):
        return None
    details = response.get("Error") or {}
    code = str(details.get("Code") or "exception")
    message = str(details.get("Message") or code)
    # The same classification as the exception message read from the wire.
    found = exception_error(code, {"message": message})
    if type(exc).__name__ != "EventStreamError":
        metadata = response.get("ResponseMetadata") or {}
        found.status_code = non_2xx(metadata.get("HTTPStatusCode"))
    return found


SDK: Final = Sdk(
    modules=("botocore", "aiobotocore"),
    accepted="boto3 converse_stream() / invoke_model_with_response_stream()",
    error=error,
    events=SdkEvents(
        is_stream=is_event_stream,
        response_keys=("stream", "body"),
        frame=frame,
        sync_note="; boto3 is synchronous: use normalize_stream_sync() or collect_sync()",
    ),
)
