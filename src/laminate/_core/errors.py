"""The error tree. Every error laminate raises derives from :class:`LaminateError`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .response import NormalizedResponse

__all__ = [
    "EnvelopeError",
    "ExtractError",
    "IncompleteStreamError",
    "LaminateError",
    "MalformedStreamError",
    "ProviderError",
    "StreamReadError",
    "StreamTimeoutError",
    "TranslationError",
    "UnknownProviderError",
]


class LaminateError(Exception):
    """Base class of every laminate error.

    ``partial`` is the :class:`NormalizedResponse` built from everything received
    before the failure (``None`` for errors that are not about a stream).
    """

    def __init__(self, message: str, *, partial: NormalizedResponse | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.partial = partial

    def __str__(self) -> str:
        return self.message


class ProviderError(LaminateError):
    """The provider reported an error: inside the stream or the body, or as an HTTP
    answer whose status is not 2xx.

    ``error_type`` is the provider's own type or code (``"http_error"`` for a non-2xx
    answer whose body says nothing readable), ``retryable`` whether retrying the same
    request may succeed (overload, rate limit, server error), ``raw`` the error payload
    as sent, and ``status_code`` the HTTP status of a non-2xx answer (``None`` for an
    error sent inside a stream or a 2xx body).
    """

    def __init__(
        self,
        message: str,
        *,
        error_type: str,
        retryable: bool,
        raw: Any = None,
        status_code: int | None = None,
        partial: NormalizedResponse | None = None,
    ) -> None:
        super().__init__(message, partial=partial)
        self.error_type = error_type
        self.retryable = retryable
        self.raw = raw
        self.status_code = status_code


class IncompleteStreamError(LaminateError):
    """The bytes ended before the provider signalled completion."""


class StreamReadError(LaminateError):
    """Reading the underlying response failed (connection dropped, reset, ...).

    The transport's own exception is the ``__cause__``.
    """


class StreamTimeoutError(StreamReadError):
    """No byte arrived within the configured idle timeout."""


class MalformedStreamError(LaminateError):
    """Bytes that are not the provider's framing or JSON.

    ``offset`` is the byte offset in the stream where the offending frame or line
    starts; ``snippet`` a short, printable excerpt of it.
    """

    def __init__(
        self,
        message: str,
        *,
        offset: int | None = None,
        snippet: str = "",
        partial: NormalizedResponse | None = None,
    ) -> None:
        super().__init__(message, partial=partial)
        self.offset = offset
        self.snippet = snippet

    def __str__(self) -> str:
        if self.offset is None:
            return self.message
        return f"{self.message} (at byte {self.offset}: {self.snippet!r})"


class UnknownProviderError(LaminateError):
    """The provider could not be detected; ``seen`` describes what was looked at."""

    def __init__(
        self, message: str, *, seen: str = "", partial: NormalizedResponse | None = None
    ) -> None:
        super().__init__(message, partial=partial)
        self.seen = seen


class ExtractError(LaminateError):
    """``FlexValue.extract`` failed at ``path`` (missing, or of the wrong type)."""

    def __init__(self, message: str, *, path: str, reason: str) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


class EnvelopeError(LaminateError):
    """An application envelope broke a rule: ``path`` names where, ``reason`` which rule."""

    def __init__(self, message: str, *, path: str, reason: str) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


class TranslationError(LaminateError):
    """A request could not be read or written: ``path`` names where in the body (``""``
    for the body itself), ``reason`` what is wrong (for a loss refused with
    ``strict=True``: the loss's reason, and ``losses`` every loss found)."""

    def __init__(
        self, message: str, *, path: str = "", reason: str = "", losses: list[Any] | None = None
    ) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason
        self.losses = list(losses or ())
