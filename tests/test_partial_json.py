"""The incremental view of unfinished tool arguments (``laminate._core.partial_json``)."""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from laminate._core.events import ToolInputDelta
from laminate._core.partial_json import MAX_DEPTH, ArgumentsView, JSONPath, StringDelta

# -- helpers -------------------------------------------------------------------------

_MISSING = object()


def view_of(fragments: Sequence[str]) -> ArgumentsView:
    view = ArgumentsView()
    for fragment in fragments:
        view.append(fragment)
    return view


def split_at(text: str, cuts: Sequence[int]) -> list[str]:
    bounds = [0, *sorted(set(cuts)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def every_split(text: str) -> Iterator[list[str]]:
    """Whole, one character at a time, and every cut into two or three fragments."""
    yield [text]
    yield list(text)
    for a in range(1, len(text)):
        yield split_at(text, [a])
        for b in range(a + 1, len(text)):
            yield split_at(text, [a, b])


def at(value: Any, path: JSONPath) -> Any:
    for step in path:
        if isinstance(step, str):
            if not isinstance(value, dict) or step not in value:
                return _MISSING
        elif not isinstance(value, list) or step >= len(value):
            return _MISSING
        value = value[step]
    return value


def paths_of(value: Any, path: JSONPath = ()) -> Iterator[tuple[JSONPath, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths_of(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths_of(item, (*path, index))


def same(a: Any, b: Any) -> bool:
    """Equality that does not take ``True`` for ``1``."""
    return type(a) is type(b) and a == b


def is_growing_prefix(partial: Any, final: Any) -> bool:
    """``partial`` can grow into ``final``: strings are prefixes, containers hold a
    prefix of the final members (each one itself a prefix), scalars are final."""
    if isinstance(partial, str):
        return isinstance(final, str) and final.startswith(partial)
    if isinstance(partial, list):
        return (
            isinstance(final, list)
            and len(partial) <= len(final)
            and all(map(is_growing_prefix, partial, final))
        )
    if isinstance(partial, dict):
        if not isinstance(final, dict) or list(partial) != list(final)[: len(partial)]:
            return False
        return all(is_growing_prefix(item, final[key]) for key, item in partial.items())
    return same(partial, final)


def strict_loads(text: str) -> Any:
    def reject(name: str) -> Any:
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=reject)


def error_offset(message: str) -> int:
    found = re.search(r"at offset (\d+)$", message)
    assert found is not None, message
    return int(found.group(1))


def fragment_holding(fragments: Sequence[str], offset: int) -> int:
    ends = list(itertools.accumulate(map(len, fragments)))
    return next(seq for seq, end in enumerate(ends) if offset < end)


def answers(view: ArgumentsView, seqs: Sequence[int], paths: Sequence[JSONPath]) -> dict[int, Any]:
    return {
        seq: (
            view.string_deltas(seq),
            [view.is_complete(seq, path) for path in paths],
            view.partial(seq),
            view.error(seq),
        )
        for seq in seqs
    }


# -- documents -----------------------------------------------------------------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(['a"b\\c/d', "\b\f\n\r\t\x00\x1f", "é😀\U0010ffff", "\u2028\u2029"])
    | st.sampled_from(["\ud800x\udfff", "\udbff", "\ud83d\ude00"])  # lone surrogates
)
_documents = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=16,
)
_whitespace = st.lists(st.sampled_from(["", "", " ", "\n  ", "\t", "\r\n"]), min_size=1, max_size=8)


def serialize(value: Any, ensure_ascii: bool, spaces: Iterator[str]) -> str:
    """JSON text with arbitrary whitespace between tokens."""
    if isinstance(value, dict):
        members = [
            f"{json.dumps(key, ensure_ascii=ensure_ascii)}{next(spaces)}:{next(spaces)}"
            + serialize(item, ensure_ascii, spaces)
            for key, item in value.items()
        ]
        return "{" + next(spaces) + f"{next(spaces)},".join(members) + next(spaces) + "}"
    if isinstance(value, list):
        items = [next(spaces) + serialize(item, ensure_ascii, spaces) for item in value]
        return "[" + ",".join(items) + next(spaces) + "]"
    return json.dumps(value, ensure_ascii=ensure_ascii)


@st.composite
def split_documents(draw: st.DrawFn) -> tuple[Any, str, list[str]]:
    value = draw(_documents)
    spaces = itertools.cycle(draw(_whitespace))
    text = next(spaces) + serialize(value, draw(st.booleans()), spaces) + next(spaces)
    cuts = draw(st.lists(st.integers(0, len(text)), max_size=40))
    return value, text, split_at(text, cuts)


# -- properties ----------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(split_documents())
def test_every_fragment_describes_a_prefix_of_the_final_arguments(
    document: tuple[Any, str, list[str]],
) -> None:
    _, text, fragments = document
    final = json.loads(text)
    view = view_of(fragments)
    paths = [path for path, _ in paths_of(final)]
    joined: dict[JSONPath, str] = defaultdict(str)
    was_complete: set[JSONPath] = set()
    was_written: set[JSONPath] = set()
    for seq in range(len(fragments)):
        assert view.error(seq) is None
        partial = view.partial(seq)
        if partial is not None:
            assert is_growing_prefix(partial, final)
        for delta in view.string_deltas(seq):
            assert delta.text
            joined[delta.path] += delta.text
        for path in paths:
            if view.is_complete(seq, path):
                assert same(at(partial, path), at(final, path))
                was_complete.add(path)
            else:
                assert path not in was_complete  # once finished, always finished
            if view.is_written(seq, path):  # keys are unique here: written is final
                assert same(at(partial, path), at(final, path))
                was_written.add(path)
            else:
                assert path not in was_written
    strings = {path: item for path, item in paths_of(final) if isinstance(item, str)}
    assert dict(joined) == {path: item for path, item in strings.items() if item}


@settings(max_examples=150, deadline=None)
@given(split_documents())
def test_root_completes_exactly_where_the_document_closes(
    document: tuple[Any, str, list[str]],
) -> None:
    _, text, fragments = document
    view = view_of(fragments)
    end = len(text.rstrip(" \t\n\r"))
    closing = end - 1
    if text.lstrip(" \t\n\r")[0] in "-0123456789":
        closing = end  # a number is finished only by what follows it
    expected = [False] * len(fragments)
    if closing < len(text):
        holder = fragment_holding(fragments, closing)
        expected = [seq >= holder for seq in range(len(fragments))]
    assert [view.is_complete(seq, ()) for seq in range(len(fragments))] == expected


@settings(max_examples=100, deadline=None)
@given(split_documents(), st.randoms(use_true_random=False))
def test_reading_order_does_not_change_the_answers(
    document: tuple[Any, str, list[str]], random: Any
) -> None:
    _, text, fragments = document
    paths = [path for path, _ in paths_of(json.loads(text))]
    in_order = answers(view_of(fragments), range(len(fragments)), paths)
    seqs = list(range(len(fragments)))
    random.shuffle(seqs)
    shuffled = answers(view_of(fragments), seqs, paths)
    backwards = answers(view_of(fragments), seqs[::-1], paths)
    assert shuffled == in_order
    assert backwards == in_order


_json_alphabet = st.sampled_from(list('{}[]:," \\/ntrufalseu0123456789+-.eEabcdé😀\n\x01'))


@st.composite
def mutated_documents(draw: st.DrawFn) -> tuple[str, int, list[str]]:
    _, text, _ = draw(split_documents())
    position = draw(st.integers(0, len(text)))
    edit = draw(st.sampled_from(["insert", "replace", "delete"]))
    char = draw(_json_alphabet)
    tail = text[position + 1 :] if edit != "insert" else text[position:]
    mutated = text[:position] + ("" if edit == "delete" else char) + tail
    cuts = draw(st.lists(st.integers(0, len(mutated)), max_size=30))
    return mutated, position, split_at(mutated, cuts)


@settings(max_examples=200, deadline=None)
@given(mutated_documents())
def test_invalid_json_is_reported_where_it_becomes_invalid(
    document: tuple[str, int, list[str]],
) -> None:
    text, position, fragments = document
    if not text:
        return
    whole = view_of([text])
    split = view_of(fragments)
    last = len(fragments) - 1
    message = whole.error(0)
    assert split.error(last) == message
    try:
        strict_loads(text)
    except ValueError:
        # Invalid or unfinished: never both valid and complete.
        assert message is not None or not split.is_complete(last, ())
    else:
        assert message is None
    if message is None:
        assert all(split.error(seq) is None for seq in range(len(fragments)))
        return
    offset = error_offset(message)
    assert offset >= position  # the text before the edit is a prefix of a valid document
    holder = fragment_holding(fragments, offset)
    assert [split.error(seq) for seq in range(len(fragments))] == [
        None if seq < holder else message for seq in range(len(fragments))
    ]
    split.partial(last)  # still answers


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(_json_alphabet, max_size=6), max_size=12))
def test_no_input_makes_a_query_raise(fragments: list[str]) -> None:
    view = view_of(fragments)
    whole = view_of(["".join(fragments)]) if fragments else None
    for seq in reversed(range(len(fragments))):
        view.string_deltas(seq)
        view.is_complete(seq, ())
        view.partial(seq)
        view.error(seq)
    if whole is not None:
        assert view.error(len(fragments) - 1) == whole.error(0)


