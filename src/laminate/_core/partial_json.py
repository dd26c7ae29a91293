"""Incremental view of unfinished JSON tool arguments.

One ``ArgumentsView`` serves every ``ToolInputDelta`` of a tool call. ``append`` only
stores the fragment; the first query for fragment ``k`` makes an incremental scanner
catch up to ``k``. The scanner keeps its state across fragments (open containers,
the key or index inside each, string / escape / number / literal progress), so each
character is looked at once however the fragments cut the text, and it records per
fragment what later queries need: the string deltas and the fragment at which each
value finished. Those records make every answer describe the arguments at that
fragment, whatever the order in which events are read.

The scanner follows RFC 8259 strictly (no ``NaN``, no leading zeros, no raw control
characters in strings); it builds no values. ``partial`` cuts the text after the last
finished value (or inside the string being written), closes what is open and hands
it to ``json.loads``: a cost proportional to the value's size, paid only on access.
"""

from __future__ import annotations

import json
import re
import sys
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Final

from . import jsonlib

__all__ = ["MAX_DEPTH", "ArgumentsView", "JSONPath", "StringDelta", "TextView", "WholeView"]

JSONPath = tuple[str | int, ...]

#: Deeper nesting is reported as invalid, so hostile input cannot exhaust memory or
#: the recursion of the ``json.loads`` that builds ``partial`` and the final value.
MAX_DEPTH: Final = 512


@dataclass(frozen=True, slots=True)
class StringDelta:
    """Decoded characters added to the string value at ``path``."""

    path: JSONPath
    text: str


# ``StringDelta(path, text)`` without the frozen dataclass's ``__init__``: it goes through
# ``object.__setattr__``, which made it a sixth of what reading a fragment costs.
_SET_PATH: Final = vars(StringDelta)["path"].__set__
_SET_TEXT: Final = vars(StringDelta)["text"].__set__


def _delta(path: JSONPath, text: str) -> StringDelta:
    delta = object.__new__(StringDelta)
    _SET_PATH(delta, path)
    _SET_TEXT(delta, text)
    return delta


# Scanner states. ``_Scanner._handlers`` is indexed by them.
_VALUE: Final = 0  # a value is expected (top level, after ':' or after ',' in an array)
_VALUE_OR_CLOSE: Final = 1  # just after '['
_KEY: Final = 2  # after ',' in an object
_KEY_OR_CLOSE: Final = 3  # just after '{'
_COLON: Final = 4  # after a key
_AFTER: Final = 5  # after a value inside a container: ',' or the closer
_STRING: Final = 6  # inside a string (a key when ``_in_key``)
_ESCAPE: Final = 7  # inside a string, after a backslash
_NUMBER: Final = 8
_LITERAL: Final = 9  # inside true / false / null
_DONE: Final = 10  # the top-level value is finished; only whitespace may follow

_WHITESPACE: Final = frozenset(" \t\n\r")
_WHITESPACE_RUN: Final = re.compile(r"[ \t\n\r]+")
# A run of a string's content that decodes on its own: plain characters and whole
# escapes, a high surrogate escape only together with its low half.
_STRING_BODY: Final = re.compile(
    r'(?:[^"\\\x00-\x1f]+|\\["\\/bfnrt]|\\u(?![dD][89abAB])[0-9a-fA-F]{4}'
    r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})*"
)
_STRING_STOP: Final = re.compile(r'["\\\x00-\x1f]')  # the end of a run of plain text
_DECODER: Final = json.JSONDecoder()
_SIMPLE_ESCAPES: Final = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")
_LITERAL_TAILS: Final = {"t": "rue", "f": "alse", "n": "ull"}

# Number grammar (RFC 8259 section 6) as a small automaton, so that a number cut by
# fragments is checked once, character by character, and fails where it goes wrong.
_N_MINUS, _N_ZERO, _N_INT, _N_DOT, _N_FRAC, _N_E, _N_E_SIGN, _N_EXP = range(8)
_DIGITS: Final = "0123456789"


def _on(chars: str, state: int) -> dict[str, int]:
    return dict.fromkeys(chars, state)


