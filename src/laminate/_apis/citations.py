"""What an answer cites, for the writers that list sources (the AI SDK stream).

Each API reads its own citation blocks into :class:`Source` values (its record's
``sources``, written in its package); a writer lists them without knowing any API. It lives
beside the writer kit (``writer``), under the API packages that use it.
"""

from __future__ import annotations

import functools
import mimetypes
import os
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

from .._core.response import Unknown

__all__ = [
    "Source",
    "file_media_type",
    "is_text",
    "no_sources",
    "request_document",
    "web_source",
]

PDF: Final = "application/pdf"
TEXT: Final = "text/plain"
_UNTYPED: Final = "application/octet-stream"


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """A web page (``url``) or a document (no ``url``, a ``media_type``) an answer cites.

    ``key`` is what makes two citations cite the same source (``url:`` and the URL, or
    the document's number, id or title), so that a writer lists each source once."""

    key: str
    title: str = ""
    url: str = ""
    media_type: str = ""
    filename: str = ""


def web_source(url: str, title: Any = None) -> Source:
    """A cited web page; ``title`` kept when it is a non-empty string."""
    return Source(key=f"url:{url}", url=url, title=title if is_text(title) else "")


def request_document(number: Any, title: Any, media_type: str) -> Source:
    """A cited document of the request: titled by its ``title``, or by its ``number``
    there when it has none; the same source as another citation of that number, or, for
    citations that give none, of that title."""
    named = title if is_text(title) else ""
    if type(number) is int:
        named = named or f"Document {number}"
        return Source(key=f"document:{number}", title=named, media_type=media_type)
    named = named or "Document"
    return Source(key=f"document:{named}", title=named, media_type=media_type)


def file_media_type(name: str) -> str:
    """A file's type by its name, from the standard library's own table (not the
    machine's ``/etc/mime.types``, so that it is the same everywhere);
    ``application/octet-stream`` when the name does not tell."""
    extension = os.path.splitext(name)[1]
    known = _media_types().types_map[True]  # by the name's extension alone, not as a URL
    return known.get(extension) or known.get(extension.lower()) or _UNTYPED


@functools.cache
def _media_types() -> mimetypes.MimeTypes:
    return mimetypes.MimeTypes()


def is_text(value: Any) -> TypeGuard[str]:
    """Whether ``value`` is a non-empty string."""
    return isinstance(value, str) and bool(value)


def no_sources(block: Unknown) -> list[Source]:
    """The sources of an API whose answers cite none."""
    return []
