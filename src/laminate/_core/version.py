"""laminate's version."""

from __future__ import annotations

from importlib import metadata
from typing import Final

__all__ = ["DISTRIBUTION", "VERSION", "installed_version"]

DISTRIBUTION: Final = "laminate-llm"
"""The name laminate is installed under (``pyproject.toml``'s ``project.name``)."""

VERSION: Final = "0.1.0"
"""The version of this source tree (``pyproject.toml``'s ``project.version``)."""


def installed_version() -> str:
    """The installed distribution's version, else (the source tree run without being
    installed) :data:`VERSION`."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return VERSION
