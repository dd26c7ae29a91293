"""What the proxy is told: its backends, how models route to them, its own key, limits.

A :class:`ProxyConfig` is plain data, built by the command line (``--backend``,
``--model``, ...), from a TOML file (:func:`config_from_toml`) or by hand. Keys are held
as values, read from the environment by whoever builds the configuration, and never
shown in a ``repr``.

Routing is by the model a request names: the first backend that lists the model (in
``models``, client name to backend name) takes it, under its backend name; any other
model goes to the first backend, under that backend's ``model`` when one is set, else
unchanged.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, get_args
from urllib.parse import urlsplit

from .._apis.registry import APIS
from .._apis.spec import MaxTokensField
from .._core.errors import LaminateError

__all__ = [
    "DEFAULT_DRAIN",
    "DEFAULT_MAX_REQUEST",
    "KNOWN_KEYS",
    "Backend",
    "ConfigError",
    "ConfigFile",
    "ProxyConfig",
    "Timeouts",
    "check_keys",
    "config_from_toml",
    "parse_backend",
]

DEFAULT_MAX_REQUEST: Final = 32 * 1024 * 1024
DEFAULT_DRAIN: Final = 600.0

KNOWN_KEYS: Final[dict[str, frozenset[str]]] = {
    "": frozenset(
        {"api_key_env", "admin_key_env", "max_request_bytes", "drain", "timeouts", "backend"}
    ),
    "timeouts": frozenset({"connect", "read", "idle"}),
    "backend": frozenset({"api", "base_url", "key_env", "model", "models", "max_tokens_field"}),
}
"""The keys a TOML configuration takes: top-level (``""``), and in each table by name.
Any other key is a :class:`ConfigError` that names it and the closest known key."""


class ConfigError(LaminateError):
    """The proxy's configuration is wrong: an unknown API, a bad URL, a missing key."""


@dataclass(frozen=True, slots=True)
class Timeouts:
    """How long the proxy waits on a backend, in seconds."""

    connect: float = 10.0
    """To connect (and to get a pooled connection)."""
    read: float = 600.0
    """From sending the request until the backend's answer begins (its status line)."""
    idle: float = 300.0
    """Between two pieces of the answer, once it began."""

    def __post_init__(self) -> None:
        for name in ("connect", "read", "idle"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ConfigError(f"timeout {name} must be a positive number, not {value!r}")


@dataclass(frozen=True, slots=True)
class Backend:
    """One backend: the API it speaks, where, with which key, and which models it takes."""

    api: str
    """The API it speaks: a provider name (``"openai"``, ``"anthropic"``, ...)."""
    base_url: str
    """Its base URL as that API's official SDK takes it (Chat Completions and Responses
    end in ``/v1``)."""
    key: str | None = field(default=None, repr=False)
    """Its key, sent in that API's own header (``None``: none sent; a signed API is then
    signed from the usual AWS environment)."""
    models: Mapping[str, str] = field(default_factory=dict)
    """Models routed here: the client's name to the backend's."""
    model: str | None = None
    """The backend's model for every request not routed by ``models`` (``None``: the
    client's model, unchanged)."""
    max_tokens_field: MaxTokensField = "auto"
    """For a Chat Completions backend, the field a translated request's output limit goes
    in: ``"max_tokens"`` (what compatible servers read), ``"max_completion_tokens"``
    (what OpenAI's reasoning models require) or ``"auto"`` (by the model's name; see
    :func:`laminate.write_request`)."""

    def __post_init__(self) -> None:
        if self.max_tokens_field not in get_args(MaxTokensField):
            wanted = ", ".join(repr(f) for f in get_args(MaxTokensField))
            raise ConfigError(
                f"backend max_tokens_field must be one of {wanted}, not {self.max_tokens_field!r}"
            )
        record = APIS.get(self.api)
        if record is None or record.http is None:
            known = ", ".join(name for name, r in APIS.items() if r.http is not None)
            raise ConfigError(f"unknown backend API {self.api!r}: use one of {known}")
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"backend URL {self.base_url!r} must be http(s)://host[:port]/...")
        if not isinstance(self.models, Mapping):
            raise TypeError(f"Backend.models takes a mapping, not {type(self.models).__name__}")


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    """The proxy's whole configuration (``laminate proxy`` builds one from its options)."""

    backends: tuple[Backend, ...]
    """The backends; the first takes every model no backend lists."""
    api_key: str | None = field(default=None, repr=False)
    """The key clients must present, each in its API's own header (``None``: none)."""
    max_request_bytes: int = DEFAULT_MAX_REQUEST
    """The largest request body accepted (larger: 413)."""
    timeouts: Timeouts = field(default_factory=Timeouts)
    """How long to wait on a backend."""
    log: Callable[[str], None] | None = None
    """Where each request's JSON log line goes (``None``: the ``laminate.proxy``
    logger, at INFO)."""
    admin_key: str | None = field(default=None, repr=False)
    """The key that ``POST /admin/reload`` and ``GET /metrics`` take (``None``: reload over
    HTTP is off, and the metrics need no key)."""
    drain: float = DEFAULT_DRAIN
    """Seconds the running requests get to finish once the server is told to stop."""

    def __post_init__(self) -> None:
        if not isinstance(self.backends, tuple | list):
            raise TypeError("ProxyConfig.backends takes a tuple of Backend")
        if not self.backends:
            raise ConfigError("the proxy needs at least one backend")
        if not all(isinstance(b, Backend) for b in self.backends):
            raise TypeError("ProxyConfig.backends takes Backend records")
        object.__setattr__(self, "backends", tuple(self.backends))
        if self.max_request_bytes <= 0:
            raise ConfigError("max_request_bytes must be positive")
        drain = self.drain
        if isinstance(drain, bool) or not isinstance(drain, int | float) or drain < 0:
            raise ConfigError(f"drain must be a number of seconds, not {drain!r}")

    def route(self, model: str) -> tuple[Backend, str]:
        """The backend a request for ``model`` goes to, and the model it asks there."""
        for backend in self.backends:
            routed = backend.models.get(model)
            if routed is not None:
                return backend, routed
        first = self.backends[0]
        return first, first.model or model

    def models(self) -> list[str]:
        """The model names clients can ask for: every routed name, then the default."""
        names = [name for backend in self.backends for name in backend.models]
        if self.backends[0].model is not None:
            names.append(self.backends[0].model)
        return list(dict.fromkeys(names))


