# Generated from BedrockHandler._plain in bedrock/read.py by
#     python -m laminate._apis.make_plain
# Do not edit: change _plain and run the command again (tests/test_plain.py fails
# while this file is not what the command writes).
"""BedrockHandler's ``on_frame`` and ``run``, made from its ``_plain``."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import islice as _islice
from typing import TYPE_CHECKING, Any

from ..plain import hand_over as _hand_over

if TYPE_CHECKING:
    from .read import BedrockHandler

_NO_NAME: str | None = None

__all__ = ["on_frame", "run"]


def on_frame(self: BedrockHandler, name: str | None, obj: Any) -> None:
    """One parsed frame: a plain delta to the assembler, anything else
    ``_on_other``'s."""
    plain_key: Hashable
    if name != "contentBlockDelta":
        return self._on_other(name, obj)
    piece = None
    try:
        delta = obj["delta"]
        key = obj["contentBlockIndex"]
        is_text = "text" in delta
        piece = delta["text"] if is_text else delta["toolUse"]["input"]
    except (KeyError, TypeError, IndexError):
        pass
    if piece.__class__ is not str or key.__class__ is not int or len(delta) != 1:
        return self._on_other(name, obj)
    if is_text:
        plain_key = key
        if not self._ready(plain_key, True):
            return self._on_other(name, obj)
        self.assembler.text(plain_key, piece)
        return None
    plain_key = key
    if not self._ready(plain_key, False):
        return self._on_other(name, obj)
    self.assembler.tool_input(plain_key, piece)
    return None


def run(
    self: BedrockHandler, names: Sequence[str | None] | None, objs: Sequence[Any], start: int
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
    if names is None:
        name = _NO_NAME
        for obj in _islice(objs, start, None):
            if name != "contentBlockDelta":
                break
            piece = None
            try:
                delta = obj["delta"]
                key = obj["contentBlockIndex"]
                is_text = "text" in delta
                piece = delta["text"] if is_text else delta["toolUse"]["input"]
            except (KeyError, TypeError, IndexError):
                pass
            if piece.__class__ is not str or key.__class__ is not int or len(delta) != 1:
                break
            if is_text:
                if kind_now is not True:
                    kind_now = True
                    changes.append((len(pieces), True))
                add_key(key)
                add_piece(piece)
                continue
            if kind_now is not False:
                kind_now = False
                changes.append((len(pieces), False))
            add_key(key)
            add_piece(piece)
            continue
    else:
        frames = zip(_islice(names, start, None), _islice(objs, start, None), strict=False)
        for name, obj in frames:
            if name != "contentBlockDelta":
                break
            piece = None
            try:
                delta = obj["delta"]
                key = obj["contentBlockIndex"]
                is_text = "text" in delta
                piece = delta["text"] if is_text else delta["toolUse"]["input"]
            except (KeyError, TypeError, IndexError):
                pass
            if piece.__class__ is not str or key.__class__ is not int or len(delta) != 1:
                break
            if is_text:
                if kind_now is not True:
                    kind_now = True
                    changes.append((len(pieces), True))
                add_key(key)
                add_piece(piece)
                continue
            if kind_now is not False:
                kind_now = False
                changes.append((len(pieces), False))
            add_key(key)
            add_piece(piece)
            continue
    taken = _hand_over(self, start, pieces, keys, changes)
    if extras and taken > start:
        self._took(extras[: taken - start])
    return taken
