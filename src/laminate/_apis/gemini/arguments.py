"""Vertex AI's streamed function-call arguments (``streamFunctionCallArguments``).

Vertex sends a call's arguments as ``partialArgs`` pieces, each a value addressed by an
RFC 9535 JSON path (``$.a.b[0]``), a string possibly in several pieces
(``willContinue``). :class:`ArgumentWriter` writes them as one linear JSON text, fragment
by fragment, so the live-argument views work as for every other API.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Final

from ..._core.assembler import Assembler
from ..._core.errors import MalformedStreamError
from ..base import shape_error

__all__ = ["ArgumentWriter", "parse_json_path"]

_SEGMENT: Final = re.compile(
    r"""\.([^.\[\]'"]+)|\[(\d+)\]|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]"""
)
_escape = json.JSONEncoder(ensure_ascii=False).encode


def parse_json_path(raw: str) -> tuple[str | int, ...]:
    """The keys and indexes of an RFC 9535 normalized path (``$.a.b[0]``, ``$['a b']``)."""
    if not raw.startswith("$"):
        raise MalformedStreamError(f"a partialArgs jsonPath that is not a path: {raw[:80]!r}")
    segments: list[str | int] = []
    pos = 1
    while pos < len(raw):
        match = _SEGMENT.match(raw, pos)
        if match is None:
            raise MalformedStreamError(f"an unreadable partialArgs jsonPath: {raw[:80]!r}")
        name, index, single, double = match.groups()
        if name is not None:
            segments.append(name)
        elif index is not None:
            segments.append(int(index))
        elif double is not None:
            segments.append(json.loads(f'"{double}"'))
        else:
            quoted = single.replace("\\'", "'").replace('"', '\\"')
            segments.append(json.loads(f'"{quoted}"'))
        pos = match.end()
    if not segments:
        raise MalformedStreamError("a partialArgs value for the arguments' root")
    return tuple(segments)


class _Container:
    """An object or array being written: how many members it has so far."""

    __slots__ = ("count", "is_array", "keys")

    def __init__(self, is_array: bool) -> None:
        self.is_array = is_array
        self.count = 0
        self.keys: set[str] = set()


class ArgumentWriter:
    """Vertex's ``partialArgs`` pieces, written as one linear JSON text.

    It keeps the containers that are open (the root object first) and the path leading
    to them. A piece at another path closes what that path leaves and opens what it
    enters; a string arriving in pieces is opened once, extended, and closed when its
    ``willContinue`` ends (or when the path moves on). A path that goes back to an
    element or a key already finished cannot be written linearly: that is an error,
    not a value silently replaced. Missing array elements before an index are ``null``.
    One ``tool_input`` fragment per ``functionCall`` part.
    """

    __slots__ = ("_asm", "_done", "_key", "_path", "_paths", "_stack", "_string")

    def __init__(self, assembler: Assembler, key: Hashable) -> None:
        self._asm = assembler
        self._key = key
        self._stack = [_Container(False)]
        self._path: list[str | int] = []  # the key of each open container below the root
        self._string: str | None = None  # the jsonPath of a string still open
        self._done: str | None = None  # the jsonPath of the string that just ended
        self._paths: dict[str, tuple[str | int, ...]] = {}
        assembler.tool_input(key, "{")

    def write(self, pieces: Any) -> None:
        if not isinstance(pieces, Sequence) or isinstance(pieces, str):
            raise shape_error("`partialArgs` is not a list")
        out: list[str] = []
        for piece in pieces:
            self._piece(piece, out)
        if out:
            self._asm.tool_input(self._key, "".join(out))

    def close(self) -> None:
        out: list[str] = []
        if self._string is not None:
            out.append('"')
            self._string = None
        out.extend("]" if container.is_array else "}" for container in reversed(self._stack))
        self._stack = []
        self._asm.tool_input(self._key, "".join(out))

    def _piece(self, piece: Any, out: list[str]) -> None:
        if not isinstance(piece, Mapping):
            raise shape_error("a partialArgs item is not an object")
        raw = piece.get("jsonPath")
        if not isinstance(raw, str):
            raise shape_error("a partialArgs item without a jsonPath")
        more = piece.get("willContinue") is True
        if "stringValue" in piece:
            value = piece["stringValue"]
            if not isinstance(value, str):
                raise shape_error("`stringValue` is not a string")
            if raw == self._string:  # the next piece of the open string
                out.append(_escape(value)[1:-1])
                if not more:
                    out.append('"')
                    self._string = None
                    self._done = raw
                return
            if raw == self._done and not value:
                return  # an empty last piece after the string already ended
            text = _escape(value)
            if more:
                text = text[:-1]  # left open for the next pieces
        elif "numberValue" in piece:
            number = piece["numberValue"]
            if isinstance(number, bool) or not isinstance(number, int | float):
                raise shape_error("`numberValue` is not a number")
            text = json.dumps(number)
        elif "boolValue" in piece:
            text = "true" if piece["boolValue"] is True else "false"
        elif "nullValue" in piece:
            text = "null"
        else:
            return  # a path with no value carries nothing to write
        if self._string is not None:
            out.append('"')
            self._string = None
        self._done = None
        path = self._paths.get(raw)
        if path is None:
            path = self._paths[raw] = parse_json_path(raw)
        self._enter(path, out)
        out.append(text)
        if "stringValue" in piece and more:
            self._string = raw

    def _enter(self, path: tuple[str | int, ...], out: list[str]) -> None:
        """Write what leads from the open containers to ``path``'s value."""
        stack = self._stack
        if not stack:
            raise MalformedStreamError("partialArgs after the call's arguments were closed")
        opened = self._path
        parent = len(path) - 1
        common = 0
        limit = min(len(opened), parent)
        while common < limit and opened[common] == path[common]:
            common += 1
        while len(opened) > common:
            opened.pop()
            out.append("]" if stack.pop().is_array else "}")
        for depth in range(common, parent):
            segment = path[depth]
            self._member(stack[-1], segment, out)
            is_array = path[depth + 1].__class__ is int
            out.append("[" if is_array else "{")
            stack.append(_Container(is_array))
            opened.append(segment)
        self._member(stack[-1], path[parent], out)

    def _member(self, container: _Container, segment: str | int, out: list[str]) -> None:
        count = container.count
        if container.is_array:
            if segment.__class__ is not int:
                raise MalformedStreamError(f"partialArgs key {segment!r} inside an array")
            index = int(segment)
            if index < count:
                raise MalformedStreamError(
                    f"partialArgs went back to array element {index} after it was finished"
                )
            while count < index:  # elements never sent: JSON arrays have no holes
                out.append(",null" if count else "null")
                count += 1
            if count:
                out.append(",")
        else:
            if segment.__class__ is not str:
                raise MalformedStreamError(f"partialArgs index {segment!r} inside an object")
            name = str(segment)
            if name in container.keys:
                raise MalformedStreamError(
                    f"partialArgs went back to key {name!r} after it was finished"
                )
            container.keys.add(name)
            if count:
                out.append(",")
            out.append(_escape(name))
            out.append(":")
        container.count = count + 1
