"""Where the clients' limits per minute are counted: :class:`Limits`, with three stores
behind it, chosen by the configuration's ``state`` (:func:`open_limits`).

- :class:`MemoryLimits`: a dict in this process (one worker);
- :class:`SqliteLimits`: a SQLite file shared by the processes of one machine (the
  default of ``laminate proxy --workers N``);
- :class:`RedisLimits`: one Redis shared by every process and machine (the ``redis``
  extra).

Each limit is a token bucket kept as one number, its *theoretical arrival time* (the
generic cell rate algorithm): a client with ``N`` requests per minute may send ``N`` at
once, and then one each ``60 / N`` seconds as its bucket fills again; a request that finds
the bucket empty is told how long until there is room (``retry-after``). Tokens are the
same bucket, counted after each answer (``charge``): a request is let in while the tokens
counted over the last minute, decaying at the limit's rate, are below the limit. One
large answer can take a client past its limit; it then waits until its count is back
below. Each request taken from a bucket and each count of tokens is one atomic step of
the store (a dict update, one SQLite statement, one Redis script), so processes sharing
a store share its limits exactly.

A store that fails raises :class:`StoreError`; what a request then gets (through or a
503) is the configuration's ``state_failure``, decided by the caller.
"""

from __future__ import annotations

import math
import sqlite3
import time
from abc import ABC, abstractmethod
from typing import Any, Final, Literal, NamedTuple
from urllib.parse import urlsplit, urlunsplit

from .._core.errors import LaminateError
from .._core.extras import missing_extra
from .config import ConfigError, state_kind

__all__ = [
    "PERIOD",
    "Limits",
    "MemoryLimits",
    "Over",
    "RedisLimits",
    "SqliteLimits",
    "StoreError",
    "check_state",
    "open_limits",
    "retry_after",
    "shown_state",
]

PERIOD: Final = 60.0
"""The length of the limits' window, in seconds."""
_SLACK: Final = 1e-6  # a burst of exactly N requests at one instant fits
_SQLITE_BUSY: Final = 0.5  # seconds a process waits for another's transaction
_REDIS_TIMEOUT: Final = 1.0  # seconds to connect, and for each command
_PREFIX: Final = "laminate:limits:"


class StoreError(LaminateError):
    """The limits' store cannot be reached or answered an error."""


class Over(NamedTuple):
    """A request refused: the limit it is over, and the seconds until there is room."""

    limit: Literal["requests", "tokens"]
    seconds: float


def shown_state(state: str) -> str:
    """``state`` as a message may show it: without a password."""
    parts = urlsplit(state)
    if parts.password is None:
        return state
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def admitted(
    now: float, requests_tat: float, tokens_tat: float, rpm: int | None, tpm: int | None
) -> tuple[Over | None, float | None]:
    """One check: ``(the limit it is over, None when admitted; the requests' new arrival
    time, None when unchanged)``. The SQLite statement and the Redis script do the same
    sums."""
    if tpm is not None and tokens_tat - now >= PERIOD - _SLACK:
        return Over("tokens", max(tokens_tat - now - PERIOD, _SLACK)), None
    if rpm is None:
        return None, None
    tat = max(requests_tat, now) + PERIOD / rpm
    if tat - now > PERIOD + _SLACK:
        return Over("requests", tat - now - PERIOD), None
    return None, tat


def charged(now: float, tokens_tat: float, tpm: int, tokens: int) -> float:
    """The tokens' new arrival time once ``tokens`` more are counted."""
    return max(tokens_tat, now) + tokens * PERIOD / tpm


def retry_after(wait: float) -> str:
    """A ``retry-after`` header's value for a wait in seconds: whole seconds, at least 1."""
    return str(max(1, math.ceil(wait)))


class Limits(ABC):
    """Where the limits are counted. Every method may raise :class:`StoreError`."""

    kind: str = ""
    """The store's kind, as ``state`` names it (``"memory"``, ``"sqlite"``, ``"redis"``)."""
    remote: bool = False
    """Whether its calls wait on the network (so may be cancelled midway)."""

    async def start(self) -> None:  # noqa: B027 - a store with nothing to open
        """Open the store (:class:`~.config.ConfigError` when it cannot be reached)."""

    async def aclose(self) -> None:  # noqa: B027 - a store with nothing to close
        """Close the store."""

    @abstractmethod
    async def admit(self, name: str, rpm: int | None, tpm: int | None) -> Over | None:
        """Count one request of client ``name`` against its limits: ``None`` when it
        may go, else the limit it is over (and nothing is counted)."""

    @abstractmethod
    async def charge(self, name: str, tpm: int, tokens: int) -> None:
        """Count ``tokens`` more for client ``name``."""


