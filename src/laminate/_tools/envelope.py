"""A strict, provider-independent envelope for an application's record of turns.

Two kinds, and exactly these keys::

    {"kind": "final", "text": str}
    {"kind": "call", "id": str, "name": str, "arguments": {str: JSON, ...}}

:func:`parse_envelope` is the gate. It is stateless and strict:

* a missing key, an extra key and a value of the wrong type are errors (``True`` is not an
  ``int``, a ``str`` that looks like JSON is not an arguments object);
* ``id`` and ``name`` must not be empty or only whitespace; a valid one is kept exactly as
  sent (unicode included), never trimmed or matched to a known tool;
* ``arguments`` holds only what ``json.loads`` produces, at any depth: ``dict`` with
  ``str`` keys, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``, of exactly those
  types (no tuples, sets, bytes or subclasses such as ``OrderedDict``), finite numbers
  only (``NaN`` and infinities are not JSON), nested at most 256 levels deep;
* what it returns is an independent deep copy: changing the input afterwards changes
  nothing in it.

Errors are :class:`~laminate.EnvelopeError` with ``path`` (``"arguments.items[2]"``, ``""``
for the envelope itself) and ``reason`` (``"missing"``, ``"unexpected key"``,
``"wrong type: ..."``, ``"blank"``, ``"not JSON: ..."``, ``"unknown kind ..."``,
``"reused: ..."``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from .._core.coerce import Step, format_path
from .._core.errors import EnvelopeError
from .._core.response import InvalidToolUse, NormalizedResponse, ToolUse

__all__ = ["CallLedger", "FinalAnswer", "ToolCallRequest", "parse_envelope", "to_envelopes"]

MAX_DEPTH: Final = 256


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    """``{"kind": "final", "text": ...}``: the model's answer."""

    text: str

    kind: ClassVar[str] = "final"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "final", "text": self.text}


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """``{"kind": "call", "id": ..., "name": ..., "arguments": {...}}``: a call to run.

    ``arguments`` is the validated copy; it is not shared with anything else.
    """

    id: str
    name: str
    arguments: dict[str, Any]

    kind: ClassVar[str] = "call"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "call",
            "id": self.id,
            "name": self.name,
            "arguments": _json_copy(self.arguments, ("arguments",)),
        }


Envelope = FinalAnswer | ToolCallRequest

_KEYS: Final[Mapping[str, tuple[str, ...]]] = {
    "final": ("kind", "text"),
    "call": ("kind", "id", "name", "arguments"),
}


def parse_envelope(obj: object) -> Envelope:
    """Validate one envelope ``dict`` (see the module's rules); raises ``EnvelopeError``."""
    if type(obj) is not dict:
        raise _error((), f"wrong type: expected an object (dict), got {_kind(obj)}")
    kind = _kind_of(obj)
    _check_keys(obj, _KEYS[kind], kind)
    if kind == "final":
        return FinalAnswer(_string(obj, "text"))
    return ToolCallRequest(
        _identity(obj, "id"),
        _identity(obj, "name"),
        _arguments(obj["arguments"]),
    )


def _kind_of(obj: dict[Any, Any]) -> str:
    if "kind" not in obj:
        raise _error(("kind",), "missing")
    kind = obj["kind"]
    if type(kind) is not str:
        raise _error(("kind",), f"wrong type: expected str, got {_kind(kind)}")
    if kind not in _KEYS:
        raise _error(("kind",), f"unknown kind {kind!r} (expected 'final' or 'call')")
    return kind


def _check_keys(obj: dict[Any, Any], keys: tuple[str, ...], kind: str) -> None:
    for key in keys:
        if key not in obj:
            raise _error((key,), "missing")
    for key in obj:
        if key not in keys:
            where = (key,) if type(key) is str else ()
            expected = ", ".join(keys)
            raise _error(
                where, f"unexpected key {key!r} (a {kind!r} envelope has exactly: {expected})"
            )


def _string(obj: dict[str, Any], key: str) -> str:
    value = obj[key]
    if type(value) is not str:
        raise _error((key,), f"wrong type: expected str, got {_kind(value)}")
    return value


def _identity(obj: dict[str, Any], key: str) -> str:
    value = _string(obj, key)
    if not value.strip():
        raise _error((key,), "blank: must not be empty or only whitespace")
    return value


def _arguments(value: Any) -> dict[str, Any]:
    if type(value) is not dict:
        looks = " (a JSON text is not an arguments object)" if type(value) is str else ""
        raise _error(("arguments",), f"wrong type: expected an object, got {_kind(value)}{looks}")
    copied: dict[str, Any] = _json_copy(value, ("arguments",))
    return copied