_NUMBER_NEXT: Final[tuple[dict[str, int], ...]] = (
    {"0": _N_ZERO, **_on(_DIGITS[1:], _N_INT)},  # after '-'
    {".": _N_DOT, **_on("eE", _N_E)},  # after a leading '0'
    {**_on(_DIGITS, _N_INT), ".": _N_DOT, **_on("eE", _N_E)},
    _on(_DIGITS, _N_FRAC),  # after '.'
    {**_on(_DIGITS, _N_FRAC), **_on("eE", _N_E)},
    {**_on("+-", _N_E_SIGN), **_on(_DIGITS, _N_EXP)},  # after 'e'
    _on(_DIGITS, _N_EXP),  # after the exponent's sign
    _on(_DIGITS, _N_EXP),
)
_NUMBER_START: Final = {"-": _N_MINUS, "0": _N_ZERO, **_on(_DIGITS[1:], _N_INT)}
_NUMBER_FINAL: Final = frozenset({_N_ZERO, _N_INT, _N_FRAC, _N_EXP})
_INTEGER: Final = frozenset({_N_ZERO, _N_INT})
_NUMBER_CHARS: Final = frozenset("0123456789+-.eE")

_NEVER: Final = 1 << 62  # "completed at" for a value that has not finished


class _Scanner:
    """The incremental JSON scanner: consumes text, records deltas and completions."""

    __slots__ = (
        "_base",
        "_container_paths",
        "_esc",
        "_esc_start",
        "_goods",
        "_handlers",
        "_held",
        "_high",
        "_high_start",
        "_in_key",
        "_literal",
        "_number",
        "_number_start",
        "_objects",
        "_out",
        "_pieces",
        "_seq",
        "_slots",
        "_stack",
        "_state",
        "_top_end",
        "_value_path",
        "completed",
        "delta_paths",
        "delta_texts",
        "error",
        "error_at",
        "error_seq",
        "many_deltas",
        "written",
    )

    def __init__(self) -> None:
        self._handlers: tuple[Callable[[str, int], int], ...] = (
            self._value,
            self._value,
            self._key,
            self._key,
            self._colon,
            self._after,
            self._string,
            self._escape,
            self._number_chars,
            self._literal_chars,
            self._done,
        )
        self._state = _VALUE
        self._base = 0  # offset of the current fragment in the whole text
        self._seq = 0
        # One entry per open container, innermost last.
        self._stack: list[str] = []  # the closer it expects
        self._container_paths: list[JSONPath] = []
        self._slots: list[str | int] = []  # the current key or array index
        self._goods: list[int] = []  # offset just after its last finished member
        # A member of an object is finished only when the object closes: until then the
        # same key may come again and replace it (the last one wins, as in json.loads).
        # Values finished inside an open object wait here for the outermost one to close.
        self._objects = 0  # open objects
        self._held: list[JSONPath] = []
        self._value_path: JSONPath = ()  # the string / number / literal being read
        self._in_key = False
        self._pieces: list[str] = []  # decoded text of the current string, not yet reported
        self._high: str | None = None  # a high surrogate escape waiting for its pair
        self._high_start = 0
        self._esc = ""  # what followed the backslash so far
        self._esc_start = 0
        self._number = _N_MINUS
        self._number_start = 0
        self._literal = ""  # the characters of true / false / null still expected
        self._top_end = 0
        self._out: list[StringDelta] = []  # deltas of the current fragment's closed strings
        # Per fragment, compactly: the path and text of its one delta (the common case),
        # or ``None`` and its deltas in ``many_deltas`` when it has none or several.
        self.delta_paths: list[JSONPath | None] = []
        self.delta_texts: list[str] = []
        self.many_deltas: dict[int, tuple[StringDelta, ...]] = {}
        self.completed: dict[JSONPath, int] = {}  # path -> seq at which its value is final
        self.written: dict[JSONPath, int] = {}  # path -> seq at which a value there ended
        self.error: str | None = None
        self.error_at = 0  # offset of the offending character
        self.error_seq = 0  # the fragment that holds it

    # -- driving ------------------------------------------------------------------

    def feed(self, fragment: str, seq: int) -> None:
        self._seq = seq
        if self._state == _STRING and self._plain_text(fragment):
            return
        if self.error is None:
            handlers = self._handlers
            i, n = 0, len(fragment)
            while i < n:
                i = handlers[self._state](fragment, i)
        self._base += len(fragment)
        self._record(seq)

    def _plain_text(self, fragment: str) -> bool:
        """Record the usual fragment of a long argument, plain text inside the value
        string being written, as it is; ``False`` for anything else."""
        if self._in_key or self._high is not None or not fragment or self.error is not None:
            return False
        if _STRING_STOP.search(fragment) is not None:
            return False
        self._base += len(fragment)
        self.delta_paths.append(self._value_path)
        self.delta_texts.append(fragment)
        return True

    def _record(self, seq: int) -> None:
        out, pieces = self._out, self._pieces
        if pieces and not self._in_key:
            # The value string still open got this much; a key waits for its end.
            text = pieces[0] if len(pieces) == 1 else "".join(pieces)
            pieces.clear()
            if not out:  # the common case: one string extended, nothing else
                self.delta_paths.append(self._value_path)
                self.delta_texts.append(text)
                return
            out.append(_delta(self._value_path, text))
        if len(out) == 1:
            self.delta_paths.append(out[0].path)
            self.delta_texts.append(out[0].text)
        else:
            self.delta_paths.append(None)
            self.delta_texts.append("")
            if out:
                self.many_deltas[seq] = tuple(out)
        out.clear()

    def string_deltas(self, seq: int) -> tuple[StringDelta, ...]:
        path = self.delta_paths[seq]
        if path is None:
            return self.many_deltas.get(seq, ())
        return (_delta(path, self.delta_texts[seq]),)

    def _fail(self, s: str, i: int, reason: str | None = None) -> int:
        self.error_at = self._base + i
        self.error_seq = self._seq
        self.error = f"{reason or f'unexpected {s[i]!r}'} at offset {self.error_at}"
        return len(s)

    def _skip_whitespace(self, s: str, i: int) -> int:
        match = _WHITESPACE_RUN.match(s, i)
        return match.end() if match else i

    # -- structure ----------------------------------------------------------------

    def _child_path(self) -> JSONPath:
        if self._stack:
            return (*self._container_paths[-1], self._slots[-1])
        return ()

    def _value(self, s: str, i: int) -> int:
        c = s[i]
        if c in _WHITESPACE:
            return self._skip_whitespace(s, i)
        if c == '"':
            self._value_path = self._child_path()
            self._in_key = False
            self._state = _STRING
            return i + 1
        if c in "{[":
            return self._open(s, i)
        if c == "]" and self._state == _VALUE_OR_CLOSE:
            return self._close(i)
        number = _NUMBER_START.get(c)
        if number is not None:
            self._value_path = self._child_path()
            self._number = number
            self._number_start = self._base + i
            self._state = _NUMBER
            return i + 1
        tail = _LITERAL_TAILS.get(c)
        if tail is not None:
            self._value_path = self._child_path()
            self._literal = tail
            self._state = _LITERAL
            return i + 1
        return self._fail(s, i)

    def _open(self, s: str, i: int) -> int:
        if len(self._stack) >= MAX_DEPTH:
            return self._fail(s, i, f"nesting deeper than {MAX_DEPTH} levels")
        self._container_paths.append(self._child_path())
        self._goods.append(self._base + i + 1)
        if s[i] == "{":
            self._objects += 1
            self._stack.append("}")
            self._slots.append("")
            self._state = _KEY_OR_CLOSE
        else:
            self._stack.append("]")
            self._slots.append(0)
            self._state = _VALUE_OR_CLOSE
        return i + 1

    def _close(self, i: int) -> int:
        if self._stack.pop() == "}":
            self._objects -= 1
        self._slots.pop()
        self._goods.pop()
        self._finished(self._container_paths.pop())
        if not self._objects and self._held:
            seq, completed = self._seq, self.completed
            for path in self._held:
                completed[path] = seq
            self._held.clear()
        self._value_end(self._base + i + 1)
        return i + 1

    def _finished(self, path: JSONPath) -> None:
        self.written.setdefault(path, self._seq)
        if self._objects:
            self._held.append(path)
        else:
            self.completed[path] = self._seq

    def _value_end(self, end: int) -> None:
        if self._stack:
            self._goods[-1] = end
            self._state = _AFTER
        else:
            self._top_end = end
            self._state = _DONE

    def _key(self, s: str, i: int) -> int:
        c = s[i]
        if c in _WHITESPACE:
            return self._skip_whitespace(s, i)
        if c == '"':
            self._in_key = True
            self._state = _STRING
            return i + 1
        if c == "}" and self._state == _KEY_OR_CLOSE:
            return self._close(i)
        return self._fail(s, i)

    def _colon(self, s: str, i: int) -> int:
        c = s[i]
        if c in _WHITESPACE:
            return self._skip_whitespace(s, i)
        if c == ":":
            self._state = _VALUE
            return i + 1
        return self._fail(s, i)

    def _after(self, s: str, i: int) -> int:
        c = s[i]
        if c in _WHITESPACE:
            return self._skip_whitespace(s, i)
        if c == ",":
            if self._stack[-1] == "}":
                self._state = _KEY
            else:
                self._slots[-1] += 1  # type: ignore[operator]  # an array's slot is its index
                self._state = _VALUE
            return i + 1
        if c == self._stack[-1]:
            return self._close(i)
        return self._fail(s, i)

    def _done(self, s: str, i: int) -> int:
        if s[i] in _WHITESPACE:
            return self._skip_whitespace(s, i)
        return self._fail(s, i, f"unexpected {s[i]!r} after the end of the value")

    # -- strings ------------------------------------------------------------------

    def _string(self, s: str, i: int) -> int:
        if self._high is not None:
            if s[i] == "\\":
                return self._start_escape(i)
            self._flush_high()
        # Plain text and whole escapes are read and decoded in C; the slow path only
        # sees an escape cut by the fragment's end, a high surrogate without its pair
        # in sight, or an error.
        j = _STRING_BODY.match(s, i).end()  # type: ignore[union-attr]  # matches ''
        if j > i:
            text = s[i:j]
            if "\\" in text:
                text = _DECODER.raw_decode(f'"{text}"')[0]
            self._pieces.append(text)
        if j == len(s):
            return j
        c = s[j]
        if c == '"':
            self._end_string(j)
            return j + 1
        if c == "\\":
            return self._start_escape(j)
        return self._fail(s, j, f"unescaped control character {c!r} in a string")

    def _start_escape(self, j: int) -> int:
        self._esc = ""
        self._esc_start = self._base + j
        self._state = _ESCAPE
        return j + 1

    def _end_string(self, j: int) -> None:
        if self._in_key:
            self._slots[-1] = "".join(self._pieces)
            self._pieces.clear()
            self._state = _COLON
            return
        if self._pieces:
            self._report_pieces()
        self._finished(self._value_path)
        self._value_end(self._base + j + 1)

    def _report_pieces(self) -> None:
        self._out.append(_delta(self._value_path, "".join(self._pieces)))
        self._pieces.clear()

    def _flush_high(self) -> None:
        # An unpaired high surrogate stays in the string, as ``json.loads`` keeps it.
        self._pieces.append(self._high or "")
        self._high = None

    def _escape(self, s: str, i: int) -> int:
        if not self._esc:
            c = s[i]
            i += 1
            if c != "u":
                char = _SIMPLE_ESCAPES.get(c)
                if char is None:
                    return self._fail(s, i - 1, f"invalid escape {c!r} after a backslash")
                if self._high is not None:
                    self._flush_high()
                self._pieces.append(char)
                self._state = _STRING
                return i
            self._esc = "u"
        chunk = s[i : i + 5 - len(self._esc)]
        for k, h in enumerate(chunk):
            if h not in _HEX_DIGITS:
                return self._fail(s, i + k, f"invalid \\u escape: {h!r}")
        self._esc += chunk
        if len(self._esc) == 5:  # 'u' and four hex digits
            self._code_point(int(self._esc[1:], 16))
            self._state = _STRING
        return i + len(chunk)

    def _code_point(self, code: int) -> None:
        if self._high is not None and 0xDC00 <= code <= 0xDFFF:
            pair = 0x10000 + ((ord(self._high) - 0xD800) << 10) + (code - 0xDC00)
            self._pieces.append(chr(pair))
            self._high = None
            return
        if self._high is not None:
            self._flush_high()
        if 0xD800 <= code <= 0xDBFF:
            # Held back: the next escape may be its low half.
            self._high = chr(code)
            self._high_start = self._esc_start
        else:
            self._pieces.append(chr(code))

    # -- numbers and literals -----------------------------------------------------

    def _number_chars(self, s: str, i: int) -> int:
        state, n = self._number, len(s)
        while i < n:
            following = _NUMBER_NEXT[state].get(s[i])
            if following is None:
                break
            state = following
            i += 1
        self._number = state
        if i == n:
            return n
        if s[i] in _NUMBER_CHARS or state not in _NUMBER_FINAL:
            return self._fail(s, i)
        limit = sys.get_int_max_str_digits()
        if limit and state in _INTEGER and self._base + i - self._number_start > limit:
            # Python refuses to read such an integer, so the final parse will too.
            return self._fail(s, i, f"an integer longer than {limit} digits")
        # The number ends here; the character after it belongs to the next state.
        self._finished(self._value_path)
        self._value_end(self._base + i)
        return i

    def _literal_chars(self, s: str, i: int) -> int:
        expected = self._literal
        chunk = s[i : i + len(expected)]
        if not expected.startswith(chunk):
            k = next(k for k, (a, b) in enumerate(zip(chunk, expected, strict=False)) if a != b)
            return self._fail(s, i + k)
        i += len(chunk)
        self._literal = expected[len(chunk) :]
        if not self._literal:
            self._finished(self._value_path)
            self._value_end(self._base + i)
        return i

    # -- partial values -----------------------------------------------------------

    def snapshot(self, text: str) -> Any:
        """The value of ``text`` (all this scanner has read): finished values, the
        string being written, open containers closed; ``None`` before any value."""
        state = self._state
        if state == _DONE:
            return json.loads(text[: self._top_end])
        closers = "".join(reversed(self._stack))
        if state in (_STRING, _ESCAPE) and not self._in_key:
            end = self.error_at if self.error is not None else self._base
            if self._high is not None:
                end = self._high_start
            elif state == _ESCAPE:
                end = self._esc_start
            return json.loads(f'{text[:end]}"{closers}')
        if not self._stack:
            return None
        return json.loads(text[: self._goods[-1]] + closers)


