"""Plain deltas read from their bytes: a stream's frames that differ from the last plain
delta read only in its piece, taken without parsing them.

Nearly every frame of a stream is a plain delta (:mod:`~.plain`), and nearly every one is
the one before it with another piece: the same keys, in the same order, with the same
values, around one string. A :class:`Template` is such a frame's bytes cut around that
string (its *prefix* and *suffix*). A frame whose bytes are the prefix, a JSON string
literal and the suffix is, token for token, the same JSON with another string at the same
place, so the handler's ``_plain`` would read it as the same block's piece, of the same
kind: its piece is the literal's value, and nothing else needs reading.

That is proven once per template, when it is learned (:func:`learn`), not assumed: the
frame it is learned from must hold the piece's literal exactly once, and the frame
written with another literal there must parse to the same value but for that one string
(every key, list and value compared), and be read by ``_plain`` as the same block's piece,
of the same kind, with the new string as that piece.

A template holds only while nothing but plain deltas of its block came: any other frame
may change what ``_plain`` reads (a new call at the same index), so the reader drops the
template at the first such frame (:meth:`Template.after`, for a frame read alone; a batch
frame the template does not match) and learns a new one from the next plain delta it
reads the usual way. Before each batch the handler's ``_plain`` reads the learned frame
again, so that its state (the block is still open, no reasoning tag is being read) is
asked as it is now; the pieces then go to :func:`~.plain.hand_over`, which asks the
handler's ``_ready`` and the assembler as any run does. Readers whose plain deltas also
carry something else (``_took``) are not read this way.

A reader may name top-level keys whose string values ``_plain`` never reads
(``PlainReader._padding``: OpenAI's ``obfuscation``, random characters of a random length in
every chunk). A template learned from a frame with such a key after its piece has a
second place cut out, that string's contents, which may differ from frame to frame; it is
proven the same way, the frame written with another piece and another padding parsing to
the same value but for those two strings, and ``_plain`` reading it as the same block's
piece. A padding must be plain ASCII (no quote, backslash or control character) to match.

Frames are matched all at once: the batch's payloads are joined with NUL bytes (which no
template and no literal it matches holds) and split at the template's bytes between two
pieces, in C; each piece is then checked to be one string's contents (no quote, no
control character; JSON's escapes only), and those with escapes are read as one JSON
array. A literal that is not valid (a bad escape, invalid UTF-8) leaves the batch to the
usual reader, which says what is wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any, Final, cast

from .._core import jsonlib
from .plain import PlainReader, hand_over

__all__ = ["Template", "learn"]

# What a literal without an escape may not hold: its quote, and control characters.
_NOT_IN_PLAIN: Final = b'"' + bytes(range(0x20))
# A string literal's contents (any of them, NUL-separated): characters a literal holds as
# they are, and JSON's escapes. Each branch starts with its own byte, so the quantifiers
# are possessive: a run that fails to match is never tried again in shorter pieces (which
# takes time exponential in its length).
_CONTENTS: Final = re.compile(rb'(?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4}|\x00)*+')

# What a padding may not hold: its quote, a backslash, control characters.
_NOT_IN_PADDING: Final = _NOT_IN_PLAIN + b"\\"

# How many bytes of a long separator ``_split`` searches for (the rest is checked after
# each find): bytes.split looks at its whole separator again after each find, at a cost
# that grows with its length (a template's are about a hundred bytes).
_SEARCHED: Final = 16

TRIES: Final = 8
"""How many times a stream may fail to learn a template, or learn one that then matches
nothing, before it stops learning them (frames that differ in more than their piece, as
an id or a padding that changes every frame)."""


class Template:
    """A plain delta's bytes around its piece (see the module)."""

    __slots__ = (
        "_between",
        "_head",
        "_middle",
        "closing",
        "key",
        "kind",
        "name",
        "obj",
        "opening",
        "reader",
        "taken",
    )

    def __init__(
        self,
        reader: PlainReader,
        name: str | None,
        obj: Any,
        key: Hashable,
        kind: bool,
        *,
        prefix: bytes,
        suffix: bytes,
        padding: tuple[bytes, bytes] | None = None,
    ) -> None:
        self.reader = reader
        self.name = name
        self.obj = obj
        self.key = key
        self.kind = kind
        self.taken = 0
        """How many frames the template took so far."""
        self.opening = prefix + b'"'
        """A frame's bytes up to its piece."""
        # With a padding (``suffix`` is ``before``, the padding's contents and ``after``):
        # the bytes from the piece to the padding, and the frame's from the padding on.
        self._middle = None if padding is None else b'"' + padding[0]
        self.closing = b'"' + suffix if padding is None else padding[1]
        """A frame's bytes after its last part that differs (its piece or its padding)."""
        self._head = b"\x00" + self.opening  # a frame's start, up to its piece
        self._between = self.closing + b"\x00" + self.opening  # between two frames' parts

    def after(self, name: str | None, obj: Any) -> Template | None:
        """The template, if it still holds once the handler has read frame ``obj``
        alone: when that frame is a plain delta of the template's block and kind (which
        changes nothing but the block's content); else ``None``."""
        return self if self._ours(name, obj) else None

    def _ours(self, name: str | None, obj: Any) -> bool:
        """Whether the handler reads frame ``obj`` now as a plain delta of the template's
        block and kind."""
        hit = self.reader._plain(name, obj)
        return hit is not None and len(hit) == 3 and hit[0] == self.key and hit[2] is self.kind

    def run(
        self, names: Sequence[str | None] | None, payloads: Sequence[bytes | bytearray]
    ) -> tuple[int, bool]:
        """The batch's leading frames that match, handed over: how many were taken, and
        whether the template still holds (every frame matched and was taken; not when
        the handler no longer reads the learned frame the same way)."""
        if not payloads[0].startswith(self.opening) or not self._ours(self.name, self.obj):
            return 0, False
        count = len(payloads)
        if names is not None:
            if names.count(self.name) != count:
                count = next(at for at, name in enumerate(names) if name != self.name)
        elif self.name is not None:
            return 0, False
        pieces = self._pieces(payloads if count == len(payloads) else payloads[:count])
        if pieces is None:
            # Some frame is not the template's: the ones before it, each looked at alone.
            head, tail = self.opening, self.closing
            limit, count = count, 0
            for payload in payloads[:limit]:
                if not (payload.startswith(head) and payload.endswith(tail)):
                    break
                count += 1
            pieces = self._pieces(payloads[:count]) if count else None
            if pieces is None:
                return 0, False
        taken = hand_over(self.reader, 0, pieces, [self.key] * count, [(0, self.kind)])
        self.taken += taken
        return taken, taken == len(payloads)

    def take(self, data: bytes, head: bytes, tail: bytes) -> int:
        """The frames at the start of ``data`` (a stream's bytes, starting with ``head``)
        that are each ``head``, a piece (with a padding: a piece, the bytes between and a
        padding) and ``tail`` (what the framing reads as one frame of the template's
        payload: ``head`` ends with :attr:`opening`, ``tail`` starts with
        :attr:`closing`), handed over: how many bytes they span (``0``: none was taken).

        The bytes split at ``tail + head`` are the pieces, and the last one's frame ends
        where ``tail`` is next found. A piece holds no line end (no string's contents
        does), so no frame is cut anywhere but at its own ends; a piece that is not one
        string's contents (another frame between, a frame cut short) ends the run."""
        if not self._ours(self.name, self.obj):
            return 0
        found = _split(data, tail + head)
        found[0] = found[0][len(head) :]
        last = found[-1]
        end = last.find(tail)
        if end < 0:
            found.pop()  # the last frame is not whole yet: the usual reader holds it
        else:
            found[-1] = last[:end]
        pieces = self._values(found) if found else None
        if pieces is None:
            count = 0
            for piece in found:  # each looked at alone: a run up to the first that is not
                if self._values([piece]) is None:
                    break
                count += 1
            del found[count:]
            pieces = self._values(found) if found else None
            if pieces is None:
                return 0
        count = len(found)
        taken = hand_over(self.reader, 0, pieces, [self.key] * count, [(0, self.kind)])
        self.taken += taken
        if taken < count:
            del found[taken:]
        return taken * (len(head) + len(tail)) + sum(map(len, found))

    def _pieces(self, payloads: Sequence[bytes | bytearray]) -> list[str] | None:
        """Every payload's piece, if every one is the template's; else ``None``. The
        payloads joined with NUL bytes (which no template holds) are the frames' starts
        and pieces, and the pieces are what lies between the template's bytes."""
        head = self._head
        joined = b"\x00" + b"\x00".join(payloads)
        if not joined.startswith(head) or not joined.endswith(self.closing):
            return None
        found = _split(joined[len(head) : len(joined) - len(self.closing)], self._between)
        if len(found) != len(payloads):
            return None
        return self._values(found)

    def _values(self, found: list[bytes]) -> list[str] | None:
        """The pieces of frames' parts that differ (each a piece, or a piece, the bytes
        between and a padding), or ``None`` if any is not the template's."""
        middle = self._middle
        if middle is None:
            return _decoded(found)
        # Each part cut at the first bytes between (a piece holds no quote: if one seems
        # to, it is not one string's contents, and _decoded says so).
        parts = list(map(bytes.partition, found, repeat(middle)))
        if not all(map(itemgetter(1), parts)):
            return None
        padding = b"".join(map(itemgetter(2), parts))
        if not padding.isascii() or len(padding.translate(None, _NOT_IN_PADDING)) != len(padding):
            return None
        return _decoded(list(map(itemgetter(0), parts)))


