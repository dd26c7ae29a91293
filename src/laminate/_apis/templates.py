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
handler's ``_ready`` and the assembler as any run does.

A reader may name top-level keys that ``_plain`` never reads: a padding's
(``PlainReader._padding``: OpenAI's ``obfuscation``, random characters of a random length in
every chunk) and a count's (``PlainReader._counted``: the Responses API's
``sequence_number``, Gemini's usage so far). A template learned from a frame with such a
key has more *places* cut out besides its piece, before or after it: that padding's
contents, and each integer in that count's value, which may differ from frame to frame.
It is proven the same way, the frame written with another value in every place parsing to
the same value but for those leaves, and ``_plain`` reading it as the same block's piece.
A padding must be plain ASCII (no quote, backslash or control character), and a count a
non-negative integer, to match. Where ``_plain`` gives each frame something to keep
(Gemini's usage so far, which the next replaces), the last frame taken is parsed and its
own given to ``_took``: the frames before it differ from it only in counts that it
replaces.

Where blocks' pieces come turn about (OpenAI's parallel calls, fragment by fragment), a
template learned from a frame that follows a plain delta of another block of the same kind
has a *key place*: the first integer of the frame that, written with another value, reads
as the same piece of another block (the call's ``index``). Each value met there is proven
once as the template was, and its frame is read by ``_plain`` again before each batch (so
that the handler is asked as it is now); each frame's piece then goes to that block.

Frames are matched all at once: the batch's payloads are joined with NUL bytes (which no
template and no literal it matches holds) and split at the template's bytes between two
frames' places, in C; a piece and a padding after it are cut apart at the bytes between
them, in C too (a batch's frames all at once, by one pattern that matches what lies
between a frame's piece and the next frame's, and checks the padding), and more places
are checked and cut out by one pattern matched over the batch. Each piece is then checked
to be one string's contents (no quote that a backslash does not escape, no control
character), and those with escapes are read as one JSON array. A literal that is not
valid (a bad escape, invalid UTF-8) leaves the batch to the usual reader, which says what
is wrong.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Hashable, Sequence
from itertools import islice, repeat
from operator import itemgetter
from typing import Any, Final, cast

from .._core import jsonlib
from .plain import Plain, PlainReader, hand_over

__all__ = ["Template", "learn"]

# What a literal without an escape may not hold: its quote, and control characters.
_NOT_IN_PLAIN: Final = b'"' + bytes(range(0x20))

# What a padding may not hold: its quote, a backslash, control characters (DEL too, as
# the pattern of a padding's place has it).
_NOT_IN_PADDING: Final = _NOT_IN_PLAIN + b"\\\x7f"

# What a template's places are (the piece; a padding's contents; an integer of a count;
# the integer that says whose piece it is), and what each may hold, as a pattern: the
# piece one string's contents, a padding plain ASCII, a count or key a non-negative
# integer written as JSON writes it; the piece and the key captured.
PIECE: Final = 0
PADDING: Final = 1
COUNT: Final = 2
KEY: Final = 3
_PLACE: Final = {
    PIECE: rb'((?:[^"\\\x00-\x1f]++|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*+)',
    PADDING: rb"[\x20\x21\x23-\x5b\x5d-\x7e]*+",
    COUNT: rb"(?:0|[1-9][0-9]*+)",
    KEY: rb"(0|[1-9][0-9]*+)",
}

