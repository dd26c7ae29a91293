"""What the proxy is told: its backends, how models route to them, its own key, limits.

A :class:`ProxyConfig` is plain data, built by the command line (``--backend``,
``--model``, ...), from a TOML file (:func:`config_from_toml`) or by hand. Keys are held
as values, read from the environment by whoever builds the configuration, and never
shown in a ``repr``.

Routing is by the model a request names (:meth:`ProxyConfig.route`). Each backend's
``models`` maps client names to backend names; a client name may be a shell-style
pattern (``*``, ``?``, ``[abc]``, ``[!abc]``, as :func:`fnmatch.fnmatchcase` reads them:
case-sensitive, and ``*`` matches ``/`` too). The most specific entry of all backends
wins: an exact name before any pattern; among patterns, the one with more literal
characters, then the one with fewer wildcards, then the first listed (backends in
order, each one's entries in order). A model no entry matches goes to the first
backend, under that backend's ``model`` when one is set, else unchanged. A request
that fails before its answer begins may go on to the backend's ``fallbacks``; each asks
for the model by its own ``models`` alone (:meth:`ProxyConfig.model_at`).

The people who use the proxy are :class:`Client` records, each with its own key, the
models it may ask for and its limits per minute; ``state`` says where the limits are
counted (see :mod:`.limits`).
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal, get_args
from urllib.parse import urlsplit

from .._apis.registry import APIS
from .._apis.spec import MaxTokensField
from .._core.errors import LaminateError

__all__ = [
    "DEFAULT_DRAIN",
    "DEFAULT_KEEPALIVE",
    "DEFAULT_MAX_REQUEST",
    "KNOWN_KEYS",
    "Backend",
    "Client",
    "ConfigError",
    "ConfigFile",
    "ProxyConfig",
    "Retry",
    "Timeouts",
    "check_keys",
    "config_from_toml",
    "parse_backend",
    "state_kind",
]

DEFAULT_MAX_REQUEST: Final = 32 * 1024 * 1024
DEFAULT_KEEPALIVE: Final = 15.0
DEFAULT_DRAIN: Final = 600.0
# The routes kept per model name asked (a client asks a handful; a bound keeps a client
# that makes up names from growing the table).
_ROUTES_KEPT: Final = 1024
_MOST_RETRIES: Final = 10

KNOWN_KEYS: Final[dict[str, frozenset[str]]] = {
    "": frozenset(
        {
            "api_key_env",
            "admin_key_env",
            "max_request_bytes",
            "drain",
            "keepalive",
            "state",
            "state_failure",
            "timeouts",
            "retry",
            "backend",
            "client",
        }
    ),
    "timeouts": frozenset({"connect", "read", "idle"}),
    "retry": frozenset({"base", "max"}),
    "backend": frozenset(
        {
            "api",
            "base_url",
            "key_env",
            "keys_env",
            "model",
            "models",
            "max_tokens_field",
            "max_tokens",
            "drop",
            "name",
            "fallbacks",
            "retries",
        }
    ),
    "client": frozenset({"name", "key_env", "models", "requests_per_minute", "tokens_per_minute"}),
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

    max_tokens: int | None = None
    """A cap on a request's output limit: a request asking for more is lowered to it
    (``None``: no cap)."""
    drop: tuple[str, ...] = ()
    """Top-level fields of this backend's API that it refuses: removed from every
    request sent to it, after translation (a field absent from a request is fine)."""

    def __post_init__(self) -> None:
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool)
            or not isinstance(self.max_tokens, int)
            or self.max_tokens < 1
        ):
            raise ConfigError(
                f"backend max_tokens must be a whole number from 1, not {self.max_tokens!r}"
            )
        drop: Any = self.drop
        if isinstance(drop, str) or not all(isinstance(d, str) and d for d in drop):
            raise ConfigError(f"backend drop must list field names, not {self.drop!r}")
        object.__setattr__(self, "drop", tuple(drop))
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
class Client:
    """One person or service that uses the proxy with a key of its own."""

    name: str
    """Its name, in the log line (``client_name``) and the metrics."""
    key: str = field(repr=False)
    """The key it presents, each request in its API's own header."""
    models: tuple[str, ...] | None = None
    """Shell patterns (``*``, ``?``, ``[...]``, as :func:`fnmatch.fnmatchcase` reads
    them) of the client models it may ask for (``None``: every model); any other is
    refused with a 403."""
    requests_per_minute: int | None = None
    """How many requests it may send per minute (``None``: no limit)."""
    tokens_per_minute: int | None = None
    """How many tokens (input and output, as the backends report them) its answers may
    use per minute (``None``: no limit)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(f"a client's name must be a non-empty string, not {self.name!r}")
        if not isinstance(self.key, str) or not self.key:
            raise ConfigError(f"client {self.name!r}: its key must be a non-empty string")
        if self.models is not None:
            if not isinstance(self.models, tuple | list):
                raise TypeError(f"Client.models takes a tuple of patterns, not {self.models!r}")
            if not all(isinstance(m, str) and m for m in self.models):
                raise ConfigError(f"client {self.name!r}: models must be non-empty patterns")
            object.__setattr__(self, "models", tuple(self.models))
        for what in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, what)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value <= 0
            ):
                raise ConfigError(
                    f"client {self.name!r}: {what} must be a positive integer, not {value!r}"
                )

    @property
    def limited(self) -> bool:
        """Whether it has a limit per minute."""
        return self.requests_per_minute is not None or self.tokens_per_minute is not None


StateFailure = Literal["open", "closed"]


def state_kind(state: str | None) -> Literal["memory", "sqlite", "redis"]:
    """Which store ``state`` names: ``None`` or ``"memory"`` (this process),
    ``"sqlite:PATH"`` (a file shared by the processes of one machine; ``sqlite:///abs``
    is the absolute path ``/abs``), ``"redis://..."`` or ``"rediss://..."`` (one Redis
    shared by every process)."""
    if state is None or state == "memory":
        return "memory"
    if not isinstance(state, str):
        raise TypeError(f"state takes a string, not {type(state).__name__}")
    if state.startswith("sqlite:") and len(state) > len("sqlite:"):
        return "sqlite"
    if state.startswith(("redis://", "rediss://")):
        return "redis"
    raise ConfigError(f'state {state!r} must be "memory", "sqlite:PATH" or "redis://host:port/db"')


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
    keepalive: float = DEFAULT_KEEPALIVE
    """While a backend is silent in the middle of a streamed answer, the client API's
    keep-alive is written at least this often, in seconds (``0``: never)."""
    _routing: _Routing = field(init=False, repr=False, compare=False)
    clients: tuple[Client, ...] = ()
    """The people who use the proxy, each with its own key (with :attr:`api_key` too,
    that key is accepted as well, with no name and no limit)."""
    state: str | None = None
    """Where the clients' limits are counted (see :func:`state_kind`): ``None`` is this
    process (``laminate proxy --workers N`` makes it a SQLite file of its own)."""
    state_failure: StateFailure = "open"
    """When that store cannot be reached: ``"open"`` lets requests through unlimited,
    ``"closed"`` refuses them (503)."""
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
        object.__setattr__(self, "backends", _named(tuple(self.backends)))
        _check_fallbacks(self.backends)
        if self.max_request_bytes <= 0:
            raise ConfigError("max_request_bytes must be positive")
        keepalive = self.keepalive
        if isinstance(keepalive, bool) or not isinstance(keepalive, int | float) or keepalive < 0:
            raise ConfigError(f"keepalive must be a number of seconds from 0, not {keepalive!r}")
        object.__setattr__(self, "_routing", _Routing(self.backends))
        if not isinstance(self.clients, tuple | list) or not all(
            isinstance(c, Client) for c in self.clients
        ):
            raise TypeError("ProxyConfig.clients takes a tuple of Client")
        object.__setattr__(self, "clients", tuple(self.clients))
        names = [c.name for c in self.clients]
        keys = [c.key for c in self.clients] + ([self.api_key] if self.api_key else [])
        if len(set(names)) != len(names):
            raise ConfigError("two clients have the same name")
        if len(set(keys)) != len(keys):
            raise ConfigError("two clients (or a client and api_key) have the same key")
        state_kind(self.state)
        if self.state_failure not in get_args(StateFailure):
            wanted = 'state_failure must be "open" or "closed"'
            raise ConfigError(f"{wanted}, not {self.state_failure!r}")
        drain = self.drain
        if isinstance(drain, bool) or not isinstance(drain, int | float) or drain < 0:
            raise ConfigError(f"drain must be a number of seconds, not {drain!r}")

    def route(self, model: str) -> tuple[Backend, str]:
        """The backend a request for ``model`` goes to, and the model it asks there (the
        most specific entry of every backend's ``models``; see the module's text)."""
        return self._routing.route(model)

    def model_at(self, backend: Backend, model: str) -> str:
        """The model a request for ``model`` asks at ``backend`` when it falls back there:
        the most specific entry of that backend's ``models`` that matches, else the
        backend's ``model``, else ``model`` unchanged."""
        return self._routing.route_at(backend, model)

    def models(self) -> list[str]:
        """The model names clients can ask for: every exact routed name (not the
        patterns), then the default."""
        names = [
            name for backend in self.backends for name in backend.models if not _is_pattern(name)
        ]
        if self.backends[0].model is not None:
            names.append(self.backends[0].model)
        return list(dict.fromkeys(names))