class MemoryLimits(Limits):
    """The limits of one process, in a dict."""

    kind = "memory"

    def __init__(self) -> None:
        self._tats: dict[str, float] = {}

    async def admit(self, name: str, rpm: int | None, tpm: int | None) -> Over | None:
        tats = self._tats
        over, tat = admitted(
            time.time(), tats.get(name + "\0r", 0.0), tats.get(name + "\0t", 0.0), rpm, tpm
        )
        if tat is not None:
            tats[name + "\0r"] = tat
        return over

    async def charge(self, name: str, tpm: int, tokens: int) -> None:
        key = name + "\0t"
        self._tats[key] = charged(time.time(), self._tats.get(key, 0.0), tpm, tokens)


class SqliteLimits(Limits):
    """The limits of the processes of one machine, in a SQLite file (WAL, no fsync:
    the counts matter for a minute, not across a crash). Each check and each count is
    one statement, run in place: it takes microseconds, less than a hop to a thread
    would; a process that holds the file's lock longer than half a second fails the
    check (:class:`StoreError`)."""

    kind = "sqlite"

    def __init__(self, path: str) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None

    async def start(self) -> None:
        try:
            self._db = open_sqlite(self.path)
        except sqlite3.Error as exc:
            message = f"the limits' store sqlite:{self.path} cannot be opened: {exc}"
            raise ConfigError(message) from None

    async def aclose(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"the limits' store sqlite:{self.path} is not open")
        return self._db

    async def admit(self, name: str, rpm: int | None, tpm: int | None) -> Over | None:
        db = self._conn()
        now = time.time()
        try:
            if tpm is not None:  # a read: no lock to take
                row = db.execute(_SELECT_ONE, (name + "\0t",)).fetchone()
                over = admitted(now, 0.0, row[0] if row else 0.0, None, tpm)[0]
                if over is not None:
                    return over
            if rpm is None:
                return None
            interval = PERIOD / rpm
            if _RETURNING:  # one statement: atomic, and the quickest write
                tat, ok = db.execute(
                    _TAKE, (name + "\0r", now, interval, PERIOD + _SLACK)
                ).fetchone()
                return None if ok else Over("requests", tat + interval - now - PERIOD)
            return self._take_in_transaction(db, name + "\0r", now, rpm)
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite:{self.path}: {exc}") from None

    @staticmethod
    def _take_in_transaction(db: sqlite3.Connection, key: str, now: float, rpm: int) -> Over | None:
        """The same as ``_TAKE``, for a SQLite older than 3.35 (no ``RETURNING``)."""
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute(_SELECT_ONE, (key,)).fetchone()
            over, tat = admitted(now, row[0] if row else 0.0, 0.0, rpm, None)
            if tat is not None:
                db.execute(_UPSERT, (key, tat))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return over

    async def charge(self, name: str, tpm: int, tokens: int) -> None:
        cost = tokens * PERIOD / tpm
        now = time.time()
        try:  # one statement: atomic
            self._conn().execute(_ADD, (name + "\0t", now + cost, now, cost))
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite:{self.path}: {exc}") from None


_RETURNING: Final = sqlite3.sqlite_version_info >= (3, 35, 0)
_SELECT_ONE: Final = "SELECT tat FROM laminate_limits WHERE key = ?"
# One request taken from a bucket, when there is room: ``ok`` says whether there was (the
# expressions of an UPDATE read the row as it was).
_TAKE: Final = (
    "INSERT INTO laminate_limits (key, tat, ok) VALUES (?1, ?2 + ?3, 1) "
    "ON CONFLICT (key) DO UPDATE SET "
    "ok = (max(tat, ?2) + ?3 - ?2 <= ?4), "
    "tat = CASE WHEN max(tat, ?2) + ?3 - ?2 <= ?4 THEN max(tat, ?2) + ?3 ELSE tat END "
    "RETURNING tat, ok"
)
_UPSERT: Final = (
    "INSERT INTO laminate_limits (key, tat) VALUES (?, ?) "
    "ON CONFLICT (key) DO UPDATE SET tat = excluded.tat"
)
_ADD: Final = (
    "INSERT INTO laminate_limits (key, tat) VALUES (?, ?) "
    "ON CONFLICT (key) DO UPDATE SET tat = max(tat, ?) + ?"
)


def open_sqlite(path: str) -> sqlite3.Connection:
    """A connection to the limits' SQLite file, its table made when missing."""
    db = sqlite3.connect(path, timeout=_SQLITE_BUSY, isolation_level=None, check_same_thread=False)
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = OFF")
        db.execute(
            "CREATE TABLE IF NOT EXISTS laminate_limits "
            "(key TEXT PRIMARY KEY, tat REAL NOT NULL, ok INTEGER NOT NULL DEFAULT 1) "
            "WITHOUT ROWID"
        )
    except BaseException:
        db.close()
        raise
    return db


