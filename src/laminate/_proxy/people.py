"""Who is asking, and whether they may: :class:`People`, the proxy's clients (the
configuration's ``[[client]]`` entries, and its single ``api_key``).

A request's key is found in its API's own header (:func:`~.client.presented_keys`) and
looked up by its SHA-256 digest in a table of the known keys' digests, then compared to
the digest found with :func:`hmac.compare_digest`. No key is ever compared byte by byte
with what a request presents, so the time a refusal takes tells nothing of any key: the
lookup's time depends only on the presented value's own digest, and learning where an
unknown key's digest falls in the table would take its preimage. The time does not
depend on which client matched, nor on how many clients there are.

A client with ``models`` may ask only for a client model that one of its shell patterns
matches (403 otherwise, in its API's shape); a client with limits is counted in the
configuration's store (:mod:`.limits`): a request over a limit is a 429 with
``retry-after``, and the tokens of each answer are counted once it ends, from its
:class:`~.counting.Exchange`. When the store fails, ``state_failure`` says whether
requests go through unlimited (``"open"``) or are refused with a 503 (``"closed"``); the
failure is logged at most once a minute, and a store that failed is not asked again for a
second, so a dead store costs requests no time. No request waits on a store longer than
its own bounds: Redis' socket timeouts (a second to connect, a second per command),
SQLite's wait for another process's write (half a second).
"""

from __future__ import annotations

import fnmatch
import hashlib
import hmac
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

import anyio
from starlette.requests import Request

from .._apis.spec import Http
from .client import presented_keys
from .config import Client, ProxyConfig
from .counting import Exchange
from .limits import Limits, StoreError, open_limits, retry_after, shown_state
from .refusals import Refusal

__all__ = ["People"]

log: Final = logging.getLogger("laminate.proxy")

_STORE_PAUSE: Final = 1.0  # seconds a store that failed is left alone
_REPORT_EVERY: Final = 60.0  # seconds between two reports of a failing store
_NOBODY: Final = hashlib.sha256(b"").digest()

_T = TypeVar("_T")


class People:
    """The proxy's clients: their keys, the models each may ask for, their limits
    (counted in ``kept``, a store already open, when given)."""

    def __init__(self, config: ProxyConfig, kept: Limits | None = None) -> None:
        self.config = config
        entries: list[tuple[str, Client | None]] = [(c.key, c) for c in config.clients]
        if config.api_key is not None:
            entries.append((config.api_key, None))
        self._table = {_digest(key): (_digest(key), client) for key, client in entries}
        self._models = {
            c.name: re.compile("|".join(fnmatch.translate(p) for p in c.models))
            for c in config.clients
            if c.models is not None
        }
        limited = any(c.limited for c in config.clients)
        self.limits: Limits | None = None
        self._kept = limited and kept is not None
        if limited:
            self.limits = kept if kept is not None else open_limits(config.state)
        self._paused_until = 0.0
        self._reported = -_REPORT_EVERY

    async def start(self) -> None:
        """Open the limits' store (a :class:`~.config.ConfigError` when it cannot be
        reached); one ``kept`` from before a reload is open already."""
        if self.limits is not None and not self._kept:
            await self.limits.start()

    async def aclose(self) -> None:
        """Close the limits' store."""
        if self.limits is not None:
            await self.limits.aclose()

    def identify(self, request: Request, http: Http) -> Client | None:
        """The client presenting a request's key (``None``: the proxy's single key, or
        no key is asked for); 401 when no known key is presented."""
        if not self._table:
            return None
        matched = False
        found: Client | None = None
        for value in presented_keys(request, http):
            digest = _digest(value)
            known, client = self._table.get(digest, (_NOBODY, None))
            if hmac.compare_digest(known, digest) and not matched:
                matched, found = True, client
        if not matched:
            raise Refusal(401, "missing or invalid API key for this proxy")
        return found

    def check_model(self, client: Client | None, model: str) -> None:
        """403 when ``client`` may not ask for ``model``."""
        if client is None or client.models is None:
            return
        if self._models[client.name].fullmatch(model) is None:
            raise Refusal(403, f"the client {client.name!r} may not use the model {model!r}")

    async def admit(self, client: Client | None, model: str) -> None:
        """Let a request of ``client`` for ``model`` through, or refuse it: 403 outside
        its models, 429 (with ``retry-after``) over a limit, 503 when the store failed
        and ``state_failure`` is ``"closed"``."""
        self.check_model(client, model)
        if client is None or self.limits is None or not client.limited:
            return
        limits = self.limits
        rpm, tpm = client.requests_per_minute, client.tokens_per_minute
        answered, over = await self._ask(lambda: limits.admit(client.name, rpm, tpm))
        if not answered:
            if self.config.state_failure == "closed":
                raise Refusal(
                    503, "the proxy cannot count this client's limits now", {"retry-after": "1"}
                )
            return
        if over is not None:
            limit = rpm if over.limit == "requests" else tpm
            raise Refusal(
                429,
                f"the client {client.name!r} is over its limit of {limit} {over.limit} a minute",
                {"retry-after": retry_after(over.seconds)},
            )

    async def charge(self, client: Client | None, exchange: Exchange) -> None:
        """Count the tokens of a request's answer against ``client``'s limit (when the
        backend reported none, nothing is counted). Not cancelled by the request's end."""
        if client is None or self.limits is None or client.tokens_per_minute is None:
            return
        tokens = (exchange.input_tokens or 0) + (exchange.output_tokens or 0)
        if tokens <= 0:
            return
        limits, tpm = self.limits, client.tokens_per_minute
        if not limits.remote:  # nothing to wait for: nothing to shield
            await self._ask(lambda: limits.charge(client.name, tpm, tokens))
            return
        with anyio.CancelScope(shield=True):
            await self._ask(lambda: limits.charge(client.name, tpm, tokens))

    async def _ask(self, call: Callable[[], Awaitable[_T]]) -> tuple[bool, _T | None]:
        """``(True, the store's answer)``, or ``(False, None)`` when it failed (reported
        at most once a minute) or failed less than a second ago."""
        now = time.monotonic()
        if now < self._paused_until:
            return False, None
        try:  # a remote store's own socket timeouts keep this short
            return True, await call()
        except StoreError as exc:
            self._paused_until = time.monotonic() + _STORE_PAUSE
            if now - self._reported >= _REPORT_EVERY:
                self._reported = now
                where = shown_state(self.config.state or "memory")
                log.warning(
                    "the limits' store %s failed (%s); requests are %s until it answers",
                    where,
                    exc or type(exc).__name__,
                    "let through unlimited"
                    if self.config.state_failure == "open"
                    else "refused (503)",
                )
            return False, None


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()
