# Generated from CohereHandler._plain in cohere/read.py by
#     python -m laminate._apis.make_plain
# Do not edit: change _plain and run the command again (tests/test_plain.py fails
# while this file is not what the command writes).
"""CohereHandler's ``on_frame`` and ``run``, made from its ``_plain``."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import islice as _islice
from typing import TYPE_CHECKING, Any

from ..plain import hand_over as _hand_over

if TYPE_CHECKING:
    from .read import CohereHandler

__all__ = ["on_frame", "run"]


def on_frame(self: CohereHandler, name: str | None, obj: Any) -> None:
    """One parsed frame: a plain delta to the assembler, anything else
    ``_on_other``'s."""
    piece = None
    try:
        kind = obj["type"]
        index = obj["index"]
        message = obj["delta"]["message"]
        if kind == "content-delta":
            content = message["content"]
            piece = content["text"]
        elif kind == "tool-call-delta":
            piece = message["tool_calls"]["function"]["arguments"]
    except (KeyError, TypeError, IndexError):
        pass
    if piece.__class__ is not str or index.__class__ is not int:
        return self._on_other(name, obj)
    if kind == "tool-call-delta":
        self.assembler.tool_input(-1 - index, piece)
        return None
    if len(content) == 1:
        self.assembler.text(index, piece)
        return None
    return self._on_other(name, obj)


def run(
    self: CohereHandler, names: Sequence[str | None] | None, objs: Sequence[Any], start: int
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
        piece = None
        try:
            kind = obj["type"]
            index = obj["index"]
            message = obj["delta"]["message"]
            if kind == "content-delta":
                content = message["content"]
                piece = content["text"]
            elif kind == "tool-call-delta":
                piece = message["tool_calls"]["function"]["arguments"]
        except (KeyError, TypeError, IndexError):
            pass
        if piece.__class__ is not str or index.__class__ is not int:
            break
        if kind == "tool-call-delta":
            if kind_now is not False:
                kind_now = False
                changes.append((len(pieces), False))
            add_key(-1 - index)
            add_piece(piece)
            continue
        if len(content) == 1:
            if kind_now is not True:
                kind_now = True
                changes.append((len(pieces), True))
            add_key(index)
            add_piece(piece)
            continue
        break
    taken = _hand_over(self, start, pieces, keys, changes)
    if extras and taken > start:
        self._took(extras[: taken - start])
    return taken
