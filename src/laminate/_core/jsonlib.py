"""JSON in and out for the hot paths: orjson when it is installed (the ``fast`` extra),
else the standard library; ``LAMINATE_JSON=stdlib`` in the environment forces the latter.

Results do not depend on which one runs. orjson is only trusted with what it reads
exactly as :mod:`json` does: whatever it refuses (``NaN`` and ``Infinity``, lone
surrogate escapes, errors of any kind) is read again by :mod:`json`, so values, and error
messages, are the standard library's. orjson reads an integer past 64 bits as a float
where :mod:`json` keeps it exact, so text that may hold one (a run of 19 digits, found by
one pass in C) is left to :mod:`json` by :func:`loads_exact`, which reads what carries
tool arguments; other frames (counts, timestamps) hold no such numbers.

Writing, orjson spells an exponent without its ``+`` (``1e16``, not ``1e+16``): the same
number, in different text. It
writes ``NaN`` as ``null``, so text holding ``null`` is written again by :mod:`json`,
which keeps ``NaN`` (laminate then refuses it as tool arguments, as it always has).

:func:`use` switches the backend at run time (the test suite runs under both); callers
look the functions up on this module at call time for that reason.
"""

from __future__ import annotations

import json
import marshal
import os
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any, Final, cast

__all__ = [
    "BACKEND",
    "available",
    "batch_loads",
    "dumps",
    "dumps_parsed",
    "exact_where",
    "loads",
    "loads_exact",
    "loads_strict",
    "loads_whole",
    "quick_loads",
    "scan",
    "use",
]

_decoder: Final = json.JSONDecoder()
_raw_decode: Final = _decoder.raw_decode
scan: Final[Callable[[str, int], tuple[Any, int]]] = _decoder.scan_once  # type: ignore[attr-defined]
"""The standard library's scanner itself (what ``raw_decode`` wraps): ``(value, end)`` for
the value at an index, ``StopIteration`` where none starts, ``ValueError`` where one is
broken. A hot path calls it directly
and, unless ``end`` is the text's length, falls back to :func:`loads`, which either finds
the same value (around blanks) or raises the error :func:`json.loads` would."""


def _stdlib_loads(text: str | bytes) -> Any:
    """``json.loads``, without its wrapper's cost on the usual, unpadded payload."""
    if not isinstance(text, str):
        return json.loads(text)
    try:
        value, end = _raw_decode(text)
    except ValueError:
        return json.loads(text)  # leading white space, or an error: json.loads says which
    if end != len(text) and text[end:].strip(" \t\n\r"):
        return json.loads(text)  # raises "Extra data" as json.loads would
    return value