def _split(data: bytes, separator: bytes) -> list[bytes]:
    """``data.split(separator)``, for a long separator searched for by its first bytes
    only: each piece after one of them then starts with the rest of the separator, which
    is cut off; the pieces joined again with the whole separator must be ``data`` (one
    comparison, not one per piece), and then no piece holds the separator's first bytes,
    so none holds the separator. The last piece may also be the start of that rest
    (``data`` ends inside a separator, which then splits nothing). Anything else is split
    the usual way."""
    if len(separator) <= 2 * _SEARCHED:
        return data.split(separator)
    head, rest = separator[:_SEARCHED], separator[_SEARCHED:]
    found = data.split(head)
    if len(found) == 1:
        return found
    last = found[-1]
    whole = last.startswith(rest)
    if not whole and not rest.startswith(last):
        return data.split(separator)
    size = len(rest)
    pieces = [found[0], *map(itemgetter(slice(size, None)), found[1:])]
    if not whole:  # the data ends inside a separator: the piece before goes on to it
        pieces.pop()
        pieces[-1] += head + last
    if separator.join(pieces) != data:  # some piece did not start with the rest
        return data.split(separator)
    return pieces


def _decoded(found: list[bytes]) -> list[str] | None:
    """The values of string literals' contents, or ``None`` if any is not one string's
    contents (a quote, a control character, a bad escape, invalid UTF-8: the usual
    reader then says what is wrong)."""
    text = b"".join(found)
    try:
        if b"\\" not in text:
            if len(text.translate(None, _NOT_IN_PLAIN)) != len(text):
                return None
            return list(map(bytes.decode, found))
        return _strings(found)
    except ValueError:
        return None