# -- strings and escapes --------------------------------------------------------------


def deltas_per_fragment(fragments: Sequence[str]) -> list[tuple[StringDelta, ...]]:
    view = view_of(fragments)
    return [view.string_deltas(seq) for seq in range(len(fragments))]


def joined_text(fragments: Sequence[str], path: JSONPath = ("s",)) -> str:
    return "".join(
        delta.text
        for deltas in deltas_per_fragment(fragments)
        for delta in deltas
        if delta.path == path
    )


@pytest.mark.parametrize(
    "text",
    [
        r'{"s": "\ud83d\ude00"}',
        r'{"s": "a\ud83d\ude00b\u00e9\n\"\\\/\b\f\r\t"}',
        r'{"s": "\ud83dA"}',  # a lone high surrogate stays, as json.loads keeps it
        r'{"s": "\ud83d\ud83d\ude00"}',
        r'{"s": "\ud83d\n"}',
        r'{"s": "\ude00\ud83d"}',
        r'{"s": "\ud83d"}',
        r'{"s": "\uDBFF\uDFFF\uD800\uDC00\udbff\udfff"}',  # either case, both ends
        '{"s": "😀 raw \U0010ffff and \u2028"}',
    ],
)
def test_string_deltas_decode_escapes_however_they_are_cut(text: str) -> None:
    expected = json.loads(text)["s"]
    for fragments in every_split(text):
        assert joined_text(fragments) == expected, fragments