# Fragments are joined into one string every this many, so that a long argument sent
# in tiny pieces costs memory for its text, not one object per piece.
_BLOCK: Final = 256


class ArgumentsView:
    """Shared by every ``ToolInputDelta`` of one tool call.

    ``append`` is O(1). Queries for fragment ``seq`` parse up to it once, on first use.
    The fragments are kept as joined blocks plus each one's end offset, so any of them
    can still be read back.
    """

    __slots__ = ("_blocks", "_ends", "_processed", "_recent", "_scanner", "_size")

    def __init__(self) -> None:
        self._blocks: list[str] = []
        self._recent: list[str] = []
        self._ends = array("q")
        self._size = 0
        self._scanner = _Scanner()
        self._processed = 0

    def append(self, fragment: str) -> int:
        # Assembler.tool_input does the same inline: keep the two alike.
        recent = self._recent
        recent.append(fragment)
        self._size += len(fragment)
        ends = self._ends
        ends.append(self._size)
        if len(recent) == _BLOCK:
            self._blocks.append("".join(recent))
            recent.clear()
        return len(ends) - 1

    def extend(self, fragments: Sequence[str]) -> int:
        """:meth:`append` for several fragments at once; the first one's number."""
        first = len(self._ends)
        ends = self._ends
        # From a list: array.extend takes an iterator's items one call at a time.
        ends.fromlist(list(accumulate(map(len, fragments), initial=self._size))[1:])
        self._size = ends[-1]
        recent = self._recent
        recent.extend(fragments)
        while len(recent) >= _BLOCK:
            self._blocks.append("".join(recent[:_BLOCK]))
            del recent[:_BLOCK]
        return first

    def __len__(self) -> int:
        return len(self._ends)

    def fragment(self, seq: int) -> str:
        """Fragment ``seq`` as it was appended."""
        block, at = divmod(seq, _BLOCK)
        if block == len(self._blocks):
            return self._recent[at]
        ends = self._ends
        base = ends[block * _BLOCK - 1] if block else 0
        start = ends[seq - 1] - base if at else 0
        return self._blocks[block][start : ends[seq] - base]

    def text(self, count: int | None = None) -> str:
        """The first ``count`` fragments joined (all of them by default)."""
        whole = "".join(self._blocks) + "".join(self._recent)
        if count is None or count >= len(self._ends):
            return whole
        return whole[: self._ends[count - 1]] if count > 0 else ""

    def _catch_up(self, seq: int) -> _Scanner:
        """Read the fragments up to ``seq`` that have not been read yet."""
        if not 0 <= seq < len(self._ends):
            raise IndexError(f"no fragment {seq} (have {len(self._ends)})")
        scanner = self._scanner
        while self._processed <= seq:
            scanner.feed(self.fragment(self._processed), self._processed)
            self._processed += 1
        return scanner

    def string_deltas(self, seq: int) -> tuple[StringDelta, ...]:
        """The decoded text fragment ``seq`` added to each string value."""
        if not 0 <= seq < self._processed:
            self._catch_up(seq)
        return self._scanner.string_deltas(seq)

    def is_complete(self, seq: int, path: JSONPath) -> bool:
        """Whether the value at ``path`` was final by fragment ``seq``."""
        if not 0 <= seq < self._processed:
            self._catch_up(seq)
        return self._scanner.completed.get(path, _NEVER) <= seq

    def is_written(self, seq: int, path: JSONPath) -> bool:
        """Whether a value at ``path`` had been written to its end by fragment ``seq``."""
        if not 0 <= seq < self._processed:
            self._catch_up(seq)
        return self._scanner.written.get(path, _NEVER) <= seq

    def error(self, seq: int) -> str | None:
        """Why the text stopped being JSON at or before fragment ``seq``, if it did."""
        scanner = self._catch_up(seq)
        if scanner.error is None or scanner.error_seq > seq:
            return None
        return scanner.error

    def partial(self, seq: int) -> Any:
        """The arguments' value after fragment ``seq`` (see ``_Scanner.snapshot``)."""
        scanner = self._catch_up(seq)
        text = self.text(seq + 1)
        if self._processed != seq + 1:
            # Read after later fragments: rebuild the state at ``seq`` from its text.
            scanner = _Scanner()
            scanner.feed(text, 0)
        try:
            return scanner.snapshot(text)
        except (RecursionError, ValueError):
            # ``json.loads`` recurses once per level (a caller already deep in its own
            # stack can run out of it on deeply nested arguments) and refuses integers
            # past Python's digit limit. Nothing to show then.
            return None


