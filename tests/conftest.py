from __future__ import annotations

from collections.abc import Iterator

import pytest

from laminate._core import jsonlib


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
