"""Splitting ``<think>...</think>`` out of streamed text, across delta boundaries."""

from __future__ import annotations

from typing import Final

__all__ = ["ThinkSplitter"]

_OPEN: Final = "<think>"
_CLOSE: Final = "</think>"


class ThinkSplitter:
    """Feed text deltas; get ``(is_reasoning, text)`` pieces back.

    A tag may be cut anywhere between deltas, so a tail that could be the start of a
    tag is held back until the next delta (or :meth:`flush`) decides it.
    """

    __slots__ = ("_held", "_inside")

    def __init__(self) -> None:
        self._inside = False
        self._held = ""

    def feed(self, text: str) -> list[tuple[bool, str]]:
        text = self._held + text
        self._held = ""
        out: list[tuple[bool, str]] = []
        while text:
            tag = _CLOSE if self._inside else _OPEN
            at = text.find(tag)
            if at >= 0:
                if at:
                    out.append((self._inside, text[:at]))
                self._inside = not self._inside
                text = text[at + len(tag) :]
                continue
            keep = _partial_tag_suffix(text, tag)
            if keep:
                self._held = text[-keep:]
                text = text[:-keep]
            if text:
                out.append((self._inside, text))
            break
        return out

    def flush(self) -> list[tuple[bool, str]]:
        held, self._held = self._held, ""
        return [(self._inside, held)] if held else []


def _partial_tag_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``tag``."""
    start = text.find("<", max(0, len(text) - len(tag) + 1))
    while start >= 0:
        if tag.startswith(text[start:]):
            return len(text) - start
        start = text.find("<", start + 1)
    return 0
