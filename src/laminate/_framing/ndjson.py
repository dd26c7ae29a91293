"""Newline-delimited JSON (Ollama's ``/api/chat``, ``application/x-ndjson``): one frame per
non-blank line, on the line splitter of ``lines.py``. The JSON is not parsed here."""

from __future__ import annotations

from itertools import repeat

from .._core.errors import MalformedStreamError
from .lines import _BATCH_MAX, Batch, Frame, _LineDecoder, _new, _snippet

__all__ = ["NDJSONDecoder"]


class NDJSONDecoder(_LineDecoder):
    """Incremental newline-delimited JSON splitter: one frame per non-blank line.

    The JSON is not parsed here. A final line without a line end is an ordinary last line
    (so :attr:`trailing` is always false). A leading UTF-8 BOM is dropped, as in SSE.
    """

    def _take_batch(
        self,
        lines: list[bytes],
        taken: int,
        pos: int,
        sep: int,
        out: list[Frame | Batch],
        *,
        alone: bool = False,
    ) -> int:
        # Every line one object: it starts with "{" and ends with "}", no blanks around.
        batch = lines[taken : taken + (1 if alone else _BATCH_MAX)]
        if not all(map(bytes.startswith, batch, repeat(b"{"))) or not all(
            map(bytes.endswith, batch, repeat(b"}"))
        ):
            return taken
        end = taken + len(batch)
        out.append(Batch(None, batch, self._replayer(lines, taken, end, pos, sep)))
        return end

    def _take_lines(self, lines: list[bytes], pos: int, sep: int, out: list[Frame | Batch]) -> None:
        here = pos
        line = b""
        try:
            for line in lines:
                here = pos
                pos += len(line) + sep
                text = line.strip(b" \t")
                if text:
                    out.append(_new(Frame, (None, text.decode(), here, None, None)))
        except UnicodeDecodeError:
            raise MalformedStreamError(
                "invalid UTF-8", offset=here, snippet=_snippet(line)
            ) from None

    def _finish(self, tail: bytes, pos: int, out: list[Frame | Batch]) -> None:
        if tail:
            self._take_lines([tail], pos, 0, out)
