from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator

import pytest

from laminate._core import jsonlib
from laminate._framing import eventstream

_CRCS: dict[str, Callable[..., int]] = {"zlib": zlib.crc32}
try:
    from isal.isal_zlib import crc32 as _isal_crc32
except ImportError:  # the `fast` extra is not installed: zlib's only
    pass
else:
    _CRCS["isal"] = _isal_crc32


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every async test runs on asyncio and on trio."""
    return str(request.param)


@pytest.fixture(autouse=True, scope="session", params=jsonlib.available())
def json_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test runs with each JSON backend installed (the standard library, and orjson
    when the `fast` extra is): results must not depend on which one reads."""
    before = jsonlib.BACKEND
    jsonlib.use(str(request.param))
    yield str(request.param)
    jsonlib.use(before)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked ``static`` (one that reads the code, not streams: types, lint, the
    layers, the made modules) runs once, with the first JSON backend: its copies for the
    others are deselected."""
    first = jsonlib.available()[0]
    again = [
        item
        for item in items
        if isinstance(item, pytest.Function)
        and item.get_closest_marker("static") is not None
        and hasattr(item, "callspec")
        and item.callspec.params.get("json_backend", first) != first
    ]
    if again:
        config.hook.pytest_deselected(items=again)
        dropped = set(map(id, again))
        items[:] = [item for item in items if id(item) not in dropped]


@pytest.fixture(params=sorted(_CRCS))
def eventstream_crc(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The binary decoder and writer with each CRC-32 installed (zlib's, and ISA-L's when
    the `fast` extra is): a test that asks for it runs once per implementation."""
    monkeypatch.setattr(eventstream, "crc32", _CRCS[str(request.param)])
    return str(request.param)