def _strings(found: list[bytes]) -> list[str]:
    """The values of JSON string literals' contents, some with escapes: each checked to
    be one string's contents, then all read at once as one array by the JSON reader (the
    standard library's where the fast one refuses a lone surrogate, as for any frame)."""
    if _CONTENTS.fullmatch(b"\x00".join(found)) is None:
        raise ValueError("not a string's contents")
    text = b'["' + b'","'.join(found) + b'"]'
    try:
        values = jsonlib.loads(text)
    except ValueError:
        values = json.loads(text)
    if len(values) != len(found):  # never: each is one string's contents
        raise ValueError("not one value per string")
    return cast("list[str]", values)


def learn(
    handler: PlainReader, name: str | None, obj: Any, payload: bytes | bytearray
) -> Template | None:
    """The template of a frame that ``handler`` read as a plain delta (``obj``, parsed
    from ``payload``), or ``None`` where one cannot be proven (see the module)."""
    hit = handler._plain(name, obj)
    if hit is None or len(hit) != 3:
        return None
    key, piece, kind = hit
    data = bytes(payload)
    spans = []
    for literal in {
        json.dumps(piece, ensure_ascii=False).encode("utf-8", "surrogatepass"),
        json.dumps(piece).encode(),
    }:
        at = data.find(literal)
        while at >= 0:
            spans.append((at, at + len(literal)))
            at = data.find(literal, at + 1)
    if len(spans) != 1 or b"\x00" in data:
        return None
    start, end = spans[0]
    prefix, suffix = data[:start], data[end:]
    other = "0" if piece != "0" else "1"
    padding = _padding(handler, obj, suffix)
    written = suffix
    if padding is not None:
        pad_name, pad, (before, after) = padding
        other_pad = "0" if pad != "0" else "1"
        written = before + other_pad.encode() + after
    try:
        probe = json.loads(prefix + b'"' + other.encode() + b'"' + written)
    except ValueError:
        return None
    again = handler._plain(name, probe)  # with the other piece (and the other padding)
    if padding is not None:
        # The padding put back, for the comparison of everything else.
        if probe.__class__ is not dict or probe.get(pad_name) != other_pad:
            return None
        probe[pad_name] = pad
    if not _one_leaf_differs(obj, probe, piece, other):
        return None
    if again is None or len(again) != 3 or again[0] != key or again[1] != other:
        return None
    if again[2] is not kind:
        return None
    cuts = None if padding is None else padding[2]
    return Template(handler, name, obj, key, kind, prefix=prefix, suffix=suffix, padding=cuts)


