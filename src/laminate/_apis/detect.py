"""Which provider sent these bytes: from a response's URL and content type, or from
the first frames themselves. Each API says what is its own (its record's ``matches_*``);
this module asks them in the registry's order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._core.errors import UnknownProviderError
from .base import bare_error
from .registry import APIS

__all__ = [
    "body_provider",
    "describe",
    "provider_from_body",
    "provider_from_frame",
    "provider_from_url",
]


def provider_from_url(path: str) -> str | None:
    """The provider named by an endpoint path, if it is a well-known one."""
    path = path.rstrip("/")
    return next((name for name, api in APIS.items() if api.hints.matches_url(path)), None)


def provider_from_frame(event: str | None, obj: Any) -> str | None:
    """The provider whose frame this is, or ``None`` when this frame does not tell."""
    if not isinstance(obj, Mapping):
        return None
    return next((name for name, api in APIS.items() if api.hints.matches_frame(event, obj)), None)


def describe(event: str | None, data: str) -> str:
    """A short account of a frame for an error message."""
    text = data if len(data) <= 120 else data[:117] + "..."
    return f"event {event!r} data {text!r}" if event else f"data {text!r}"


def provider_from_body(data: Mapping[str, Any]) -> str | None:
    """The provider of a complete (non-streaming) body, from its shape (which fields it
    has, never their order); ``None`` when no API claims it. A body that two APIs claim
    is not guessed at: it is an :class:`UnknownProviderError` naming them."""
    claims = [name for name, api in APIS.items() if api.hints.matches_body(data)]
    if len(claims) > 1:
        keys = ", ".join(sorted(map(str, data))[:8])
        raise UnknownProviderError(
            f"a body with keys {keys} has the shape of more than one API "
            f"({', '.join(claims)}); pass provider=...",
            seen=keys,
        )
    return claims[0] if claims else None


def body_provider(data: Mapping[str, Any]) -> str:
    """The provider of a complete body; a body that is only an error (an ``error``
    object, an AWS error) raises as the error it is,
    anything else unrecognised as :class:`UnknownProviderError`."""
    provider = provider_from_body(data)
    if provider is not None:
        return provider
    error = bare_error(data)
    if error is not None:
        raise error
    keys = ", ".join(sorted(map(str, data))[:8])
    raise UnknownProviderError(
        f"could not detect the provider of a body with keys: {keys}", seen=keys
    )
