# Generated from OpenAIChatHandler._plain in openai_chat/read.py by
#     python -m laminate._apis.make_plain
# Do not edit: change _plain and run the command again (tests/test_plain.py fails
# while this file is not what the command writes).
"""OpenAIChatHandler's ``on_frame`` and ``run``, made from its ``_plain``."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import islice as _islice
from typing import TYPE_CHECKING, Any, Final

from ..plain import hand_over as _hand_over

if TYPE_CHECKING:
    from .read import OpenAIChatHandler

_TEXT: Final = "text"

_NO_NAME: str | None = None

__all__ = ["on_frame", "run"]


def on_frame(self: OpenAIChatHandler, name: str | None, obj: Any) -> None:
    """One parsed frame: a plain delta to the assembler, anything else
    ``_on_other``'s."""
    plain_key: Hashable
    key: Hashable
    if not self._identified or self._think is not None:
        return self._on_other(name, obj)
    wanted = self._choice
    calls = self._calls.by_index
    if name is not None:
        return self._on_other(name, obj)
    piece = None
    try:
        choices = obj["choices"]
        choice = choices[0]
        delta = choice["delta"]
        if "content" in delta:
            key = _TEXT
            piece = delta["content"]
        else:
            elements = delta["tool_calls"]
            element = elements[0]
            function = element["function"]
            key = calls[element["index"]].key
            piece = function["arguments"]
    except (KeyError, TypeError, IndexError):
        pass
    if (
        piece.__class__ is not str
        or obj.__class__ is not dict
        or "error" in obj
        or obj.get("usage")
        or (choices.__class__ is not list)
        or (len(choices) != 1)
        or (choice.__class__ is not dict)
        or choice.get("finish_reason")
        or (delta.__class__ is not dict)
        or (len(delta) != 1)
    ):
        return self._on_other(name, obj)
    index = choice.get("index", 0)
    if index.__class__ is not int or index != wanted:
        return self._on_other(name, obj)
    if key is _TEXT:
        plain_key = _TEXT
        if not self._ready(plain_key, True):
            return self._on_other(name, obj)
        self.assembler.text(plain_key, piece)
        return None
    if (
        elements.__class__ is list
        and len(elements) == 1
        and (element.__class__ is dict)
        and (len(element) == 2)
        and (function.__class__ is dict)
        and (len(function) == 1)
    ):
        plain_key = key
        if not self._ready(plain_key, False):
            return self._on_other(name, obj)
        self.assembler.tool_input(plain_key, piece)
        return None
    return self._on_other(name, obj)


def run(
    self: OpenAIChatHandler, names: Sequence[str | None] | None, objs: Sequence[Any], start: int
) -> int:
    """The plain deltas from ``start`` on, each stretch of one block's pieces handed
    to the assembler in one call; the index of the first frame left to ``on_frame``."""
    pieces: list[str]
    keys: list[Hashable]
    changes: list[tuple[int, bool]]
    extras: list[Any]
    kind_now: bool | None
    key: Hashable
    if not self._identified or self._think is not None:
        return start
    wanted = self._choice
    calls = self._calls.by_index
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
            if name is not None:
                break
            piece = None
            try:
                choices = obj["choices"]
                choice = choices[0]
                delta = choice["delta"]
                if "content" in delta:
                    key = _TEXT
                    piece = delta["content"]
                else:
                    elements = delta["tool_calls"]
                    element = elements[0]
                    function = element["function"]
                    key = calls[element["index"]].key
                    piece = function["arguments"]
            except (KeyError, TypeError, IndexError):
                pass
            if (
                piece.__class__ is not str
                or obj.__class__ is not dict
                or "error" in obj
                or obj.get("usage")
                or (choices.__class__ is not list)
                or (len(choices) != 1)
                or (choice.__class__ is not dict)
                or choice.get("finish_reason")
                or (delta.__class__ is not dict)
                or (len(delta) != 1)
            ):
                break
            index = choice.get("index", 0)
            if index.__class__ is not int or index != wanted:
                break
            if key is _TEXT:
                if kind_now is not True:
                    kind_now = True
                    changes.append((len(pieces), True))
                add_key(_TEXT)
                add_piece(piece)
                continue
            if (
                elements.__class__ is list
                and len(elements) == 1
                and (element.__class__ is dict)
                and (len(element) == 2)
                and (function.__class__ is dict)
                and (len(function) == 1)
            ):
                if kind_now is not False:
                    kind_now = False
                    changes.append((len(pieces), False))
                add_key(key)
                add_piece(piece)
                continue
            break
    else:
        frames = zip(_islice(names, start, None), _islice(objs, start, None), strict=False)
        for name, obj in frames:
            if name is not None:
                break
            piece = None
            try:
                choices = obj["choices"]
                choice = choices[0]
                delta = choice["delta"]
                if "content" in delta:
                    key = _TEXT
                    piece = delta["content"]
                else:
                    elements = delta["tool_calls"]
                    element = elements[0]
                    function = element["function"]
                    key = calls[element["index"]].key
                    piece = function["arguments"]
            except (KeyError, TypeError, IndexError):
                pass
            if (
                piece.__class__ is not str
                or obj.__class__ is not dict
                or "error" in obj
                or obj.get("usage")
                or (choices.__class__ is not list)
                or (len(choices) != 1)
                or (choice.__class__ is not dict)
                or choice.get("finish_reason")
                or (delta.__class__ is not dict)
                or (len(delta) != 1)
            ):
                break
            index = choice.get("index", 0)
            if index.__class__ is not int or index != wanted:
                break
            if key is _TEXT:
                if kind_now is not True:
                    kind_now = True
                    changes.append((len(pieces), True))
                add_key(_TEXT)
                add_piece(piece)
                continue
            if (
                elements.__class__ is list
                and len(elements) == 1
                and (element.__class__ is dict)
                and (len(element) == 2)
                and (function.__class__ is dict)
                and (len(function) == 1)
            ):
                if kind_now is not False:
                    kind_now = False
                    changes.append((len(pieces), False))
                add_key(key)
                add_piece(piece)
                continue
            break
    taken = _hand_over(self, start, pieces, keys, changes)
    if extras and taken > start:
        self._took(extras[: taken - start])
    return taken
