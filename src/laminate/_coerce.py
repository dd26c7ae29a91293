"""Conversion of parsed JSON into annotated Python types: forgiving, never lossy.

:func:`coerce` is the one entry point. ``FlexValue.extract`` uses it, and so can anything
else that turns JSON arguments into typed Python values (a tool registry converting a
call's arguments into a function's parameter types). It supports:

* ``Any`` and ``object`` (the value as it is), ``None``, ``bool``, ``int``, ``float``, ``str``;
* ``list[T]`` (and ``Sequence[T]``), ``tuple[T, ...]``, ``tuple[A, B]``,
  ``dict[str, T]`` (and ``Mapping[str, T]``), bare ``list`` / ``dict`` / ``tuple``;
* ``A | B``, ``Optional[T]``, ``Literal[...]``, ``enum.Enum`` subclasses (by value);
* dataclasses and ``TypedDict`` (extra keys ignored, missing required ones reported);
* ``Annotated[T, ...]`` and ``NewType`` (read as ``T``).

Anything else is a programming error and raises ``TypeError``. Data that does not fit
raises :class:`~laminate.ExtractError`.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import json
import math
import re
import reprlib
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, Union, get_args, get_origin

from ._errors import ExtractError

__all__ = ["Change", "coerce", "format_path"]

Step: TypeAlias = str | int
# The location of the value being converted, as a linked list from the innermost step
# outwards: each child costs O(1), and a path string is only built for an error or a change.
_Loc: TypeAlias = "tuple[_Loc, Step] | None"


@dataclass(frozen=True, slots=True)
class Change:
    """One coercion made while converting: the value at ``path`` went from ``before`` to
    ``after`` (``after`` is the value as it appears in the result)."""

    path: str
    before: Any
    after: Any

    def __str__(self) -> str:
        return f"{self.path or '<root>'}: {_show(self.before)} -> {_show(self.after)}"


def coerce(
    value: Any, tp: Any, *, strict: bool = False, path: str = ""
) -> tuple[Any, list[Change]]:
    """Convert ``value`` (parsed JSON) to the type ``tp``.

    Returns the converted value and the coercions it took, in document order. With
    ``strict=True`` only exact JSON types are accepted (an ``int`` still counts as a
    ``float``) and the list of changes is always empty. ``path`` names where ``value``
    sits (``"filters[0]"``); it prefixes the paths of errors and changes.

    Raises :class:`~laminate.ExtractError` when the data does not fit (``reason`` is
    ``"missing"`` or starts with ``"wrong type:"`` or ``"invalid:"``), and ``TypeError``
    when ``tp`` is not a supported annotation.
    """
    converter = _Converter(_STRICT if strict else _LAX)
    try:
        result = converter.convert(value, tp, None)
    except _Mismatch as exc:
        where = format_path(_steps(exc.loc), prefix=path)
        message = f"{where or '<root>'}: {exc.reason}"
        raise ExtractError(message, path=where, reason=exc.reason) from None
    changes = [
        Change(format_path(_steps(loc), prefix=path), before, after)
        for loc, before, after in converter.changes
    ]
    return result, changes


# --- paths -------------------------------------------------------------------------------

_BARE_KEY = re.compile(r"[^.\[\]]+")


def format_path(steps: Iterable[Step], *, prefix: str = "") -> str:
    """The dotted form of ``steps``: ``a.b[0].c``; keys that the dotted form cannot hold
    (empty, or containing ``.``, ``[`` or ``]``) are written ``["a.b"]``."""
    parts = [prefix]
    for step in steps:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif _BARE_KEY.fullmatch(step):
            parts.append(f".{step}" if parts[-1] else step)
        else:
            parts.append(f"[{json.dumps(step, ensure_ascii=False)}]")
    return "".join(parts)


def _steps(loc: _Loc) -> list[Step]:
    steps: list[Step] = []
    while loc is not None:
        loc, step = loc
        steps.append(step)
    steps.reverse()
    return steps


def _depth(loc: _Loc) -> int:
    depth = 0
    while loc is not None:
        loc = loc[0]
        depth += 1
    return depth


# --- failures ----------------------------------------------------------------------------


class _Mismatch(Exception):
    """Internal failure: cheap to raise while a union tries its members."""

    def __init__(self, loc: _Loc, reason: str) -> None:
        super().__init__(reason)
        self.loc = loc
        self.reason = reason


class _Reject(Exception):
    """A scalar did not convert; ``args[0]``, if any, says why beyond the type."""


def _wrong_type(loc: _Loc, expected: str, value: Any, detail: str = "") -> _Mismatch:
    reason = f"wrong type: expected {expected}, got {_preview(value)}"
    return _Mismatch(loc, f"{reason} ({detail})" if detail else reason)


_repr = reprlib.Repr()
_repr.maxstring = 40
_repr.maxother = 40
_repr.maxlist = _repr.maxdict = 4
_repr.maxlevel = 2


def _preview(value: Any) -> str:
    if value is None:
        return "None"
    return f"{type(value).__name__} {_repr.repr(value)}"


def _show(value: Any) -> str:
    if value is None or isinstance(value, bool | int | float | str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def describe(tp: Any) -> str:
    """A short, readable name for the annotation ``tp`` (``list[int]``, ``int | None``)."""
    tp = _unwrap(tp)
    if tp is None or tp is types.NoneType:
        return "None"
    if tp is Any:
        return "Any"
    origin, args = get_origin(tp), get_args(tp)
    if origin is Union or origin is types.UnionType:
        return " | ".join(describe(arg) for arg in args)
    if origin is Literal:
        return f"Literal[{', '.join(map(repr, args))}]"
    if origin is not None and args:
        inner = ", ".join("..." if arg is Ellipsis else describe(arg) for arg in args)
        return f"{getattr(origin, '__name__', repr(origin))}[{inner}]"
    return getattr(tp, "__name__", repr(tp))


# --- scalars -----------------------------------------------------------------------------

# How far a conversion may go. Unions try their members at each level in turn, so an exact
# match wins over a conversion (``float | int`` keeps ``5`` an ``int``).
_EXACT, _STRICT, _LAX = 0, 1, 2

_INTEGER = re.compile(r"[+-]?[0-9]+(?:\.0*)?")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _to_none(value: Any, mode: int) -> tuple[Any, bool]:
    if value is None:
        return None, False
    raise _Reject


def _to_bool(value: Any, mode: int) -> tuple[Any, bool]:
    if isinstance(value, bool):
        return value, False
    if mode == _LAX and isinstance(value, str):
        word = value.strip().lower()
        if word in ("true", "false"):
            return word == "true", True
    # Numbers are never booleans: JSON keeps the two apart, and so does laminate.
    raise _Reject


def _to_int(value: Any, mode: int) -> tuple[Any, bool]:
    if isinstance(value, int) and not isinstance(value, bool):
        return value, False
    if mode == _LAX and isinstance(value, float):
        if value.is_integer():
            return int(value), True
        raise _Reject("not a whole number")
    if mode == _LAX and isinstance(value, str):
        text = value.strip()
        if _INTEGER.fullmatch(text):
            try:
                return int(text.partition(".")[0]), True
            except ValueError:  # beyond the interpreter's limit on integer digits
                raise _Reject("too many digits") from None
        if _NUMBER.fullmatch(text):
            exponent = "e" in text or "E" in text
            raise _Reject("not an integer literal" if exponent else "not a whole number")
    raise _Reject


def _to_float(value: Any, mode: int) -> tuple[Any, bool]:
    if isinstance(value, float):
        return value, False
    if mode >= _STRICT and _is_number(value):
        # JSON has one number type, so an int is a float already; it must fit exactly.
        try:
            number = float(value)
        except OverflowError:
            raise _Reject("out of range") from None
        if number != value:
            raise _Reject("not exactly representable as a float")
        return number, False
    if mode == _LAX and isinstance(value, str):
        text = value.strip()
        if _NUMBER.fullmatch(text):
            number = float(text)
            if math.isinf(number):
                raise _Reject("out of range")
            return number, True
    raise _Reject


def _to_str(value: Any, mode: int) -> tuple[Any, bool]:
    if isinstance(value, str):
        return value, False
    if mode == _LAX and _is_number(value):
        try:
            return str(value), True
        except ValueError:  # beyond the interpreter's limit on integer digits
            raise _Reject("too many digits") from None
    raise _Reject


_Scalar: TypeAlias = Callable[[Any, int], tuple[Any, bool]]
_SCALARS: dict[Any, _Scalar] = {
    types.NoneType: _to_none,
    bool: _to_bool,
    int: _to_int,
    float: _to_float,
    str: _to_str,
}


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same type: ``True`` is not ``1``, ``1.0`` is not ``1``."""
    return type(a) is type(b) and bool(a == b)