def _padding(
    handler: PlainReader, obj: Any, suffix: bytes
) -> tuple[str, str, tuple[bytes, bytes]] | None:
    """A padding after the piece: the name of one of the reader's padding keys at the top
    of ``obj``, its string value, and ``suffix`` cut around the value's contents (the
    bytes up to its opening quote, and from its closing quote on); ``None`` where there is
    none, or it is not written plainly (once, with no space or one after its colon, its
    contents the value's as they are)."""
    if not handler._padding or obj.__class__ is not dict:
        return None
    for name in handler._padding:
        value = obj.get(name)
        if value.__class__ is not str or not value.isascii():
            continue
        key = json.dumps(name).encode()
        literal = key + b':"' if key + b':"' in suffix else key + b': "'
        at = suffix.find(literal)
        if at < 0 or suffix.find(literal, at + 1) >= 0:
            continue
        start = at + len(literal)
        end = start + len(value)
        if suffix[start:end] != value.encode() or suffix[end : end + 1] != b'"':
            continue
        return name, value, (suffix[:start], suffix[end:])
    return None


def _one_leaf_differs(obj: Any, probe: Any, piece: str, other: str) -> bool:
    """Whether ``probe`` is ``obj`` with one string, ``piece``, made ``other``: the same
    keys, lists and values everywhere else."""
    differing = 0
    stack = [(obj, probe)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, dict):
            if a.keys() != b.keys():
                return False
            stack.extend((a[k], b[k]) for k in a)
        elif isinstance(a, list):
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b, strict=True))
        elif a != b:
            if a != piece or b != other:
                return False
            differing += 1
    return differing == 1
