"""Conversion of parsed JSON into annotated Python types: forgiving, never lossy.

:func:`coerce` is the one entry point. ``FlexValue.extract`` uses it, and so can anything
else that turns JSON arguments into typed Python values (a tool registry converting a
call's arguments into a function's parameter types). It supports:

* ``Any`` and ``object`` (the value as it is), ``None``, ``bool``, ``int``, ``float``, ``str``;
* ``list[T]`` (and ``Sequence[T]``), ``tuple[T, ...]``, ``tuple[A, B]``,
  ``dict[str, T]`` (and ``Mapping[str, T]``), bare ``list`` / ``dict`` / ``tuple``;
* ``A | B``, ``Optional[T]``, ``Literal[...]``, ``enum.Enum`` subclasses (by value);
* dataclasses and ``TypedDict`` (extra keys ignored, missing required ones reported);
* ``datetime``, ``date``, ``time`` and ``UUID`` from their ISO 8601 / RFC 4122 strings (a
  plain date for a ``datetime`` is midnight, a coercion; never with ``strict=True``);
* pydantic models, built by their own ``model_validate`` (their own rules, whatever
  ``strict``; their coercions are not recorded). A class is a model when pydantic is loaded
  and it derives from ``pydantic.BaseModel``; pydantic itself is never imported here;
* ``Annotated[T, ...]`` and ``NewType`` (read as ``T``).

Anything else is a programming error and raises ``TypeError``. Data that does not fit
raises :class:`~laminate.ExtractError`.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import enum
import functools
import json
import math
import re
import reprlib
import sys
import types
import typing
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, Union, get_args, get_origin

from .errors import ExtractError

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
    """Internal failure. Unions raise and catch many of these while trying their members,
    so the reason is only written out (a callable until then) when it is reported."""

    def __init__(self, loc: _Loc, reason: str | Callable[[], str]) -> None:
        super().__init__()
        self.loc = loc
        self._reason = reason

    @property
    def reason(self) -> str:
        if not isinstance(self._reason, str):
            self._reason = self._reason()
        return self._reason


class _Reject(Exception):
    """A scalar did not convert; ``args[0]``, if any, says why beyond the type."""


def _wrong_type(loc: _Loc, expected: Any, value: Any, detail: str = "") -> _Mismatch:
    """``expected`` is a description, or an annotation to describe if this is reported."""

    def reason() -> str:
        name = expected if isinstance(expected, str) else describe(expected)
        text = f"wrong type: expected {name}, got {_preview(value)}"
        return f"{text} ({detail})" if detail else text

    return _Mismatch(loc, reason)


_repr = reprlib.Repr()
_repr.maxstring = 40
_repr.maxother = 40
_repr.maxlist = _repr.maxdict = 4
_repr.maxlevel = 2


def _preview(value: Any) -> str:
    if value is None:
        return "None"
    try:
        shown = _repr.repr(value)
    except ValueError:  # an int beyond the interpreter's limit on digits
        shown = "(too long to show)"
    return f"{type(value).__name__} {shown}"


def _show(value: Any) -> str:
    try:
        if value is None or isinstance(value, bool | int | float | str):
            return json.dumps(value, ensure_ascii=False)
        return repr(value)
    except ValueError:  # an int beyond the interpreter's limit on digits
        return f"<{type(value).__name__} too long to show>"


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


def _to_datetime(value: Any, mode: int) -> tuple[Any, bool]:
    if isinstance(value, datetime.datetime):
        return value, False
    if not isinstance(value, str):
        raise _Reject
    try:
        day = datetime.date.fromisoformat(value)
    except ValueError:
        pass
    else:  # JSON Schema's ``date-time`` has a time: a bare date is a coercion
        if mode == _LAX:
            return datetime.datetime(day.year, day.month, day.day), True
        raise _Reject("a date without a time")
    try:
        return datetime.datetime.fromisoformat(value), False
    except ValueError:
        raise _Reject("not an ISO 8601 date and time") from None


def _from_iso(tp: Any, what: str) -> _Scalar:
    """A converter for a type read from one string form, ``tp(text)`` or
    ``tp.fromisoformat(text)``; ``what`` names the form in errors."""
    parse = getattr(tp, "fromisoformat", tp)

    def convert(value: Any, mode: int) -> tuple[Any, bool]:
        if type(value) is tp:
            return value, False
        if not isinstance(value, str):
            raise _Reject
        try:
            return parse(value), False
        except ValueError:
            raise _Reject(f"not {what}") from None

    return convert


_Scalar: TypeAlias = Callable[[Any, int], tuple[Any, bool]]
_SCALARS: dict[Any, _Scalar] = {
    types.NoneType: _to_none,
    bool: _to_bool,
    int: _to_int,
    float: _to_float,
    str: _to_str,
    # JSON has no dates or ids: they travel as strings (JSON Schema's ``format``).
    datetime.datetime: _to_datetime,
    datetime.date: _from_iso(datetime.date, "an ISO 8601 date"),
    datetime.time: _from_iso(datetime.time, "an ISO 8601 time"),
    uuid.UUID: _from_iso(uuid.UUID, "a UUID"),
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


def _is_pydantic_model(tp: Any) -> bool:
    """Whether ``tp`` is a pydantic model class. Such a class exists only once pydantic has
    been imported, so ``sys.modules`` is asked, never an import: pydantic stays optional and
    a class that merely looks like a model (``model_validate``, ``model_json_schema``)
    is not one."""
    if not (isinstance(tp, type) and hasattr(tp, "model_validate")):
        return False
    pydantic = sys.modules.get("pydantic")
    base = getattr(pydantic, "BaseModel", None) if pydantic is not None else None
    return isinstance(base, type) and issubclass(tp, base) and tp is not base


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

_Handler: TypeAlias = "Callable[[_Converter, Any, Any, _Loc], Any]"


@dataclass(frozen=True, slots=True)
class _Plan:
    """How to convert to ``tp``: ``handler(converter, value, arg, loc)``."""

    handler: _Handler
    arg: Any
    tp: Any  # held so that the ``id`` keying the plan stays this annotation's


class _Converter:
    """Converts one value; collects the changes made in ``changes``."""

    __slots__ = ("changes", "mode", "plans")

    def __init__(self, mode: int) -> None:
        self.mode = mode
        self.changes: list[tuple[_Loc, Any, Any]] = []
        # Annotations are looked at once per call, not once per list item. Keyed by
        # identity: ``int | str == str | int``, but their members are tried in order.
        self.plans: dict[int, _Plan] = {}

    def convert(self, value: Any, tp: Any, loc: _Loc) -> Any:
        plan = self.plans.get(id(tp))
        if plan is None:
            plan = self.plans[id(tp)] = _plan(tp)
        return plan.handler(self, value, plan.arg, loc)

    def _any(self, value: Any, _: None, loc: _Loc) -> Any:
        return value

    def _scalar(self, value: Any, tp: type, loc: _Loc) -> Any:
        try:
            result, changed = _SCALARS[tp](value, self.mode)
        except _Reject as exc:
            raise _wrong_type(loc, tp, value, *exc.args) from None
        if changed:
            self.changes.append((loc, value, result))
        return result

    def _choice(self, value: Any, options: tuple[tuple[Any, Any], ...], loc: _Loc) -> Any:
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

    def _union(self, value: Any, tp: Any, loc: _Loc) -> Any:
        mode, mark = self.mode, len(self.changes)
        failures: list[_Mismatch] = []
        try:
            for level in range(_EXACT, mode + 1):
                self.mode, failures = level, []
                for member in get_args(tp):
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
        raise _wrong_type(loc, tp, value)

    def _list(self, value: Any, item: Any, loc: _Loc) -> list[Any]:
        if not isinstance(value, list):
            raise _wrong_type(loc, list[item], value)
        return [self.convert(v, item, (loc, i)) for i, v in enumerate(value)]

    def _tuple_of(self, value: Any, item: Any, loc: _Loc) -> tuple[Any, ...]:
        return tuple(self._list(value, item, loc))

    def _tuple(self, value: Any, items: tuple[Any, ...], loc: _Loc) -> tuple[Any, ...]:
        expected = f"tuple[{', '.join(map(describe, items)) or '()'}]"
        if not isinstance(value, list):
            raise _wrong_type(loc, expected, value)
        if len(value) != len(items):
            raise _wrong_type(loc, expected, value, f"{len(value)} items, not {len(items)}")
        return tuple(
            self.convert(v, t, (loc, i)) for i, (v, t) in enumerate(zip(value, items, strict=True))
        )

    def _dict(self, value: Any, item: Any, loc: _Loc) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _wrong_type(loc, dict[str, item], value)
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
            raise _wrong_type(loc, cls, value)
        kwargs = self._fields(value, _dataclass_fields(cls), loc)
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:  # ``__post_init__`` refused the values
            raise _Mismatch(loc, f"invalid: {cls.__name__}: {exc}") from None

    def _typeddict(self, value: Any, cls: type, loc: _Loc) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise _wrong_type(loc, cls, value)
        return self._fields(value, _typeddict_fields(cls), loc)

    def _model(self, value: Any, cls: Any, loc: _Loc) -> Any:
        if isinstance(value, cls):
            return value
        try:
            return cls.model_validate(value)
        except (TypeError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
            raise _model_mismatch(loc, cls, exc) from None


def _plan(tp: Any) -> _Plan:
    """Classify the annotation ``tp`` once; ``TypeError`` if it is not supported."""
    bare = _unwrap(tp)
    if bare is None:
        bare = types.NoneType
    origin, args = get_origin(bare) or bare, get_args(bare)
    c = _Converter
    if bare is Any or bare is object:
        return _Plan(c._any, None, tp)
    if origin is Union or origin is types.UnionType:
        return _Plan(c._union, bare, tp)
    if origin is Literal:
        return _Plan(c._choice, tuple((_plain(arg), arg) for arg in args), tp)
    if origin in _LIST_ORIGINS:
        return _Plan(c._list, args[0] if args else Any, tp)
    if origin is tuple and (bare in (tuple, typing.Tuple) or args[1:] == (...,)):  # noqa: UP006
        return _Plan(c._tuple_of, args[0] if args else Any, tp)
    if origin is tuple:  # ``tuple[()]`` has no args, like a bare ``tuple``
        return _Plan(c._tuple, args, tp)
    if origin in _DICT_ORIGINS:
        if args and _unwrap(args[0]) not in (str, Any, object):
            raise TypeError(f"cannot convert to {describe(bare)}: JSON object keys are str")
        return _Plan(c._dict, args[1] if args else Any, tp)
    if bare in _SCALARS:
        return _Plan(c._scalar, bare, tp)
    if isinstance(bare, type) and issubclass(bare, enum.Enum):
        return _Plan(c._choice, tuple((member.value, member) for member in bare), tp)
    if isinstance(bare, type) and dataclasses.is_dataclass(bare):
        return _Plan(c._dataclass, bare, tp)
    if _is_typeddict(bare):
        return _Plan(c._typeddict, bare, tp)
    if _is_pydantic_model(bare):
        return _Plan(c._model, bare, tp)
    raise TypeError(f"cannot convert to {tp!r}: unsupported type")


def _model_mismatch(loc: _Loc, cls: Any, exc: Exception) -> _Mismatch:
    """A model's validation error as a mismatch: at the failing field when there is one
    error, at the model with every field's reason when there are several."""
    listed = getattr(exc, "errors", None)  # pydantic's list of {"loc", "msg", "type"}
    errors = listed() if callable(listed) else None
    if not isinstance(errors, list) or not errors:
        return _Mismatch(loc, f"invalid: {cls.__name__}: {exc}")
    found = []
    for error in errors:
        where: _Loc = loc
        for step in error.get("loc", ()):
            where = (where, step if isinstance(step, int) else str(step))
        found.append((where, error.get("type") == "missing", str(error.get("msg", ""))))
    if len(found) == 1:
        ((where, missing, message),) = found
        return _Mismatch(where, "missing" if missing else f"invalid: {message}")
    base = len(_steps(loc))
    reasons = "; ".join(
        f"{format_path(_steps(where)[base:]) or '<root>'}: {'missing' if missing else message}"
        for where, missing, message in found
    )
    return _Mismatch(loc, f"invalid: {cls.__name__}: {reasons}")


def _plain(option: Any) -> Any:
    """The JSON value a ``Literal`` option stands for (an enum member's value)."""
    return option.value if isinstance(option, enum.Enum) else option
