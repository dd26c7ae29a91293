"""google-genai's side of Gemini, recognised without importing it: its chunks are
Gemini's frames, and its ``APIError`` keeps the error body it was raised for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..base import module_root, non_2xx
from ..spec import Sdk

__all__ = ["SDK"]


def error_payload(exc: BaseException) -> tuple[Mapping[str, Any], int | None] | None:
    """The error body behind google-genai's ``APIError`` (``details``), with its status."""
    details = getattr(exc, "details", None)
    if module_root(exc) != "google" or not isinstance(details, Mapping):
        return None
    status = getattr(getattr(exc, "response", None), "status_code", None)
    payload = details if "error" in details else {"error": details}
    return payload, non_2xx(status)


SDK: Final = Sdk(
    modules=("google.genai", "vertexai"),
    accepted="google-genai chunk iterators",
    error_payload=error_payload,
)