def parse_backend(text: str) -> tuple[str, str]:
    """``API:BASE_URL`` as ``(api, base_url)``."""
    api, sep, url = text.partition(":")
    if not sep or not url or api not in APIS:
        known = ", ".join(name for name, r in APIS.items() if r.http is not None)
        raise ConfigError(f"invalid backend {text!r}: use API:BASE_URL with API one of {known}")
    return api, url


def _env(name: Any, environ: Mapping[str, str], what: str) -> str | None:
    if name is None:
        return None
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{what} must name an environment variable")
    value = environ.get(name)
    if not value:
        raise ConfigError(f"{what}: the environment variable {name} is not set")
    return value


def config_from_toml(path: str | Path, environ: Mapping[str, str]) -> ProxyConfig:
    """A configuration from a TOML file (keys read from ``environ``)::

    api_key_env = "PROXY_KEY"            # optional
    admin_key_env = "PROXY_ADMIN_KEY"    # optional: for POST /admin/reload and /metrics
    max_request_bytes = 33554432         # optional
    drain = 600                          # optional: seconds streams get to finish on stop
    [timeouts]                           # optional: connect, read, idle (seconds)
    read = 600
    [[backend]]
    api = "openai"
    base_url = "http://127.0.0.1:11434/v1"
    key_env = "OLLAMA_KEY"               # optional
    model = "qwen3-coder"                # optional: every model not listed anywhere
    models = { "claude-haiku-4-5" = "qwen3:8b" }
    max_tokens_field = "max_tokens"      # optional, Chat Completions backends: "auto",
                                         # "max_tokens" or "max_completion_tokens"
    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    check_keys(path, "", data)
    raw_backends = data.get("backend")
    if not isinstance(raw_backends, list) or not raw_backends:
        raise ConfigError(f"{path}: no [[backend]] table")
    backends = []
    for n, item in enumerate(raw_backends):
        check_keys(path, "backend", item, n)
        models = item.get("models", {})
        if not isinstance(models, Mapping) or not all(isinstance(v, str) for v in models.values()):
            raise ConfigError(f"{path}: backend {n}: models must map names to names")
        backends.append(
            Backend(
                api=str(item.get("api", "")),
                base_url=str(item.get("base_url", "")),
                key=_env(item.get("key_env"), environ, f"backend {n} key_env"),
                models=dict(models),
                model=item.get("model"),
                max_tokens_field=item.get("max_tokens_field", "auto"),
            )
        )
    timeouts = data.get("timeouts", {})
    check_keys(path, "timeouts", timeouts)
    return ProxyConfig(
        backends=tuple(backends),
        api_key=_env(data.get("api_key_env"), environ, "api_key_env"),
        max_request_bytes=int(data.get("max_request_bytes", DEFAULT_MAX_REQUEST)),
        timeouts=Timeouts(**timeouts),
        admin_key=_env(data.get("admin_key_env"), environ, "admin_key_env"),
        drain=data.get("drain", DEFAULT_DRAIN),
    )


def check_keys(path: str | Path, table: str, item: Any, n: int | None = None) -> None:
    """Refuse a TOML table (``table``: its name in :data:`KNOWN_KEYS`, ``""`` for the
    top level; ``n``: its place in an array of tables) that is not a table or holds a
    key it does not take, naming the closest key it takes."""
    where = "the top level" if not table else f"[{table}]" if n is None else f"[[{table}]] {n}"
    if not isinstance(item, Mapping):
        raise ConfigError(f"{path}: {where} must be a table")
    known = KNOWN_KEYS[table]
    for key in item:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            taken = ", ".join(sorted(known))
            raise ConfigError(f"{path}: unknown key {key!r} in {where}{hint} (it takes {taken})")


@dataclass(frozen=True, slots=True)
class ConfigFile:
    """Where the configuration comes from when it can be read again (a reload): a TOML
    file, and what the command line sets over it."""

    path: str
    """The TOML file."""
    api_key_env: str | None = None
    """The environment variable of the clients' key, over the file's ``api_key_env``."""
    max_request_bytes: int | None = None
    """Over the file's ``max_request_bytes``."""
    timeouts: Mapping[str, float] = field(default_factory=dict)
    """Over the file's ``[timeouts]``: ``connect``, ``read``, ``idle``."""

    def load(self, environ: Mapping[str, str]) -> ProxyConfig:
        """The configuration as the file says now (keys read from ``environ``)."""
        config = config_from_toml(self.path, environ)
        api_key = config.api_key
        if self.api_key_env is not None:
            api_key = _env(self.api_key_env, environ, "--api-key-env")
        return replace(
            config,
            api_key=api_key,
            max_request_bytes=self.max_request_bytes or config.max_request_bytes,
            timeouts=replace(config.timeouts, **self.timeouts),
        )
