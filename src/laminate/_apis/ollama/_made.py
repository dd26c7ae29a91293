# Generated from OllamaHandler._plain in ollama/read.py by
#     python -m laminate._apis.make_plain
# Do not edit: change _plain and run the command again (tests/test_plain.py fails
# while this file is not what the command writes).
"""OllamaHandler's ``on_frame`` and ``run``, made from its ``_plain``."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import islice as _islice
from typing import TYPE_CHECKING, Any, Final

from ..plain import hand_over as _hand_over

if TYPE_CHECKING:
    from .read import OllamaHandler

_TEXT: Final = "text"

__all__ = ["on_frame", "run"]


def on_frame(self: OllamaHandler, name: str | None, obj: Any) -> None:
    """One parsed frame: a plain delta to the assembler, anything else
    ``_on_other``'s."""
    if obj.__class__ is not dict or self._think is not None or (not self.assembler.started):
        return self._on_other(name, obj)
    text = None
    try:
        message = obj["message"]
        if len(message) == 2 and "role" in message:
            text = message["content"]
    except (KeyError, TypeError, IndexError):
        pass
    if text.__class__ is not str or obj.get("error") or obj.get("done") is True:
        return self._on_other(name, obj)
    self.assembler.text(_TEXT, text)
    return None


def run(
    self: OllamaHandler, names: Sequence[str | None] | None, objs: Sequence[Any], start: int
) -> int:
    """The plain deltas from ``start`` on, each stretch of one block's pieces handed
    to the assembler in one call; the index of the first frame left to ``on_frame``."""
    pieces: list[str]
    keys: list[Hashable]
    changes: list[tuple[int, bool]]
    extras: list[Any]
    kind_now: bool | None
    pieces = []
    keys = []
    changes = []
    extras = []
    add_piece = pieces.append
    add_key = keys.append
    kind_now = None
    for obj in _islice(objs, start, None):
        if obj.__class__ is not dict or self._think is not None or (not self.assembler.started):
            break
        text = None
        try:
            message = obj["message"]
            if len(message) == 2 and "role" in message:
                text = message["content"]
        except (KeyError, TypeError, IndexError):
            pass
        if text.__class__ is not str or obj.get("error") or obj.get("done") is True:
            break
        if kind_now is not True:
            kind_now = True
            changes.append((len(pieces), True))
        add_key(_TEXT)
        add_piece(text)
        continue
    taken = _hand_over(self, start, pieces, keys, changes)
    if extras and taken > start:
        self._took(extras[: taken - start])
    return taken