def test_a_surrogate_pair_split_across_fragments_arrives_whole() -> None:
    fragments = ['{"s": "x\\ud83d', "\\ude", '00y"}']
    assert deltas_per_fragment(fragments) == [
        (StringDelta(("s",), "x"),),
        (),  # the high half waits for its pair
        (StringDelta(("s",), "\U0001f600y"),),
    ]
    view = view_of(fragments)
    assert [view.partial(seq) for seq in range(3)] == [
        {"s": "x"},
        {"s": "x"},
        {"s": "x\U0001f600y"},
    ]


def test_a_lone_high_surrogate_is_released_by_what_follows() -> None:
    fragments = ['["\\ud83d', 'A"]']
    assert deltas_per_fragment(fragments) == [(), (StringDelta((0,), "\ud83dA"),)]


def test_keys_are_not_string_deltas_and_are_decoded() -> None:
    fragments = ['{"k\\u00', 'e9y": "v', 'al", "a\\"b": ["x"]}']
    assert deltas_per_fragment(fragments) == [
        (),
        (StringDelta(("k\u00e9y",), "v"),),
        (StringDelta(("k\u00e9y",), "al"), StringDelta(('a"b', 0), "x")),
    ]


def test_a_fragment_that_only_opens_or_closes_a_string_extends_nothing() -> None:
    fragments = ['{"a": "', "xy", "", '", "b": ""}', ""]
    assert deltas_per_fragment(fragments) == [(), (StringDelta(("a",), "xy"),), (), (), ()]


