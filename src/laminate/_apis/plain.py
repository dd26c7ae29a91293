"""Plain deltas: each API reads their shape in one method, and its fast paths are made
from that method.

A *plain delta* is a frame that adds one piece of text, or of one tool call's arguments,
to a block and does nothing else: nearly every frame of a stream. A handler built on
:class:`PlainReader` writes, by hand:

- ``_plain(name, obj)``: ``(key, piece, TEXT)`` or ``(key, piece, ARGUMENTS)`` for a plain
  delta, ``None`` for any other frame. It is the one place the API's plain deltas are
  read, and it reads them without changing anything. A fourth item, if every delta has
  one, is something the frame also carries (Gemini's usage so far): ``_took`` gets those
  of the deltas handed over, in order.
- ``_on_other(name, obj)``: every other frame (the general reader, which also says what
  is wrong with a frame that is not what it should be).
- ``_ready(key, kind)``, if taking a delta as it comes depends on more than the frame
  (the block is open, its item still live): asked at most once per block in a run (after
  the reading, which changes nothing), and for each delta ``on_frame`` reads. A delta whose
  block is not ready is ``_on_other``'s, and a run stops at the first one.

Its ``on_frame`` and ``run`` (:class:`~.base.RunHandler`) are written from ``_plain`` once,
into ``_made.py`` beside the handler's module, by ``python -m laminate._apis.make_plain``
(:mod:`~.make_plain`), and committed: ``_plain``'s statements inlined, where returning a
delta hands the piece to the assembler (``run``: gathers it, and the batch's stretches of
one block's pieces go to the assembler in one call each), and returning ``None`` calls
``_on_other`` (``run``: stops there). The class takes them as they are
(``on_frame = _made.on_frame``, ``run = _made.run``); a class that defines ``_plain`` and
any other ``on_frame`` or ``run`` is a :class:`TypeError` when it is made.
:class:`PlainReader`'s own ``on_frame`` and ``run`` say the same by calling ``_plain`` frame
by frame: they are the reference the made ones are tested against.

``_plain``'s leading statements that read the handler (``self``) but neither the name nor
the frame are its *setup*: whether the handler takes plain deltas at all now, and what of
it the reading needs (a dict of known calls, the choice asked for). ``run`` runs them once,
before its loop, since no frame of a run changes the handler (a ``None`` there takes
nothing); ``on_frame`` runs them as written. Where ``_plain`` reads the name, ``run`` loops
without names over a batch that has none (every name ``None``, most batches), and with
them otherwise.

Why make them rather than call ``_plain``: a call and a tuple per frame cost about a
fifth of a microsecond, a tenth of a Bedrock stream's whole time with orjson, while the
inlined statements cost what hand-written loops cost. What ``_plain`` may hold for that
is :mod:`~.make_plain`'s to say.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import islice, repeat
from typing import Any, ClassVar, Final

from .._core.assembler import Assembler

__all__ = ["ARGUMENTS", "TEXT", "Plain", "PlainReader", "hand_over"]

TEXT: Final = True
"""A plain delta's piece is text."""

ARGUMENTS: Final = False
"""A plain delta's piece is tool-call arguments."""

Plain = tuple[Hashable, str, bool] | tuple[Hashable, str, bool, Any]
"""A plain delta as ``_plain`` reads it: the block's key, the piece, ``TEXT`` or
``ARGUMENTS``, and, for a reader whose plain frames also carry something to keep (Gemini's
usage so far), that something, which ``_took`` is given once the pieces are handed over."""


