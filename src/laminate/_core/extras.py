"""The optional extras: the error that names the one a feature needs when it is missing.

Importing laminate never needs an extra. A feature that does (the proxy: Starlette and
uvicorn; the mock provider: uvicorn) imports it when it is used and, when the import
fails, raises :class:`MissingExtraError`, whose message names the extra and the command
that installs it. The command line prints that message as its one line.
"""

from __future__ import annotations

__all__ = ["MissingExtraError", "install_command", "missing_extra"]


def install_command(extra: str) -> str:
    """The command that installs ``extra``, run from a clone of laminate (the package is
    not on the package index yet)."""
    return f'python -m pip install -e ".[{extra}]"'


class MissingExtraError(ImportError):
    """A feature needs an optional extra that is not installed.

    ``extra`` is the extra's name (``"proxy"``, ``"demo"``), ``name`` the module that
    could not be imported.
    """

    def __init__(self, feature: str, extra: str, module: str | None) -> None:
        what = f" ({module} is not installed)" if module else ""
        super().__init__(
            f'{feature} needs the "{extra}" extra{what}: install it with '
            f"{install_command(extra)} in a clone of laminate",
            name=module,
        )
        self.feature = feature
        self.extra = extra


def missing_extra(feature: str, extra: str, exc: ImportError) -> MissingExtraError:
    """The :class:`MissingExtraError` for ``exc``, a failed import of ``extra``'s module
    (raise it ``from exc``)."""
    if isinstance(exc, MissingExtraError):
        return exc
    module = exc.name.partition(".")[0] if exc.name else None
    return MissingExtraError(feature, extra, module)
