"""Hypothesis fuzzing of ``StreamNormalizer.feed`` / ``close``.

Four kinds of input, each checked by :func:`fuzz.targets.check_stream` (whole and
split, every provider setting):

- ``random``: arbitrary bytes;
- ``mutated``: a fixture with bytes inserted, deleted or replaced;
- ``spliced``: frames of fixtures dropped, repeated, reordered or mixed across providers;
- ``json``: a fixture with one JSON value of one frame replaced by a hostile one (huge or
  odd numbers, wrong types, deep nesting, long or strange strings) or a key removed:
  what a provider that changes its format, or a fault in a proxy, sends.

The test suite runs each for a few examples (``tests/test_hostile.py``). For a longer
run, from the repository root::

    python fuzz/fuzz_hypothesis.py --examples 100000            # every kind
    python fuzz/fuzz_hypothesis.py --examples 20000 --kind json --live-args

A failure prints the smallest input hypothesis found and exits non-zero.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz.targets import CORPUS, PROVIDERS, check_stream

__all__ = ["KINDS", "run"]

MAX_CUTS: Final = 12
# --live-args: also read every ToolInputDelta's live views in each run.
OPTIONS: Final = {"live_args": False}

providers = st.sampled_from(PROVIDERS)
fixtures = st.sampled_from(CORPUS)


def _check(data: bytes, provider: str | None, st_data: st.DataObject) -> None:
    """Check ``data`` whole and cut where hypothesis chooses."""
    cuts = st_data.draw(st.lists(st.integers(0, max(len(data), 1)), max_size=MAX_CUTS))
    check_stream(data, provider, cuts, live_args=OPTIONS["live_args"])


@given(data=st.binary(max_size=3000), provider=providers, st_data=st.data())
def fuzz_random(data: bytes, provider: str | None, st_data: st.DataObject) -> None:
    _check(data, provider, st_data)


@given(
    base=fixtures,
    edits=st.lists(
        st.tuples(st.integers(0, 10**6), st.binary(max_size=6), st.integers(0, 6)), max_size=8
    ),
    provider=providers,
    st_data=st.data(),
)
def fuzz_mutated(
    base: bytes, edits: list[tuple[int, bytes, int]], provider: str | None, st_data: st.DataObject
) -> None:
    data = bytearray(base)
    for position, insert, delete in edits:
        at = position % (len(data) + 1)
        data[at : at + delete] = insert
    _check(bytes(data), provider, st_data)


def _frames(body: bytes) -> list[bytes]:
    """A fixture cut into frames, each with its line ends (SSE or NDJSON)."""
    sep = b"\n\n" if b"\n\n" in body else b"\n"
    return [piece + sep for piece in body.split(sep) if piece.strip()]


FRAMES: Final = [_frames(body) for body in CORPUS]


@given(
    picks=st.lists(
        st.tuples(st.integers(0, len(FRAMES) - 1), st.integers(0, 10**4)), min_size=1, max_size=40
    ),
    provider=providers,
    st_data=st.data(),
)
def fuzz_spliced(
    picks: list[tuple[int, int]], provider: str | None, st_data: st.DataObject
) -> None:
    # Mostly one fixture's own frames, in order or not; sometimes another's.
    data = b"".join(FRAMES[f][k % len(FRAMES[f])] for f, k in picks)
    _check(data, provider, st_data)


HOSTILE_VALUES: Final[tuple[Any, ...]] = (
    None,
    True,
    0,
    -1,
    2**63,
    10**4000,  # under Python's 4300-digit conversion limit
    1e308,
    float("inf"),  # serialized as Infinity, which Python's json accepts
    float("nan"),
    -0.0,
    "",
    " ",
    "x" * 5000,
    "\u2028\u0085\r\n\x00",
    "\ud800",  # a lone surrogate, sent escaped
    "[DONE]",
    [],
    {},
    [[[[[]]]]],
    {"type": "error", "error": {"type": "overloaded_error", "message": "x"}},
    {"index": 0},
    "{",
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += _paths(item, (*prefix, i))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        if delete and not rest:
            del copy[head]
        else:
            copy[head] = _replace(value[head], rest, new, delete)
        return copy
    copy_list = list(value)
    copy_list[head] = _replace(value[head], rest, new, delete)
    return copy_list


def _rewrite_frame(frame: bytes, edit: Callable[[Any], Any]) -> bytes:
    """Apply ``edit`` to the JSON of a frame (an SSE ``data:`` line or an NDJSON line)."""
    lines = frame.split(b"\n")
    for i, line in enumerate(lines):
        prefix = b"data: " if line.startswith(b"data: ") else b""
        if not prefix and not line.startswith(b"{"):
            continue
        try:
            obj = json.loads(line[len(prefix) :])
        except ValueError:
            continue
        lines[i] = prefix + json.dumps(edit(obj)).encode()
        break
    return b"\n".join(lines)


@given(
    which=st.integers(0, len(FRAMES) - 1),
    frame_at=st.integers(0, 10**4),
    path_at=st.integers(0, 10**4),
    new=st.sampled_from(HOSTILE_VALUES),
    delete=st.booleans(),
    provider=providers,
    st_data=st.data(),
)
def fuzz_json(
    *,
    which: int,
    frame_at: int,
    path_at: int,
    new: Any,
    delete: bool,
    provider: str | None,
    st_data: st.DataObject,
) -> None:
    frames = list(FRAMES[which])
    k = frame_at % len(frames)

    def edit(obj: Any) -> Any:
        paths = _paths(obj)
        path = paths[path_at % len(paths)]
        return _replace(obj, path, new, delete and bool(path))

    frames[k] = _rewrite_frame(frames[k], edit)
    data = b"".join(frames)
    _check(data, provider, st_data)


KINDS: Final = {
    "random": fuzz_random,
    "mutated": fuzz_mutated,
    "spliced": fuzz_spliced,
    "json": fuzz_json,
}


def run(
    examples: int,
    kinds: list[str] | None = None,
    *,
    database: bool = True,
    derandomize: bool = False,
) -> None:
    """Run each kind of fuzzing for ``examples`` examples; raise on the first failure.

    ``derandomize`` makes the run the same every time (for CI); ``database=False``
    neither replays nor records failing examples."""
    options: dict[str, Any] = {
        "max_examples": examples,
        "deadline": None,
        "suppress_health_check": list(HealthCheck),
        "derandomize": derandomize,
    }
    if not database:
        options["database"] = None
    for name in kinds or list(KINDS):
        test = KINDS[name]
        # hypothesis refuses to apply settings to a test twice; a second run in one process
        # (the suite runs once per JSON backend) asks for new settings on the same test.
        vars(test).pop("_hypothesis_internal_settings_applied", None)
        settings(**options)(test)()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--examples", type=int, default=10_000, help="examples per kind")
    parser.add_argument("--kind", choices=sorted(KINDS), action="append", help="repeatable")
    parser.add_argument(
        "--live-args", action="store_true", help="also read every ToolInputDelta's live views"
    )
    args = parser.parse_args(argv)
    # laminate logs what it tolerates (a repeated stop reason, a changed tool id): noise here.
    logging.getLogger("laminate").setLevel(logging.ERROR)
    OPTIONS["live_args"] = args.live_args
    for name in args.kind or list(KINDS):
        started = time.monotonic()
        run(args.examples, [name])
        print(f"{name}: {args.examples} examples passed in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
