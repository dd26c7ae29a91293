"""What the official SDKs hand out, recognised without importing any of them.

No SDK is a dependency of laminate, so nothing here imports one: an object is known by
what it has (duck typing) and by the module its type was defined in. Which modules belong
to which API, and what each SDK's objects and errors hold, is said by the APIs' records
(:class:`~laminate._apis.spec.Sdk`); this module only asks them. Two kinds matter:

- Objects that still hold the HTTP response untouched (``Stream`` / ``AsyncStream`` with
  ``.response``, the ``APIResponse`` of ``with_streaming_response`` with
  ``.http_response``, helper streams around a raw ``Stream``). Their bytes are read
  directly, so nothing the SDK would have dropped or rebuilt is lost, and the result is
  the one the same bytes give by construction.
- Iterators that hand out frames the SDK already parsed (pydantic chunks, event dicts).
  Each frame goes through :meth:`StreamNormalizer.feed_payload`, with the provider named
  by the frame's type, or unwrapped first by the API's :class:`SdkEvents`.

Errors an SDK raises while it iterates are turned into the :class:`ProviderError` the
same bytes would give: by handing back the frame or body they were raised for, or by the
API's own classification.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._apis.base import module_of, module_root, non_2xx
from .._apis.registry import APIS
from .._apis.spec import SdkEvents
from .._core.errors import ProviderError

__all__ = [
    "ACCEPTED",
    "error_payload",
    "event_stream",
    "events_in",
    "held_response",
    "is_stream_manager",
    "module_of",
    "provider_of",
    "sdk_error",
]

# Longest prefix first: the first that matches names the provider of a type's frames.
_PROVIDER_BY_MODULE: Final = sorted(
    ((prefix, name) for name, record in APIS.items() for prefix in record.sdk.modules),
    key=lambda pair: -len(pair[0]),
)
_HOLDING_SDKS: Final = frozenset(root for r in APIS.values() for root in r.sdk.holds_response)
_EVENT_STREAMS: Final = tuple(r.sdk.events for r in APIS.values() if r.sdk.events is not None)
ACCEPTED: Final = "; ".join(r.sdk.accepted for r in APIS.values() if r.sdk.accepted)
"""The SDK objects the adapters read, as their type errors list them."""


def provider_of(obj: object) -> str | None:
    """The provider whose frames or bodies objects of this type are, when laminate reads
    that provider (``None``: the payload itself must tell)."""
    module = module_of(obj)
    for prefix, provider in _PROVIDER_BY_MODULE:
        if module == prefix or module.startswith(prefix + "."):
            return provider
    return None


def looks_like_response(obj: object) -> bool:
    """An httpx or httpx2 response, or one shaped like it: its bytes and a way to close it
    (``headers``, ``url`` and ``status_code`` are read when it has them)."""
    return (hasattr(obj, "iter_bytes") and hasattr(obj, "close")) or (
        hasattr(obj, "aiter_bytes") and hasattr(obj, "aclose")
    )


def held_response(obj: object) -> Any | None:
    """The HTTP response an SDK stream object wraps, else ``None``.

    ``http_response``: ``APIResponse`` / ``AsyncAPIResponse`` (``with_streaming_response``)
    and the legacy raw response. ``response``: ``Stream``, ``AsyncStream``, a
    ``MessageStream``. ``_raw_stream.response``: helper streams (``ChatCompletionStream``,
    ``ResponseStream``), which expose no response of their own.
    """
    for name in ("http_response", "response"):
        held = getattr(obj, name, None)
        if held is not None and looks_like_response(held):
            return held
    if module_root(obj) in _HOLDING_SDKS:
        raw = getattr(obj, "_raw_stream", None)
        held = getattr(raw, "response", None)
        if held is not None and looks_like_response(held):
            return held
    return None


def is_stream_manager(obj: object) -> bool:
    """``client.messages.stream(...)`` and the like, not yet entered: the request is sent
    when the manager is entered, which the adapters do when iteration starts."""
    return (
        module_root(obj) in _HOLDING_SDKS
        and type(obj).__name__.endswith("StreamManager")
        and (hasattr(obj, "__enter__") or hasattr(obj, "__aenter__"))
    )


def event_stream(obj: object) -> SdkEvents | None:
    """How to read ``obj`` when it is an SDK's iterator of decoded events, else ``None``."""
    for events in _EVENT_STREAMS:
        if events.is_stream(obj):
            return events
    return None


def events_in(response: Mapping[Any, Any]) -> tuple[object, SdkEvents] | None:
    """The iterator of decoded events an SDK's response dict holds, and how to read it."""
    for events in _EVENT_STREAMS:
        for key in events.response_keys:
            found: object = response.get(key)
            if found is not None and events.is_stream(found):
                return found, events
    return None


def sdk_error(exc: BaseException) -> ProviderError | None:
    """An SDK exception an API classifies itself, as its :class:`ProviderError`."""
    for record in APIS.values():
        error = record.sdk.error(exc)
        if error is not None:
            return error
    return None


def error_payload(exc: BaseException) -> tuple[Mapping[str, Any], int | None] | None:
    """The error frame or body an SDK's exception was raised for, with the HTTP status
    when that was not 2xx (``None``: the error came inside a stream), else ``None``.

    Handing the frame itself to the normalizer gives the error the same bytes give.
    """
    for record in APIS.values():
        found = record.sdk.error_payload(exc)
        if found is not None:
            return found
    if module_root(exc) in _HOLDING_SDKS and isinstance(getattr(exc, "body", None), Mapping):
        body: Mapping[str, Any] = exc.body  # type: ignore[attr-defined]
        payload = body if "error" in body else {"error": body}
        return payload, non_2xx(getattr(exc, "status_code", None))
    return None
