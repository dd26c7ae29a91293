# Generated from OpenAIResponsesHandler._plain in openai_responses/read.py by
#     python -m laminate._apis.make_plain
# Do not edit: change _plain and run the command again (tests/test_plain.py fails
# while this file is not what the command writes).
"""OpenAIResponsesHandler's ``on_frame`` and ``run``, made from its ``_plain``."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import islice as _islice
from typing import TYPE_CHECKING, Any

from ..plain import hand_over as _hand_over

if TYPE_CHECKING:
    from .read import OpenAIResponsesHandler

__all__ = ["on_frame", "run"]


def on_frame(self: OpenAIResponsesHandler, name: str | None, obj: Any) -> None:
    """One parsed frame: a plain delta to the assembler, anything else
    ``_on_other``'s."""
    plain_key: Hashable
    items = self._items
    piece = None
    try:
        kind = obj["type"]
        index = obj["output_index"]
        if kind == "response.output_text.delta":
            sub = obj["content_index"]
            text = True
            key = items[index].parts[sub]
            piece = obj["delta"]
        elif kind == "response.function_call_arguments.delta":
            text = False
            key = index
            piece = obj["delta"]
    except (KeyError, TypeError, IndexError):
        pass
    if piece.__class__ is not str or index.__class__ is not int or obj.__class__ is not dict:
        return self._on_other(name, obj)
    if not text:
        plain_key = key
        if not self._ready(plain_key, False):
            return self._on_other(name, obj)
        self.assembler.tool_input(plain_key, piece)
        return None
    if sub.__class__ is int:
        plain_key = key
        if not self._ready(plain_key, True):
            return self._on_other(name, obj)
        self.assembler.text(plain_key, piece)
        return None
    return self._on_other(name, obj)


def run(
    self: OpenAIResponsesHandler,
    names: Sequence[str | None] | None,
    objs: Sequence[Any],
    start: int,
) -> int:
    """The plain deltas from ``start`` on, each stretch of one block's pieces handed
    to the assembler in one call; the index of the first frame left to ``on_frame``."""
    pieces: list[str]
    keys: list[Hashable]
    changes: list[tuple[int, bool]]
    extras: list[Any]
    kind_now: bool | None
    items = self._items
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
            index = obj["output_index"]
            if kind == "response.output_text.delta":
                sub = obj["content_index"]
                text = True
                key = items[index].parts[sub]
                piece = obj["delta"]
            elif kind == "response.function_call_arguments.delta":
                text = False
                key = index
                piece = obj["delta"]
        except (KeyError, TypeError, IndexError):
            pass
        if piece.__class__ is not str or index.__class__ is not int or obj.__class__ is not dict:
            break
        if not text:
            if kind_now is not False:
                kind_now = False
                changes.append((len(pieces), False))
            add_key(key)
            add_piece(piece)
            continue
        if sub.__class__ is int:
            if kind_now is not True:
                kind_now = True
                changes.append((len(pieces), True))
            add_key(key)
            add_piece(piece)
            continue
        break
    taken = _hand_over(self, start, pieces, keys, changes)
    if extras and taken > start:
        self._took(extras[: taken - start])
    return taken
