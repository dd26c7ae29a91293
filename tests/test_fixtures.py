"""Every fixture in fixtures/ against its hand-written expected result, and the core
promise: the same bytes give the same events however they are chunked."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from laminate import ResponseDone, normalize

from .support import (
    Fixture,
    Outcome,
    bytes_of,
    check_expected,
    lines_of,
    run_chunks,
    split_at,
    stream_fixtures,
)

FIXTURE_LIST = stream_fixtures()
IDS = [f.id for f in FIXTURE_LIST]


def test_there_are_fixtures_for_every_core_provider() -> None:
    providers = {f.provider for f in FIXTURE_LIST}
    assert {"openai", "anthropic", "ollama"} <= providers


@pytest.mark.parametrize("fixture", FIXTURE_LIST, ids=IDS)
def test_fixture_whole(fixture: Fixture) -> None:
    check_expected(fixture.expected, run_chunks([fixture.path.read_bytes()]))


@pytest.mark.parametrize("fixture", FIXTURE_LIST, ids=IDS)
def test_fixture_with_provider_forced(fixture: Fixture) -> None:
    outcome = run_chunks([fixture.path.read_bytes()], provider=fixture.provider)
    check_expected(fixture.expected, outcome)


@pytest.mark.parametrize("fixture", FIXTURE_LIST, ids=IDS)
def test_fixture_same_events_by_line_and_by_byte(fixture: Fixture) -> None:
    data = fixture.path.read_bytes()
    whole = run_chunks([data])
    for chunks in (lines_of(data), bytes_of(data)):
        other = run_chunks(chunks)
        assert other.events == whole.events
        assert type(other.error) is type(whole.error)
        assert (other.response == whole.response) or other.error is not None


@pytest.mark.parametrize("fixture", FIXTURE_LIST, ids=IDS)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_fixture_same_events_in_any_split(fixture: Fixture, data: st.DataObject) -> None:
    body = fixture.path.read_bytes()
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=40))
    whole = run_chunks([body])
    split = run_chunks(split_at(body, cuts))
    assert split.events == whole.events
    assert type(split.error) is type(whole.error)
    if whole.error is not None and split.error is not None:
        assert split.error.partial == whole.error.partial


BODY_FIXTURES = [f for f in FIXTURE_LIST if f.body_path.exists()]


@pytest.mark.parametrize("fixture", BODY_FIXTURES, ids=[f.id for f in BODY_FIXTURES])
def test_stream_and_body_agree(fixture: Fixture) -> None:
    streamed = run_chunks([fixture.path.read_bytes()]).response
    body = normalize(fixture.body_path.read_bytes())
    assert streamed is not None
    assert body.content == streamed.content
    assert body.stop_reason == streamed.stop_reason
    assert body.usage == streamed.usage
    assert body.provider == fixture.provider
    check_expected(fixture.expected, Outcome([ResponseDone(body)], None))


def test_expected_files_are_json() -> None:
    for fixture in FIXTURE_LIST:
        assert isinstance(fixture.expected, dict)
        json.dumps(fixture.expected)
