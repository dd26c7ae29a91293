"""Plain deltas read from their bytes (``_apis/templates.py``) give exactly what parsing
every frame gives: the same events, the same error and the same answer, for every
fixture and recording in any pieces, for any text (quotes, escapes, other scripts), and
where a stream changes what a frame means under the same bytes (a call index used again).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import laminate._normalizer
from laminate import LaminateError, MalformedStreamError, StreamNormalizer
from laminate._apis import templates as template_module
from laminate._apis.templates import TRIES, Template, learn
from laminate._core.events import ReasoningDelta, TextDelta, ToolInputDelta
from laminate._core.serialize import response_to_dict
from laminate._framing.eventstream import encode_message
from laminate._normalizer import merging

from . import make_bedrock_fixtures as bedrock
from .support import (
    FIXTURES,
    REAL_STREAMS,
    REAL_STREAMS_2,
    REAL_STREAMS_3,
    REAL_STREAMS_4,
    STREAM_SUFFIXES,
    Outcome,
    assert_same_outcome,
    run_chunks,
    stream_fixtures,
)


def pieces(body: bytes, size: int) -> list[bytes]:
    return [body[at : at + size] for at in range(0, len(body), size)] or [body]


def both(
    body: bytes, provider: str | None, size: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[Outcome, Outcome]:
    """The body in pieces of ``size`` bytes, read with templates and without."""
    fast = run_chunks(pieces(body, size), provider)
    with monkeypatch.context() as patch:
        patch.setattr(laminate._normalizer, "TRIES", 0)
        slow = run_chunks(pieces(body, size), provider)
    return fast, slow


def alike(chunks: list[bytes], provider: str) -> Outcome:
    """What reading ``chunks`` with templates gives, checked to be what reading them
    without gives (for a property test: hypothesis runs a test's examples under one
    monkeypatch)."""
    fast = run_chunks(chunks, provider)
    setattr(laminate._normalizer, "TRIES", 0)  # noqa: B010 (not exported)
    try:
        slow = run_chunks(chunks, provider)
    finally:
        setattr(laminate._normalizer, "TRIES", TRIES)  # noqa: B010
    assert_same_outcome(fast, slow)
    return fast


@contextmanager
def taking(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """While inside, how many frames templates took: from the decoder's batches
    (``"batches"``) and straight from the bytes (``"bytes"``)."""
    counts = {"batches": 0, "bytes": 0}
    run, take = Template.run, Template.take

    def counting_run(self: Template, *args: Any) -> tuple[int, bool]:
        before = self.taken
        result = run(self, *args)
        counts["batches"] += self.taken - before
        return result

    def counting_take(self: Template, *args: Any) -> int:
        before = self.taken
        result = take(self, *args)
        counts["bytes"] += self.taken - before
        return result

    with monkeypatch.context() as patch:
        patch.setattr(Template, "run", counting_run)
        patch.setattr(Template, "take", counting_take)
        yield counts


def counted(
    chunks: list[bytes], provider: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[Outcome, dict[str, int]]:
    """What reading ``chunks`` gives, and how many frames templates took (``taking``)."""
    with taking(monkeypatch) as counts:
        outcome = run_chunks(chunks, provider)
    return outcome, counts


def taken(
    body: bytes, provider: str, size: int, monkeypatch: pytest.MonkeyPatch, *, where: str = "all"
) -> int:
    """How many frames templates took, for the body in pieces of ``size`` bytes: from the
    decoder's batches (``where="batches"``), straight from the bytes (``"bytes"``), or
    both."""
    outcome, counts = counted(pieces(body, size), provider, monkeypatch)
    assert outcome.error is None
    return sum(counts.values()) if where == "all" else counts[where]


def learns(body: bytes, size: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many templates an OpenAI stream in pieces of ``size`` bytes tried to learn
    (once it is seen to read as without them)."""
    count = 0

    def counting(*args: Any, **options: Any) -> Template | None:
        nonlocal count
        count += 1
        return learn(*args, **options)

    with monkeypatch.context() as patch:
        patch.setattr(laminate._normalizer, "learn", counting)
        fast, slow = both(body, "openai", size, monkeypatch)
    assert_same_outcome(fast, slow)
    return count


def sse(*objs: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return b"".join(
        (head + "data: " + (o if isinstance(o, str) else json.dumps(o)) + "\n\n").encode()
        for o in objs
    )


def chat(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta}
    if finish is not None:
        choice["finish_reason"] = finish
    return {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}


def chat_text(texts: list[str]) -> bytes:
    return sse(
        chat({"role": "assistant", "content": ""}),
        *(chat({"content": text}) for text in texts),
        chat({}, "stop"),
        "[DONE]",
    )


def messages_text(texts: list[str], *, ascii_only: bool = True) -> bytes:
    def event(obj: dict[str, Any]) -> bytes:
        data = json.dumps(obj, ensure_ascii=ascii_only, separators=(",", ":"))
        return f"event: {obj['type']}\ndata: {data}\n\n".encode()

    message: dict[str, Any] = {"id": "msg_1", "type": "message", "role": "assistant"}
    message["model"] = "m"
    message |= {"content": [], "usage": {"input_tokens": 1, "output_tokens": 0}}
    frames: list[dict[str, Any]] = [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}
            for t in texts
        ),
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]
    return b"".join(map(event, frames))


# -- every stream we have ---------------------------------------------------------------------