# --- annotations -------------------------------------------------------------------------

_LIST_ORIGINS = frozenset({list, collections.abc.Sequence, collections.abc.MutableSequence})
_DICT_ORIGINS = frozenset({dict, collections.abc.Mapping, collections.abc.MutableMapping})
_KEY_WRAPPERS = frozenset(
    filter(None, (typing.Required, typing.NotRequired, getattr(typing, "ReadOnly", None)))
)


def _unwrap(tp: Any) -> Any:
    """Strip what does not change the runtime value: ``Annotated`` and ``NewType``."""
    while True:
        if get_origin(tp) is typing.Annotated:
            tp = get_args(tp)[0]
        elif isinstance(tp, typing.NewType):
            tp = tp.__supertype__
        else:
            return tp


def _is_typeddict(tp: Any) -> bool:
    # Duck-typed so that ``typing_extensions.TypedDict`` classes are recognised too.
    return (
        isinstance(tp, type)
        and issubclass(tp, dict)
        and hasattr(tp, "__required_keys__")
        and hasattr(tp, "__optional_keys__")
    )


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    tp: Any
    required: bool


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:  # NameError and friends: the class cannot be described
        raise TypeError(f"cannot resolve the annotations of {cls.__qualname__}: {exc}") from exc


@functools.lru_cache(maxsize=256)
def _dataclass_fields(cls: type) -> tuple[_Field, ...]:
    hints = _hints(cls)
    return tuple(
        _Field(
            f.name,
            hints.get(f.name, f.type),
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
        if f.init
    )


@functools.lru_cache(maxsize=256)
def _typeddict_fields(cls: type) -> tuple[_Field, ...]:
    required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
    fields = []
    for name, hint in _hints(cls).items():
        required, tp = name in required_keys, hint
        # An explicit wrapper decides (``__required_keys__`` can miss it when annotations
        # are strings); ``ReadOnly`` says nothing about presence.
        while (wrapper := get_origin(tp)) in _KEY_WRAPPERS:
            if wrapper is not getattr(typing, "ReadOnly", None):
                required = wrapper is typing.Required
            tp = get_args(tp)[0]
        fields.append(_Field(name, tp, required))
    return tuple(fields)


# --- the converter -----------------------------------------------------------------------


class _Converter:
    """Converts one value; collects the changes made in ``changes``."""

    __slots__ = ("changes", "mode")

    def __init__(self, mode: int) -> None:
        self.mode = mode
        self.changes: list[tuple[_Loc, Any, Any]] = []

    def convert(self, value: Any, tp: Any, loc: _Loc) -> Any:
        tp = _unwrap(tp)
        if tp is Any or tp is object:
            return value
        if tp is None:
            tp = types.NoneType
        origin = get_origin(tp) or tp
        args = get_args(tp)
        if origin is Union or origin is types.UnionType:
            return self._union(value, tp, args, loc)
        if origin is Literal:
            return self._choice(value, [(_plain(arg), arg) for arg in args], loc)
        if origin in _LIST_ORIGINS:
            return self._list(value, args[0] if args else Any, loc)
        if origin is tuple:
            return self._tuple(value, args, loc)
        if origin in _DICT_ORIGINS:
            return self._dict(value, args[1] if args else Any, args[0] if args else Any, loc)
        if tp in _SCALARS:
            return self._scalar(value, tp, loc)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self._choice(value, [(member.value, member) for member in tp], loc)
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return self._dataclass(value, tp, loc)
        if _is_typeddict(tp):
            return self._typeddict(value, tp, loc)
        raise TypeError(f"cannot convert to {tp!r}: unsupported type")

    def _scalar(self, value: Any, tp: type, loc: _Loc) -> Any:
        try:
            result, changed = _SCALARS[tp](value, self.mode)
        except _Reject as exc:
            raise _wrong_type(loc, describe(tp), value, *exc.args) from None
        if changed:
            self.changes.append((loc, value, result))
        return result

    def _choice(self, value: Any, options: list[tuple[Any, Any]], loc: _Loc) -> Any:
        """``Literal`` and ``Enum``: ``options`` pairs each allowed JSON value with the
        result it stands for. An exact match first, then a coercion to an option's type."""
        for plain, result in options:
            if _same(plain, value):
                return result
        if self.mode == _LAX:
            for plain, result in options:
                scalar = _SCALARS.get(type(plain))
                try:
                    coerced, changed = scalar(value, _LAX) if scalar else (None, False)
                except _Reject:
                    continue
                if changed and _same(coerced, plain):
                    self.changes.append((loc, value, result))
                    return result
        allowed = ", ".join(_show(plain) for plain, _ in options)
        raise _wrong_type(loc, f"one of {allowed}", value)

    def _union(self, value: Any, tp: Any, members: Sequence[Any], loc: _Loc) -> Any:
        mode, mark = self.mode, len(self.changes)
        failures: list[_Mismatch] = []
        try:
            for level in range(_EXACT, mode + 1):
                self.mode, failures = level, []
                for member in members:
                    try:
                        return self.convert(value, member, loc)
                    except _Mismatch as exc:
                        del self.changes[mark:]
                        failures.append(exc)
        finally:
            self.mode = mode
        # The failure that got furthest inside the value is the most telling one.
        deepest = max(failures, key=lambda exc: _depth(exc.loc))
        if _depth(deepest.loc) > _depth(loc):
            raise deepest
        raise _wrong_type(loc, describe(tp), value)

    def _list(self, value: Any, item: Any, loc: _Loc) -> list[Any]:
        if not isinstance(value, list):
            raise _wrong_type(loc, f"list[{describe(item)}]", value)
        return [self.convert(v, item, (loc, i)) for i, v in enumerate(value)]

    def _tuple(self, value: Any, args: tuple[Any, ...], loc: _Loc) -> tuple[Any, ...]:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            return tuple(self._list(value, args[0] if args else Any, loc))
        expected = f"tuple[{', '.join(map(describe, args))}]"
        if args == ((),):  # ``tuple[()]``, the empty tuple
            args = ()
        if not isinstance(value, list):
            raise _wrong_type(loc, expected, value)
        if len(value) != len(args):
            raise _wrong_type(loc, expected, value, f"{len(value)} items, not {len(args)}")
        return tuple(
            self.convert(v, t, (loc, i)) for i, (v, t) in enumerate(zip(value, args, strict=True))
        )

    def _dict(self, value: Any, item: Any, key: Any, loc: _Loc) -> dict[str, Any]:
        if _unwrap(key) not in (str, Any, object):
            raise TypeError(
                f"cannot convert to a dict with {describe(key)} keys: JSON keys are str"
            )
        if not isinstance(value, dict):
            raise _wrong_type(loc, f"dict[str, {describe(item)}]", value)
        result = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _wrong_type((loc, str(k)), "a str key", k)
            result[k] = self.convert(v, item, (loc, k))
        return result

    def _fields(self, value: Any, fields: tuple[_Field, ...], loc: _Loc) -> dict[str, Any]:
        found = {}
        for field in fields:
            if field.name in value:
                found[field.name] = self.convert(value[field.name], field.tp, (loc, field.name))
            elif field.required:
                raise _Mismatch((loc, field.name), "missing")
        return found

    def _dataclass(self, value: Any, cls: type, loc: _Loc) -> Any:
        if not isinstance(value, dict):
            raise _wrong_type(loc, cls.__name__, value)
        kwargs = self._fields(value, _dataclass_fields(cls), loc)
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:  # ``__post_init__`` refused the values
            raise _Mismatch(loc, f"invalid: {cls.__name__}: {exc}") from None

    def _typeddict(self, value: Any, cls: type, loc: _Loc) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _wrong_type(loc, cls.__name__, value)
        return self._fields(value, _typeddict_fields(cls), loc)


def _plain(option: Any) -> Any:
    """The JSON value a ``Literal`` option stands for (an enum member's value)."""
    return option.value if isinstance(option, enum.Enum) else option
