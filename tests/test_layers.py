"""The layer stack: no module imports a layer above its own.

laminate is built in layers, each knowing only the ones below it
(``docs/architecture.md`` draws them)::

    _cli         the commands: replay, record, serve, demo, translate, proxy
    _proxy       the translating proxy, an ASGI app
    _io          async and sync shells: httpx responses, SDK objects, iterables
    _tools       the tool loop: registry, schema, dispatch, envelope
    _encode      the writing front: StreamEncoder, encode_stream, the AI SDK stream
    _normalizer  the reading front: StreamNormalizer wires framing, detection, handler
    _apis        registry.py, detect.py, translate.py, wire.py: the registry of the
                 APIs' records and what looks an API up in it
    _apis/<api>  everything one API means, a folder each
    _apis        the shared kit: base, spec, plain, writer, shapes, requestkit, ...
    _framing     bytes <-> frames: SSE, NDJSON, JSON document and array, AWS eventstream
    _core        events, response, request, errors, assembler, partial JSON, FlexValue

This test reads every import in ``src/laminate`` (at run time and under
``TYPE_CHECKING`` alike; absolute, relative and bare) and fails on any that points up the
stack, naming the file and the line. A name imported from the package itself (``import
laminate``, ``from laminate import X``, ``from .. import X`` at the top) is an import of
its ``__init__``. The public modules (``__init__``, ``testing``, ``proxy``) stand on top
and may import every layer. Imports within one layer (the API folders among them) are
free.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

pytestmark = pytest.mark.static

SRC: Final = Path(__file__).resolve().parent.parent / "src" / "laminate"

# Bottom first. A module's layer is its first path part under `laminate` (a package or a
# top-level module), without the `.py`; inside `_apis`, three (see `layer_of`).
STACK: Final = (
    "_core",
    "_framing",
    "_apis (shared kit)",
    "_apis/<api>",
    "_apis (registry and translation)",
    "_normalizer",
    "_encode",
    "_tools",
    "_io",
    "_proxy",
    "_cli",
)
# The public modules and the entry point stand above everything.
TOP: Final = frozenset({"__init__", "__main__", "testing", "proxy"})
# The modules of `_apis` that stand on the API folders: the registry of their records and
# what looks an API up in it (detection, the tool loop's shapes, request translation).
APIS_TOP: Final = frozenset({"registry", "detect", "translate", "wire"})


def layer_of(parts: tuple[str, ...]) -> str:
    """The layer a module (its path parts under ``laminate``) belongs to. Inside ``_apis``:
    an API's folder, what the folders share (below them), or the registry and what reads it
    (above them)."""
    first = parts[0].removesuffix(".py")
    if first != "_apis" or len(parts) == 1:
        return first
    if (SRC / "_apis" / parts[1]).is_dir():
        return "_apis/<api>"
    if parts[1].removesuffix(".py") in APIS_TOP:
        return "_apis (registry and translation)"
    return "_apis (shared kit)"


def rank(layer: str) -> int:
    return len(STACK) if layer in TOP else STACK.index(layer)


def _module(parts: list[str]) -> tuple[str, ...]:
    """The file a dotted path under ``laminate`` names: a module, a package's
    ``__init__``, or, for a name in a module (``from .x import name``), that module."""
    path = SRC.joinpath(*parts)
    if path.is_dir():
        return (*parts, "__init__.py")
    if path.with_suffix(".py").is_file():
        return (*parts[:-1], f"{parts[-1]}.py")
    return _module(parts[:-1]) if parts else ("__init__.py",)


def imported_modules(
    source: str, package: tuple[str, ...]
) -> Iterator[tuple[int, tuple[str, ...]]]:
    """``(line, path parts)`` for every laminate module that ``source``, a module of
    ``package`` (its path parts under ``laminate``, without the file), imports: ``import
    laminate`` and a name from the package itself (``from laminate import X``, ``from ..
    import X``) are its ``__init__``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "laminate":
                    yield node.lineno, _module(parts[1:])
            continue
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 0:
            parts = (node.module or "").split(".")
            if parts[0] != "laminate":
                continue
            base = parts[1:]
        else:
            if node.level - 1 > len(package):
                raise AssertionError(f"line {node.lineno}: a relative import above laminate")
            base = [*package[: len(package) - (node.level - 1)]]
            base += node.module.split(".") if node.module else []
        for alias in node.names:
            # `from x import name`: the submodule x.name if there is one, else x itself.
            yield node.lineno, _module([*base, alias.name])


def imported_layers(source: str, package: tuple[str, ...]) -> Iterator[tuple[int, str]]:
    """``(line, layer)`` for every import of a laminate module in ``source``."""
    for line, parts in imported_modules(source, package):
        yield line, layer_of(parts)


def modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_every_module_belongs_to_a_layer() -> None:
    unplaced = [
        str(path.relative_to(SRC))
        for path in modules()
        if layer_of(path.relative_to(SRC).parts) not in (*STACK, *TOP)
    ]
    assert unplaced == [], f"modules in no layer of STACK: {unplaced}"


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_import_points_up_the_stack(path: Path) -> None:
    relative = path.relative_to(SRC)
    own = layer_of(relative.parts)
    source = path.read_text(encoding="utf-8")
    upward = [
        f"{relative}:{line} imports {layer} (above {own})"
        for line, layer in imported_layers(source, relative.parts[:-1])
        if layer in (*STACK, *TOP) and rank(layer) > rank(own)
    ]
    assert upward == [], "\n".join(upward)


def test_the_check_sees_every_form_of_an_upward_import() -> None:
    """Relative, absolute, bare and nested (``TYPE_CHECKING``) imports are all read, and
    a name from the package itself is its ``__init__``."""
    source = (
        "from .._apis import registry\n"
        "from . import assembler\n"
        "if TYPE_CHECKING:\n"
        "    from laminate._io.sources import Source\n"
        "    import laminate._tools.registry\n"
        "from laminate import collect\n"
        "from .. import collect\n"
        "import laminate\n"
        "from laminate import _framing\n"
        "from ..testing import mock_server\n"
    )
    found = sorted(imported_layers(source, ("_core",)))
    assert found == [
        (1, "_apis (registry and translation)"),
        (2, "_core"),
        (4, "_io"),
        (5, "_tools"),
        (6, "__init__"),
        (7, "__init__"),
        (8, "__init__"),
        (9, "_framing"),
        (10, "testing"),
    ]


def test_the_apis_have_three_layers() -> None:
    """Inside ``_apis``: an API's folder stands on what the folders share, and the
    registry (with what looks an API up in it) on the folders."""
    kit, folder, top = (
        rank(layer_of(("_apis", name))) for name in ("base.py", "anthropic", "registry.py")
    )
    assert kit < folder < top
    assert layer_of(("_apis", "anthropic", "read.py")) == "_apis/<api>"
    assert layer_of(("_apis", "__init__.py")) == "_apis (shared kit)"
    source = "from ..registry import api\nfrom .. import registry\nfrom ..plain import TEXT\n"
    found = list(imported_layers(source, ("_apis", "anthropic")))
    assert [layer for _, layer in found] == [
        "_apis (registry and translation)",
        "_apis (registry and translation)",
        "_apis (shared kit)",
    ]
