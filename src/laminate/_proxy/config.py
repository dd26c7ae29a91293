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
    "DEFAULT_MAX_REQUEST",
    "Backend",
    "ConfigError",
    "ProxyConfig",
    "Retry",
    "Timeouts",
    "config_from_toml",
    "parse_backend",
]

DEFAULT_MAX_REQUEST: Final = 32 * 1024 * 1024
_MOST_RETRIES: Final = 10
_BACKEND_KEYS: Final = frozenset(
    {
        "api",
        "base_url",
        "key_env",
        "keys_env",
        "model",
        "models",
        "max_tokens_field",
        "name",
        "fallbacks",
        "retries",
    }
)


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
class Retry:
    """How a failed request is tried again before the first byte of its answer: after a
    wait drawn at random between 0 and ``base * 2**n`` seconds (the n-th retry, from 0),
    at most ``max``; a backend's ``retry-after`` is waited for instead, unless it is longer
    than ``max`` (the request then goes to the next fallback at once)."""

    base: float = 0.25
    """The first retry's longest wait, in seconds (each next one doubles it)."""
    max: float = 8.0
    """The longest wait, in seconds."""

    def __post_init__(self) -> None:
        for name in ("base", "max"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"retry {name} must be a number of seconds, not {value!r}")


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
    name: str = ""
    """Its name, in the log, the ``x-laminate-backend`` header and other backends'
    ``fallbacks`` (``""``: the :class:`ProxyConfig` names it after its API)."""
    fallbacks: tuple[str, ...] = ()
    """The backends (by name) a request goes to, in turn, when this one fails before its
    answer began (each of them followed by its own fallbacks)."""
    retries: int = 0
    """How many more times a request is sent here when it fails before its answer began
    (a connect error, a timeout, 408, 429, 5xx), before the next fallback."""
    keys: tuple[str, ...] = field(default=(), repr=False)
    """A pool of keys used in turn instead of ``key`` (see :class:`~.calls.BackendClient`
    for when a key is skipped)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"Backend.name takes a str, not {type(self.name).__name__}")
        for attribute in ("fallbacks", "keys"):
            values = getattr(self, attribute)
            if isinstance(values, str) or not isinstance(values, tuple | list):
                raise TypeError(f"Backend.{attribute} takes a tuple of str")
            if not all(isinstance(value, str) and value for value in values):
                raise ConfigError(f"backend {attribute} must be non-empty strings")
            object.__setattr__(self, attribute, tuple(values))
        if isinstance(self.retries, bool) or not isinstance(self.retries, int):
            raise TypeError(f"Backend.retries takes an int, not {type(self.retries).__name__}")
        if not 0 <= self.retries <= _MOST_RETRIES:
            raise ConfigError(f"backend retries must be 0 to {_MOST_RETRIES}, not {self.retries}")
        if self.keys and self.key is not None:
            raise ConfigError("a backend takes a key or a pool of keys, not both")
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
    retry: Retry = field(default_factory=Retry)
    """How long to wait before a failed request is sent again."""
    log: Callable[[str], None] | None = None
    """Where each request's JSON log line goes (``None``: the ``laminate.proxy``
    logger, at INFO)."""

    def __post_init__(self) -> None:
        if not isinstance(self.backends, tuple | list):
            raise TypeError("ProxyConfig.backends takes a tuple of Backend")
        if not self.backends:
            raise ConfigError("the proxy needs at least one backend")
        if not all(isinstance(b, Backend) for b in self.backends):
            raise TypeError("ProxyConfig.backends takes Backend records")
        object.__setattr__(self, "backends", _named(tuple(self.backends)))
        _check_fallbacks(self.backends)
        if self.max_request_bytes <= 0:
            raise ConfigError("max_request_bytes must be positive")

    def route(self, model: str) -> tuple[Backend, str]:
        """The backend a request for ``model`` goes to, and the model it asks there."""
        for backend in self.backends:
            routed = backend.models.get(model)
            if routed is not None:
                return backend, routed
        first = self.backends[0]
        return first, first.model or model

    def model_at(self, backend: Backend, model: str) -> str:
        """The model a request for ``model`` asks at ``backend`` when it falls back there:
        the backend's name for it in ``models``, else the backend's ``model``, else
        ``model`` unchanged."""
        return backend.models.get(model) or backend.model or model

    def models(self) -> list[str]:
        """The model names clients can ask for: every routed name, then the default."""
        names = [name for backend in self.backends for name in backend.models]
        if self.backends[0].model is not None:
            names.append(self.backends[0].model)
        return list(dict.fromkeys(names))


def _named(backends: tuple[Backend, ...]) -> tuple[Backend, ...]:
    """``backends``, each with a name: a backend without one is named after its API, or
    after its API and its place in the list (from 1) when that name is taken."""
    given = [backend.name for backend in backends if backend.name]
    twice = sorted({name for name in given if given.count(name) > 1})
    if twice:
        raise ConfigError(f"backend names must be unique: {', '.join(map(repr, twice))} twice")
    taken = set(given)
    named = []
    for n, backend in enumerate(backends, 1):
        if backend.name:
            named.append(backend)
            continue
        name, more = backend.api, n
        while name in taken:
            name = f"{backend.api}-{more}"
            more += 1
        taken.add(name)
        named.append(replace(backend, name=name))
    return tuple(named)


def _check_fallbacks(backends: tuple[Backend, ...]) -> None:
    """Every fallback names another backend, and no chain of fallbacks comes back to
    where it began."""
    by_name = {backend.name: backend for backend in backends}
    for backend in backends:
        if backend.name in backend.fallbacks:
            raise ConfigError(f"backend {backend.name!r} lists itself as its fallback")
        unknown = [name for name in backend.fallbacks if name not in by_name]
        if unknown:
            raise ConfigError(
                f"backend {backend.name!r}: no backend is named {', '.join(map(repr, unknown))}"
            )
    # A walk along the fallbacks from each backend: a name met again on its own path is
    # a cycle (every name is walked from once, so this is linear in the links).
    done: set[str] = set()

    def walk(name: str, path: list[str]) -> None:
        if name in path:
            cycle = " -> ".join([*path[path.index(name) :], name])
            raise ConfigError(f"the fallbacks go round in a cycle: {cycle}")
        if name in done:
            return
        path.append(name)
        for then in by_name[name].fallbacks:
            walk(then, path)
        path.pop()
        done.add(name)

    for backend in backends:
        walk(backend.name, [])


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
    max_request_bytes = 33554432         # optional
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
    name = "local"                       # optional: the API's name by default
    fallbacks = ["cloud"]                # optional: other backends' names, tried in turn
    retries = 2                          # optional: more tries here first (default 0)
    [[backend]]
    name = "cloud"
    api = "anthropic"
    base_url = "https://api.anthropic.com"
    keys_env = ["KEY_1", "KEY_2"]        # optional: a pool of keys, instead of key_env
    [retry]                              # optional: the waits between tries (seconds)
    base = 0.25
    max = 8
    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    raw_backends = data.get("backend")
    if not isinstance(raw_backends, list) or not raw_backends:
        raise ConfigError(f"{path}: no [[backend]] table")
    backends = []
    for n, item in enumerate(raw_backends):
        unknown = set(item) - _BACKEND_KEYS
        if unknown:
            raise ConfigError(f"{path}: backend {n}: unknown keys {sorted(unknown)}")
        models = item.get("models", {})
        if not isinstance(models, Mapping) or not all(isinstance(v, str) for v in models.values()):
            raise ConfigError(f"{path}: backend {n}: models must map names to names")
        if "key_env" in item and "keys_env" in item:
            raise ConfigError(f"{path}: backend {n}: give key_env or keys_env, not both")
        try:
            backends.append(
                Backend(
                    api=str(item.get("api", "")),
                    base_url=str(item.get("base_url", "")),
                    key=_env(item.get("key_env"), environ, f"backend {n} key_env"),
                    models=dict(models),
                    model=item.get("model"),
                    max_tokens_field=item.get("max_tokens_field", "auto"),
                    name=item.get("name", ""),
                    fallbacks=item.get("fallbacks", ()),
                    retries=item.get("retries", 0),
                    keys=_keys(item.get("keys_env", ()), environ, f"backend {n} keys_env"),
                )
            )
        except TypeError as exc:  # a value of the wrong type in the file
            raise ConfigError(f"{path}: backend {n}: {exc}") from None
    timeouts = data.get("timeouts", {})
    if not isinstance(timeouts, Mapping) or set(timeouts) - {"connect", "read", "idle"}:
        raise ConfigError(f"{path}: [timeouts] takes connect, read and idle")
    retry = data.get("retry", {})
    if not isinstance(retry, Mapping) or set(retry) - {"base", "max"}:
        raise ConfigError(f"{path}: [retry] takes base and max")
    try:
        return ProxyConfig(
            backends=tuple(backends),
            api_key=_env(data.get("api_key_env"), environ, "api_key_env"),
            max_request_bytes=int(data.get("max_request_bytes", DEFAULT_MAX_REQUEST)),
            timeouts=Timeouts(**timeouts),
            retry=Retry(**retry),
        )
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _keys(names: Any, environ: Mapping[str, str], what: str) -> tuple[str, ...]:
    if not isinstance(names, list | tuple):
        raise ConfigError(f"{what} must list environment variables")
    if len(set(names)) != len(names):
        raise ConfigError(f"{what} names a variable twice")
    return tuple(_env(name, environ, what) or "" for name in names)
