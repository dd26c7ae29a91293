"""Writes each API's ``_made.py``: its handler's ``on_frame`` and ``run``, made from the
handler's ``_plain`` (see :mod:`laminate._apis.plain`).

Run it after changing a ``_plain``::

    python -m laminate._apis.make_plain          # writes every API's _made.py
    python -m laminate._apis.make_plain --check  # says which are stale, exits 1 if any

It reads each ``_apis/<name>/read.py`` as text (nothing is imported), finds the class
that defines ``_plain`` (a direct subclass of ``PlainReader``) and writes, beside it,
``_made.py``: ``_plain``'s statements inlined into the two methods, where returning a
delta hands the piece to the assembler (``on_frame``) or gathers it (``run``), and
returning ``None`` calls ``_on_other`` (``run``: stops there). The class takes them as
they are (``on_frame = _made.on_frame``, ``run = _made.run``); ``tests/test_plain.py``
fails, naming this command, when a committed file is not what it writes.

``_plain`` may hold only ``if``, ``pass``, assignments, expression statements,
``return``, and a ``try`` that only reads (no ``return`` inside it, handlers that only
``pass``); no loops, ``with``, nested functions or ``del``. Each ``return`` gives
``None`` or the tuple with ``TEXT`` or ``ARGUMENTS`` written out. The module globals it
reads are names its module imports with ``from ... import`` or constants assigned a
literal there: ``_made.py`` imports or assigns them again. Anything else is a
:class:`TypeError` here, naming the class.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import copy
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

__all__ = ["COMMAND", "made_source", "main", "same_code", "targets"]

COMMAND: Final = "python -m laminate._apis.make_plain"
"""The command that writes every API's ``_made.py``."""

_APIS: Final = Path(__file__).resolve().parent

_HEADER: Final = (
    "# Generated from {cls}._plain in {origin} by\n"
    "#     {command}\n"
    "# Do not edit: change _plain and run the command again (tests/test_plain.py fails\n"
    "# while this file is not what the command writes).\n"
)

_DOCS: Final = {
    "module": "{cls}'s ``on_frame`` and ``run``, made from its ``_plain``.",
    "on_frame": "One parsed frame: a plain delta to the assembler, anything else\n"
    "    ``_on_other``'s.",
    "run": "The plain deltas from ``start`` on, each stretch of one block's pieces handed\n"
    "    to the assembler in one call; the index of the first frame left to ``on_frame``.",
}

_ALLOWED: Final = (
    ast.If,
    ast.Pass,
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.Expr,
    ast.Return,
)

# What each made method is, around _plain's statements (``BODY``).
_SHAPES: Final = {
    "on_frame": (
        "def on_frame(self: {cls}, {name}: str | None, {obj}: Any) -> None:\n"
        "    DOC\n"
        "    BODY\n"
        "    return self._on_other({name}, {obj})\n"
    ),
    # Extras (the fourth item of a reader's deltas, if it gives one) go to _took once
    # their pieces are in.
    "run": (
        "def run(\n"
        "    self: {cls}, names: Sequence[str | None] | None, objs: Sequence[Any], start: int\n"
        ") -> int:\n"
        "    DOC\n"
        "    SETUP\n"
        "    pieces: list[str] = []\n"
        "    keys: list[Hashable] = []\n"
        "    changes: list[tuple[int, bool]] = []\n"
        "    extras: list[Any] = []\n"
        "    add_piece = pieces.append\n"
        "    add_key = keys.append\n"
        "    EXTRAS\n"
        "    kind_now: bool | None = None\n"
        "    LOOP\n"
        "    taken = _hand_over(self, start, pieces, keys, changes)\n"
        "    if extras and taken > start:\n"
        "        self._took(extras[: taken - start])\n"
        "    return taken\n"
    ),
}

# The loop over a batch's frames: where _plain reads the names, one without them for a
# batch that has none (most), so that such a batch costs nothing for them.
_LOOPS: Final = {
    True: (
        "if names is None:\n"
        "        {name} = _NO_NAME\n"
        "        for {obj} in _islice(objs, start, None):\n"
        "            BODY\n"
        "            break\n"
        "    else:\n"
        "        # Not strict: a batch's names and frames are as many.\n"
        "        frames = zip(\n"
        "            _islice(names, start, None), _islice(objs, start, None), strict=False\n"
        "        )\n"
        "        for {name}, {obj} in frames:\n"
        "            BODY\n"
        "            break"
    ),
    False: ("for {obj} in _islice(objs, start, None):\n            BODY\n            break"),
}

# What the made module imports for its own code: (module, level, name, as).
_OWN_IMPORTS: Final = (
    ("collections.abc", 0, "Hashable", None),
    ("collections.abc", 0, "Sequence", None),
    ("itertools", 0, "islice", "_islice"),
    ("typing", 0, "TYPE_CHECKING", None),
    ("typing", 0, "Any", None),
)
# And hand_over, from the plain module (``plain``, relative to the made module by default).

