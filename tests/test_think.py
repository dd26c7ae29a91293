"""``<think>`` tags in text (``think_tags=True``): the splitter (``_apis/think.py``) and the
option on the streams whose servers put reasoning in the text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from laminate import (
    Reasoning,
    ReasoningDelta,
    Text,
)
from laminate._apis.think import ThinkSplitter

from .builders import DONE, chunk, done_response, openai
from .support import FIXTURES, bytes_of, lines_of, run_chunks, split_at


def split_all(deltas: list[str]) -> list[tuple[bool, str]]:
    splitter = ThinkSplitter()
    pieces = [p for d in deltas for p in splitter.feed(d)] + splitter.flush()
    merged: list[tuple[bool, str]] = []
    for is_reasoning, text in pieces:
        if merged and merged[-1][0] == is_reasoning:
            merged[-1] = (is_reasoning, merged[-1][1] + text)
        else:
            merged.append((is_reasoning, text))
    return merged


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>plan</think>answer", [(True, "plan"), (False, "answer")]),
        ("  \n<think>\nplan\n</think>\n\nanswer", [(True, "\nplan\n"), (False, "answer")]),
        ("answer <think>not reasoning</think>", [(False, "answer <think>not reasoning</think>")]),
        ("<thinking>x</thinking>", [(False, "<thinking>x</thinking>")]),
        ("<think>never closed", [(True, "never closed")]),
        ("<think>cut </thi", [(True, "cut </thi")]),
        ("<thi", [(False, "<thi")]),
        ("  ", [(False, "  ")]),
        ("<think></think>", []),
        ("<think>a</think>b<think>c</think>", [(True, "a"), (False, "b<think>c</think>")]),
        ("", []),
    ],
)
def test_think_splitter(text: str, expected: list[tuple[bool, str]]) -> None:
    assert split_all([text]) == expected


@settings(max_examples=200, deadline=None)
@given(
    text=st.sampled_from(
        [
            " <think>\nr < s </think x\n</think>\n\nans <think> wer",
            "<think>a</think>",
            "<thin>k",
            "\n<think>x</thinK></think>  y",
        ]
    ),
    cuts=st.lists(st.integers(0, 60), max_size=10),
)
def test_think_splitter_ignores_where_deltas_are_cut(text: str, cuts: list[int]) -> None:
    deltas = [part.decode() for part in split_at(text.encode(), cuts)]
    assert split_all(deltas) == split_all([text])


def test_think_tags_option_on_an_openai_stream() -> None:
    data = (FIXTURES / "openai-compat" / "think-tags-in-text.sse").read_bytes()
    whole = run_chunks([data], think_tags=True)
    response = done_response(whole)
    assert response.content == [
        Reasoning("\nShort question. Use the <b> tag? No.\n"),
        Text("Write <think> literally."),
    ]
    for chunks in (lines_of(data), bytes_of(data)):
        assert run_chunks(chunks, think_tags=True).events == whole.events


def test_think_tags_option_on_an_ollama_stream() -> None:
    data = (FIXTURES / "ollama-drift" / "think-tags-in-content.ndjson").read_bytes()
    whole = run_chunks([data], think_tags=True)
    response = done_response(whole)
    assert response.content == [Reasoning("\nThey want the date.\n"), Text("It is Friday.")]
    assert [type(e) for e in whole.events if isinstance(e, ReasoningDelta)]
    assert run_chunks(bytes_of(data), think_tags=True).events == whole.events


def test_think_tags_unclosed_at_the_end_of_the_stream_is_reasoning() -> None:
    response = done_response(
        openai(
            chunk({"content": "<think>still thinking </th"}),
            chunk(finish="length"),
            DONE,
            think_tags=True,
        )
    )
    assert response.content == [Reasoning("still thinking </th")]