class PlainReader:
    """The base of a handler whose fast paths are made from its ``_plain`` (see the module)."""

    __slots__ = ()

    assembler: Assembler

    _padding: ClassVar[tuple[str, ...]] = ()
    """Top-level keys of a frame whose string values ``_plain`` never reads (a padding
    that differs in every frame): a template may leave them out (see ``templates``)."""

    _counted: ClassVar[tuple[str, ...]] = ()
    """Top-level keys of a frame whose integers (the value's, or those within it)
    ``_plain`` never reads but to give them to ``_took`` (a count that differs in every
    frame): a template may leave them out (see ``templates``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A class that defines ``_plain`` takes its ``on_frame`` and ``run`` from the
        ``_made`` module beside its own: any other is a :class:`TypeError`, since it would
        not read what ``_plain`` says."""
        super().__init_subclass__(**kwargs)
        if "_plain" not in cls.__dict__:
            return
        made = f"{cls.__module__.rpartition('.')[0]}._made"
        for method in ("on_frame", "run"):
            function = cls.__dict__.get(method)
            if (getattr(function, "__module__", None), getattr(function, "__name__", None)) != (
                made,
                method,
            ):
                raise TypeError(
                    f"{cls.__qualname__} defines _plain, so its {method} is the one made from "
                    f"it: `{method} = _made.{method}` in the class, from {made}, which "
                    "`python -m laminate._apis.make_plain` writes"
                )

    def _plain(self, name: str | None, obj: Any) -> Plain | None:
        """``(key, piece, TEXT | ARGUMENTS)`` for a plain delta, else ``None``."""
        raise NotImplementedError

    def _on_other(self, name: str | None, obj: Any) -> None:
        """Any frame that is not a plain delta."""
        raise NotImplementedError

    def _ready(self, key: Hashable, kind: bool) -> bool:
        """Whether block ``key`` takes plain deltas of ``kind`` as they come, where that
        depends on more than the frame (the block is open, an item is still live): asked
        at most once per block in a run, and for each plain delta ``on_frame`` reads. A reader that
        does not define it needs no such check."""
        return True

    def _took(self, extras: list[Any]) -> None:
        """What the plain deltas just handed over also carried (the fourth item ``_plain``
        gave each of them), in their order: needed only by a reader that gives one."""
        raise NotImplementedError

    def on_frame(self, name: str | None, obj: Any) -> None:
        """One parsed frame: a plain delta to the assembler, anything else ``_on_other``'s."""
        hit = self._plain(name, obj)
        if hit is None or not self._ready(hit[0], hit[2]):
            self._on_other(name, obj)
            return
        key, piece, kind = hit[:3]
        if kind is TEXT:
            self.assembler.text(key, piece)
        else:
            self.assembler.tool_input(key, piece)
        if len(hit) == 4:
            self._took([hit[3]])

    def run(self, names: Sequence[str | None] | None, objs: Sequence[Any], start: int) -> int:
        """The plain deltas from ``start`` on, each stretch of one block's pieces handed
        to the assembler in one call; the index of the first frame left to ``on_frame``."""
        pieces: list[str] = []
        keys: list[Hashable] = []
        changes: list[tuple[int, bool]] = []
        extras: list[Any] = []
        # Not strict: without names, ``repeat(None)`` has no end.
        names_from = repeat(None) if names is None else islice(names, start, None)
        for name, obj in zip(names_from, islice(objs, start, None), strict=False):
            hit = self._plain(name, obj)
            if hit is None:
                break
            key, piece, kind = hit[:3]
            if not changes or changes[-1][1] is not kind:
                changes.append((len(pieces), kind))
            keys.append(key)
            pieces.append(piece)
            extras.extend(hit[3:])
        taken = hand_over(self, start, pieces, keys, changes)
        if extras and taken > start:
            self._took(extras[: taken - start])
        return taken


def hand_over(
    handler: PlainReader,
    start: int,
    pieces: list[str],
    keys: list[Hashable],
    changes: list[tuple[int, bool]],
) -> int:
    """Plain deltas read ahead from frame ``start`` on, handed to the assembler: piece
    ``i`` is for block ``keys[i]``, and ``changes`` holds ``(i, kind)`` where the kind
    first is and then changes (TEXT or ARGUMENTS). Each block is asked ``_ready`` once, in
    the order they come, up to the first not ready: the deltas from its first one on are
    left. One block's pieces go in one call, calls' arguments sent turn about in one call
    too, anything else a call per stretch of one block's pieces. The index of the first
    frame not taken: where the assembler refuses a stretch (it would raise, or the block
    is not what the piece needs), that frame goes to ``on_frame``, which says why."""
    count = len(pieces)
    if not count:
        return start
    kinds: list[bool] | None = None  # each piece's kind, where the kind changes
    if len(changes) > 1:
        kinds = []
        for (at, kind), end in zip(changes, [*(at for at, _ in changes[1:]), count], strict=True):
            kinds += repeat(kind, end - at)
    first = keys[0]
    one_block = keys.count(first) == count  # nearly every run: no key hashed
    if type(handler)._ready is not PlainReader._ready:
        # Each block in the order they come, until one is not ready: its first piece is
        # the first not taken. A block's kind is that of its first piece (a dict built
        # from the end holds each key's first).
        kind_of = None if kinds is None else dict(zip(reversed(keys), reversed(kinds), strict=True))
        for key in (first,) if one_block else dict.fromkeys(keys):
            if not handler._ready(key, changes[0][1] if kind_of is None else kind_of[key]):
                count = keys.index(key)
                break
        if count < len(pieces):
            if not count:
                return start
            del pieces[count:], keys[count:]
            if kinds is not None:
                del kinds[count:]
            one_block = keys.count(first) == count
    asm = handler.assembler
    if kinds is None or kinds.count(kinds[0]) == count:
        kind = changes[0][1]
        if one_block:
            took = asm.texts(first, pieces) if kind else asm.tool_inputs(first, pieces)
            return start + count if took else start
        if kind is ARGUMENTS and asm.tool_inputs_mixed(keys, pieces):
            return start + count
    i = 0
    while i < count:
        key = keys[i]
        kind = kinds[i] if kinds is not None else changes[0][1]
        end = i + 1
        while end < count and keys[end] == key and (kinds is None or kinds[end] is kind):
            end += 1
        share = pieces[i:end]
        took = asm.texts(key, share) if kind else asm.tool_inputs(key, share)
        if not took:
            return start + i
        i = end
    return start + count
