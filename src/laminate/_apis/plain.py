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

From ``_plain``'s source, each subclass gets its ``on_frame`` and its ``run``
(:class:`~.base.RunHandler`): ``_plain``'s statements inlined, where returning a delta
hands the piece to the assembler (``run``: gathers it, and the batch's stretches of one
block's pieces go to the assembler in one call each), and returning ``None`` calls
``_on_other`` (``run``: stops there). :class:`PlainReader`'s own ``on_frame`` and ``run``
say the same by calling ``_plain`` frame by frame: they are the reference the made ones
are tested against.

``_plain``'s leading statements that read the handler (``self``) but neither the name nor
the frame are its *setup*: whether the handler takes plain deltas at all now, and what of
it the reading needs (a dict of known calls, the choice asked for). ``run`` runs them once,
before its loop, since no frame of a run changes the handler (a ``None`` there takes
nothing); ``on_frame`` runs them as written. What the setup assigns, the rest may not
assign again. Where ``_plain`` reads the name, ``run`` loops without names over a batch
that has none (every name ``None``, most batches), and with them otherwise.

Why make them rather than call ``_plain``: a call and a tuple per frame cost about a
fifth of a microsecond, a tenth of a Bedrock stream's whole time with orjson, while the
inlined statements cost what hand-written loops cost. ``_plain`` may therefore hold only
``if``, ``pass``, assignments, expression statements, ``return``, and a ``try`` that only
reads (subscripts are quicker than ``get``: no ``return`` inside it, handlers that only
``pass``); no loops, ``with``, nested functions or ``del``. Each ``return`` gives ``None``
or the tuple with ``TEXT`` or ``ARGUMENTS`` written out: anything else is a ``TypeError``
when the class is made. The made functions keep ``_plain``'s module globals and show their
source in tracebacks.
"""

from __future__ import annotations

import ast
import copy
import inspect
import linecache
import textwrap
from collections.abc import Callable, Hashable, Sequence
from itertools import islice, repeat
from types import CellType, CodeType, FunctionType
from typing import Any, Final

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

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_plain" in cls.__dict__:
            cls.on_frame = _make(cls, "on_frame")  # type: ignore[method-assign]
            cls.run = _make(cls, "run")  # type: ignore[method-assign]

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

    def on_frame(self, event: str | None, obj: Any) -> None:
        """One parsed frame: a plain delta to the assembler, anything else ``_on_other``'s."""
        hit = self._plain(event, obj)
        if hit is None or not self._ready(hit[0], hit[2]):
            self._on_other(event, obj)
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


# -- making on_frame and run from _plain ----------------------------------------------------

_ALLOWED: Final = (
    ast.If,
    ast.Pass,
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.Expr,
    ast.Return,
)

# What each made method is, around _plain's statements (``BODY``); its helpers are cells.
_SHAPES: Final = {
    "on_frame": (
        "def _make_it():\n"
        "    def on_frame(self, {name}, {obj}):\n"
        "        BODY\n"
        "        return self._on_other({name}, {obj})\n"
        "    return on_frame\n"
    ),
    # Extras (the fourth item of a reader's deltas, if it gives one) go to _took once
    # their pieces are in.
    "run": (
        "def _make_it(_hand_over, _islice):\n"
        "    def run(self, names, objs, start):\n"
        "        SETUP\n"
        "        pieces = []\n"
        "        keys = []\n"
        "        changes = []\n"
        "        extras = []\n"
        "        add_piece = pieces.append\n"
        "        add_key = keys.append\n"
        "        add_extra = extras.append\n"
        "        kind_now = None\n"
        "        LOOP\n"
        "        taken = _hand_over(self, start, pieces, keys, changes)\n"
        "        if extras and taken > start:\n"
        "            self._took(extras[: taken - start])\n"
        "        return taken\n"
        "    return run\n"
    ),
}

# The loop over a batch's frames: where _plain reads the names, one without them for a
# batch that has none (most), so that such a batch costs nothing for them.
_LOOPS: Final = {
    True: (
        "if names is None:\n"
        "            {name} = None\n"
        "            for {obj} in _islice(objs, start, None):\n"
        "                BODY\n"
        "                break\n"
        "        else:\n"
        "            # Not strict: a batch's names and frames are as many.\n"
        "            frames = zip(_islice(names, start, None), _islice(objs, start, None))\n"
        "            for {name}, {obj} in frames:\n"
        "                BODY\n"
        "                break"
    ),
    False: (
        "for {obj} in _islice(objs, start, None):\n                BODY\n                break"
    ),
}

_HELPERS: Final[dict[str, object]] = {
    "_hand_over": hand_over,
    "_islice": islice,
}


def _make(cls: type, method: str) -> Callable[..., Any]:
    reader = cls.__dict__["_plain"]
    source = textwrap.dedent(inspect.getsource(reader))
    tree = ast.parse(source)
    definition = tree.body[0]
    if not isinstance(definition, ast.FunctionDef) or len(definition.args.args) != 3:
        raise TypeError(f"{cls.__qualname__}._plain must be def _plain(self, name, obj)")
    _check(cls, definition)
    name, obj = (arg.arg for arg in definition.args.args[1:])
    # The names are read only where _plain reads its ``name``: a batch may make them on
    # demand (SSE's), and most APIs name a frame inside its payload.
    uses_name = any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(definition))
    _gives_extras(cls, definition)
    ready = any("_ready" in vars(base) for base in cls.__mro__ if base is not PlainReader)
    setup, frame = _setup(cls, definition, (name, obj))
    if method == "on_frame":
        setup, frame = [], setup + frame
    inline = _Inline(method, name, obj, ready=ready)
    shape = ast.parse(_SHAPES[method].replace("LOOP", _LOOPS[uses_name]).format(name=name, obj=obj))
    made = shape.body[0]
    if not isinstance(made, ast.FunctionDef):  # never: the shapes above
        raise TypeError("a shape is not a function")
    if method == "run":
        _replace(made, "SETUP", lambda: _Inline(method, name, obj, setup=True).visit_body(setup))
    _replace(made, "BODY", lambda: inline.visit_body(copy.deepcopy(frame)))
    ast.fix_missing_locations(shape)
    filename = f"<{cls.__module__}.{cls.__qualname__}.{method}, made from _plain>"
    text = ast.unparse(shape)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    code = compile(ast.parse(text), filename, "exec")
    return _function(code, method, reader.__globals__, cls)


