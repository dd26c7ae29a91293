# Generated from GeminiHandler._plain in gemini/read.py by
#     python -m laminate._apis.make_plain
# Do not edit: change _plain and run the command again (tests/test_plain.py fails
# while this file is not what the command writes).
"""GeminiHandler's ``on_frame`` and ``run``, made from its ``_plain``."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import islice as _islice
from typing import TYPE_CHECKING, Any, Final

from ..plain import hand_over as _hand_over

if TYPE_CHECKING:
    from .read import GeminiHandler

_TEXT: Final = 0

__all__ = ["on_frame", "run"]


def on_frame(self: GeminiHandler, name: str | None, obj: Any) -> None:
    """One parsed frame: a plain delta to the assembler, anything else
    ``_on_other``'s."""
    if self._kind != _TEXT or not self.assembler.started:
        return self._on_other(name, obj)
    text = None
    try:
        candidates = obj["candidates"]
        candidate = candidates[0]
        content = candidate["content"]
        index = candidate["index"]
        parts = content["parts"]
        part = parts[0]
        text = part["text"]
    except (KeyError, TypeError, IndexError):
        pass
    if (
        text.__class__ is not str
        or obj.__class__ is not dict
        or "error" in obj
        or obj.get("promptFeedback")
        or (candidates.__class__ is not list)
        or (len(candidates) != 1)
        or (candidate.__class__ is not dict)
        or (len(candidate) != 2)
        or (index.__class__ is not int)
        or (index != self._choice)
        or (content.__class__ is not dict)
        or (parts.__class__ is not list)
        or (len(parts) != 1)
        or (part.__class__ is not dict)
        or (len(part) != 1)
    ):
        return self._on_other(name, obj)
    usage = obj.get("usageMetadata")
    if usage and usage.__class__ is not dict:
        return self._on_other(name, obj)
    self.assembler.text(self._key, text)
    self._took([usage])
    return None


def run(
    self: GeminiHandler, names: Sequence[str | None] | None, objs: Sequence[Any], start: int
) -> int:
    """The plain deltas from ``start`` on, each stretch of one block's pieces handed
    to the assembler in one call; the index of the first frame left to ``on_frame``."""
    pieces: list[str]
    keys: list[Hashable]
    changes: list[tuple[int, bool]]
    extras: list[Any]
    kind_now: bool | None
    if self._kind != _TEXT or not self.assembler.started:
        return start
    pieces = []
    keys = []
    changes = []
    extras = []
    add_piece = pieces.append
    add_key = keys.append
    add_extra = extras.append
    kind_now = None
    for obj in _islice(objs, start, None):
        text = None
        try:
            candidates = obj["candidates"]
            candidate = candidates[0]
            content = candidate["content"]
            index = candidate["index"]
            parts = content["parts"]
            part = parts[0]
            text = part["text"]
        except (KeyError, TypeError, IndexError):
            pass
        if (
            text.__class__ is not str
            or obj.__class__ is not dict
            or "error" in obj
            or obj.get("promptFeedback")
            or (candidates.__class__ is not list)
            or (len(candidates) != 1)
            or (candidate.__class__ is not dict)
            or (len(candidate) != 2)
            or (index.__class__ is not int)
            or (index != self._choice)
            or (content.__class__ is not dict)
            or (parts.__class__ is not list)
            or (len(parts) != 1)
            or (part.__class__ is not dict)
            or (len(part) != 1)
        ):
            break
        usage = obj.get("usageMetadata")
        if usage and usage.__class__ is not dict:
            break
        if kind_now is not True:
            kind_now = True
            changes.append((len(pieces), True))
        add_key(self._key)
        add_piece(text)
        add_extra(usage)
        continue
    taken = _hand_over(self, start, pieces, keys, changes)
    if extras and taken > start:
        self._took(extras[: taken - start])
    return taken
