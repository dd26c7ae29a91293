"""What every fuzz run checks, whatever produced the bytes.

:func:`check_stream` feeds one byte string to :class:`laminate.StreamNormalizer`
twice, whole and cut into pieces, and fails (raises) when:

- anything but a :class:`laminate.LaminateError` escapes ``feed`` or ``close``;
- a stream error carries no ``.partial`` response;
- the two runs differ: other events, or another error (type, offset, message), since events
  depend only on the bytes, never on how they were split;
- the events break the contract's order: ``ResponseStart`` once and first,
  ``BlockStart(i)`` numbered 0, 1, 2, ... before any delta of ``i``, deltas of the
  block's own kind before ``BlockEnd(i)``, every block ended before ``ResponseDone``,
  which comes last and holds exactly the ended blocks.

With ``live_args`` it also reads every ``ToolInputDelta``'s live views
(``string_deltas``, ``is_complete()``, ``partial``, ``invalid``), which must not raise.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Final

from laminate import (
    BlockEnd,
    BlockStart,
    Event,
    InvalidToolUse,
    LaminateError,
    MalformedStreamError,
    NormalizedResponse,
    Reasoning,
    ReasoningDelta,
    ResponseDone,
    ResponseStart,
    StreamNormalizer,
    Text,
    TextDelta,
    ToolInputDelta,
    ToolUse,
)

__all__ = [
    "CORPUS",
    "PROVIDERS",
    "InvariantError",
    "check_stream",
    "cut",
]

FIXTURES: Final = Path(__file__).resolve().parent.parent / "fixtures"
PROVIDERS: Final[tuple[str | None, ...]] = (
    None,
    "openai",
    "anthropic",
    "ollama",
    "openai-responses",
    "gemini",
    "cohere",
    "bedrock",
)
_SUFFIXES: Final = ("*.sse", "*.ndjson", "*.stream.json", "*.eventstream")


def _corpus() -> list[bytes]:
    return [path.read_bytes() for suffix in _SUFFIXES for path in sorted(FIXTURES.rglob(suffix))]


CORPUS: Final = _corpus()
"""Every stream fixture of the repository: the seeds the fuzzers mutate."""


class InvariantError(AssertionError):
    """The normalizer broke one of the rules this module checks."""


def cut(data: bytes, cuts: Iterable[int]) -> Iterator[bytes]:
    """``data`` split at these offsets (out-of-range and repeated ones are skipped)."""
    start = 0
    for at in sorted(set(cuts)):
        if 0 < at < len(data):
            yield data[start:at]
            start = at
    yield data[start:]


def check_stream(
    data: bytes,
    provider: str | None = None,
    cuts: Sequence[int] = (),
    *,
    live_args: bool = False,
) -> None:
    """Run every check on ``data``; raise on the first broken rule."""
    whole_events, whole_error = _run([data], provider)
    split_events, split_error = _run(cut(data, cuts), provider)
    if whole_events != split_events:
        raise InvariantError(f"the events depend on the split at {sorted(set(cuts))}")
    if _error_key(whole_error) != _error_key(split_error):
        raise InvariantError(f"the error depends on the split: {whole_error!r} vs {split_error!r}")
    check_order(whole_events, completed=whole_error is None)
    if live_args:
        read_live_arguments(whole_events)


def _run(chunks: Iterable[bytes], provider: str | None) -> tuple[list[Event], LaminateError | None]:
    normalizer = StreamNormalizer(provider)
    events: list[Event] = []
    try:
        for chunk in chunks:
            events.extend(normalizer.feed(chunk))
        events.extend(normalizer.close())
    except LaminateError as exc:
        if not isinstance(exc.partial, NormalizedResponse):
            raise InvariantError(f"{type(exc).__name__} without a partial response") from exc
        return events, exc
    # Any other exception propagates: that is the failure a fuzzer reports.
    return events, None


def _error_key(error: LaminateError | None) -> tuple[str, int | None, str] | None:
    """An error as the split must not change it: its type, offset and message (the
    bytes it quotes included)."""
    if error is None:
        return None
    offset = error.offset if isinstance(error, MalformedStreamError) else None
    return type(error).__name__, offset, str(error)


_DELTA_KIND: Final = {TextDelta: Text, ReasoningDelta: Reasoning, ToolInputDelta: ToolUse}


def check_order(events: Sequence[Event], *, completed: bool) -> None:
    """The contract's ordering rules over one run's events."""
    kinds: list[type] = []  # the initial block type of each started block
    open_blocks: set[int] = set()
    ended: dict[int, object] = {}
    started = done = False
    for position, event in enumerate(events):
        if done:
            raise InvariantError(f"{event!r} after ResponseDone")
        match event:
            case ResponseStart():
                if started or kinds:
                    raise InvariantError("ResponseStart is not first, or came twice")
                started = True
            case BlockStart(index=index, block=block):
                if not started or index != len(kinds):
                    raise InvariantError(f"BlockStart({index}) out of order at {position}")
                kinds.append(type(block))
                open_blocks.add(index)
            case TextDelta(index=index) | ReasoningDelta(index=index) | ToolInputDelta(index=index):
                if index not in open_blocks or kinds[index] is not _DELTA_KIND[type(event)]:
                    raise InvariantError(
                        f"{type(event).__name__}({index}) on a closed or other block"
                    )
            case BlockEnd(index=index, block=block):
                if index not in open_blocks:
                    raise InvariantError(f"BlockEnd({index}) for a block that is not open")
                _check_end_kind(kinds[index], block)
                open_blocks.discard(index)
                ended[index] = block
            case ResponseDone(response=response):
                if open_blocks:
                    raise InvariantError(f"ResponseDone with open blocks {sorted(open_blocks)}")
                if list(response.content) != [ended[i] for i in range(len(kinds))]:
                    raise InvariantError("ResponseDone's content is not the ended blocks")
                done = True
    if completed and not done:
        raise InvariantError("close() returned without ResponseDone")


def _check_end_kind(start_kind: type, block: object) -> None:
    allowed: tuple[type, ...] = (
        (ToolUse, InvalidToolUse) if start_kind is ToolUse else (start_kind,)
    )
    if not isinstance(block, allowed):
        raise InvariantError(f"a {start_kind.__name__} block ended as {type(block).__name__}")


def read_live_arguments(events: Sequence[Event]) -> None:
    """Read every live view of every tool-input delta (they must not raise)."""
    for event in events:
        if isinstance(event, ToolInputDelta):
            _ = event.string_deltas
            _ = event.is_complete()
            _ = event.partial
            _ = event.invalid