def _setup(
    cls: type, definition: ast.FunctionDef, frame_names: tuple[str, str]
) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """``_plain``'s setup and the rest: the setup is its leading statements that read the
    handler (``self``) and neither the name nor the frame, which no frame of a run changes.
    What the setup assigns, the rest may not assign again."""
    body = definition.body
    at = 0
    while at < len(body):
        read = {node.id for node in ast.walk(body[at]) if isinstance(node, ast.Name)}
        if "self" not in read or read & set(frame_names):
            break
        at += 1
    setup, rest = body[:at], body[at:]
    for node in ast.walk(ast.Module(body=setup, type_ignores=[])):
        if isinstance(node, ast.Return) and not _gives_none(node):
            raise TypeError(f"{cls.__qualname__}._plain returns a delta before it reads the frame")
    again = _stored(setup) & _stored(rest)
    if again:
        raise TypeError(
            f"{cls.__qualname__}._plain assigns {', '.join(sorted(again))} in its setup "
            "(what it reads of the handler first) and again after"
        )
    return setup, rest


def _stored(statements: list[ast.stmt]) -> set[str]:
    return {
        node.id
        for node in ast.walk(ast.Module(body=statements, type_ignores=[]))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }


def _gives_none(node: ast.Return) -> bool:
    value = node.value
    return value is None or (isinstance(value, ast.Constant) and value.value is None)


def _check(cls: type, definition: ast.FunctionDef) -> None:
    for node in ast.walk(ast.Module(body=definition.body, type_ignores=[])):
        if isinstance(node, ast.Try) and not _quiet_try(node):
            raise TypeError(
                f"{cls.__qualname__}._plain holds a try whose handlers do more than pass, "
                "or that returns inside it: read into locals there, return after it"
            )
        if isinstance(node, ast.stmt) and not isinstance(node, (*_ALLOWED, ast.Try)):
            raise TypeError(
                f"{cls.__qualname__}._plain holds a {type(node).__name__} statement: "
                "only if, pass, assignments, expressions and return are inlined"
            )
        if isinstance(node, ast.Lambda | ast.Yield | ast.YieldFrom | ast.Await):
            raise TypeError(f"{cls.__qualname__}._plain holds a {type(node).__name__}")
        if isinstance(node, ast.Name) and node.id in _RESERVED:
            raise TypeError(f"{cls.__qualname__}._plain uses the name {node.id}")


# The names the made methods use around _plain's statements, which it may not use itself.
_RESERVED: Final = frozenset(
    {*_HELPERS, "pieces", "keys", "changes", "add_piece", "add_key", "kind_now"}
    | {"plain_key", "frames", "names", "objs", "start", "extras", "add_extra", "taken"}
)


def _gives_extras(cls: type, definition: ast.FunctionDef) -> bool:
    """Whether ``_plain``'s deltas carry extras (four items): all of them, or none of
    them (three items), else a ``TypeError``."""
    sizes = {
        len(node.value.elts)
        for node in ast.walk(definition)
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple)
    }
    if len(sizes) > 1:
        raise TypeError(f"{cls.__qualname__}._plain gives deltas of {sorted(sizes)} items")
    return sizes == {4}