# The names the made methods use around _plain's statements, which it may not use itself.
_RESERVED: Final = frozenset(
    {"_hand_over", "_islice", "_NO_NAME", "pieces", "keys", "changes", "add_piece", "add_key"}
    | {"kind_now", "plain_key", "frames", "names", "objs", "start", "extras", "add_extra", "taken"}
)

_Import = tuple[str, int, str, str | None]


def targets(root: Path = _APIS) -> list[Path]:
    """Every ``<api>/read.py`` under ``root`` whose module has a class defining ``_plain``."""
    return [
        path
        for path in sorted(root.glob("*/read.py"))
        if _reader(ast.parse(path.read_text("utf-8")), str(path)) is not None
    ]


def made_source(
    source: str, origin: str = "read.py", module: str = "read", plain: str = "..plain"
) -> str:
    """The text of ``_made.py`` for a handler module's ``source`` (``origin``: its file,
    named in the header; ``module``: its name beside ``_made.py``, which the made module
    imports only for type checking; ``plain``: where it imports ``hand_over`` from, as
    written in a ``from`` import)."""
    tree = ast.parse(source)
    found = _reader(tree, origin)
    if found is None:
        raise TypeError(f"{origin} has no class that defines _plain")
    cls, definition = found
    name = cls.name
    arguments = definition.args
    if [arg.arg for arg in arguments.args] != ["self", "name", "obj"] or (
        arguments.vararg or arguments.kwonlyargs or arguments.kwarg
    ):
        raise TypeError(f"{name}._plain must be def _plain(self, name, obj)")
    _check(name, definition)
    ready = any(isinstance(node, ast.FunctionDef) and node.name == "_ready" for node in cls.body)
    methods = [_method(name, definition, method, ready=ready) for method in ("on_frame", "run")]
    level = len(plain) - len(plain.lstrip("."))
    own = [*_OWN_IMPORTS, (plain[level:], level, "hand_over", "_hand_over")]
    imports, constants = _globals(tree, methods, origin, name)
    lines = [_HEADER.format(cls=name, origin=origin, command=COMMAND)]
    lines.append(f'"""{_DOCS["module"].format(cls=name)}"""\n\n')
    lines.append("from __future__ import annotations\n\n")
    lines.append(_import_lines([*own, *imports]))
    lines.append(f"\nif TYPE_CHECKING:\n    from .{module} import {name}\n")
    if constants:
        lines.append("\n" + "".join(ast.unparse(statement) + "\n" for statement in constants))
    if "_NO_NAME" in _free(methods[1]):
        # A batch without names: typed as a name may be, so that no reading of it is
        # taken as unreachable.
        lines.append("\n_NO_NAME: str | None = None\n")
    lines.append('\n__all__ = ["on_frame", "run"]\n')
    lines.extend(f"\n\n{ast.unparse(method)}\n" for method in methods)
    return "".join(lines)


def _reader(tree: ast.Module, origin: str) -> tuple[ast.ClassDef, ast.FunctionDef] | None:
    """The class of ``tree`` that defines ``_plain``, and that method."""
    found = [
        (cls, node)
        for cls in tree.body
        if isinstance(cls, ast.ClassDef)
        for node in cls.body
        if isinstance(node, ast.FunctionDef) and node.name == "_plain"
    ]
    if len(found) > 1:
        raise TypeError(f"{origin}: more than one class defines _plain")
    if not found:
        return None
    cls = found[0][0]
    if [ast.unparse(base) for base in cls.bases] != ["PlainReader"]:
        raise TypeError(f"{cls.name} defines _plain, so it derives from PlainReader alone")
    return found[0]


def _method(cls: str, definition: ast.FunctionDef, method: str, *, ready: bool) -> ast.FunctionDef:
    name, obj = (arg.arg for arg in definition.args.args[1:])
    # The names are read only where _plain reads its ``name``: a batch may make them on
    # demand (SSE's), and most APIs name a frame inside its payload.
    uses_name = any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(definition))
    _gives_extras(cls, definition)
    setup, frame = _setup(cls, definition, (name, obj))
    if method == "on_frame":
        setup, frame = [], setup + frame
    inline = _Inline(method, name, obj, ready=ready)
    text = _SHAPES[method].replace("LOOP", _LOOPS[uses_name])
    shape = ast.parse(text.format(cls=cls, name=name, obj=obj))
    made = shape.body[0]
    if not isinstance(made, ast.FunctionDef):  # never: the shapes above
        raise TypeError("a shape is not a function")
    doc = ast.Expr(ast.Constant(_DOCS[method]))
    _replace(made, "DOC", lambda: [doc])
    if method == "run":
        extras = "add_extra = extras.append" if _gives_extras(cls, definition) else ""
        _replace(made, "EXTRAS", lambda: _statements(extras))
        _replace(made, "SETUP", lambda: _Inline(method, name, obj, setup=True).visit_body(setup))
    _replace(made, "BODY", lambda: inline.visit_body(copy.deepcopy(frame)))
    _declare_first(made)
    ast.fix_missing_locations(shape)
    return made