def _stdlib_dumps(value: Any) -> str:
    """Compact JSON text, non-ASCII characters as they are."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # the `fast` extra is not installed
    _orjson = None


def _orjson_loads(text: str | bytes) -> Any:
    try:
        return _orjson.loads(text)
    except ValueError:  # orjson.JSONDecodeError: let json decide, and word the error
        return _stdlib_loads(text)


def _long_digit_run(data: bytes) -> bool:
    if len(data) < _SAMPLED:
        return _DIGIT_RUN in data.translate(_DIGITS)
    # Any 19 bytes in a row hold three in a row of every sixth byte: where the sixth
    # bytes never hold three digits in a row, no run of 19 digits can be; where they do,
    # the bytes around them tell (all of them, past a few such places).
    sample = data[::_STRIDE].translate(_DIGITS)
    at = sample.find(_SAMPLE_RUN)
    for _ in range(_LOOKS):
        if at < 0:
            return False
        start = _STRIDE * at
        if _DIGIT_RUN in data[max(0, start - 18) : start + 19].translate(_DIGITS):
            return True
        at = sample.find(_SAMPLE_RUN, at + 1)
    return at >= 0 and _DIGIT_RUN in data.translate(_DIGITS)


_DIGITS: Final = bytes.maketrans(b"123456789", b"000000000")
_DIGIT_RUN: Final = b"0" * 19  # 2**63 has 19 digits
_STRIDE: Final = 6
_SAMPLE_RUN: Final = b"0" * (len(_DIGIT_RUN) // _STRIDE)
_SAMPLED: Final = 4096  # shorter text is searched whole: as quick as two slices
_LOOKS: Final = 64


def _orjson_loads_exact(text: str | bytes) -> Any:
    # One call per frame: the digit-run test and _orjson_loads, inline.
    data = text.encode() if isinstance(text, str) else text
    if _long_digit_run(data):
        return _stdlib_loads(text)
    try:
        return _orjson.loads(data)
    except ValueError:  # orjson.JSONDecodeError: let json decide, and word the error
        return _stdlib_loads(text)


def loads_strict(text: str) -> Any:
    """orjson's own parse, which refuses ``NaN`` and ``Infinity`` (JSON has neither),
    or ``ValueError`` where :mod:`json` must decide; only called while orjson is the
    backend."""
    data = text.encode()
    if _long_digit_run(data):
        raise ValueError("a number orjson would not keep exact")
    return _orjson.loads(data)


def _orjson_dumps(value: Any) -> str:
    try:
        data: bytes = _orjson.dumps(value)
    except TypeError:  # integers past 64 bits, keys that are not strings
        return _stdlib_dumps(value)
    if b"null" in data:
        return _stdlib_dumps(value)  # it may stand for a NaN: json keeps NaN as NaN
    return data.decode()


# A non-finite float as marshal writes it (its eight bytes, little-endian): the NaN and
# infinities that parsing JSON text gives (float("nan"), float("inf"), float("-inf")).
_NON_FINITE: Final = tuple(b"\x00" * 6 + end for end in (b"\xf8\x7f", b"\xf0\x7f", b"\xf0\xff"))


def _orjson_dumps_parsed(value: Any) -> str:
    try:
        data: bytes = _orjson.dumps(value)
    except TypeError:  # integers past 64 bits
        return _stdlib_dumps(value)
    if b"null" in data:
        # It may stand for a NaN: the value's floats, written by marshal (one pass in C),
        # tell. Bytes that only look like one send the value to json as before.
        try:
            floats = marshal.dumps(value)
        except ValueError:  # a type marshal does not write: not a parsed value
            return _stdlib_dumps(value)
        if any(pattern in floats for pattern in _NON_FINITE):
            return _stdlib_dumps(value)
    return data.decode()


_SIX_ZEROS: Final = _NON_FINITE[0][:6]
_NON_FINITE_ENDS: Final = frozenset(pattern[6:] for pattern in _NON_FINITE)


def written_size_bound(value: Any) -> int | None:
    """At least the length of :func:`dumps_parsed`'s text for a parsed value, found in
    one pass in C without writing it; ``None`` where the value holds a NaN or an
    infinity (JSON cannot say them) or is not a parsed value.

    marshal (version 2: no back-references, so a key used a thousand times is written a
    thousand times) writes each value in at least a sixth of the characters JSON needs
    for it and its separator: ``false,`` is six characters for marshal's one byte; a
    string's header (five bytes) outweighs its quotes, and an escape is at most six
    characters for one byte."""
    try:
        image = marshal.dumps(value, 2)
    except ValueError:  # a type marshal does not write, or nesting past its limit
        return None
    # The NaN and infinities that parsing gives, as marshal writes them (see
    # _NON_FINITE), found in one scan for their six zero bytes; UTF-8 text never holds
    # what follows them. Bytes that only look like one send the value to the writer.
    at = image.find(_SIX_ZEROS)
    while at >= 0:
        if image[at + 6 : at + 8] in _NON_FINITE_ENDS:
            return None
        at = image.find(_SIX_ZEROS, at + 1)
    return 6 * len(image)


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value:  # inf - inf and nan - nan are nan, which is true
        raise ValueError("a number JSON text cannot write back")
    return value


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


# The standard library's scanner, refusing what parses to a non-finite float: a reading
# it finishes holds finite numbers only, and the same values as json.loads (its floats
# are float(text) either way).
_finite_scan: Final = json.JSONDecoder(  # type: ignore[attr-defined]
    parse_float=_finite_float, parse_constant=_no_constant
).scan_once


def _stdlib_whole(text: str | bytes) -> tuple[Any, int]:
    try:
        if not isinstance(text, str):
            text = text.decode()
        value, end = _finite_scan(text, 0)
    except (StopIteration, ValueError):  # not a value there, a broken one, or not finite
        return _stdlib_loads(text), 0
    if end != len(text):
        return _stdlib_loads(text), 0  # blanks after it (or extra data: json.loads raises)
    return value, _WRITTEN_PER_CHARACTER * len(text)


def _orjson_whole(text: str | bytes) -> tuple[Any, int]:
    data = text.encode() if isinstance(text, str) else text
    if not _long_digit_run(data):
        try:
            # orjson refuses NaN, Infinity and numbers past a double's range: what it
            # reads is finite.
            return _orjson.loads(data), _WRITTEN_PER_CHARACTER * len(text)
        except ValueError:  # orjson.JSONDecodeError: json decides
            pass
    return _stdlib_whole(text)


_WRITTEN_PER_CHARACTER: Final = 5
"""JSON text written from parsed values is at most this many times as long as the text
they were read from: a string, a key, a literal and a separator never grow (an escape is
written as short as it was read, or shorter), and the number that grows most is a float
with an exponent that either writer spells in full (``1e15``: four characters read,
``1000000000000000.0`` written, 4.5 times as many)."""


def loads_whole(text: str | bytes) -> tuple[Any, int]:
    """:func:`loads_exact`'s value, and a bound: at least the length of
    :func:`dumps_parsed`'s text for any value within it, when every number read is finite;
    ``0`` when that is not known (a ``NaN``, an infinity, or a reading the fast reader
    left to the other). ``ValueError`` as :func:`json.loads` for what is not JSON.

    What tool arguments sent whole are read with: the bound lets laminate skip writing
    them when nothing reads their text (see :func:`written_size_bound`)."""
    return _orjson_whole(text) if BACKEND == "orjson" else _stdlib_whole(text)


loads: Callable[[str | bytes], Any] = _stdlib_loads
"""Parse JSON text (``str`` or UTF-8 ``bytes``) as :func:`json.loads` would (integers
past 64 bits aside: see :func:`loads_exact`)."""
loads_exact: Callable[[str | bytes], Any] = _stdlib_loads
"""Parse JSON text exactly as :func:`json.loads` would, big integers included."""
dumps: Callable[[Any], str] = _stdlib_dumps
"""Compact JSON text of a value, non-ASCII characters as they are."""
dumps_parsed: Callable[[Any], str] = _stdlib_dumps
""":func:`dumps` for a value parsed from JSON text (tool arguments sent as an object):
the same text, found without a second writer where orjson's holds ``null``."""
BACKEND = "stdlib"
"""``"orjson"`` or ``"stdlib"``: which one is in use."""


