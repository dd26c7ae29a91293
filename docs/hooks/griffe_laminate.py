"""A griffe extension for the API reference: laminate's docstrings, read as Markdown.

The docstrings are written for readers of the source: reST-style roles
(``:class:`StreamNormalizer```) and, in two adapters, a ``{sources}`` placeholder that the
module fills in at import time. The reference page is rendered from the source without
importing it, so this extension takes the runtime docstring where a placeholder remains,
and turns every role into inline code.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|attr|mod|data|exc|obj|const):`~?([^`]+)`")


def _runtime_doc(path: str) -> str | None:
    module_name, _, name = path.rpartition(".")
    try:
        value = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError):
        return None
    doc = getattr(value, "__doc__", None)
    return doc if isinstance(doc, str) else None


def _fix(obj: griffe.Object) -> None:
    docstring = obj.docstring
    if docstring is not None:
        text = docstring.value
        if "{sources}" in text:
            runtime = _runtime_doc(obj.path)
            if runtime is not None:
                text = griffe.Docstring(runtime).value  # dedented, as griffe reads it
        docstring.value = ROLE.sub(lambda match: f"``{match[1]}``", text)
    for member in obj.members.values():
        if not member.is_alias:
            _fix(member)  # type: ignore[arg-type]


class LaminateDocstrings(griffe.Extension):
    """Fixes the docstrings of the ``laminate`` package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name == "laminate":
            _fix(pkg)