def _declare_first(made: ast.FunctionDef) -> None:
    """``_plain``'s annotated assignments made plain, each name declared once at the
    top instead (``run`` repeats the statements in two loops; a bare declaration
    makes no code)."""
    declared: dict[str, ast.expr] = {}
    if any(
        isinstance(node, ast.Name) and node.id == "plain_key" for node in ast.walk(made)
    ):  # the key _ready is asked about, a Hashable whatever _plain's key is
        declared["plain_key"] = ast.Name("Hashable", ast.Load())
    for node in ast.walk(made):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for i, statement in enumerate(block):
                if not isinstance(statement, ast.AnnAssign):
                    continue
                if not isinstance(statement.target, ast.Name) or statement.value is None:
                    continue
                declared.setdefault(statement.target.id, statement.annotation)
                block[i] = ast.Assign(targets=[statement.target], value=statement.value)
    at = 1  # after the docstring
    for name, annotation in declared.items():
        made.body.insert(at, ast.AnnAssign(ast.Name(name, ast.Store()), annotation, None, 1))
        at += 1


def _globals(
    tree: ast.Module, methods: list[ast.FunctionDef], origin: str, cls: str
) -> tuple[list[_Import], list[ast.stmt]]:
    """What the made methods read of their module: the imports and the constants of the
    handler's module that they need, else a ``TypeError``."""
    imported: dict[str, _Import] = {}
    assigned: dict[str, ast.stmt] = {}
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module is not None:
            for alias in statement.names:
                entry = (statement.module, statement.level, alias.name, alias.asname)
                imported[alias.asname or alias.name] = entry
        elif isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    assigned[target.id] = statement
    own = {entry[3] or entry[2] for entry in _OWN_IMPORTS} | {"_NO_NAME", "_hand_over"}
    imports: list[_Import] = []
    constants: list[ast.stmt] = []
    wanted = sorted(set().union(*(_free(method) for method in methods)) - own)
    seen: set[str] = set()
    while wanted:
        name = wanted.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if name in imported:
            imports.append(imported[name])
            continue
        found = assigned.get(name)
        if found is None or not isinstance(getattr(found, "value", None), ast.Constant):
            raise TypeError(
                f"{cls}._plain reads {name}, which {origin} neither imports (from ... import) "
                "nor assigns a literal"
            )
        constants.append(found)
        annotation = getattr(found, "annotation", None)
        if annotation is not None:
            wanted.extend(sorted(_loaded(annotation) - own))
    return imports, constants


def _loaded(node: ast.AST) -> set[str]:
    return {
        inner.id
        for inner in ast.walk(node)
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load)
    }


def _free(method: ast.FunctionDef) -> set[str]:
    """The global names a made method reads: neither its own nor builtins."""
    own = {arg.arg for arg in method.args.args}
    own |= {
        node.id
        for node in ast.walk(method)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }
    # The signature's annotations are the made module's own names.
    body = ast.Module(body=method.body, type_ignores=[])
    return {name for name in _loaded(body) - own if not hasattr(builtins, name)}


def _import_lines(entries: list[_Import]) -> str:
    """``from`` imports as ruff's isort writes them: the standard library first, then
    relative imports, farthest first; the names of one module in one statement."""
    modules: dict[tuple[int, str], list[tuple[str, str | None]]] = {}
    for module, level, name, alias in entries:
        names = modules.setdefault((level, module), [])
        if (name, alias) not in names:
            names.append((name, alias))

    def order(name: tuple[str, str | None]) -> tuple[int, str]:
        text = name[0]
        return (0 if text.isupper() and len(text) > 1 else 1 if text[:1].isupper() else 2, text)

    absolute: list[str] = []
    relative: list[str] = []
    for (level, module), names in sorted(modules.items(), key=lambda item: (-item[0][0], item[0])):
        listed = ", ".join(
            name if alias is None else f"{name} as {alias}"
            for name, alias in sorted(names, key=order)
        )
        line = f"from {'.' * level}{module} import {listed}\n"
        (relative if level else absolute).append(line)
    absolute.sort()
    first = [line for line in absolute if line.startswith("from laminate")]
    absolute = [line for line in absolute if line not in first]
    return (
        "".join(absolute)
        + ("\n" + "".join(first) if first else "")
        + ("\n" + "".join(relative) if relative else "")
    )