def exact_where(marker: str | None) -> Callable[[str | bytes], Any]:
    """A reader exact (:func:`loads_exact`) for text that holds ``marker`` (``None``: for
    all text) or a ``\\u`` escape (a key can be spelled with one), :func:`loads` for the
    rest: a frame without its API's arguments marker carries no tool arguments."""
    if BACKEND != "orjson" or marker is None:
        return loads_exact
    quick, exact = _orjson.loads, loads_exact

    def read(text: str | bytes) -> Any:
        probe = text if isinstance(text, str) else text.decode()
        if marker in probe or "\\u" in probe:
            return exact(text)
        try:
            return quick(text)
        except ValueError:  # orjson.JSONDecodeError: let json decide, and word the error
            return _stdlib_loads(text)

    return read


def quick_loads(marker: str | None) -> Callable[[str | bytes], Any] | None:
    """For a hot path: a reader whose every result is :func:`loads`'s (exact where
    :func:`exact_where` says), but which may raise ``ValueError`` where that one would not;
    the caller reads the text again with :func:`loads` then. ``marker`` is the API's
    arguments marker (``""``: none; ``None``: the API is not known yet, all text is read
    exactly). ``None`` with the standard library: use :data:`scan`. With orjson and no
    marker this is ``orjson.loads`` itself, without a wrapper's call."""
    if BACKEND != "orjson":
        return None
    return exact_where(marker) if marker != "" else _orjson.loads


BatchReader = Callable[[Sequence[bytes | bytearray]], Sequence[Any] | None]
"""Reads many payloads at once."""


def batch_loads() -> BatchReader:
    """For many frames at once (a :class:`~laminate._framing.lines.Batch`): a reader of
    every payload's value, each what :func:`quick_loads` with no arguments marker (and
    :func:`loads` after it) would give for that payload alone, or ``None`` when any payload
    is not read that way (not JSON, blanks around it, a keep-alive): the caller then reads
    them one by one. Each payload is parsed once, by itself, with no Python call between
    them. A payload that may carry whole-object tool arguments is the caller's to read
    again exactly (:func:`exact_where`): with orjson, the run's few such frames, rather
    than a search of every frame for the marker."""
    return _orjson_all if BACKEND == "orjson" else _scan_all


def _orjson_all(payloads: Sequence[bytes | bytearray]) -> Sequence[Any] | None:
    try:
        return list(map(_orjson.loads, payloads))
    except ValueError:  # orjson.JSONDecodeError: json decides, one by one
        return None


def _scan_all(payloads: Sequence[bytes | bytearray]) -> Sequence[Any] | None:
    try:
        # The payloads of a batch are all bytes or all bytearray: one unbound decode
        # (a TypeError if not), about twice as quick as str(payload, "utf-8").
        decode = cast("Callable[[bytes | bytearray], str]", type(payloads[0]).decode)
        texts = list(map(decode, payloads))
        # A StopIteration (no value at 0: blanks first) ends map early; the count tells.
        pairs = list(map(scan, texts, repeat(0)))
    except (ValueError, TypeError):  # invalid UTF-8, a broken value (a mixed list)
        return None
    if len(pairs) != len(texts) or not pairs:
        return None
    values, ends = zip(*pairs, strict=True)
    if list(ends) != list(map(len, texts)):
        return None  # something after the value: json.loads decides
    return values


def available() -> tuple[str, ...]:
    """The backends this interpreter can use."""
    return ("stdlib", "orjson") if _orjson is not None else ("stdlib",)


def use(backend: str) -> None:
    """Switch to ``"orjson"`` or ``"stdlib"``."""
    global loads, loads_exact, dumps, dumps_parsed, BACKEND  # noqa: PLW0603 (the switch is the point)
    if backend == "orjson" and _orjson is not None:
        loads, loads_exact, dumps = _orjson_loads, _orjson_loads_exact, _orjson_dumps
        dumps_parsed = _orjson_dumps_parsed
        BACKEND = "orjson"
    elif backend == "stdlib":
        loads, loads_exact, dumps = _stdlib_loads, _stdlib_loads, _stdlib_dumps
        dumps_parsed = _stdlib_dumps
        BACKEND = "stdlib"
    else:
        raise ValueError(f"JSON backend {backend!r} is not available; use one of {available()}")


use(
    "stdlib"
    if os.environ.get("LAMINATE_JSON", "").lower() == "stdlib" or _orjson is None
    else "orjson"
)