class _Routing:
    """The backends' ``models``, compiled once: the exact names in one table, the
    patterns most specific first, and the routes found so far (bounded)."""

    __slots__ = ("_default", "_exact", "_own", "_patterns", "_seen")

    def __init__(self, backends: tuple[Backend, ...]) -> None:
        self._exact: dict[str, tuple[Backend, str]] = {}
        ranked: list[tuple[int, int, int, re.Pattern[str], Backend, str]] = []
        for backend in backends:
            for name, target in backend.models.items():
                if not isinstance(name, str) or not isinstance(target, str):
                    raise ConfigError(f"backend models must map names to names, not {name!r}")
                literal, wildcards = _pattern_size(name)
                if not wildcards:
                    self._exact.setdefault(name, (backend, target))
                    continue
                rule = re.compile(fnmatch.translate(name))
                ranked.append((-literal, wildcards, len(ranked), rule, backend, target))
        ranked.sort(key=lambda entry: entry[:3])
        self._patterns = tuple((rule, backend, target) for *_, rule, backend, target in ranked)
        self._own: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
            backend.name: tuple(
                (rule, target) for rule, b, target in self._patterns if b is backend
            )
            for backend in backends
        }
        first = backends[0]
        self._default = first
        self._seen: dict[str, tuple[Backend, str]] = {}

    def route(self, model: str) -> tuple[Backend, str]:
        found = self._seen.get(model)
        if found is not None:
            return found
        found = self._exact.get(model)
        if found is None:
            for rule, backend, target in self._patterns:
                if rule.match(model):
                    found = (backend, target)
                    break
            else:
                found = (self._default, self._default.model or model)
        if len(self._seen) >= _ROUTES_KEPT:
            self._seen.clear()
        self._seen[model] = found
        return found

    def route_at(self, backend: Backend, model: str) -> str:
        """The model ``model`` asks at ``backend`` (a fallback): its exact entry, else
        its most specific pattern that matches, else its ``model``, else ``model``."""
        exact = backend.models.get(model)
        if exact is not None and not _is_pattern(model):
            return exact
        for rule, target in self._own.get(backend.name, ()):
            if rule.match(model):
                return target
        return backend.model or model


