"""Sync and async twins: the same parameters in both colours, and one classification of
what the adapters are handed.

Every public function ``x_sync`` has an async twin ``x``, every public method ``m_sync``
a twin ``m``, and ``NormalizedStreamSync`` mirrors ``NormalizedStream`` (``close`` /
``aclose``, ``__iter__`` / ``__aiter__``, ...). Each pair must take the same parameters:
names, kinds, defaults and annotations, an annotation's colour aside (``Iterable`` /
``AsyncIterable``); return annotations may differ by colour. The twins are found by name,
so a new one is checked the moment it is public.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import laminate
from laminate._io.sources import SourceKind, async_source, classify, sync_source

# -- the twins -------------------------------------------------------------------------------

# Sync dunders and their async twins, and methods whose async twin is spelled apart.
_DUNDERS = {
    "__iter__": "__aiter__",
    "__next__": "__anext__",
    "__enter__": "__aenter__",
    "__exit__": "__aexit__",
    "close": "aclose",
}


def _public() -> dict[str, Any]:
    return {name: getattr(laminate, name) for name in laminate.__all__}


def twins() -> Iterator[tuple[str, Callable[..., Any], Callable[..., Any]]]:
    public = _public()
    for name, sync in public.items():
        if name.endswith("_sync") and callable(sync) and not inspect.isclass(sync):
            yield name, sync, public[name.removesuffix("_sync")]
        if inspect.isclass(sync):
            for attr, method in vars(sync).items():
                if attr.endswith("_sync") and callable(method):
                    yield f"{name}.{attr}", method, getattr(sync, attr.removesuffix("_sync"))
        if inspect.isclass(sync) and name.endswith("Sync"):
            twin = public[name.removesuffix("Sync")]
            for attr, method in vars(sync).items():
                if not callable(method) or (attr.startswith("_") and attr not in _DUNDERS):
                    continue
                yield f"{name}.{attr}", method, getattr(twin, _DUNDERS.get(attr, attr))


def _colourless(annotation: Any) -> str:
    return re.sub(r"Async(?=[A-Z])|(?<=[A-Za-z])Sync\b", "", str(annotation))


def parameters(function: Callable[..., Any]) -> list[tuple[str, Any, Any, str]]:
    return [
        (p.name, p.kind, p.default, _colourless(p.annotation))
        for p in inspect.signature(function).parameters.values()
    ]


TWINS = list(twins())


def test_the_twins_are_found() -> None:
    names = {name for name, _, _ in TWINS}
    assert {
        "normalize_stream_sync",
        "collect_sync",
        "encode_stream_sync",
        "ToolRegistry.run_sync",
        "NormalizedStreamSync.close",
        "NormalizedStreamSync.__iter__",
    } <= names


@pytest.mark.parametrize(("name", "sync", "twin"), TWINS, ids=[n for n, _, _ in TWINS])
def test_sync_and_async_twins_take_the_same_parameters(
    name: str, sync: Callable[..., Any], twin: Callable[..., Any]
) -> None:
    assert parameters(sync) == parameters(twin), name


# -- one classification ------------------------------------------------------------------------


class _Model:
    def model_dump(self) -> dict[str, Any]:
        return {}


async def _chunks() -> Any:
    yield b""


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        (b"data: {}\n\n", SourceKind.WHOLE),
        ("data: {}\n\n", SourceKind.WHOLE),
        (bytearray(b"x"), SourceKind.WHOLE),
        ({"a": 1}, SourceKind.MAPPING),
        (_Model(), SourceKind.MODEL),
        ([b"x"], SourceKind.ITERABLE),
        (iter([b"x"]), SourceKind.ITERABLE),
        (_chunks(), SourceKind.ITERABLE),
        (42, SourceKind.OTHER),
        (None, SourceKind.OTHER),
    ],
    ids=[
        "bytes",
        "str",
        "bytearray",
        "dict",
        "model",
        "list",
        "iterator",
        "async-iterator",
        "int",
        "none",
    ],
)
def test_one_table_classifies_every_source(source: object, kind: SourceKind) -> None:
    assert classify(source).kind is kind


@pytest.mark.parametrize(
    "source", [{"a": 1}, _Model(), 42, None], ids=["dict", "model", "int", "none"]
)
def test_both_colours_refuse_what_the_table_refuses(source: object) -> None:
    with pytest.raises(TypeError) as sync_error:
        sync_source(source, "collect_sync")
    with pytest.raises(TypeError) as async_error:
        async_source(source, "collect")
    # The same refusal, in the words of each colour.
    sync_note = str(sync_error.value).partition("; got ")[2]
    async_note = str(async_error.value).partition("; got ")[2]
    assert sync_note == async_note


def test_each_colour_says_when_the_other_one_reads_it() -> None:
    with pytest.raises(TypeError, match="it is async"):
        sync_source(_chunks(), "collect_sync")
    with pytest.raises(TypeError, match="sync iterable"):
        async_source(iter([b"x"]), "collect")