def _json_copy(value: Any, path: tuple[Step, ...]) -> Any:
    """A copy of ``value`` made only of JSON types, checked at every level."""
    if len(path) > MAX_DEPTH:
        raise _error(path, f"not JSON: nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    if kind is dict:
        result = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _error(path, f"not JSON: an object key must be str, got {_kind(key)}")
            result[key] = _json_copy(item, (*path, key))
        return result
    if kind is list:
        return [_json_copy(item, (*path, i)) for i, item in enumerate(value)]
    if kind is float and not math.isfinite(value):
        raise _error(path, f"not JSON: {value!r} is not a finite number")
    if kind in (str, int, float, bool) or value is None:
        return value
    raise _error(path, f"not JSON: {_kind(value)} is not a JSON value")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _error(path: tuple[Step, ...], reason: str) -> EnvelopeError:
    where = format_path(path)
    return EnvelopeError(f"{where or '<envelope>'}: {reason}", path=where, reason=reason)


# --- from a response ---------------------------------------------------------------------


def to_envelopes(response: NormalizedResponse) -> list[dict[str, Any]]:
    """``response`` as envelopes, in content order.

    A response that made calls gives one ``call`` envelope per ``ToolUse`` (the text
    beside the calls is not an answer and is left out; an ``InvalidToolUse`` has no
    arguments object and is left out too, so a response whose calls were all invalid
    gives ``[]``: run it through the registry to tell the model). A response without
    calls gives one ``final`` envelope with ``response.text()``. Every envelope has
    passed :func:`parse_envelope`.
    """
    calls = [b for b in response.content if isinstance(b, ToolUse)]
    if calls:
        return [
            parse_envelope(
                {"kind": "call", "id": c.id, "name": c.name, "arguments": c.input.value}
            ).to_dict()
            for c in calls
        ]
    if any(isinstance(b, InvalidToolUse) for b in response.content):
        return []
    return [FinalAnswer(response.text()).to_dict()]


# --- across turns ------------------------------------------------------------------------


class CallLedger:
    """Remembers the call ids an application accepted, and refuses them a second time.

    :meth:`accept` validates one envelope and rejects a call whose id was accepted
    before, in an earlier turn or earlier in the same one. :meth:`accept_turn` does the
    same for a whole turn, all or nothing. Final answers are always accepted. Not
    thread-safe.
    """

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def accept(self, envelope: object) -> Envelope:
        """Validate ``envelope`` (a ``dict`` or an already parsed envelope) and record
        its call id; raises ``EnvelopeError`` (path ``"id"``, reason ``"reused: ..."``)
        for an id accepted before."""
        item = _parsed(envelope)
        if isinstance(item, ToolCallRequest):
            self._check_new(item.id, ())
            self._seen.add(item.id)
        return item

    def accept_turn(self, envelopes: Iterable[object]) -> list[Envelope]:
        """Validate a turn's envelopes; on any error nothing is recorded. Paths of
        errors start with the envelope's position (``"[1].id"``)."""
        parsed = []
        new: set[str] = set()
        for position, envelope in enumerate(envelopes):
            try:
                item = _parsed(envelope)
                if isinstance(item, ToolCallRequest):
                    self._check_new(item.id, new)
                    new.add(item.id)
            except EnvelopeError as exc:
                raise _at(position, exc) from None
            parsed.append(item)
        self._seen |= new
        return parsed

    def _check_new(self, call_id: str, this_turn: Collection[str]) -> None:
        if call_id in this_turn:
            raise _error(("id",), f"reused: call id {call_id!r} appears twice in this turn")
        if call_id in self._seen:
            raise _error(("id",), f"reused: call id {call_id!r} was accepted before")

    def __contains__(self, call_id: object) -> bool:
        return call_id in self._seen

    def __len__(self) -> int:
        return len(self._seen)


def _parsed(envelope: object) -> Envelope:
    if isinstance(envelope, FinalAnswer | ToolCallRequest):
        # Re-validated from its dict: a dataclass can be built with anything in it.
        return parse_envelope(envelope.to_dict())
    return parse_envelope(envelope)


def _at(position: int, exc: EnvelopeError) -> EnvelopeError:
    inner = exc.path if not exc.path or exc.path.startswith("[") else f".{exc.path}"
    where = f"[{position}]{inner}"
    return EnvelopeError(f"{where}: {exc.reason}", path=where, reason=exc.reason)
