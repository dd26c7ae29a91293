"""FlexValue: a navigable, read-only view over parsed JSON.

Paths
-----
A path names a value inside the view. It is either a sequence of steps (``["a", 0]``:
a ``str`` reads a key of an object, an ``int`` an index of an array, negative indexes
counting from the end) or a string in this grammar::

    path   = "" | first step*
    first  = key | index | quoted
    step   = "." key | index | quoted
    key    = one or more characters other than ".", "[" and "]"
    index  = "[" ["-"] digit+ "]"
    quoted = "[" JSON string "]"            e.g.  ["a.b"]  or  [""]

``""`` and ``()`` are the root. ``"a.b[0].c"`` is ``["a", "b", 0, "c"]``; ``"a.0"`` reads
the key ``"0"`` (indexes are always in brackets); a key holding a dot is reached with the
quoted form or the sequence form. A path that breaks the grammar (``"a[x]"``, ``"a..b"``,
``".a"``) raises :class:`MalformedPathError`, which is both an ``ExtractError`` (reason
``"malformed path: ..."``) and a ``ValueError``.

Errors and change records name paths in the same form, so they can be fed back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any, TypeAlias, TypeVar, overload

from .coerce import Change, Step, coerce, format_path
from .errors import ExtractError

__all__ = ["FlexValue", "MalformedPathError", "PathLike", "parse_path"]

T = TypeVar("T")
PathLike: TypeAlias = str | Sequence[Step]


class MalformedPathError(ExtractError, ValueError):
    """A path that does not follow the grammar: a mistake in the caller's code."""


class FlexValue:
    """A read-only view over parsed JSON (``dict``, ``list``, ``str``, ``int``, ``float``,
    ``bool`` or ``None``).

    Nothing is copied: ``value`` is the object the view was built on, shared with every
    ``FlexValue`` taken from it, and must not be mutated. ``fv["key"]`` and ``fv[0]`` give
    a ``FlexValue`` (raising ``KeyError`` / ``IndexError`` as a dict or a list would);
    ``in``, ``len`` and iteration work on objects (over keys) and arrays (over
    ``FlexValue`` items). Two views are equal when their values are. A view is not
    hashable, since what it wraps is mutable.
    """

    __slots__ = ("_value",)
    _value: Any

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, value: Any) -> None:
        self._value = value._value if isinstance(value, FlexValue) else value

    @property
    def value(self) -> Any:
        """The plain Python object (shared, not copied: do not mutate it)."""
        return self._value

    # -- navigation -----------------------------------------------------------------------

    def get(self, path: PathLike, default: Any = None) -> Any:
        """The plain value at ``path``, or ``default`` when the path leads nowhere (a key
        or index that is not there, or a step into a value that is not a container)."""
        steps = parse_path(path)
        try:
            return _walk(self._value, steps)
        except ExtractError:
            return default

    @overload
    def extract(self, path: PathLike, type: type[T], *, strict: bool = ...) -> T: ...
    @overload
    def extract(self, path: PathLike = ..., *, type: type[T], strict: bool = ...) -> T: ...
    @overload
    def extract(self, path: PathLike = ..., type: Any = ..., *, strict: bool = ...) -> Any: ...

    def extract(self, path: PathLike = "", type: Any = Any, *, strict: bool = False) -> Any:
        """The value at ``path`` converted to ``type``.

        Forgiving unless ``strict``: ``"5"`` becomes ``5`` for an ``int``, ``"2.5"``
        becomes ``2.5`` for a ``float``, ``"true"`` / ``"false"`` become booleans and a
        number becomes a ``str``; never at a loss (``"5.7"`` is not an ``int``). See
        :func:`laminate._coerce.coerce` for the types understood.

        Raises ``ExtractError`` whose ``path`` names the failing spot and whose
        ``reason`` is ``"missing"`` or starts with ``"wrong type:"`` (or ``"invalid:"``
        when a dataclass refused the values).
        """
        return self.extract_with_changes(path, type, strict=strict)[0]

    @overload
    def extract_with_changes(
        self, path: PathLike, type: type[T], *, strict: bool = ...
    ) -> tuple[T, list[Change]]: ...
    @overload
    def extract_with_changes(
        self, path: PathLike = ..., *, type: type[T], strict: bool = ...
    ) -> tuple[T, list[Change]]: ...
    @overload
    def extract_with_changes(
        self, path: PathLike = ..., type: Any = ..., *, strict: bool = ...
    ) -> tuple[Any, list[Change]]: ...

    def extract_with_changes(
        self, path: PathLike = "", type: Any = Any, *, strict: bool = False
    ) -> tuple[Any, list[Change]]:
        """Like :meth:`extract`, and also every coercion made, as ``Change(path, before,
        after)`` records in document order (none when ``strict``)."""
        steps = parse_path(path)
        return coerce(_walk(self._value, steps), type, strict=strict, path=format_path(steps))

    # -- the container protocol -----------------------------------------------------------

    def __getitem__(self, key: Step) -> FlexValue:
        value = self._value
        if isinstance(key, bool):
            raise TypeError("FlexValue indexes are str keys or int indexes, not bool")
        # KeyError, IndexError or TypeError, as a dict or a list would raise them.
        if isinstance(value, dict):
            return FlexValue(value[key])
        if isinstance(value, list) and isinstance(key, int):
            return FlexValue(value[key])
        if isinstance(value, list):
            raise TypeError(f"list indices must be integers, not {type(key).__name__}")
        raise TypeError(f"FlexValue over {type(value).__name__} is not subscriptable")

    def __contains__(self, item: object) -> bool:
        return _unflex(item) in self._container("in")

    def __len__(self) -> int:
        return len(self._container("len()"))

    def __iter__(self) -> Iterator[Any]:
        value = self._container("iteration")
        if isinstance(value, list):
            return map(FlexValue, value)
        return iter(value)

    def _container(self, operation: str) -> dict[str, Any] | list[Any]:
        if isinstance(self._value, dict | list):
            return self._value
        name = type(self._value).__name__
        raise TypeError(f"{operation} needs a FlexValue over a dict or a list, not {name}")

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FlexValue):
            return bool(self._value == other._value)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FlexValue({self._value!r})"