def _quiet_try(node: ast.Try) -> bool:
    """A ``try`` that only reads: no ``return`` in it, handlers that only ``pass`` (so that
    nothing the made methods do runs while an exception is being handled)."""
    if node.orelse or node.finalbody:
        return False
    if any(not all(isinstance(s, ast.Pass) for s in h.body) for h in node.handlers):
        return False
    return not any(isinstance(inner, ast.Return) for inner in ast.walk(node))


class _Inline(ast.NodeTransformer):
    """_plain's statements, each ``return`` made what the method does with its value."""

    def __init__(
        self, method: str, name: str, obj: str, *, ready: bool = False, setup: bool = False
    ) -> None:
        self.method, self.name, self.obj = method, name, obj
        self.ready = ready  # the class asks _ready of a block
        self.setup = setup  # run's setup, before its loop: nothing read yet

    def visit_body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for statement in body:
            made = self.visit(statement)
            out.extend(made if isinstance(made, list) else [made])
        return out

    def visit_If(self, node: ast.If) -> ast.If:
        node.body = self.visit_body(node.body)
        node.orelse = self.visit_body(node.orelse)
        return node

    def visit_Try(self, node: ast.Try) -> ast.Try:
        return node  # only reads (see _quiet_try): nothing in it to make

    def visit_Return(self, node: ast.Return) -> list[ast.stmt]:
        value = node.value
        if _gives_none(node):
            if self.setup:
                return _statements("return start")
            if self.method == "run":
                return [ast.Break()]
            return _statements(f"return self._on_other({self.name}, {self.obj})")
        if not isinstance(value, ast.Tuple) or len(value.elts) not in (3, 4):
            raise TypeError("_plain returns None or (key, piece, TEXT or ARGUMENTS[, extra])")
        kind = value.elts[2]
        if not isinstance(kind, ast.Name) or kind.id not in ("TEXT", "ARGUMENTS"):
            raise TypeError("_plain returns None or (key, piece, TEXT or ARGUMENTS)")
        key, piece = (ast.unparse(element) for element in value.elts[:2])
        extra = ast.unparse(value.elts[3]) if len(value.elts) == 4 else None
        text = "True" if kind.id == "TEXT" else "False"
        if self.method == "run":
            keep = f"add_extra({extra})\n" if extra is not None else ""
            return _statements(
                f"if kind_now is not {text}:\n"
                f"    kind_now = {text}\n"
                f"    changes.append((len(pieces), {text}))\n"
                f"add_key({key})\n"
                f"add_piece({piece})\n{keep}"
                "continue"
            )
        verb = "text" if kind.id == "TEXT" else "tool_input"
        keep = f"self._took([{extra}])\n" if extra is not None else ""
        if not self.ready:
            return _statements(f"self.assembler.{verb}({key}, {piece})\n{keep}return")
        return _statements(
            f"plain_key = {key}\n"
            f"if not self._ready(plain_key, {text}):\n"
            f"    return self._on_other({self.name}, {self.obj})\n"
            f"self.assembler.{verb}(plain_key, {piece})\n{keep}return"
        )


def _statements(text: str) -> list[ast.stmt]:
    return ast.parse(text).body


def _replace(made: ast.FunctionDef, marker: str, statements: Callable[[], list[ast.stmt]]) -> None:
    """Put ``statements()`` (made afresh for each) where the shape says ``marker``."""
    found = False
    for node in ast.walk(made):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for i, statement in enumerate(block):
                if not (
                    isinstance(statement, ast.Expr)
                    and isinstance(statement.value, ast.Name)
                    and statement.value.id == marker
                ):
                    continue
                found = True
                made_here = statements() or [ast.Pass()]
                block[i : i + 1] = made_here
                after = i + len(made_here)
                if isinstance(made_here[-1], ast.Return | ast.Break | ast.Continue) and after < len(
                    block
                ):
                    del block[after]  # the shape's fall-through, never reached
                break
    if not found:
        raise TypeError(f"a shape without {marker}")  # never: the shapes above


def _function(
    code: CodeType, method: str, namespace: dict[str, Any], cls: type
) -> Callable[..., Any]:
    """The made method, with ``_plain``'s module globals and its helpers as cells."""
    outer = next(c for c in code.co_consts if isinstance(c, CodeType))
    inner = next(c for c in outer.co_consts if isinstance(c, CodeType) and c.co_name == method)
    cells = tuple(CellType(_HELPERS[free]) for free in inner.co_freevars)
    made = FunctionType(inner, namespace, method, None, cells)
    made.__qualname__ = f"{cls.__qualname__}.{method}"
    made.__module__ = cls.__module__
    made.__doc__ = getattr(PlainReader, method).__doc__
    return made