# The same sums as ``admitted`` and ``charged``, on Redis' own clock (one clock for every
# machine). Times in the keys are seconds; a key expires once its bucket is full again.
# The answer: '' when admitted, else 'r' or 't' (the limit) and the seconds to wait.
_ADMIT_SCRIPT: Final = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local period, slack = tonumber(ARGV[3]), 0.000001
if ARGV[2] ~= '' then
  local tokens = tonumber(redis.call('GET', KEYS[2]) or '0')
  if tokens - now >= period - slack then
    return 't' .. tostring(math.max(tokens - now - period, slack))
  end
end
if ARGV[1] == '' then return '' end
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now) + period / tonumber(ARGV[1])
if tat - now > period + slack then return 'r' .. tostring(tat - now - period) end
redis.call('SET', KEYS[1], string.format('%.6f', tat), 'PX', math.ceil((tat - now) * 1000) + 1000)
return ''
"""
_CHARGE_SCRIPT: Final = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now) + tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%.6f', tat), 'PX', math.ceil((tat - now) * 1000) + 1000)
return '0'
"""


def _redis() -> Any:
    try:
        import redis.asyncio
    except ImportError as exc:
        raise missing_extra("limits kept in Redis", "redis", exc) from exc
    return redis


class RedisLimits(Limits):
    """The limits of every process and machine that shares one Redis (redis-py's
    asyncio client, short timeouts, no retries: a failure is reported at once)."""

    kind = "redis"
    remote = True

    def __init__(self, url: str) -> None:
        self.url = url
        redis = _redis()
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._client = redis.asyncio.Redis.from_url(
            url,
            socket_timeout=_REDIS_TIMEOUT,
            socket_connect_timeout=_REDIS_TIMEOUT,
            retry=Retry(NoBackoff(), 0),
            decode_responses=True,
        )
        self._admit = self._client.register_script(_ADMIT_SCRIPT)
        self._charge = self._client.register_script(_CHARGE_SCRIPT)

    async def start(self) -> None:
        try:
            await self._client.ping()
        except self._errors as exc:
            raise ConfigError(
                f"the limits' store {shown_state(self.url)} cannot be reached: {exc}"
            ) from None

    async def aclose(self) -> None:
        await self._client.aclose()

    async def admit(self, name: str, rpm: int | None, tpm: int | None) -> Over | None:
        keys = [f"{_PREFIX}{name}:r", f"{_PREFIX}{name}:t"]
        args = ["" if rpm is None else rpm, "" if tpm is None else tpm, PERIOD]
        try:
            answer = await self._admit(keys=keys, args=args)
        except self._errors as exc:
            raise StoreError(f"{shown_state(self.url)}: {exc}") from None
        if not answer:
            return None
        return Over("tokens" if answer[0] == "t" else "requests", float(answer[1:]))

    async def charge(self, name: str, tpm: int, tokens: int) -> None:
        try:
            await self._charge(keys=[f"{_PREFIX}{name}:t"], args=[tokens * PERIOD / tpm])
        except self._errors as exc:
            raise StoreError(f"{shown_state(self.url)}: {exc}") from None


def sqlite_path(state: str) -> str:
    """The file a ``sqlite:PATH`` state names (``sqlite:///abs`` is ``/abs``)."""
    path = state[len("sqlite:") :]
    return path[2:] if path.startswith("//") else path


def open_limits(state: str | None) -> Limits:
    """The store ``state`` names (see :func:`~.config.state_kind`), not yet started."""
    kind = state_kind(state)
    if kind == "memory" or state is None:
        return MemoryLimits()
    if kind == "sqlite":
        return SqliteLimits(sqlite_path(state))
    return RedisLimits(state)


def check_state(state: str | None) -> None:
    """Refuse (:class:`~.config.ConfigError`) a store that cannot be opened or reached,
    before any process starts to serve."""
    kind = state_kind(state)
    if kind == "sqlite" and state is not None:
        try:
            open_sqlite(sqlite_path(state)).close()
        except sqlite3.Error as exc:
            raise ConfigError(f"the limits' store {state} cannot be opened: {exc}") from None
    elif kind == "redis" and state is not None:
        redis = _redis()
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        client = redis.Redis.from_url(
            state,
            socket_timeout=_REDIS_TIMEOUT,
            socket_connect_timeout=_REDIS_TIMEOUT,
            retry=Retry(NoBackoff(), 0),
        )
        try:
            client.ping()
        except (redis.RedisError, OSError) as exc:
            raise ConfigError(
                f"the limits' store {shown_state(state)} cannot be reached: {exc}"
            ) from None
        finally:
            client.close()