# -- completion -----------------------------------------------------------------------


def test_is_written_follows_each_value_and_is_complete_waits_for_its_object() -> None:
    fragments = ['{"path": "a.t', 'xt", "n": 12', ", ", '"flag": tru', "e, ", '"xs": [1, "b"]', "}"]
    view = view_of(fragments)
    written_at = {
        ("path",): 1,
        ("n",): 2,  # a number is finished by what follows it
        ("flag",): 4,
        ("xs", 0): 5,
        ("xs", 1): 5,
        ("xs",): 5,
        (): 6,
    }
    for path, seq_done in written_at.items():
        assert [view.is_written(seq, path) for seq in range(len(fragments))] == [
            seq >= seq_done for seq in range(len(fragments))
        ], path
        # Every member of the object could still be replaced by the same key written
        # again, until the object closes.
        assert [view.is_complete(seq, path) for seq in range(len(fragments))] == [
            seq >= 6 for seq in range(len(fragments))
        ], path
    assert not view.is_complete(6, ("missing",))
    assert not view.is_complete(6, ("xs", 2))
    assert not view.is_written(6, ("missing",))


def test_an_element_of_an_array_is_complete_as_soon_as_it_ends() -> None:
    fragments = ['[{"a": 1', "}, ", '"x"', ", [2", "]]"]
    view = view_of(fragments)
    complete_at = {(0, "a"): 1, (0,): 1, (1,): 2, (2, 0): 4, (2,): 4, (): 4}
    for path, seq_done in complete_at.items():
        assert [view.is_complete(seq, path) for seq in range(len(fragments))] == [
            seq >= seq_done for seq in range(len(fragments))
        ], path


_REPEATED = '{"a": "b", "n": 1, "a": "c", "o": {"k": [1], "k": [2, 3]}}'


@pytest.mark.parametrize("size", range(1, len(_REPEATED) + 1))
def test_a_repeated_key_never_breaks_the_promise_of_is_complete(size: int) -> None:
    fragments = [_REPEATED[i : i + size] for i in range(0, len(_REPEATED), size)]
    view = view_of(fragments)
    final = json.loads(_REPEATED)
    assert final == {"a": "c", "n": 1, "o": {"k": [2, 3]}}  # the last value wins
    last = len(fragments) - 1
    assert same(view.partial(last), final)
    paths = [("a",), ("n",), ("o",), ("o", "k"), ("o", "k", 0), ()]
    for seq in range(len(fragments)):
        partial = view.partial(seq)
        for path in paths:
            if view.is_complete(seq, path):
                assert same(at(partial, path), at(final, path)), (seq, path)
        assert view.is_complete(seq, ("a",)) is (seq == last)
    # The first value written at a path is reported written, as it is.
    first_b = fragment_holding(fragments, _REPEATED.index('"b"') + 2)
    assert view.is_written(first_b, ("a",))
    assert not any(view.is_written(seq, ("a",)) for seq in range(first_b))


def test_a_whole_object_is_complete_at_its_only_fragment() -> None:
    text = '{"city": "Paris", "days": [1, 2], "opts": {"units": "c"}}'
    view = view_of([text])
    assert view.is_complete(0, ())
    assert all(view.is_complete(0, path) for path, _ in paths_of(json.loads(text)))
    assert view.partial(0) == json.loads(text)
    assert view.string_deltas(0) == (
        StringDelta(("city",), "Paris"),
        StringDelta(("opts", "units"), "c"),
    )
    assert view.error(0) is None


@pytest.mark.parametrize(
    ("text", "complete"),
    [("true", True), ("null", True), ('"x"', True), ("[]", True), ("12", False), ("12 ", True)],
)
def test_any_top_level_value(text: str, complete: bool) -> None:
    view = view_of([text])
    assert view.is_complete(0, ()) is complete
    assert view.error(0) is None


