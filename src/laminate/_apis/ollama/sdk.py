"""ollama-python's side of Ollama, recognised without importing it: its ``ChatResponse``
chunks are Ollama's frames, and its ``ResponseError`` stands for an error line or body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..base import module_root, non_2xx
from ..spec import Sdk

__all__ = ["SDK"]


def error_payload(exc: BaseException) -> tuple[Mapping[str, Any], int | None] | None:
    """The ``{"error": ...}`` line (status -1) or non-2xx body a ``ResponseError`` was
    raised for."""
    if module_root(exc) != "ollama" or type(exc).__name__ != "ResponseError":
        return None
    error = getattr(exc, "error", None) or str(exc)
    return {"error": error}, non_2xx(getattr(exc, "status_code", None))


SDK: Final = Sdk(
    modules=("ollama",), accepted="ollama chunk iterators", error_payload=error_payload
)