class TextView(ArgumentsView):
    """The view of a custom (free-form) tool call's input: plain text, not JSON.

    Each fragment extends the one string value at the path ``()``; the text is finished
    only when the provider ends the call (its ``BlockEnd``), so no fragment reports it
    complete; ``partial`` is the text so far.
    """

    __slots__ = ()

    def string_deltas(self, seq: int) -> tuple[StringDelta, ...]:
        fragment = self.fragment(seq)
        return (_delta((), fragment),) if fragment else ()

    def is_complete(self, seq: int, path: JSONPath) -> bool:
        if not 0 <= seq < len(self):
            raise IndexError(f"no fragment {seq} (have {len(self)})")
        return False

    is_written = is_complete

    def error(self, seq: int) -> str | None:
        return None

    def partial(self, seq: int) -> Any:
        return self.text(seq + 1)


_WRITTEN: Final = object()


class WholeView(ArgumentsView):
    """The view of arguments sent whole, as a parsed object (Ollama, Gemini): one
    fragment, the value's JSON text, written only when something reads it (the event's
    ``fragment``, a live-argument query, a fragment added after it). A stream whose
    reader takes only the final input never writes it."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        super().__init__()
        self._value = value

    def written(self) -> int:
        """Write the value's text, if it is not yet: the text's length."""
        if self._value is not _WRITTEN:
            text = jsonlib.dumps_parsed(self._value)
            self._value = _WRITTEN
            ArgumentsView.append(self, text)
        return self._size

    def __len__(self) -> int:
        return 1 if self._value is not _WRITTEN else len(self._ends)

    def append(self, fragment: str) -> int:
        self.written()
        return super().append(fragment)

    def extend(self, fragments: Sequence[str]) -> int:
        self.written()
        return super().extend(fragments)

    def fragment(self, seq: int) -> str:
        self.written()
        return super().fragment(seq)

    def text(self, count: int | None = None) -> str:
        self.written()
        return super().text(count)

    def _catch_up(self, seq: int) -> _Scanner:
        self.written()
        return super()._catch_up(seq)