# -- partial --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", None),
        ("  ", None),
        ("{", {}),
        ('{"pa', {}),
        ('{"path"', {}),
        ('{"path": ', {}),
        ('{"path": "a/b', {"path": "a/b"}),
        ('{"path": "a/b\\', {"path": "a/b"}),
        ('{"path": "a/b\\u00', {"path": "a/b"}),
        ('{"s": "x\\ud83d', {"s": "x"}),
        ('{"s": "x\\ud83d\\u', {"s": "x"}),
        ('{"n": 12', {}),
        ('{"n": 12,', {"n": 12}),
        ('{"n": -1.5e+3}', {"n": -1500.0}),
        ('{"b": fal', {}),
        ('{"b": false', {"b": False}),
        ('{"xs": [1, 2', {"xs": [1]}),
        ('{"xs": [1, 2,', {"xs": [1, 2]}),
        ('{"xs": [{"a": [', {"xs": [{"a": []}]}),
        ('{"xs": [{"a": "q', {"xs": [{"a": "q"}]}),
        ("[", []),
        ('"ab', "ab"),
        ("-", None),
        ("tr", None),
        ('{"a": 1} ', {"a": 1}),
    ],
)
def test_partial_shows_what_is_settled(text: str, expected: Any) -> None:
    for fragments in ([text], list(text) or [text]):
        view = view_of(fragments)
        assert same(view.partial(len(fragments) - 1), expected)


def test_partial_read_late_describes_its_own_fragment() -> None:
    fragments = ['{"a": "x', 'y", "b": [1', ", 2]", "}"]
    view = view_of(fragments)
    assert view.partial(3) == {"a": "xy", "b": [1, 2]}
    assert view.partial(0) == {"a": "x"}
    assert view.partial(2) == {"a": "xy", "b": [1, 2]}
    assert view.partial(1) == {"a": "xy", "b": []}
    assert not view.is_written(1, ("b",))
    assert view.is_written(2, ("b",))
    assert not view.is_complete(2, ("b",))
    assert view.is_complete(3, ("b",))


def test_append_does_not_parse_and_queries_parse_only_what_they_need() -> None:
    view = ArgumentsView()
    assert view.append('{"a": ') == 0
    assert view.append("!!! not json") == 1
    assert [view.fragment(0), view.fragment(1)] == ['{"a": ', "!!! not json"]
    assert view.text() == '{"a": !!! not json'
    assert len(view) == 2
    assert view.error(0) is None
    assert len(view._scanner.delta_paths) == 1  # the second fragment is still unread
    assert view.error(1) == "unexpected '!' at offset 6"


def test_queries_outside_the_fragments_raise_index_error() -> None:
    view = view_of(["{}"])
    with pytest.raises(IndexError):
        view.partial(1)
    with pytest.raises(IndexError):
        view.string_deltas(-1)