def _setup(
    cls: str, definition: ast.FunctionDef, frame_names: tuple[str, str]
) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """``_plain``'s setup and the rest: the setup is its leading statements that read the
    handler (``self``) and neither the name nor the frame, which no frame of a run changes.
    What the setup assigns, the rest may not assign again."""
    body = [
        statement
        for statement in definition.body
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
    ]
    at = 0
    while at < len(body):
        read = {node.id for node in ast.walk(body[at]) if isinstance(node, ast.Name)}
        if "self" not in read or read & set(frame_names):
            break
        at += 1
    setup, rest = body[:at], body[at:]
    for node in ast.walk(ast.Module(body=setup, type_ignores=[])):
        if isinstance(node, ast.Return) and not _gives_none(node):
            raise TypeError(f"{cls}._plain returns a delta before it reads the frame")
    again = _stored(setup) & _stored(rest)
    if again:
        raise TypeError(
            f"{cls}._plain assigns {', '.join(sorted(again))} in its setup "
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


def _check(cls: str, definition: ast.FunctionDef) -> None:
    for node in ast.walk(ast.Module(body=definition.body, type_ignores=[])):
        if isinstance(node, ast.Try) and not _quiet_try(node):
            raise TypeError(
                f"{cls}._plain holds a try whose handlers do more than pass, "
                "or that returns inside it: read into locals there, return after it"
            )
        if isinstance(node, ast.stmt) and not isinstance(node, (*_ALLOWED, ast.Try)):
            raise TypeError(
                f"{cls}._plain holds a {type(node).__name__} statement: "
                "only if, pass, assignments, expressions and return are inlined"
            )
        if isinstance(node, ast.Lambda | ast.Yield | ast.YieldFrom | ast.Await):
            raise TypeError(f"{cls}._plain holds a {type(node).__name__}")
        if isinstance(node, ast.Name) and node.id in _RESERVED:
            raise TypeError(f"{cls}._plain uses the name {node.id}")


def _gives_extras(cls: str, definition: ast.FunctionDef) -> bool:
    """Whether ``_plain``'s deltas carry extras (four items): all of them, or none of
    them (three items), else a ``TypeError``."""
    sizes = {
        len(node.value.elts)
        for node in ast.walk(definition)
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple)
    }
    if len(sizes) > 1:
        raise TypeError(f"{cls}._plain gives deltas of {sorted(sizes)} items")
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
            return _statements(f"self.assembler.{verb}({key}, {piece})\n{keep}return None")
        return _statements(
            f"plain_key = {key}\n"
            f"if not self._ready(plain_key, {text}):\n"
            f"    return self._on_other({self.name}, {self.obj})\n"
            f"self.assembler.{verb}(plain_key, {piece})\n{keep}return None"
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
                made_here = statements()
                if not made_here and len(block) == 1:
                    made_here = [ast.Pass()]
                block[i : i + 1] = made_here
                after = i + len(made_here)
                if (
                    made_here
                    and isinstance(made_here[-1], ast.Return | ast.Break | ast.Continue)
                    and after < len(block)
                ):
                    del block[after]  # the shape's fall-through, never reached
                break
    if not found:
        raise TypeError(f"a shape without {marker}")  # never: the shapes above


def same_code(committed: str, made: str) -> bool:
    """Whether a committed ``_made.py`` is what :func:`made_source` wrote: the same header
    and the same code (the committed file is as ruff formats it, which changes no code)."""
    header = _HEADER.count("\n")
    if committed.splitlines()[:header] != made.splitlines()[:header]:
        return False
    try:
        return ast.dump(ast.parse(committed)) == ast.dump(ast.parse(made))
    except SyntaxError:
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Write every API's stale ``_made.py`` (``--check``: only say which are stale)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file is stale"
    )
    args = parser.parse_args(argv)
    stale = []
    for path in targets():
        made = path.with_name("_made.py")
        text = made_source(path.read_text("utf-8"), origin=f"{path.parent.name}/{path.name}")
        if made.exists() and same_code(made.read_text("utf-8"), text):
            continue
        stale.append(made)
        if not args.check:
            made.write_text(text, "utf-8")
            _format(made)
            print(f"wrote {made}")
    if args.check and stale:
        for made in stale:
            print(f"stale: {made}", file=sys.stderr)
        print(f"run: {COMMAND}", file=sys.stderr)
        return 1
    return 0


def _format(path: Path) -> None:
    """Format a written file as the rest of the code is, when ruff is installed."""
    ruff = shutil.which("ruff")
    if ruff is not None:
        subprocess.run([ruff, "format", "--quiet", str(path)], check=True)


if __name__ == "__main__":
    sys.exit(main())