def _pattern_size(name: str) -> tuple[int, int]:
    """A model pattern's literal characters and wildcards, as :mod:`fnmatch` reads it
    (``*``, ``?``, a ``[...]`` set with its closing bracket; a ``[`` without one is a
    literal)."""
    literal = wildcards = 0
    at, size = 0, len(name)
    while at < size:
        char = name[at]
        at += 1
        if char in "*?":
            wildcards += 1
        elif char == "[":
            end = at
            if end < size and name[end] == "!":
                end += 1
            if end < size and name[end] == "]":
                end += 1
            end = name.find("]", end)
            if end < 0:
                literal += 1
            else:
                wildcards += 1
                at = end + 1
        else:
            literal += 1
    return literal, wildcards


def _is_pattern(name: str) -> bool:
    return _pattern_size(name)[1] > 0


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
    admin_key_env = "PROXY_ADMIN_KEY"    # optional: for POST /admin/reload and /metrics
    max_request_bytes = 33554432         # optional
    keepalive = 15                       # optional: seconds (0: no keep-alive)
    drain = 600                          # optional: seconds streams get to finish on stop
    state = "redis://127.0.0.1:6379/0"   # optional: where limits are counted
    state_failure = "open"               # optional: "open" or "closed"
    [timeouts]                           # optional: connect, read, idle (seconds)
    read = 600
    [[backend]]
    api = "openai"
    base_url = "http://127.0.0.1:11434/v1"
    key_env = "OLLAMA_KEY"               # optional
    model = "qwen3-coder"                # optional: every model not listed anywhere
    models = { "claude-haiku-4-5" = "qwen3:8b", "claude-*" = "qwen3-coder" }
    max_tokens_field = "max_tokens"      # optional, Chat Completions backends: "auto",
                                         # "max_tokens" or "max_completion_tokens"
    max_tokens = 32000                   # optional: a cap on the output limit
    drop = ["temperature"]               # optional: fields this backend refuses
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
    [[client]]                           # optional, any number
    name = "alice"
    key_env = "ALICE_KEY"
    models = ["claude-*", "gpt-5*"]      # optional: shell patterns of client models
    requests_per_minute = 60             # optional
    tokens_per_minute = 200000           # optional
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
                    max_tokens=item.get("max_tokens"),
                    drop=_names(item.get("drop", ()), f"{path}: backend {n}: drop"),
                    name=item.get("name", ""),
                    fallbacks=item.get("fallbacks", ()),
                    retries=item.get("retries", 0),
                    keys=_keys(item.get("keys_env", ()), environ, f"backend {n} keys_env"),
                )
            )
        except TypeError as exc:  # a value of the wrong type in the file
            raise ConfigError(f"{path}: backend {n}: {exc}") from None
    timeouts = data.get("timeouts", {})
    check_keys(path, "timeouts", timeouts)
    state = data.get("state")
    if state is not None and not isinstance(state, str):
        raise ConfigError(f"{path}: state must be a string")
    retry = data.get("retry", {})
    check_keys(path, "retry", retry)
    try:
        return ProxyConfig(
            backends=tuple(backends),
            api_key=_env(data.get("api_key_env"), environ, "api_key_env"),
            max_request_bytes=int(data.get("max_request_bytes", DEFAULT_MAX_REQUEST)),
            timeouts=Timeouts(**timeouts),
            retry=Retry(**retry),
            keepalive=data.get("keepalive", DEFAULT_KEEPALIVE),
            clients=_clients(path, data.get("client", []), environ),
            state=state,
            state_failure=data.get("state_failure", "open"),
            admin_key=_env(data.get("admin_key_env"), environ, "admin_key_env"),
            drain=data.get("drain", DEFAULT_DRAIN),
        )
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _names(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{what} must be a list of field names")
    return tuple(value)


def _clients(path: str | Path, raw: Any, environ: Mapping[str, str]) -> tuple[Client, ...]:
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise ConfigError(f"{path}: client must be [[client]] tables")
    clients = []
    for n, item in enumerate(raw):
        check_keys(path, "client", item, n)
        if item.get("key_env") is None:
            raise ConfigError(f"{path}: client {n}: key_env is required")
        models = item.get("models")
        if models is not None and (
            not isinstance(models, list) or not all(isinstance(m, str) for m in models)
        ):
            raise ConfigError(f"{path}: client {n}: models must be a list of patterns")
        clients.append(
            Client(
                name=item.get("name", ""),
                key=_env(item["key_env"], environ, f"client {n} key_env") or "",
                models=None if models is None else tuple(models),
                requests_per_minute=item.get("requests_per_minute"),
                tokens_per_minute=item.get("tokens_per_minute"),
            )
        )
    return tuple(clients)


def _keys(names: Any, environ: Mapping[str, str], what: str) -> tuple[str, ...]:
    if not isinstance(names, list | tuple):
        raise ConfigError(f"{what} must list environment variables")
    if len(set(names)) != len(names):
        raise ConfigError(f"{what} names a variable twice")
    return tuple(_env(name, environ, what) or "" for name in names)


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
    keepalive: float | None = None
    """Over the file's ``keepalive``."""
    default_state: str | None = None
    """Where the limits are counted when the file names no ``state`` (``None``: in
    the process)."""

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
            keepalive=config.keepalive if self.keepalive is None else self.keepalive,
            state=config.state if config.state is not None else self.default_state,
        )