# -- invalid JSON ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"a": x}', "unexpected 'x' at offset 6"),
        ('{"a" 1}', "unexpected '1' at offset 5"),
        ("{'a': 1}", 'unexpected "\'" at offset 1'),
        ('{"a": 1,}', "unexpected '}' at offset 8"),
        ("[1,]", "unexpected ']' at offset 3"),
        ("[1 2]", "unexpected '2' at offset 3"),
        ('{"a": 1]', "unexpected ']' at offset 7"),
        ("[01]", "unexpected '1' at offset 2"),
        ("[1.]", "unexpected ']' at offset 3"),
        ("[1e+]", "unexpected ']' at offset 4"),
        ("[-]", "unexpected ']' at offset 2"),
        ("[1.2.3]", "unexpected '.' at offset 4"),
        ("[+1]", "unexpected '+' at offset 1"),
        ("[NaN]", "unexpected 'N' at offset 1"),
        ("[-Infinity]", "unexpected 'I' at offset 2"),
        ("[trUe]", "unexpected 'U' at offset 3"),
        ("[truex]", "unexpected 'x' at offset 5"),
        ('["a\\x"]', "invalid escape 'x' after a backslash at offset 4"),
        ('["\\u12g4"]', "invalid \\u escape: 'g' at offset 6"),
        ('["a\nb"]', "unescaped control character '\\n' in a string at offset 3"),
        ('{"a": 1} x', "unexpected 'x' after the end of the value at offset 9"),
        ("{} {}", "unexpected '{' after the end of the value at offset 3"),
        ("}", "unexpected '}' at offset 0"),
    ],
)
def test_invalid_json_gives_a_reason_with_its_offset(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        strict_loads(text)
    offset = error_offset(reason)
    for fragments in every_split(text):
        view = view_of(fragments)
        holder = fragment_holding(fragments, offset)
        assert [view.error(seq) for seq in range(len(fragments))] == [
            None if seq < holder else reason for seq in range(len(fragments))
        ], fragments


def test_nothing_changes_after_the_error() -> None:
    fragments = ['{"a": "x', '"; "b": "', 'y"}']
    view = view_of(fragments)
    assert view.string_deltas(2) == ()
    assert view.partial(2) == {"a": "x"}
    assert not view.is_complete(2, ())
    assert view.is_written(1, ("a",))
    assert not view.is_complete(2, ("a",))  # its object never closed


def test_nesting_up_to_the_limit_is_fine() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    view = view_of(list(text))
    assert view.error(len(text) - 1) is None
    assert view.is_complete(len(text) - 1, ())
    assert view.partial(len(text) - 1) == json.loads(text)


def test_partial_of_deep_nesting_called_from_deep_in_a_stack_does_not_raise() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    view = view_of([text])

    def partial_at_depth(depth: int) -> Any:
        return view.partial(0) if depth == 0 else partial_at_depth(depth - 1)

    assert partial_at_depth(10) == json.loads(text)
    assert partial_at_depth(sys.getrecursionlimit() - MAX_DEPTH // 2) is None


def test_deeper_nesting_is_invalid_not_a_crash() -> None:
    text = '{"a": ' + "[" * 100_000
    view = view_of([text[:3000], text[3000:]])
    reason = f"nesting deeper than {MAX_DEPTH} levels at offset {6 + MAX_DEPTH - 1}"
    assert view.error(0) == reason
    assert view.error(1) == reason
    partial = view.partial(1)
    assert isinstance(partial, dict)
    depth = 0
    inner: Any = partial["a"]
    while inner:
        inner, depth = inner[0], depth + 1
    assert depth == MAX_DEPTH - 2  # the innermost open list is empty


# -- through the event ----------------------------------------------------------------


def test_tool_input_delta_reads_the_view() -> None:
    view = ArgumentsView()
    events = [
        ToolInputDelta(0, fragment, view, view.append(fragment))
        for fragment in ['{"path": "a', '.py", "content": "pr', 'int(1)\\n"}']
    ]
    assert events[1].is_written(["path"])  # type: ignore[arg-type]  # any sequence works
    assert not events[0].is_written(("path",))
    assert not events[1].is_complete(("path",))
    assert events[2].is_complete(["path"])  # type: ignore[arg-type]
    assert events[2].is_complete()
    assert events[1].string_deltas == (
        StringDelta(("path",), ".py"),
        StringDelta(("content",), "pr"),
    )
    assert events[1].partial.value == {"path": "a.py", "content": "pr"}
    assert events[0].partial.value == {"path": "a"}
    assert events[2].invalid is None


def test_fragments_are_kept_in_joined_blocks_and_read_back_exactly() -> None:
    view = ArgumentsView()
    pieces = [f'"p{i}é\\u00e9"' if i % 7 else "" for i in range(1000)]
    for piece in pieces:
        view.append(piece)
    assert len(view) == len(pieces)
    assert [view.fragment(i) for i in range(len(pieces))] == pieces
    assert view.text() == "".join(pieces)
    for count in (0, 1, 255, 256, 257, 999, 1000):
        assert view.text(count) == "".join(pieces[:count])
    assert len(view._blocks) == len(pieces) // 256
