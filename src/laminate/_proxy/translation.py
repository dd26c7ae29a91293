"""The request translation the proxy applies between two different APIs (§10)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .._core.errors import LaminateError
from .._core.events import Event
from .._core.response import NormalizedResponse

__all__ = ["Translation", "TranslationUnavailable", "translate"]


class TranslationUnavailable(LaminateError):
    """This build of laminate cannot translate requests between these two APIs."""


class Translation(Protocol):
    """What the proxy uses of a translated request."""

    @property
    def body(self) -> dict[str, Any]: ...
    @property
    def path(self) -> str: ...
    def restore(self, event: Event) -> Event: ...
    def restore_response(self, response: NormalizedResponse) -> NormalizedResponse: ...


def translate(body: Mapping[str, Any], source: str, target: str, *, path: str) -> Translation:
    """``body``, a request of ``source`` sent to ``path``, as a request of ``target``."""
    raise TranslationUnavailable(f"requests are not translated from {source} to {target} yet")
