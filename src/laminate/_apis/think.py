"""Splitting a leading ``<think>...</think>`` out of streamed text (``think_tags=True``).

Models served without a reasoning parser (DeepSeek-R1 on some hosts, Qwen3 on older
Ollama builds) write their reasoning inline: ``<think>...</think>`` first, then the
answer. Only a ``<think>`` at the very start of the text (after optional whitespace)
opens reasoning; a tag later in the text is the answer talking about tags and stays
text. The whitespace before ``<think>`` and right after ``</think>`` separates the two
parts and is dropped; everything else is kept as sent.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ThinkSplitter"]

_OPEN: Final = "<think>"
_CLOSE: Final = "</think>"

_LEAD: Final = 0  # nothing but whitespace seen yet: a `<think>` may still open
_INSIDE: Final = 1  # inside the reasoning, looking for `</think>`
_GAP: Final = 2  # just after `</think>`: whitespace is dropped
_TEXT: Final = 3  # the answer: passed through untouched

Piece = tuple[bool, str]


class ThinkSplitter:
    """Feed text deltas; get ``(is_reasoning, text)`` pieces back.

    A tag may be cut anywhere between deltas, so text that could still be the start of
    a tag is held back until the next delta (or :meth:`flush`) decides it. Pieces
    depend only on the concatenated text, never on where the deltas were cut.
    """

    __slots__ = ("_held", "_state")

    def __init__(self) -> None:
        self._state = _LEAD
        self._held = ""

    def feed(self, text: str) -> list[Piece]:
        state = self._state
        if state == _TEXT:
            return [(False, text)] if text else []
        if state == _LEAD:
            return self._lead(text)
        if state == _INSIDE:
            return self._inside(text)
        return self._gap(text)

    def flush(self) -> list[Piece]:
        """The text ended: whatever was held back is decided now."""
        held, self._held = self._held, ""
        if not held:
            return []
        # Held text is either a lone prefix of `<think>` (so: text) or a prefix of
        # `</think>` inside an unclosed reasoning (so: reasoning).
        return [(self._state == _INSIDE, held)]

    def _lead(self, text: str) -> list[Piece]:
        buffer = self._held + text
        head = buffer.lstrip()
        if head.startswith(_OPEN):
            self._held = ""
            self._state = _INSIDE
            return self._inside(head[len(_OPEN) :])
        if _OPEN.startswith(head):  # whitespace, maybe a cut `<thi`: undecided
            self._held = buffer
            return []
        self._held = ""
        self._state = _TEXT
        return [(False, buffer)]

    def _inside(self, text: str) -> list[Piece]:
        buffer = self._held + text
        at = buffer.find(_CLOSE)
        if at >= 0:
            self._held = ""
            self._state = _GAP
            out: list[Piece] = [(True, buffer[:at])] if at else []
            out.extend(self._gap(buffer[at + len(_CLOSE) :]))
            return out
        keep = _partial_tag_suffix(buffer, _CLOSE)
        self._held = buffer[len(buffer) - keep :] if keep else ""
        reasoning = buffer[: len(buffer) - keep]
        return [(True, reasoning)] if reasoning else []

    def _gap(self, text: str) -> list[Piece]:
        answer = text.lstrip()
        if not answer:
            return []
        self._state = _TEXT
        return [(False, answer)]


def _partial_tag_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``tag``."""
    start = text.find("<", max(0, len(text) - len(tag) + 1))
    while start >= 0:
        if tag.startswith(text[start:]):
            return len(text) - start
        start = text.find("<", start + 1)
    return 0
