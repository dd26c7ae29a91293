"""The layer stack: no module imports a layer above its own.

laminate is built in layers, each knowing only the ones below it
(``docs/architecture.md`` draws them)::

    _cli         the commands: replay, record, serve, demo, translate, proxy
    _proxy       the translating proxy, an ASGI app
    _io          async and sync shells: httpx responses, SDK objects, iterables
    _tools       the tool loop: registry, schema, dispatch, envelope
    _encode      the writing front: StreamEncoder, encode_stream, the AI SDK stream
    _normalizer  the reading front: StreamNormalizer wires framing, detection, handler
    _apis        everything one API means (a folder each), what they share, the registry
    _framing     bytes <-> frames: SSE, NDJSON, JSON document and array, AWS eventstream
    _core        events, response, request, errors, assembler, partial JSON, FlexValue

This test reads every import in ``src/laminate`` (at run time and under
``TYPE_CHECKING`` alike, absolute and relative) and fails on any that points up the
stack, naming the file and the line. The public modules (``__init__``, ``testing``,
``proxy``) stand on top and may import every layer. Imports within one layer are free.
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
# top-level module), without the `.py`.
STACK: Final = (
    "_core",
    "_framing",
    "_apis",
    "_normalizer",
    "_encode",
    "_tools",
    "_io",
    "_proxy",
    "_cli",
)
# The public modules and the entry point stand above everything.
TOP: Final = frozenset({"__init__", "__main__", "testing", "proxy"})


def layer_of(parts: tuple[str, ...]) -> str:
    """The layer a module (its path parts under ``laminate``) belongs to."""
    return parts[0].removesuffix(".py")


def rank(layer: str) -> int:
    return len(STACK) if layer in TOP else STACK.index(layer)


def imported_layers(source: str, package: tuple[str, ...]) -> Iterator[tuple[int, str]]:
    """``(line, layer)`` for every import of a laminate module in ``source``, a module of
    ``package`` (its path parts under ``laminate``, without the file)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "laminate" and len(parts) > 1:
                    yield node.lineno, parts[1]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                parts = (node.module or "").split(".")
                if parts[0] != "laminate":
                    continue
                target = parts[1:]
            else:
                base = list(package[: len(package) - (node.level - 1)])
                target = [*base, *(node.module.split(".") if node.module else [])]
            if target:
                yield node.lineno, target[0]
            else:
                # `from . import x` at the top of the package: each name is a layer.
                for alias in node.names:
                    yield node.lineno, alias.name


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
    """Relative, absolute and nested (``TYPE_CHECKING``) imports are all read."""
    source = (
        "from .._apis import registry\n"
        "from . import assembler\n"
        "if TYPE_CHECKING:\n"
        "    from laminate._io.sources import Source\n"
        "    import laminate._tools.registry\n"
    )
    found = list(imported_layers(source, ("_core",)))
    assert found == [(1, "_apis"), (2, "_core"), (4, "_io"), (5, "_tools")]