@pytest.mark.parametrize("size", [97, 4096, 65536])
def test_every_fixture_reads_alike_with_templates(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures = stream_fixtures()
    assert fixtures
    for fixture in fixtures:
        fast, slow = both(fixture.path.read_bytes(), fixture.provider, size, monkeypatch)
        assert_same_outcome(fast, slow)


@pytest.mark.parametrize(
    "folder",
    [REAL_STREAMS, REAL_STREAMS_2, REAL_STREAMS_3, REAL_STREAMS_4],
    ids=["real-streams", "real-2", "real-3", "real-4"],
)
def test_every_recording_reads_alike_with_templates(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not folder.is_dir():
        pytest.skip(f"the shared recordings {folder.name} are not beside this clone")
    paths = [p for p in sorted(folder.rglob("*")) if p.name.endswith(STREAM_SUFFIXES)]
    assert paths
    for path in paths:
        for size in (211, 4096, 65536):
            fast, slow = both(path.read_bytes(), None, size, monkeypatch)
            assert fast.events == slow.events, path
            assert type(fast.error) is type(slow.error), path
            assert str(fast.error) == str(slow.error), path


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("openai", chat_text([f"w{n} " for n in range(600)])),
        ("anthropic", messages_text([f"w{n} " for n in range(600)])),
    ],
    ids=["chat", "messages"],
)
def test_templates_take_nearly_every_delta_of_a_long_stream(
    provider: str, body: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Of 600: all but the first two pieces' (a template is learned from the second feed
    # on, so that the first one's events do not wait for it), and one a piece.
    assert taken(body, provider, 4096, monkeypatch) >= 500
    fast, slow = both(body, provider, 4096, monkeypatch)
    assert_same_outcome(fast, slow)
    assert fast.response is not None
    assert fast.response.text() == "".join(f"w{n} " for n in range(600))


def test_templates_are_learned_again_for_every_block_of_a_long_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Twelve tool calls, each its own template (its index is in its frames' bytes): more
    # than the tries a stream has, which only templates that match nothing use up.
    frames: list[Any] = [chat({"role": "assistant"})]
    for index in range(12):
        frames.append(call_start(index, f"call_{index}", f"tool{index}"))
        frames.append(call_args(index, '{"a": "'))
        frames += [call_args(index, "x") for _ in range(150)]
        frames.append(call_args(index, '"}'))
    body = sse(*frames, chat({}, "tool_calls"), "[DONE]")
    assert taken(body, "openai", 4096, monkeypatch) >= 12 * 120
    fast, slow = both(body, "openai", 4096, monkeypatch)
    assert_same_outcome(fast, slow)
    assert fast.response is not None
    assert [use.input.value for use in fast.response.tool_uses()] == [{"a": "x" * 150}] * 12


@pytest.mark.parametrize("size", [1000, 4096, 16384])
@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("openai", chat_text([f"w{n} " for n in range(600)])),
        ("anthropic", messages_text([f"w{n} " for n in range(600)])),
    ],
    ids=["chat", "messages"],
)
def test_the_template_s_frames_are_read_straight_from_the_stream_s_bytes(
    provider: str, body: bytes, size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Once learned (from the second piece's frames), a template takes its frames before
    # the decoder cuts them: in pieces cut anywhere, only the frame each later piece
    # ends inside is left to the decoder.
    left = 2 * size // 100 + len(body) // size + 5  # two pieces' frames, one a piece
    assert taken(body, provider, size, monkeypatch, where="bytes") >= 600 - left
    fast, slow = both(body, provider, size, monkeypatch)
    assert_same_outcome(fast, slow)


def first_and_rest(body: bytes, first: int) -> list[bytes]:
    return [body[:first], body[first:]]


def bedrock_text(texts: list[str]) -> bytes:
    # One padding for every event: a template holds (Bedrock's own varies).
    events = [bedrock.START, *(bedrock.text(0, t) for t in texts), bedrock.stop(0)]
    events += [bedrock.message_stop("end_turn"), bedrock.metadata(inputTokens=3, outputTokens=9)]
    return b"".join(bedrock.event(name, payload) for name, payload in events)


LONG_TEXTS = [f"w{n} " if n % 7 else f'"\\ é {n}\n' for n in range(3000)]


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("openai", chat_text(LONG_TEXTS)),
        ("anthropic", messages_text(LONG_TEXTS, ascii_only=False)),
        ("bedrock", bedrock_text(LONG_TEXTS)),
    ],
    ids=["chat", "messages", "bedrock"],
)
def test_a_long_read_with_no_template_yet_learns_one_from_its_first_frames(
    provider: str, body: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A small first piece, then the whole rest in one feed (a proxy's first read, then a
    # backend that sent everything at once): the rest's first frames are read the usual
    # way and the template learned from them takes the others, from the stream's bytes
    # (SSE) or from the decoder's batch (AWS event messages).
    fast, counts = counted(first_and_rest(body, 1024), provider, monkeypatch)
    assert fast.error is None
    # Every seventh text has escapes and UTF-8, which a template learned from a plain
    # one still takes (another literal at the same place).
    assert counts["bytes" if provider != "bedrock" else "batches"] >= 3000 - 100
    with monkeypatch.context() as patch:
        patch.setattr(laminate._normalizer, "TRIES", 0)
        slow = run_chunks(first_and_rest(body, 1024), provider)
    assert_same_outcome(fast, slow)
    assert fast.response is not None
    assert fast.response.text() == "".join(LONG_TEXTS)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_first_read_that_ends_with_plain_deltas_teaches_the_next_read_s_template(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A first read whose frames end with a plain delta does not wait for a template, and
    # the next read begins with one learned from that delta: its frames are all taken
    # from its bytes but the one the first read cut, none read the usual way to learn.
    texts = [f"w{n} " for n in range(600)]
    body = chat_text(texts) if provider == "openai" else messages_text(texts)
    first = body[:1024]
    whole_frames = first.count(b"\n\n")
    deltas_first = whole_frames - (1 if provider == "openai" else 2)  # role / starts
    fast, counts = counted(first_and_rest(body, 1024), provider, monkeypatch)
    assert counts["batches"] == 0
    assert counts["bytes"] == 600 - deltas_first - 1
    with monkeypatch.context() as patch:
        patch.setattr(laminate._normalizer, "TRIES", 0)
        slow = run_chunks(first_and_rest(body, 1024), provider)
    assert_same_outcome(fast, slow)


# What may come between a template's frames, as the stream's bytes: each breaks a run
# read from the bytes, which the decoder then reads (or a template takes again after it).
BETWEEN = st.sampled_from(
    [
        b": keep-alive\n\n",  # a comment
        b"event: ping\ndata: {}\n\n",
        b"id: 7\n",  # an id line, before the next event
        b"retry: 10\n",
        b"\n",  # a blank line alone
        b"data:",  # the next event's data without its space
        b"\r\n",  # a CR LF
        b"data: [DONE]\n\n",
        b'data: {"id": "c1"',  # an event cut short by the next one's bytes
        # the template's opening and closing sharing their quote: not JSON
        b'data: {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": '
        b'[{"index": 0, "delta": {"content": "}}]}\n\n',
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.lists(st.one_of(st.text(max_size=6), BETWEEN), min_size=1, max_size=80),
    size=st.integers(min_value=1, max_value=900),
)
def test_anything_between_a_template_s_frames_reads_as_without_templates(
    items: list[str | bytes], size: int
) -> None:
    body = sse(chat({"role": "assistant", "content": ""}))
    for item in items:
        body += item if isinstance(item, bytes) else sse(chat({"content": item}))
    body += sse(chat({}, "stop"), "[DONE]")
    alike(pieces(body, size), "openai")


def test_a_frame_over_the_cap_among_template_frames_is_the_decoder_s_error() -> None:
    frames = [chat({"role": "assistant"})] + [chat({"content": "w"}) for _ in range(50)]
    body = sse(*frames) + sse(chat({"content": "x" * 3000})) + sse(chat({}, "stop"), "[DONE]")
    offsets = []
    for templates in (TRIES, 0):
        setattr(laminate._normalizer, "TRIES", templates)  # noqa: B010 (not exported)
        try:
            normalizer = StreamNormalizer("openai", max_frame_size=2048)

            def read(normalizer: StreamNormalizer = normalizer) -> None:
                for piece in pieces(body, 1000):  # each within the cap: read from the bytes
                    normalizer.feed(piece)
                normalizer.close()

            with pytest.raises(MalformedStreamError, match="longer than") as caught:
                read()
        finally:
            setattr(laminate._normalizer, "TRIES", TRIES)  # noqa: B010
        assert caught.value.partial is not None
        assert caught.value.partial.text() == "w" * 50
        offsets.append(caught.value.offset)
    assert offsets[0] == offsets[1] is not None


_SEPARATOR = b'"}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
_SEPARATOR += b'"delta":{"type":"text_delta","text":"'
# Bytes that make the separator, its start, its rest and their pieces, in any order.
SPLIT_PARTS = st.sampled_from(
    [
        *(b"a", b'"', b"}", b"\n", _SEPARATOR, _SEPARATOR[:5], _SEPARATOR[:16]),
        *(_SEPARATOR[:20], _SEPARATOR[16:], _SEPARATOR[:-3], _SEPARATOR[16:40], _SEPARATOR[1:]),
    ]
)


@settings(max_examples=500, deadline=None)
@given(parts=st.lists(SPLIT_PARTS, max_size=14))
def test_a_long_separator_splits_as_bytes_split_does(parts: list[bytes]) -> None:
    data = b"".join(parts)
    assert template_module._split(data, _SEPARATOR) == data.split(_SEPARATOR)


# -- any text, in any pieces ------------------------------------------------------------------

TEXTS = st.lists(
    st.one_of(
        st.sampled_from(["w ", "", '"', "\\", "a\nb", "é", "\u2028", "\x00", "\x7f", "😀", "}}]}"]),
        st.text(max_size=12),
    ),
    min_size=1,
    max_size=120,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=TEXTS,
    size=st.integers(min_value=1, max_value=700),
    ascii_only=st.booleans(),
    merged=st.booleans(),
)
def test_any_text_reads_alike_with_templates(
    texts: list[str], size: int, ascii_only: bool, merged: bool
) -> None:
    # ``merged``: the deltas merged as the proxy's are (``assert_merged_alike``).
    check = assert_merged_alike if merged else alike
    for provider, body in (
        ("openai", chat_text(texts)),
        ("anthropic", messages_text(texts, ascii_only=ascii_only)),
    ):
        fast = check(pieces(body, size), provider)
        assert fast.error is None
        assert fast.response is not None
        assert fast.response.text() == "".join(texts)


# -- merged deltas (the proxy's) ---------------------------------------------------------------


def merged_run(chunks: list[bytes], provider: str | None, *, templates: bool = True) -> Outcome:
    """``run_chunks`` with a normalizer whose deltas are merged (``merging``), with
    templates or without."""
    normalizer = merging(StreamNormalizer(provider))
    events: list[Any] = []
    if not templates:
        setattr(laminate._normalizer, "TRIES", 0)  # noqa: B010 (not exported)
    try:
        for chunk in chunks:
            events += normalizer.feed(chunk)
        events += normalizer.close()
    except LaminateError as exc:
        return Outcome(events, exc)
    finally:
        setattr(laminate._normalizer, "TRIES", TRIES)  # noqa: B010
    return Outcome(events, None)


def coalesced(events: list[Any]) -> list[Any]:
    """The events with each run of one block's deltas as one: what merged deltas keep
    however the reads were cut."""
    out: list[Any] = []
    for event in events:
        if isinstance(event, (TextDelta, ReasoningDelta, ToolInputDelta)):
            kind = type(event).__name__
            text = event.fragment if isinstance(event, ToolInputDelta) else event.text
            last = out[-1] if out else None
            if isinstance(last, list) and last[:2] == [kind, event.index]:
                last[2] += text
                continue
            out.append([kind, event.index, text])
        else:
            out.append(event)
    return out


def assert_merged_alike(chunks: list[bytes], provider: str | None) -> Outcome:
    """Merged deltas read with templates as without: the same content in the same
    runs, the same error (type, text, offset), the same answer as unmerged ones."""
    fast = merged_run(chunks, provider)
    slow = merged_run(chunks, provider, templates=False)
    assert coalesced(fast.events) == coalesced(slow.events)
    assert type(fast.error) is type(slow.error)
    assert str(fast.error) == str(slow.error)
    assert getattr(fast.error, "offset", None) == getattr(slow.error, "offset", None)
    unmerged = run_chunks(chunks, provider)
    assert type(unmerged.error) is type(fast.error)
    for response in (slow.response, unmerged.response):
        assert (response is None) == (fast.response is None)
        if response is not None and fast.response is not None:
            assert response_to_dict(response) == response_to_dict(fast.response)
    return fast


@pytest.mark.parametrize("size", [4096, 65536])
def test_every_fixture_reads_alike_with_templates_when_merged(size: int) -> None:
    fixtures = stream_fixtures()
    assert fixtures
    for fixture in fixtures:
        assert_merged_alike(pieces(fixture.path.read_bytes(), size), fixture.provider)


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("openai", chat_text([f"w{n} " for n in range(600)])),
        ("anthropic", messages_text([f"w{n} " for n in range(600)])),
        ("openai", chat_text([f"é{n} " for n in range(600)])),
        ("openai", chat_text([f'"{n}\\ ' for n in range(600)])),
    ],
    ids=["chat", "messages", "not-ascii", "escapes"],
)
def test_a_long_stream_s_merged_pieces_are_taken_by_templates(
    provider: str, body: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Templates take nearly every frame of a merged reader too, a read's pieces as one
    # delta (plain ASCII ones handed over as one piece), and the text is the whole.
    chunks = pieces(body, 4096)
    with taking(monkeypatch) as counts:
        outcome = assert_merged_alike(chunks, provider)
    assert sum(counts.values()) >= 500
    assert outcome.error is None
    assert outcome.response is not None
    deltas = [e for e in outcome.events if isinstance(e, TextDelta)]
    assert len(deltas) <= 2 * len(chunks)
    assert "".join(e.text for e in deltas) == outcome.response.text()


def test_a_character_cut_between_two_merged_pieces_is_the_usual_reader_s_error() -> None:
    # Each of two frames holds half of a two-byte character: neither is UTF-8, though
    # their pieces in a row would be. Merged or not, the stream is refused there.
    def frame(piece: bytes) -> bytes:
        return sse(chat({"content": "@"})).replace(b"@", piece)

    good = [chat({"content": f"w{n} "}) for n in range(300)]
    end = sse(chat({}, "stop"), "[DONE]")
    body = sse(*good[:200]) + frame(b"\xc3") + frame(b"\xa9") + sse(*good[200:]) + end
    for size in (4096, 65536):
        outcome = assert_merged_alike(pieces(body, size), "openai")
        assert isinstance(outcome.error, MalformedStreamError)


# -- what a template must never do ------------------------------------------------------------


def call_start(index: int, call_id: str, name: str) -> dict[str, Any]:
    function = {"name": name, "arguments": ""}
    return chat(
        {"tool_calls": [{"index": index, "id": call_id, "type": "function", "function": function}]}
    )


def call_args(index: int, part: str) -> dict[str, Any]:
    return chat({"tool_calls": [{"index": index, "function": {"arguments": part}}]})


def test_a_call_index_used_again_is_a_new_call_not_the_template_s() -> None:
    # Servers that number every call 0: the second call's fragments have the same bytes
    # around them as the first's, but belong to another call.
    frames: list[Any] = [chat({"role": "assistant"})]
    for number in range(2):
        frames.append(call_start(0, f"call_{number}", f"tool{number}"))
        frames += [call_args(0, part) for part in ['{"a', '": ', f'"v{number}', '"}']] * 1
        frames += [call_args(0, " ") for _ in range(60)]
    frames += [chat({}, "tool_calls"), "[DONE]"]
    body = sse(*frames)
    for size in (1, 64, 4096, len(body)):
        outcome = run_chunks(pieces(body, size), "openai")
        assert outcome.error is None
        assert outcome.response is not None
        calls = outcome.response.tool_uses()
        assert [(c.id, c.name, c.input.value) for c in calls] == [
            ("call_0", "tool0", {"a": "v0"}),
            ("call_1", "tool1", {"a": "v1"}),
        ]


def frame_bytes(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def handler_after(body: bytes, provider: str) -> Any:
    normalizer = StreamNormalizer(provider)
    normalizer.feed(body)
    return normalizer._handler


def test_a_piece_written_twice_in_its_frame_makes_no_template() -> None:
    handler = handler_after(sse(chat({"role": "assistant"})), "openai")
    obj = chat({"content": "m"})  # the model's name is "m" too
    assert learn(handler, None, obj, frame_bytes(obj)) is None
    obj = chat({"content": "word"})
    assert learn(handler, None, obj, frame_bytes(obj)) is not None


def test_a_frame_the_handler_does_not_read_as_plain_makes_no_template() -> None:
    handler = handler_after(sse(chat({"role": "assistant"})), "openai")
    obj = chat({"content": "word"}, "stop")
    assert learn(handler, None, obj, frame_bytes(obj)) is None


def test_a_piece_written_with_other_escapes_makes_no_template() -> None:
    handler = handler_after(sse(chat({"role": "assistant"})), "openai")
    obj = chat({"content": "é"})
    written = frame_bytes(obj).replace(b"\\u00e9", b"\\u00E9")
    assert learn(handler, None, obj, written) is None


def frames_of(texts: list[str]) -> Iterator[bytes]:
    for text in texts:
        yield frame_bytes(chat({"content": text}))


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (
            b'{"id": "c1", "object": "chat.completion.chunk", "model": "m", '
            b'"choices": [{"index": 0, "delta": {"content": "a\\qb"}}]}',
            "a bad escape",
        ),
        (
            b'{"id": "c1", "object": "chat.completion.chunk", "model": "m", '
            b'"choices": [{"index": 0, "delta": {"content": "a\xffb"}}]}',
            "not UTF-8",
        ),
        (
            b'{"id": "c1", "object": "chat.completion.chunk", "model": "m", '
            b'"choices": [{"index": 0, "delta": {"content": "a", "x": "b"}}]}',
            "another key",
        ),
        (
            b'{"id": "c1", "object": "chat.completion.chunk", "model": "m", '
            b'"choices": [{"index": 0, "delta": {"content": "a\tb"}}]}',
            "a raw tab",
        ),
    ],
    ids=["escape", "utf8", "key", "tab"],
)
def test_a_bad_frame_among_templated_ones_reads_as_without_them(
    bad: bytes, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = b"".join(b"data: " + f + b"\n\n" for f in frames_of([f"w{n}" for n in range(80)]))
    body = sse(chat({"role": "assistant"})) + good + b"data: " + bad + b"\n\n" + good
    body += sse(chat({}, "stop"), "[DONE]")
    for size in (50, 1500, len(body)):
        fast, slow = both(body, "openai", size, monkeypatch)
        assert_same_outcome(fast, slow)


def test_a_long_cut_out_piece_that_is_not_one_string_is_refused_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The bytes a template cuts out of a frame with another key after its piece hold an
    # escape, tens of plain characters and a quote: they are refused in one pass
    # (never tried again in shorter runs, which takes time exponential in their length).
    def frame(delta: dict[str, Any]) -> bytes:
        return b"data: " + json.dumps(chat(delta), separators=(",", ":")).encode() + b"\n\n"

    good = b"".join(frame({"content": f"w{n} "}) for n in range(200))
    bad = frame({"content": "\\ " + "a" * 40}).replace(b'"}}]}', b'","x":"y"}}]}')
    body = frame({"role": "assistant", "content": ""}) + good + bad + good
    body += sse(chat({}, "stop"), "[DONE]")
    for size in (4096, len(body)):
        fast, slow = both(body, None, size, monkeypatch)  # as detected
        assert_same_outcome(fast, slow)
        assert fast.response is not None
        assert "a" * 40 in fast.response.text()


@pytest.mark.parametrize("odd", ["a\ud800b", 'a"b\\c\nd\u2028', "\x7f\x1f"])
def test_escapes_and_lone_surrogates_among_templated_frames_read_as_without_them(
    odd: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [f"w{n}" for n in range(60)] + [odd] * 3 + [f'"{n}"\n' for n in range(60)]
    body = chat_text(texts)  # every literal escaped as ASCII, as json.dumps writes them
    for size in (64, 1000, len(body)):
        fast, slow = both(body, "openai", size, monkeypatch)
        assert_same_outcome(fast, slow)
        assert fast.error is None
        assert fast.response is not None
        assert fast.response.text() == "".join(texts)


def test_templates_stop_being_learned_where_every_frame_differs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A field that changes in every frame (as a padding or a counter) defeats any
    # template: a stream learns a few, then reads on as without them.
    frames = [chat({"role": "assistant"})]
    frames += [{**chat({"content": f"w{n}"}), "p": "x" * (n % 7)} for n in range(800)]
    body = sse(*frames, chat({}, "stop"), "[DONE]")
    assert learns(body, 512, monkeypatch) <= TRIES


# -- a padding that differs in every frame ----------------------------------------------------


def padded(
    texts: list[str], pads: list[str], *, ensure_ascii: bool = True, until: int | None = None
) -> bytes:
    """A Chat Completions stream as OpenAI writes it today: compact, its key order, and
    an ``obfuscation`` padding last in every chunk (``pads``, in turn), or in the chunks of
    the first ``until`` texts only."""

    def chunk(delta: dict[str, Any], n: int, finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        obj = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1}
        obj |= {"model": "gpt-4o", "service_tier": "default", "system_fingerprint": "fp_1"}
        obj |= {"usage": None, "choices": [choice]}
        if until is None or n < until:
            obj["obfuscation"] = pads[n % len(pads)]
        text = json.dumps(obj, separators=(",", ":"), ensure_ascii=ensure_ascii)
        return b"data: " + text.encode() + b"\n\n"

    frames = [chunk({"role": "assistant", "content": ""}, 0)]
    frames += [chunk({"content": text}, n) for n, text in enumerate(texts)]
    frames.append(chunk({}, len(texts), "stop"))
    return b"".join(frames) + b"data: [DONE]\n\n"


PADS = [f"{'aZ0' * 9}"[: n % 16] for n in range(40)]  # 0 to 15 characters, as OpenAI's


def test_tool_arguments_with_a_padding_are_taken_too(monkeypatch: pytest.MonkeyPatch) -> None:
    frames: list[Any] = [chat({"role": "assistant"})]
    frames.append(call_start(0, "call_0", "tool0"))
    frames += [call_args(0, part) for part in ['{"a": "', *("x" * 400), '"}']]
    for n, frame in enumerate(frames):
        frame["obfuscation"] = PADS[n % len(PADS)]
    body = sse(*frames, chat({}, "tool_calls"), "[DONE]")
    assert taken(body, "openai", 4096, monkeypatch) >= 300
    fast, slow = both(body, "openai", 4096, monkeypatch)
    assert_same_outcome(fast, slow)
    assert fast.response is not None
    assert [use.input.value for use in fast.response.tool_uses()] == [{"a": "x" * 400}]


ODD_PADS = st.one_of(
    st.sampled_from(["", "a", '"', "\\", "é", "\n", "}", '":"', "obfuscation", "\x00"]),
    st.text(max_size=8),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=TEXTS,
    pads=st.lists(ODD_PADS, min_size=1, max_size=9),
    size=st.integers(min_value=1, max_value=700),
    ensure_ascii=st.booleans(),
    dropped=st.booleans(),
)
def test_any_padding_reads_alike_with_templates(
    texts: list[str], pads: list[str], size: int, ensure_ascii: bool, dropped: bool
) -> None:
    # Paddings with quotes, escapes or other scripts (left to the usual reader), and a
    # stream whose frames stop carrying one half way: the same as without templates.
    until = len(texts) // 2 if dropped else None
    body = padded(texts, pads, ensure_ascii=ensure_ascii, until=until)
    fast = alike(pieces(body, size), "openai")
    assert fast.error is None
    assert fast.response is not None
    assert fast.response.text() == "".join(texts)


def bedrock_padded(texts: list[str], pads: list[str], *, tools: bool = False) -> bytes:
    """A Bedrock stream with a padding of its own in every event (``pads``, in turn):
    ``texts`` as text deltas, or (``tools``) as one call whose arguments are ``{"s":``
    their concatenation ``}``, cut into as many fragments."""
    events = [bedrock.START]
    if tools:
        arguments = json.dumps({"s": "".join(texts)}, ensure_ascii=False)
        ends = [len(arguments) * (n + 1) // len(texts) for n in range(len(texts))]
        fragments = [arguments[start:end] for start, end in zip([0, *ends], ends, strict=False)]
        events.append(bedrock.tool_start(0, "tooluse_1", "f"))
        events += [bedrock.tool_input(0, fragment) for fragment in fragments]
    else:
        events += [bedrock.text(0, text) for text in texts]
    events += [bedrock.stop(0), bedrock.message_stop("tool_use" if tools else "end_turn")]
    headers = {":content-type": "application/json", ":message-type": "event"}
    return b"".join(
        encode_message(
            {":event-type": name, **headers},
            json.dumps(
                {**payload, "p": pads[n % len(pads)]}, ensure_ascii=False, separators=(",", ":")
            ).encode(),
        )
        for n, (name, payload) in enumerate(events)
    )


def assert_padded_read(outcome: Outcome, texts: list[str], *, tools: bool) -> None:
    """That ``bedrock_padded(texts, ..., tools=tools)`` was read whole: its text, or its
    call's arguments."""
    assert outcome.response is not None
    if tools:
        [use] = outcome.response.tool_uses()
        assert use.input.value == {"s": "".join(texts)}
    else:
        assert outcome.response.text() == "".join(texts)


# Texts that hold what comes between a piece and its padding (for a text delta, for a
# tool call's), which a frame writes with every quote escaped.
GAP_TEXTS = [f'w{n} "}},"p":"x' if n % 3 else f'"}}}},"p":"{n}\\' for n in range(600)]


# When a padded template's gap is compiled: at its first batch, or (as shipped) once it has
# taken enough frames, which the short streams of these tests never reach (each frame is
# then cut apart by itself).
GAP_AFTER = [0, template_module._GAP_AFTER]
GAP_IDS = ["gap-at-once", "gap-later"]


def gap_after(frames: int) -> None:
    """Compile padded templates' gaps after ``frames`` frames, none compiled yet."""
    setattr(template_module, "_GAP_AFTER", frames)  # noqa: B010 (not exported)
    template_module._GAPS.clear()


@pytest.mark.parametrize("after", GAP_AFTER, ids=GAP_IDS)
@pytest.mark.parametrize("tools", [False, True], ids=["text", "tool"])
def test_a_bedrock_piece_that_writes_its_padding_s_key_is_taken(
    tools: bool, after: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read in 4 KiB and 16 KiB pieces, the frames are taken from the decoder's batches,
    # and read as without templates.
    monkeypatch.setattr(template_module, "_GAP_AFTER", after)
    monkeypatch.setattr(template_module, "_GAPS", {})
    body = bedrock_padded(GAP_TEXTS, [PADS[n] for n in range(1, 16)], tools=tools)
    for size in (4096, 16384):
        # Not the frames of the first two reads: a template is learned from the second's.
        left = size // 90 + 5
        assert taken(body, "bedrock", size, monkeypatch, where="batches") >= 600 - left
        fast, slow = both(body, "bedrock", size, monkeypatch)
        assert_same_outcome(fast, slow)
        assert_padded_read(fast, GAP_TEXTS, tools=tools)


def bedrock_delta_message(payload: bytes) -> bytes:
    headers = {":event-type": "contentBlockDelta", ":message-type": "event"}
    return encode_message({**headers, ":content-type": "application/json"}, payload)


# Payloads that are not JSON yet hold the template's bytes: a piece with an unescaped
# padding's key in it, a control character in a padding, and a NUL with the next frame's
# opening after it.
NOT_JSON = [
    b'{"contentBlockIndex":0,"delta":{"text":"a"},"p":"x"},"p":"y"}',
    b'{"contentBlockIndex":0,"delta":{"text":"a"},"p":"x\x01"}',
    b'{"contentBlockIndex":0,"delta":{"text":"a"},"p":"x"}\x00'
    b'{"contentBlockIndex":0,"delta":{"text":"b"},"p":"y"}',
]


@pytest.mark.parametrize("after", GAP_AFTER, ids=GAP_IDS)
@pytest.mark.parametrize("at", [0, 7, 19])
@pytest.mark.parametrize("bad", NOT_JSON, ids=["key-in-piece", "control-in-padding", "nul-inside"])
def test_a_bedrock_batch_with_a_frame_that_is_not_json_reads_as_without_templates(
    bad: bytes, at: int, after: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # First, inside or last in a batch of the template's frames (with and without the
    # frame after it cut short): the decoder's error with templates as without, the frames
    # before it read alike.
    monkeypatch.setattr(template_module, "_GAP_AFTER", after)
    monkeypatch.setattr(template_module, "_GAPS", {})

    def frames(prefix: str) -> list[bytes]:
        return [
            bedrock_delta_message(
                json.dumps(
                    {"contentBlockIndex": 0, "delta": {"text": f"{prefix}{n}"}, "p": "ab"[: n % 3]},
                    separators=(",", ":"),
                ).encode()
            )
            for n in range(20)
        ]

    start = bedrock.event(*bedrock.START)
    for cut in (False, True):
        batch = frames("v")
        batch[at] = bedrock_delta_message(bad)
        if cut and at < 19:  # the next frame's closing cut off
            batch[at + 1] = bedrock_delta_message(
                b'{"contentBlockIndex":0,"delta":{"text":"c"},"p":"z'
            )
        chunks = [start, b"".join(frames("w")), b"".join(batch), b""]
        outcome = alike(chunks, "bedrock")
        assert isinstance(outcome.error, MalformedStreamError)
        assert outcome.error.partial is not None
        assert outcome.error.partial.text() == "".join(f"w{n}" for n in range(20)) + "".join(
            f"v{n}" for n in range(at)
        )


ODD_BEDROCK_PADS = st.one_of(
    st.sampled_from(["", "a", "abcdefghij", '"', "\\", "\x7f", "\x00", '"}},"p":"', "é", "}"]),
    st.text(max_size=6),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(
        st.sampled_from(['"}},"p":"', '\\"}},"p":"', "\x7f", '"}']) | st.text(max_size=8),
        min_size=1,
        max_size=60,
    ),
    pads=st.lists(ODD_BEDROCK_PADS, min_size=1, max_size=7),
    size=st.integers(min_value=1, max_value=3000),
    tools=st.booleans(),
    after=st.sampled_from(GAP_AFTER),
)
def test_any_bedrock_padding_and_piece_read_alike_with_templates(
    texts: list[str], pads: list[str], size: int, tools: bool, after: int
) -> None:
    # Pieces and paddings with quotes, escapes, DEL or the bytes that come between a piece
    # and its padding, in event messages read in any pieces: as without templates.
    body = bedrock_padded(texts, pads, tools=tools)
    gap_after(after)
    try:
        fast = alike(pieces(body, size), "bedrock")
    finally:
        gap_after(GAP_AFTER[-1])
    assert fast.error is None
    assert_padded_read(fast, texts, tools=tools)


def test_a_padded_template_s_gap_is_compiled_once_it_pays_and_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A short answer's template cuts its frames apart one by one; a long one's compiles its
    # gap after `_GAP_AFTER` frames and cuts the rest with it; an answer of the same bytes
    # then finds the gap compiled and cuts every batch with it.
    monkeypatch.setattr(template_module, "_GAPS", {})
    cut = {"gap": 0, "alone": 0}
    gap_cut, values = Template._padded_pieces, Template._values

    def counting_gap(self: Template, found: list[bytes], *more: Any) -> Any:
        cut["gap"] += len(found)
        return gap_cut(self, found, *more)

    def counting_values(self: Template, found: list[bytes]) -> Any:
        cut["alone"] += len(found)
        return values(self, found)

    monkeypatch.setattr(Template, "_padded_pieces", counting_gap)
    monkeypatch.setattr(Template, "_values", counting_values)
    pads = [PADS[n] for n in range(1, 16)]
    short = bedrock_padded([f"w{n} " for n in range(500)], pads)
    assert run_chunks(pieces(short, 16384), "bedrock").error is None
    assert cut["gap"] == 0
    assert cut["alone"] >= 300
    assert template_module._GAPS == {}

    texts = [f"w{n} " for n in range(3 * template_module._GAP_AFTER)]
    long = bedrock_padded(texts, pads)
    for n in range(2):
        cut.update(gap=0, alone=0)
        outcome = run_chunks(pieces(long, 16384), "bedrock")
        assert outcome.response is not None
        assert outcome.response.text() == "".join(texts)
        assert len(template_module._GAPS) == 1
        if n == 0:  # cut alone up to `_GAP_AFTER` frames (and one batch), then with the gap
            assert template_module._GAP_AFTER <= cut["alone"] <= template_module._GAP_AFTER + 120
            assert cut["gap"] >= len(texts) - cut["alone"] - 300
        else:  # with the gap from the first batch
            assert cut["alone"] == 0
            assert cut["gap"] >= len(texts) - 300


def test_a_padding_key_the_reader_does_not_name_still_defeats_templates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Only the keys a reader names (`_padding`) may differ: Anthropic names none.
    first, *rest = messages_text([f"w{n}" for n in range(600)]).split(b'"}}\n')
    body = first + b"".join(
        b'"},"obfuscation":"' + PADS[n % len(PADS)].encode() + b'"}\n' + part
        for n, part in enumerate(rest)
    )
    assert taken(body, "anthropic", 4096, monkeypatch) <= 10 * TRIES
    fast, slow = both(body, "anthropic", 4096, monkeypatch)
    assert_same_outcome(fast, slow)


@pytest.mark.parametrize("size", [1000, 16384])
def test_calls_that_come_turn_about_are_taken_by_one_template(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Three calls' fragments in turn: the call's index is the template's key place, each
    # index proven once to be a known call's (and asked again before each batch).
    frames: list[Any] = [chat({"role": "assistant"})]
    frames += [call_start(index, f"call_{index}", f"tool{index}") for index in range(3)]
    frames += [call_args(index, '{"a": "') for index in range(3)]
    frames += [call_args(n % 3, "x" if n % 4 else '\\"é') for n in range(3000)]
    frames += [call_args(index, '"}') for index in range(3)]
    body = sse(*frames, chat({}, "tool_calls"), "[DONE]")
    assert taken(body, "openai", size, monkeypatch) >= 2000  # all but one frame a piece
    fast, slow = both(body, "openai", size, monkeypatch)
    assert_same_outcome(fast, slow)
    assert fast.response is not None
    values = [
        {"a": "".join("x" if n % 4 else '"é' for n in range(index, 3000, 3))} for index in range(3)
    ]
    assert [use.input.value for use in fast.response.tool_uses()] == values


CALL_STEPS = st.one_of(
    st.tuples(st.integers(min_value=0, max_value=4), st.sampled_from(["x", "", '"', "\\", "é"])),
    st.sampled_from(["start 0", "start 3", "start 1", "text", "finish"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(CALL_STEPS, min_size=1, max_size=120),
    size=st.integers(min_value=1, max_value=900),
)
def test_any_calls_in_turn_read_alike_with_templates(
    steps: list[tuple[int, str] | str], size: int
) -> None:
    # Fragments of calls in any order, of indexes never started, a call started again at
    # an index in use, text between, a finish in the middle: the same as without
    # templates.
    frames: list[Any] = [chat({"role": "assistant"})]
    frames += [call_start(index, f"call_{index}", f"tool{index}") for index in range(3)]
    for n, step in enumerate(steps):
        if isinstance(step, tuple):
            frames += [call_args(*step)] * 3
        elif step.startswith("start"):
            index = int(step.split()[1])
            frames.append(call_start(index, f"call_{index}_{n}", f"tool{index}"))
        elif step == "text":
            frames.append(chat({"content": "t"}))
        else:
            frames.append(chat({}, "tool_calls"))
    body = sse(*frames, chat({}, "tool_calls"), "[DONE]")
    alike(pieces(body, size), "openai")


def test_the_fixtures_folder_is_here() -> None:
    assert FIXTURES.is_dir()


# -- counts that differ in every frame ------------------------------------------------------


def gemini_text(
    texts: list[str],
    counts: list[Any] | None = None,
    *,
    line_end: bytes = b"\r\n",
    between: list[bytes] | None = None,
) -> bytes:
    """A Gemini stream as Google writes it: a space after each colon, CRLF line ends, and
    the usage so far in every chunk (``counts``, in turn, as its candidates' count, or the
    number of chunks so far), ``between[n]`` before chunk ``n``."""

    def chunk(n: int, text: str, finish: str | None) -> bytes:
        candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}}
        if finish is not None:
            candidate["finishReason"] = finish
        candidate["index"] = 0
        count = n + 1 if counts is None else counts[n % len(counts)]
        usage: dict[str, Any] = {"promptTokenCount": 11, "candidatesTokenCount": count}
        usage["totalTokenCount"] = 11
        usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": 11}]
        obj: dict[str, Any] = {"candidates": [candidate], "usageMetadata": usage}
        obj |= {"modelVersion": "gemini-2.5-flash", "responseId": "r1"}
        data = json.dumps(obj, separators=(",", ": "), ensure_ascii=False).encode()
        return (between[n] if between else b"") + b"data: " + data + line_end + line_end

    last = len(texts) - 1
    return b"".join(chunk(n, t, "STOP" if n == last else None) for n, t in enumerate(texts))


@pytest.mark.parametrize("line_end", [b"\r\n", b"\n"], ids=["crlf", "lf"])
def test_the_last_usage_taken_is_the_answer_s_in_frames_read_from_their_bytes(
    line_end: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Gemini's usage so far, in every chunk: its counts are places of the template, and
    # the last chunk taken gives the answer its usage, as reading every chunk does. In
    # CRLF lines too, every frame after the first read's is taken from the bytes.
    body = gemini_text(DIFFERING, line_end=line_end)
    assert taken(body, "gemini", 65536, monkeypatch, where="bytes") >= 1500 - 260
    fast, slow = both(body, "gemini", 65536, monkeypatch)
    assert_same_outcome(fast, slow)
    assert fast.response is not None
    assert fast.response.usage.output_tokens == 1500


def test_a_usage_read_mid_stream_is_the_last_frame_s(monkeypatch: pytest.MonkeyPatch) -> None:
    # The answer as it stands (a snapshot) after each piece: the usage the last chunk
    # read carries, with templates as without.
    texts = [f"w{n} " for n in range(800)]
    chunks = pieces(gemini_text(texts), 4096)

    def usages() -> list[int | None]:
        normalizer = StreamNormalizer("gemini")
        seen = []
        for chunk in chunks:
            normalizer.feed(chunk)
            seen.append(normalizer.snapshot().usage.output_tokens)
        return seen

    fast = usages()
    with monkeypatch.context() as patch:
        patch.setattr(laminate._normalizer, "TRIES", 0)
        assert usages() == fast
    assert fast[-1] == 800


ODD_COUNTS: st.SearchStrategy[Any] = st.one_of(
    st.integers(min_value=0, max_value=10**30),
    st.sampled_from([-1, 0.5, 1e20, "7", None, True, [], {}]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=TEXTS,
    counts=st.lists(ODD_COUNTS, min_size=1, max_size=9),
    size=st.integers(min_value=1, max_value=700),
    line_end=st.sampled_from([b"\r\n", b"\n"]),
    between=st.lists(
        st.sampled_from([b"", b"", b"", b"\r\n", b"\n", b": ping\r\n\r\n", b"data: {}\n\n"]),
        min_size=1,
    ),
)
def test_any_count_reads_alike_with_templates(
    texts: list[str], counts: list[Any], size: int, line_end: bytes, between: list[bytes]
) -> None:
    # Counts of any JSON value (left to the usual reader where not a non-negative
    # integer), and anything between the chunks, in either line end: the same as without
    # templates.
    texts = texts or ["a"]
    spread = [between[n % len(between)] for n in range(len(texts))]
    body = gemini_text(texts, counts, line_end=line_end, between=spread)
    alike(pieces(body, size), "gemini")


def responses_text(texts: list[str], pads: list[str]) -> bytes:
    """A Responses API stream as OpenAI writes it: compact, every event numbered, and
    every delta padded (``pads``, in turn)."""
    events: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **fields})

    item = {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant"}
    response = {"id": "resp_1", "object": "response", "status": "in_progress", "model": "m"}
    emit("response.created", response={**response, "output": []})
    emit("response.output_item.added", output_index=0, item={**item, "content": []})
    part = {"type": "output_text", "text": "", "annotations": []}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    emit("response.content_part.added", **where, part=part)
    for n, text in enumerate(texts):
        emit("response.output_text.delta", **where, delta=text, logprobs=[])
        events[-1]["obfuscation"] = pads[n % len(pads)]
    whole = "".join(texts)
    emit("response.output_text.done", **where, text=whole, logprobs=[])
    emit("response.content_part.done", **where, part={**part, "text": whole})
    done = {**item, "status": "completed", "content": [{**part, "text": whole}]}
    emit("response.output_item.done", output_index=0, item=done)
    usage = {"input_tokens": 3, "output_tokens": len(texts), "total_tokens": 3 + len(texts)}
    final = {**response, "status": "completed", "output": [done], "usage": usage}
    emit("response.completed", response=final)
    return b"".join(
        f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n".encode()
        for e in events
    )


def test_a_count_key_the_reader_does_not_name_still_defeats_templates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Only the keys a reader names (`_counted`) may differ: Chat Completions names none.
    body = sse(
        chat({"role": "assistant"}),
        *(chat({"content": f"w{n}"}) | {"created": n} for n in range(600)),
        chat({}, "stop"),
        "[DONE]",
    )
    assert taken(body, "openai", 4096, monkeypatch) <= 10 * TRIES
    fast, slow = both(body, "openai", 4096, monkeypatch)
    assert_same_outcome(fast, slow)


def test_places_are_found_only_in_the_values_of_top_level_keys() -> None:
    # A key of the same name inside another value is not the reader's: its string and
    # its integers stay in the template's bytes.
    handler = handler_after(sse(chat({"role": "assistant"})), "openai")
    obj = chat({"content": "hi"}) | {"x": {"obfuscation": "abc", "n": 5}, "obfuscation": "de"}
    template = learn(handler, None, obj, frame_bytes(obj))
    assert template is not None
    assert template.closing == b'"}'  # after the top-level padding
    middle = template._middle  # between the piece and the padding
    assert middle is not None
    assert b'"x": {"obfuscation": "abc", "n": 5}' in middle


def ollama_text(texts: list[str]) -> bytes:
    """An Ollama chat stream: compact, with the time each line was written."""

    def line(n: int, text: str, **more: Any) -> bytes:
        obj: dict[str, Any] = {"model": "llama3.2"}
        obj["created_at"] = f"2025-08-20T13:48:{n // 100:02}.{n:06}Z"
        obj |= {"message": {"role": "assistant", "content": text}, "done": False} | more
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"

    body = b"".join(line(n, text) for n, text in enumerate(texts))
    return body + line(len(texts), "", done=True, done_reason="stop", eval_count=len(texts))


DIFFERING = [f"w{n} " if n % 5 else f'"\\ é {n}\n' for n in range(1500)]


@pytest.mark.parametrize("size", [1000, 4096, 16384])
@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("openai", padded(DIFFERING, PADS)),  # a padding after the piece
        ("openai-responses", responses_text(DIFFERING, PADS)),  # and a counter before it
        ("ollama", ollama_text(DIFFERING)),  # the time each line was written, before it
        ("gemini", gemini_text(DIFFERING)),  # the usage so far, in CRLF lines
    ],
    ids=["chat-padding", "responses-counter", "ollama-time", "gemini-usage"],
)
def test_what_differs_in_every_frame_but_its_piece_is_left_out_of_the_template(
    provider: str, body: bytes, size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Keys the reader names (paddings, counts) differ in every frame: none would be taken
    # without them left out; all but one frame a piece are.
    assert taken(body, provider, size, monkeypatch) >= 1000
    fast, slow = both(body, provider, size, monkeypatch)
    assert_same_outcome(fast, slow)
    assert fast.response is not None
    assert fast.response.text() == "".join(DIFFERING)


CONTENTS = st.lists(
    st.sampled_from([b"\\", b'"', b"a", b"u", b"0", b"n", b"/", b"\x00", b"\x1f", b"\xc3\xa9"]),
    max_size=12,
).map(b"".join)


@settings(max_examples=500, deadline=None)
@given(found=st.lists(CONTENTS, min_size=1, max_size=4))
def test_a_piece_is_read_only_where_it_is_one_string_s_contents(found: list[bytes]) -> None:
    # What the template cut out between a literal's quotes is its value only where the
    # literal written with those contents is one JSON string; any other is refused.
    expected: list[str] | None = []
    for contents in found:
        try:
            value = json.loads(b'"' + contents + b'"')
        except ValueError:
            expected = None
            break
        assert expected is not None
        expected.append(value)
    assert template_module._decoded(list(found)) == expected


def test_a_frame_whose_opening_and_closing_overlap_is_not_the_template_s() -> None:
    # AWS event messages, each in a batch of its own once fed alone: a payload that is
    # the template's opening and closing sharing their quote (`..."text":"}}`) is not
    # JSON, and is the decoder's error with templates as without (not an empty piece).
    def message(payload: bytes) -> bytes:
        headers = {":event-type": "contentBlockDelta", ":message-type": "event"}
        return encode_message({**headers, ":content-type": "application/json"}, payload)

    good = [
        message(json.dumps({"contentBlockIndex": 0, "delta": {"text": f"w{n}"}}).encode())
        for n in range(40)
    ]
    chunks = [bedrock.event(*bedrock.START), b"".join(good[:20]), b"".join(good[20:])]
    chunks += [message(b'{"contentBlockIndex": 0, "delta": {"text": "}}'), b""]
    assert isinstance(alike(chunks, "bedrock").error, MalformedStreamError)


@pytest.mark.parametrize("at", [0, 7, 19])
def test_a_batch_with_such_a_frame_first_inside_or_last_is_not_the_template_s(at: int) -> None:
    # The same frame among others in one batch (AWS event messages fed together once the
    # template holds): first, inside or last, the decoder's error with templates as
    # without, the frames before it read alike.
    def message(payload: bytes) -> bytes:
        headers = {":event-type": "contentBlockDelta", ":message-type": "event"}
        return encode_message({**headers, ":content-type": "application/json"}, payload)

    def frames(prefix: str) -> list[bytes]:
        return [
            message(
                json.dumps({"contentBlockIndex": 0, "delta": {"text": f"{prefix}{n}"}}).encode()
            )
            for n in range(20)
        ]

    batch = frames("v")
    batch[at] = message(b'{"contentBlockIndex": 0, "delta": {"text": "}}')
    chunks = [bedrock.event(*bedrock.START), b"".join(frames("w")), b"".join(batch), b""]
    assert isinstance(alike(chunks, "bedrock").error, MalformedStreamError)


def test_a_frame_whose_opening_and_closing_overlap_in_the_bytes_is_not_the_template_s() -> None:
    # The same frame first in a read taken from the stream's bytes (Messages, SSE), the
    # template's frames after it: the decoder's error with templates as without, and
    # nothing read after it.
    body = messages_text([f"w{n} " for n in range(300)])
    end = body.index(b"event: content_block_stop")
    bad = b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    bad += b'"delta":{"type":"text_delta","text":"}}\n\n'
    more = messages_text([f"v{n} " for n in range(5)])
    more = more[
        more.index(b"event: content_block_delta") : more.index(b"event: content_block_stop")
    ]
    chunks = [body[:4000], body[4000:end], bad + more + body[end:]]
    assert isinstance(alike(chunks, "anthropic").error, MalformedStreamError)