def _unflex(item: object) -> object:
    return item._value if isinstance(item, FlexValue) else item


# --- paths -------------------------------------------------------------------------------

_FIRST_KEY = re.compile(r"[^.\[\]]+")
_STEP = re.compile(
    r'\.(?P<key>[^.\[\]]+)|\[(?P<index>-?[0-9]+)\]|\[(?P<quoted>"(?:[^"\\]|\\.)*")\]'
)


def parse_path(path: PathLike) -> tuple[Step, ...]:
    """The steps of ``path`` (see the module's grammar); raises ``MalformedPathError``."""
    if isinstance(path, str):
        return _parse_string(path)
    if isinstance(path, Sequence) and not isinstance(path, bytes | bytearray):
        steps = tuple(path)
        for step in steps:
            if isinstance(step, bool) or not isinstance(step, str | int):
                raise _malformed(path, f"step {step!r} is neither a str key nor an int index")
        return steps
    raise _malformed(path, "expected a str or a sequence of keys and indexes")


def _parse_string(path: str) -> tuple[Step, ...]:
    steps: list[Step] = []
    pos = 0
    if path and not path.startswith("["):
        first = _FIRST_KEY.match(path)
        if first is None:
            raise _malformed(path, "it starts with '.'")
        steps.append(first.group())
        pos = first.end()
    while pos < len(path):
        match = _STEP.match(path, pos)
        if match is None:
            raise _malformed(path, f"unexpected {path[pos : pos + 10]!r} at offset {pos}")
        if match["key"] is not None:
            steps.append(match["key"])
        elif match["index"] is not None:
            steps.append(int(match["index"]))
        else:
            try:
                steps.append(json.loads(match["quoted"]))
            except json.JSONDecodeError as exc:
                raise _malformed(path, f"bad quoted key at offset {pos}: {exc.msg}") from None
        pos = match.end()
    return tuple(steps)


def _malformed(path: object, why: str) -> MalformedPathError:
    reason = f"malformed path: {why}"
    return MalformedPathError(f"{path!r}: {reason}", path=str(path), reason=reason)


def _walk(value: Any, steps: tuple[Step, ...]) -> Any:
    """The value ``steps`` lead to; ``ExtractError`` naming the first step that fails."""
    for depth, step in enumerate(steps):
        if isinstance(step, str) and isinstance(value, dict):
            if step not in value:
                raise _missing(steps[: depth + 1], f"no key {step!r}")
            value = value[step]
        elif isinstance(step, int) and isinstance(value, list):
            if not -len(value) <= step < len(value):
                raise _missing(steps[: depth + 1], f"index out of range ({len(value)} items)")
            value = value[step]
        else:
            where = format_path(steps[:depth])
            expected = f"dict with key {step!r}" if isinstance(step, str) else "list"
            reason = f"wrong type: expected {expected}, got {_kind(value)}"
            raise ExtractError(f"{where or '<root>'}: {reason}", path=where, reason=reason)
    return value


def _missing(steps: tuple[Step, ...], detail: str) -> ExtractError:
    where = format_path(steps)
    return ExtractError(f"{where}: missing ({detail})", path=where, reason="missing")


def _kind(value: Any) -> str:
    return "None" if value is None else type(value).__name__