# A JSON text's tokens: strings, punctuation, and anything else (numbers, literals);
# the blanks between them are not matched.
_TOKEN: Final = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[{}\[\]:,]|[^\s"{}\[\]:,]++', re.S)

# How many bytes of a long separator ``_split`` searches for (the rest is checked after
# each find): bytes.split looks at its whole separator again after each find, at a cost
# that grows with its length (a template's are about a hundred bytes).
_SEARCHED: Final = 16

TRIES: Final = 8
"""How many times a stream may fail to learn a template, or learn one that then matches
nothing, before it stops learning them (frames that differ in more than their piece, as
an id or a padding that changes every frame)."""


class Template:
    """A plain delta's bytes around its places (see the module)."""

    __slots__ = (
        "_between",
        "_changes",
        "_cut",
        "_gap",
        "_groups",
        "_head",
        "_keeps",
        "_known",
        "_middle",
        "_pattern",
        "_places",
        "_segments",
        "_written",
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
        segments: Sequence[bytes],
        places: Sequence[int],
        written: Sequence[bytes] = (),
        changes: Sequence[tuple[Any, Any]] = (),
        probe: Any = None,
    ) -> None:
        self.reader = reader
        self.name = name
        self.obj = obj
        self.key = key
        self.kind = kind
        self.taken = 0
        """How many frames the template took so far."""
        self.opening = segments[0]
        """A frame's bytes up to its first place."""
        self.closing = segments[-1]
        """A frame's bytes after its last place."""
        # The bytes from the first place to the last (each frame's *part*) are the piece
        # alone; the piece, the bytes between and a padding (cut at those bytes, in C);
        # or matched by one pattern that also captures the piece.
        self._middle = segments[1] if tuple(places) == (PIECE, PADDING) else None
        self._pattern = None
        if len(places) > 1 and self._middle is None:
            pattern = b"".join(
                _PLACE[place] + re.escape(cut)
                for place, cut in zip(places, [*segments[1:-1], b""], strict=True)
            )
            self._pattern = re.compile(pattern + b"\x00")
        self._head = b"\x00" + self.opening  # a frame's start, up to its first place
        self._between = self.closing + b"\x00" + self.opening  # between two frames' parts
        # A padded template's batch is cut at what lies between one frame's piece and the
        # next one's (the bytes between, a padding, the closing, the NUL, the opening), by
        # a pattern compiled once it pays (see ``_gap``).
        self._gap = None if self._middle is None else _GAPS.get((self._middle, self._between))
        self._cut = 0  # the frames of batches cut apart one by one, the gap not compiled
        # Whether the reader keeps what plain deltas also carry (``_took``).
        self._keeps = type(reader)._took is not PlainReader._took
        # With a key place, what proves another key's frames (see ``_keys``): the frame
        # cut at its places, and the values the learned frame was proven with in each
        # place (``written``; the key its own) and the leaves that then differ.
        self._segments, self._places = tuple(segments), tuple(places)
        self._written, self._changes = tuple(written), list(changes)
        # Each key place's value proven so far: the frame proven with it, and its key;
        # and the pattern's groups of the piece and the key, in the order they come.
        self._known: dict[bytes, tuple[Any, Hashable]] = {}
        self._groups = (1, 2)
        if KEY in places:
            self._known[written[places.index(KEY)]] = (probe, key)
            if places.index(KEY) < places.index(PIECE):
                self._groups = (2, 1)

    def after(self, name: str | None, obj: Any) -> Template | None:
        """The template, if it still holds once the handler has read frame ``obj``
        alone: when that frame is a plain delta of the template's block and kind (with a
        key place, of any block: each is asked again before a batch), which changes
        nothing but the block's content; else ``None``."""
        if self._known:
            hit = self.reader._plain(name, obj)
            return self if hit is not None and len(hit) >= 3 and hit[2] is self.kind else None
        return self if self._ours(name, obj) else None

    def _ours(self, name: str | None, obj: Any) -> bool:
        """Whether the handler reads frame ``obj`` now as a plain delta of the template's
        block and kind."""
        hit = self.reader._plain(name, obj)
        return hit is not None and len(hit) >= 3 and hit[0] == self.key and hit[2] is self.kind

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
        values = self._pieces(payloads if count == len(payloads) else payloads[:count])
        if values is None:
            # Some frame is not the template's: the ones before it, each looked at alone.
            head, tail = self.opening, self.closing
            limit, count = count, 0
            for payload in payloads[:limit]:
                if not (payload.startswith(head) and payload.endswith(tail)):
                    break
                count += 1
            values = self._pieces(payloads[:count]) if count else None
            if values is None:
                return 0, False
        taken = self._hand_over(values, count)
        if taken and self._keeps:
            self._kept(payloads[taken - 1])
        return taken, taken == len(payloads)

    def take(self, data: bytes, head: bytes, tail: bytes) -> int:
        """The frames at the start of ``data`` (a stream's bytes, starting with ``head``)
        that are each ``head``, a part (the frame's places and the bytes between them) and
        ``tail`` (what the framing reads as one frame of the template's payload: ``head``
        ends with :attr:`opening`, ``tail`` starts with :attr:`closing`), handed over: how
        many bytes they span (``0``: none was taken).

        The bytes split at ``tail + head`` are the parts, and the last one's frame ends
        where ``tail`` is next found. A part holds no line end (no place does, and the
        bytes between are a frame's), so no frame is cut anywhere but at its own ends; a
        part that is not the template's (another frame between, a frame cut short) ends
        the run."""
        if not self._ours(self.name, self.obj):
            return 0
        found = _split(data, tail + head)
        if len(found[0]) < len(head):
            return 0  # the first frame's head and tail share bytes: not the template's
        found[0] = found[0][len(head) :]
        last = found[-1]  # the end of ``data``, as every part's last one is
        end = last.find(tail)
        if end < 0:
            found.pop()  # the last frame is not whole yet: the usual reader holds it
            span = len(data) - len(last) - len(head)  # where the frame before it ends
        else:
            found[-1] = last[:end]
            span = len(data) - len(last) + end + len(tail)
        whole = len(found)  # the frames that ``span`` spans
        values = self._values(found) if found else None
        if values is None:
            count = 0
            for part in found:  # each looked at alone: a run up to the first that is not
                if self._values([part]) is None:
                    break
                count += 1
            del found[count:]
            values = self._values(found) if found else None
            if values is None:
                return 0
        count = len(found)
        taken = self._hand_over(values, count)
        if taken < whole:
            del found[taken:]
            span = taken * (len(head) + len(tail)) + sum(map(len, found))
        if taken and self._keeps:
            self._kept(self.opening + found[-1] + self.closing)
        return span

    def _hand_over(self, values: tuple[list[str], list[Hashable]], count: int) -> int:
        """The pieces of ``count`` frames (``values``: one piece per frame, or one for
        them all where ``_decoded`` merged them) handed over: how many frames were
        taken. A merged piece is one block's, which takes it whole or not at all."""
        pieces, keys = values
        taken = hand_over(self.reader, 0, pieces, keys, [(0, self.kind)])
        if len(pieces) < count:
            taken = count if taken else 0
        self.taken += taken
        return taken

    def _keyed(self, found: list[bytes]) -> tuple[list[str], list[Hashable]] | None:
        """The pieces of parts that are each a piece alone (``_decoded``; one for them
        all where the reader's deltas are merged, ``Assembler.merge``: a run of one
        block's pieces then makes one delta), each with the template's key."""
        pieces = _decoded(found, self.reader.assembler.merge)
        return None if pieces is None else (pieces, [self.key] * len(pieces))

    def _pieces(
        self, payloads: Sequence[bytes | bytearray]
    ) -> tuple[list[str], list[Hashable]] | None:
        """Every payload's piece and key, if every one is the template's; else ``None``. The
        payloads joined with NUL bytes (which no template holds) are the frames' starts
        and parts, and the parts are what lies between the template's bytes."""
        head, closing = self._head, self.closing
        joined = b"\x00".join([b"", *payloads])
        if not joined.startswith(head) or not joined.endswith(closing):
            return None
        if len(joined) < len(head) + len(closing):
            return None  # a frame whose opening and closing share bytes: not the template's
        gap, middle = self._gap, self._middle
        if middle is not None and gap is None:
            if self._cut >= _GAP_AFTER:
                gap = self._gap = _gap(middle, self._between)
            else:
                self._cut += len(payloads)
        # Split whole, the first frame's head and the last one's closing cut off after: the
        # separator's NUL is a frame's start, so no match reaches into either. Cut at a
        # padded template's gaps, the parts are the pieces already, but for the last one.
        found = _split(joined, self._between) if gap is None else gap.split(joined)
        if len(found) != len(payloads):
            return None
        if len(found[0]) < len(head) or len(found[-1]) < len(closing):
            return None  # the first or the last frame's opening and closing share bytes
        found[0] = found[0][len(head) :]
        found[-1] = found[-1][: len(found[-1]) - len(closing)]
        if gap is None or middle is None:
            return self._values(found)
        return self._padded_pieces(found, middle)

    def _padded_pieces(
        self, found: list[bytes], middle: bytes
    ) -> tuple[list[str], list[Hashable]] | None:
        """``_values`` for the parts of a padded template's batch cut at its gaps (each
        match of the gap runs from ``middle`` after a piece to the next frame's opening,
        the NUL before that frame included, so that it is one frame's end and the next
        one's start): the pieces, but for the last part, cut at its padding as ``_padded``
        cuts a part. Where a frame is not the template's, there are fewer parts than
        frames, or one that holds a NUL, which no string's contents do."""
        cut = self._padded(found[-1:], middle)
        if cut is None:
            return None
        found[-1] = cut[0]
        return self._keyed(found)

    def _values(self, found: list[bytes]) -> tuple[list[str], list[Hashable]] | None:
        """The pieces and keys of frames' parts (each the piece alone, or the frame's
        places and the bytes between them), or ``None`` if any is not the template's."""
        pattern = self._pattern
        if pattern is None:
            cut = found if self._middle is None else self._padded(found, self._middle)
            return None if cut is None else self._keyed(cut)
        # One match per part, each right after the last: the splits between are empty.
        cut = pattern.split(b"\x00".join(found) + b"\x00")
        step = pattern.groups + 1
        if len(cut) != step * len(found) + 1 or any(cut[::step]):
            return None
        if step == 2:
            return self._keyed(cut[1::2])
        first, second = self._groups
        pieces = _decoded(cut[first::step])
        keys = None if pieces is None else self._keys(cut[second::step])
        return None if pieces is None or keys is None else (pieces, keys)

    @staticmethod
    def _padded(found: list[bytes], middle: bytes) -> list[bytes] | None:
        """The pieces of parts that are each a piece, ``middle`` (the bytes between) and
        a padding, cut at the first ``middle`` (a piece holds no quote: where one seems
        to, it is not one string's contents, and ``_decoded`` says so); ``None`` where
        one is not such a part."""
        if not found:
            return []
        pieces, middles, paddings = zip(*map(bytes.partition, found, repeat(middle)), strict=True)
        if not all(middles):
            return None
        if not _plain_ascii(b"".join(paddings)):
            return None
        return list(pieces)

    def _keys(self, values: list[bytes]) -> list[Hashable] | None:
        """The keys of frames whose key place holds ``values``, or ``None`` if one is not
        proven to be a plain delta of the template's kind. A value is proven once, as the
        template was: the frame written with it (and with another value in every other
        place) is read by ``_plain`` as a piece of the same kind, and parses to the
        learned frame but for those places' leaves. Before each batch, ``_plain`` reads
        that frame again, so that the handler's state is asked as it is now."""
        keys = {}
        for value in set(values):
            known = self._known.get(value)
            if known is None:
                known = self._prove(value)
                if known is None:
                    return None
            probe, key = known
            hit = self.reader._plain(self.name, probe)
            if hit is None or len(hit) < 3 or hit[0] != key or hit[2] is not self.kind:
                return None
            keys[value] = key
        return list(map(keys.__getitem__, values))

    def _prove(self, value: bytes) -> tuple[Any, Hashable] | None:
        """The frame written with key ``value``, and its key, once proven (see ``_keys``)."""
        at = self._places.index(KEY)
        learned = self._written[at]
        written = list(self._written)
        written[at] = value
        try:
            probe = json.loads(_filled(self._segments, written))
        except ValueError:
            return None
        hit = self.reader._plain(self.name, probe)
        other = written[self._places.index(PIECE)].decode()
        if hit is None or len(hit) < 3 or hit[1] != other or hit[2] is not self.kind:
            return None
        if not _differs_in(self.obj, probe, [*self._changes, (int(learned), int(value))]):
            return None
        known = self._known[value] = (probe, hit[0])
        return known

    def _kept(self, payload: bytes | bytearray) -> None:
        """What the last frame taken, ``payload``, also carries, given to the reader's
        ``_took``: the frames before it differ from it only in counts that it replaces."""
        hit = self.reader._plain(self.name, jsonlib.loads(bytes(payload)))
        if hit is not None and len(hit) == 4:
            self.reader._took([hit[3]])


def _gap(middle: bytes, between: bytes) -> re.Pattern[bytes]:
    """A padded template's gap (see ``Template._padded_pieces``): ``middle``, a padding,
    and ``between``, compiled and kept in ``_GAPS`` (a stream learns a template of the
    same bytes again for each block, and a process again for each answer where the bytes
    hold no id of the answer, as Bedrock's)."""
    if len(_GAPS) >= _GAPS_KEPT:
        _GAPS.clear()
    gap = _GAPS[middle, between] = re.compile(
        re.escape(middle) + _PLACE[PADDING] + re.escape(between)
    )
    return gap


# The gaps compiled (see ``_gap``), and how many are kept at most.
_GAPS: dict[tuple[bytes, bytes], re.Pattern[bytes]] = {}
_GAPS_KEPT: Final = 64

# A padded template cuts the frames of the decoder's batches apart one by one (``_values``)
# until it has cut this many: compiling its gap costs about what the pattern then saves on a
# thousand frames (90 µs for Bedrock's bytes, 200 µs for OpenAI's, which hold the answer's
# id; 0.12 µs a frame saved), so a short answer does not pay for it, and a long one wins it
# back. Frames taken straight from a stream's bytes (``take``) are cut another way.
_GAP_AFTER: Final = 2048


def _plain_ascii(data: bytes) -> bool:
    """Whether ``data`` may be a padding's contents: ASCII with no quote, backslash or
    control character (written as it is in a string literal)."""
    return data.isascii() and len(data.translate(None, _NOT_IN_PADDING)) == len(data)


def _filled(segments: Sequence[bytes], values: Sequence[bytes]) -> bytes:
    """A frame's bytes: its ``segments`` (cut at its places) with ``values`` in the places."""
    return segments[0] + b"".join(map(bytes.__add__, values, segments[1:]))


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
    pieces = [found[0], *map(itemgetter(slice(size, None)), islice(found, 1, None))]
    if not whole:  # the data ends inside a separator: the piece before goes on to it
        pieces.pop()
        pieces[-1] += head + last
    if separator.join(pieces) != data:  # some piece did not start with the rest
        return data.split(separator)
    return pieces


def _decoded(found: list[bytes], merged: bool = False) -> list[str] | None:
    """The values of string literals' contents, or ``None`` if any is not one string's
    contents (a quote, a control character, a bad escape, invalid UTF-8: the usual
    reader then says what is wrong). ``merged``: where they are plain ASCII, as one
    value, all of them in a row (no escape and no character can then be cut between
    two of them, so each is one string's contents as the whole is), for a reader that
    hands one block's pieces on as one delta."""
    text = b"".join(found)
    try:
        if b"\\" not in text:
            if len(text.translate(None, _NOT_IN_PLAIN)) != len(text):
                return None
            if merged and len(found) > 1 and text.isascii():
                return [text.decode("ascii")]
            return list(map(bytes.decode, found))
        return _strings(found)
    except ValueError:
        return None


def _strings(found: list[bytes]) -> list[str]:
    """The values of JSON string literals' contents, some with escapes: each checked to
    be one string's contents, then all read at once as one array by the JSON reader (the
    standard library's where the fast one refuses a lone surrogate, as for any frame).

    One string's contents, as far as the reader of the array does not check it itself
    (each escape's letter and digits, control characters): no quote that a backslash
    does not escape, and no backslash that would escape the quote after the contents.
    With each run of backslashes' pairs taken out from its start (JSON reads them so),
    then each escaped quote, no quote is left, and no backslash at a piece's end."""
    bare = b"\x00".join(found).replace(b"\\\\", b"").replace(b'\\"', b"")
    if b'"' in bare or b"\\\x00" in bare or bare.endswith(b"\\"):
        raise ValueError("not a string's contents")
    text = b"".join((b'["', b'","'.join(found), b'"]'))
    try:
        values = jsonlib.loads(text)
    except ValueError:
        values = json.loads(text)
    if len(values) != len(found):  # never: each is one string's contents
        raise ValueError("not one value per string")
    return cast("list[str]", values)


def learn(
    handler: PlainReader,
    name: str | None,
    obj: Any,
    payload: bytes | bytearray,
    *,
    keyed: bool = False,
) -> Template | None:
    """The template of a frame that ``handler`` read as a plain delta (``obj``, parsed
    from ``payload``), or ``None`` where one cannot be proven (see the module); with a
    key place where there is one and ``keyed`` (blocks' pieces come turn about)."""
    hit = handler._plain(name, obj)
    if hit is None or len(hit) < 3:
        return None
    key, piece, kind = hit[:3]
    data = bytes(payload)
    spans = []
    for literal in {
        json.dumps(piece, ensure_ascii=False).encode("utf-8", "surrogatepass"),
        json.dumps(piece).encode(),
    }:
        at = data.find(literal)
        while at >= 0:
            spans.append((at + 1, at + len(literal) - 1, PIECE))  # the literal's contents
            at = data.find(literal, at + 1)
    if len(spans) != 1 or b"\x00" in data:
        return None
    places = sorted([*spans, *_places(handler, data)])
    key_place = _key_place(handler, name, data, places, hit) if keyed else None
    if key_place is not None:
        places = sorted([*places, key_place])
    segments, at = [], 0
    for start, end, _ in places:
        if start < at:  # a piece inside a padding
            return None
        segments.append(data[at:start])
        at = end
    segments.append(data[at:])
    # The frame written with another value in every place: "0", or "1" where it is "0"
    # (a string's contents, a padding's or an integer alike); the key's is its own.
    other = "1" if piece == "0" else "0"
    values = [data[start:end] for start, end, _ in places]
    others = [
        other.encode()
        if place == PIECE
        else value
        if place == KEY
        else b"1"
        if value == b"0"
        else b"0"
        for (_, _, place), value in zip(places, values, strict=True)
    ]
    try:
        probe = json.loads(_filled(segments, others))
    except ValueError:
        return None
    again = handler._plain(name, probe)
    if again is None or len(again) != len(hit) or again[0] != key or again[1] != other:
        return None
    if again[2] is not kind:
        return None
    changes = [
        (piece, other)
        if place == PIECE
        else (value.decode(), new.decode())
        if place == PADDING
        else (int(value), int(new))
        for (_, _, place), value, new in zip(places, values, others, strict=True)
        if place != KEY
    ]
    if not _differs_in(obj, probe, changes):
        return None
    kinds = [place for _, _, place in places]
    return Template(
        handler,
        name,
        obj,
        key,
        kind,
        segments=segments,
        places=kinds,
        written=others,
        changes=changes,
        probe=probe,
    )


def _key_place(
    handler: PlainReader,
    name: str | None,
    data: bytes,
    places: list[tuple[int, int, int]],
    hit: Plain,
) -> tuple[int, int, int] | None:
    """The place of the integer that says whose piece a frame holds (an OpenAI call's
    index, where calls' arguments come turn about), if there is one: the first integer
    of ``data`` not in a place such that the frame written with another one there
    (``0``, or ``1`` where it is ``0``) is read by ``_plain`` as the same piece, of the
    same kind, of another block; as ``(start, end, KEY)``."""
    key, piece, kind = hit[:3]
    for token in _TOKEN.finditer(data):
        text = token[0]
        start, end = token.span()
        if not text.isdigit() or any(begin <= start < stop for begin, stop, _ in places):
            continue
        try:
            obj = json.loads(data[:start] + (b"1" if text == b"0" else b"0") + data[end:])
        except ValueError:
            continue
        again = handler._plain(name, obj)
        if again is None or len(again) < 3 or again[1] != piece or again[2] is not kind:
            continue
        if again[0] != key:
            return start, end, KEY
    return None


def _places(handler: PlainReader, data: bytes) -> list[tuple[int, int, int]]:
    """The places of a frame's paddings and counts (the top-level keys the reader names
    in ``_padding`` and ``_counted``): each padding's contents, where it is plain ASCII
    written as it is, and each non-negative integer in a count's value; as ``(start, end,
    PADDING or COUNT)``."""
    paddings = {json.dumps(name)[1:-1].encode() for name in handler._padding}
    counted = {json.dumps(name)[1:-1].encode() for name in handler._counted}
    if not paddings and not counted:
        return []
    places = []
    depth = 0
    last = b""  # the last string read at the top level: a key, if a colon follows
    key = None  # the top-level key whose value is being read
    for token in _TOKEN.finditer(data):
        text = token[0]
        first = text[:1]
        if first in (b"{", b"["):
            depth += 1
        elif first in (b"}", b"]"):
            depth -= 1
        elif depth != 1 and key is None:
            continue  # within a value that is neither a padding nor a count
        elif first == b"," and depth == 1:
            key = None
        elif first == b":" and depth == 1:
            key = last
        elif first == b'"':
            contents = text[1:-1]
            if depth == 1 and key is None:
                last = contents
            elif depth == 1 and key in paddings and _plain_ascii(contents):
                places.append((token.start() + 1, token.end() - 1, PADDING))
        elif key in counted and text.isdigit():
            places.append((token.start(), token.end(), COUNT))
    return places


def _differs_in(obj: Any, probe: Any, changes: list[tuple[Any, Any]]) -> bool:
    """Whether ``probe`` is ``obj`` with the leaves ``changes`` holds changed (each
    ``(before, after)``, in any order): the same keys, lists and values everywhere else."""
    differing = []
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
            differing.append((a, b))
    return Counter(differing) == Counter(changes)
