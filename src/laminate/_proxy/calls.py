"""The exchange with a backend: a client's request made ready for it (:class:`Call`,
made by :func:`prepare`) and sent through one seam (:meth:`BackendClient.send`).

Every request the proxy makes goes through :meth:`BackendClient.send`, the chat answers
and the token counts alike, and nothing after it depends on which backend answered. What
decides between backends before the first byte of an answer is made there: a retry after
a wait, the next key of a pool, a fallback to another backend (the request made ready for
it by the caller's ``again``, with ``prepare``). The answer comes back unread; relaying it
is :mod:`.relay`'s.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import hashlib
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import quote

import anyio
import httpx
from starlette.requests import Request

from .._apis.spec import Endpoint
from .._apis.translate import Translation, read_request, write_request
from .._core import jsonlib
from .._core.errors import LaminateError, TranslationError
from .._core.request import Request as LaminateRequest
from .._core.response import Text
from .backend import (
    backend_headers,
    backend_url,
    forwarded_headers,
    http_of,
    key_header,
    strip_query_key,
    warm_signer,
)
from .client import path_of, query_of
from .config import Backend, ConfigError, ProxyConfig
from .counting import Exchange
from .refusals import Refusal, display_name

try:
    from .transport import Http1Pool
except ImportError:  # no httptools: httpx's transport alone
    Http1Pool = None  # type: ignore[assignment,misc]

__all__ = ["BackendClient", "Call", "limited", "prepare", "session_key", "signed"]

# httpx's AsyncClient method that picks the transport for a URL (private: see `send`).
_PICK_TRANSPORT: Final = "_transport_for_url"
# The backend URLs kept parsed (one per endpoint and backend, as a rule; a path with a
# model in it, or a query, adds more).
_URLS_KEPT: Final = 256
# The hex digits of a derived prompt cache key (64 bits: no two sessions meet).
_CACHE_KEY_DIGITS: Final = 16
# The statuses of an answer that did not begin that another try may change (a backend
# that cannot be reached is a 502 Refusal, one that does not answer in time a 504).
_TRIED_AGAIN: Final = frozenset({408, 429, *range(500, 600)})
# A pool's key the backend refuses: set aside until the configuration is made again.
_KEY_REFUSED: Final = frozenset({401, 403})
# How long a pool's key rests after a 429 without a retry-after, and at most (seconds).
_REST: Final = 30.0
_LONGEST_REST: Final = 3600.0


@dataclass(frozen=True, slots=True)
class Call:
    """A request ready for the backend."""

    backend: Backend
    url: str
    body: bytes
    headers: dict[str, str]
    stream: bool
    translation: Translation | None
    array: bool = False
    """The client asked its stream as one JSON array (Gemini without ``alt=sse``)."""
    capped: int | None = None
    """The output limit the request asked for, when the backend's cap lowered it."""
    usage: bool = True
    """The client's translated stream carries the answer's usage (its API's streams
    always do, or its request asked: ``Http.stream_usage``)."""


def prepare(
    request: Request,
    api: str,
    *,
    endpoint: Endpoint,
    body: bytes,
    data: dict[str, Any],
    backend: Backend,
    backend_model: str,
    stream: bool,
) -> Call:
    """The call that asks ``backend`` for the answer to a client's request of ``api``:
    the request as it is (the model renamed where the route renames it) for a backend of
    the same API, else translated (a request the backend's API cannot express is a
    :class:`Refusal`); either way limited to what the backend takes (:func:`limited`)."""
    raw_path = request.scope.get("raw_path") or path_of(request).encode()
    path = raw_path.decode("latin-1")
    path_model = request.path_params.get("model")
    if isinstance(path_model, str) and backend_model != path_model:
        path = endpoint.path.replace("{model}", quote(backend_model, safe=""))
    elif not isinstance(path_model, str) and backend_model != data.get("model"):
        data = {**data, "model": backend_model}
        body = jsonlib.dumps_parsed(data).encode()
    query = query_of(request)
    array = stream and http_of(api).streams_array(query)
    query = strip_query_key(query)
    path_and_query = f"{path}?{query}" if query else path
    if backend.api == api:
        limits, capped = limited(data, backend)
        if limits is not data:
            body = jsonlib.dumps_parsed(limits).encode()
        url = backend_url(backend, path_and_query)
        headers = signed(backend, url, body, forwarded_headers(request.headers.items()))
        return Call(backend, url, body, headers, stream, None, array, capped)
    # A request the backend's API cannot express is this client's request being
    # unsupported on this route: a 400 in the client's shape, which SDKs do not retry
    # (a 5xx such as 501 would be retried, and fail again).
    backend_name = f"the {display_name(backend.api)} backend"
    try:
        read = read_request(data, api, path=path_and_query)
        written = write_request(
            read,
            backend.api,
            max_tokens_field=backend.max_tokens_field,
            cache_key=session_key(read),
        )
    except TranslationError as exc:
        if exc.reason == "unsupported":
            raise Refusal(400, f"{backend_name} cannot take this request: {exc}") from None
        raise Refusal(400, f"the request cannot be translated for {backend_name}: {exc}") from None
    except LaminateError as exc:
        raise Refusal(400, f"the request cannot be sent to {backend_name}: {exc}") from None
    sent, capped = limited(written.body, backend)
    translation = Translation(sent, written.path, written.losses, written.names, written.ids, read)
    content = jsonlib.dumps_parsed(sent).encode()
    url = backend_url(backend, translation.path)
    headers = signed(backend, url, content, {})
    asks = http_of(api).stream_usage
    usage = asks is None or asks(data)
    return Call(
        backend, url, content, headers, stream, translation, array, capped=capped, usage=usage
    )


def limited(data: dict[str, Any], backend: Backend) -> tuple[dict[str, Any], int | None]:
    """A request body of ``backend``'s API as the backend takes it: each output limit
    (its API's ``Http.output_limits``) above the backend's ``max_tokens`` lowered to it,
    the fields of its ``drop`` removed. The same dict when nothing changed (else a copy
    along the changed paths), and the limit asked for when it was lowered."""
    cap, capped = backend.max_tokens, None
    if cap is not None:
        for keys in http_of(backend.api).output_limits:
            asked = _at(data, keys)
            if isinstance(asked, int) and not isinstance(asked, bool) and asked > cap:
                data = _set(data, keys, cap)
                capped = asked if capped is None else max(capped, asked)
    if backend.drop and not data.keys().isdisjoint(backend.drop):
        data = {k: v for k, v in data.items() if k not in backend.drop}
    return data, capped


def _at(data: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    value: Any = data
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _set(data: dict[str, Any], keys: tuple[str, ...], value: Any) -> dict[str, Any]:
    head, *rest = keys
    inner = value if not rest else _set(data[head], tuple(rest), value)
    return {**data, head: inner}


def session_key(request: LaminateRequest) -> str | None:
    """A stable prompt cache key for the client's session: the key the client gave
    (a ``prompt_cache_key`` of its own, kept for an OpenAI API of the other kind), else a
    short hash of its user (Anthropic's ``metadata.user_id``, in which Claude Code names
    its session), else of its first system prompt's text (``None``: none of these)."""
    own = request.extra.get("prompt_cache_key")
    if isinstance(own, str) and own:
        return own
    if request.user:
        seed = "user\0" + request.user
    else:
        first = next((b.text for b in request.system if isinstance(b, Text)), None)
        if not first:
            return None
        seed = "system\0" + first
    return hashlib.sha256(seed.encode()).hexdigest()[:_CACHE_KEY_DIGITS]


def signed(backend: Backend, url: str, body: bytes, headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` with what ``backend`` needs (its key, or a signature): a backend that
    cannot be signed for is a 502."""
    try:
        return backend_headers(backend, url, body, headers)
    except ConfigError as exc:
        raise Refusal(502, str(exc)) from None


class BackendClient:
    """The proxy's client of its backends: one pooled HTTP client per worker, made at
    startup, through which every request to a backend goes (:meth:`send`).

    It also holds, per worker process, the state of the backends' key pools: which key
    is next, which rest after a 429, which were refused. Each worker learns of a
    key's 429 on its own; a refused key is set aside until the configuration is made
    again (a new app, a reload).
    """

    def __init__(self, config: ProxyConfig) -> None:
        self.config = config
        by_name = {backend.name: backend for backend in config.backends}
        # The backends a request to each one goes to, in turn, and each pool's keys.
        self._chains = {name: _chain(backend, by_name) for name, backend in by_name.items()}
        self._pools = {b.name: _Pool(b.keys) for b in config.backends if b.keys}
        self._client: httpx.AsyncClient | None = None
        # What every request to a backend carries from the client, made with it: its
        # default headers (name as sent, name in lower case, value) and its timeouts, as
        # httpcore reads them.
        self._defaults: tuple[tuple[str, str, str], ...] = ()
        self._default_names: frozenset[str] = frozenset()
        self._extensions: dict[str, Any] = {}
        # The backends' URLs, parsed once, with whether each goes straight to its backend
        # and the authorization of its user info.
        self._urls: dict[str, tuple[httpx.URL, bool, str | None]] = {}
        self._pool: Http1Pool | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        # Made at startup (the lifespan); on first use when the app is served without one.
        if self._client is None:
            t = self.config.timeouts
            self._client = httpx.AsyncClient(
                # The read timeout is applied by hand: `read` until the answer begins,
                # `idle` between its pieces.
                timeout=httpx.Timeout(t.connect, read=None, write=t.idle, pool=t.connect),
                # No cap on connections: each stream holds one for as long as it lasts.
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=200),
                follow_redirects=False,
            )
            self._defaults = tuple(
                (raw.decode("ascii"), raw.decode("ascii").lower(), value.decode("latin-1"))
                for raw, value in self._client.headers.raw
            )
            self._default_names = frozenset(lower for _, lower, _ in self._defaults)
            self._extensions = {"timeout": self._client.timeout.as_dict()}
            if Http1Pool is not None:
                self._pool = Http1Pool(connect=t.connect, write=t.idle)
        return self._client

    async def start(self) -> None:
        """Make, once per worker and before the first request, what the first request
        would otherwise wait for: the HTTP client (its TLS context takes tens of ms), the
        SigV4 signer and its AWS credentials, and the lazily imported parts of anyio."""
        _ = self.client
        if self._pool is not None:
            self._pool.warm()
        with anyio.fail_after(self.config.timeouts.connect):
            pass  # the first cancel scope imports anyio's backend
        for backend in self.config.backends:
            if backend.key is None and http_of(backend.api).signing is not None:
                # Finding credentials may ask the instance metadata service: in a thread.
                await anyio.to_thread.run_sync(warm_signer)

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def send(
        self,
        call: Call,
        exchange: Exchange | None = None,
        again: Callable[[Backend], Call] | None = None,
    ) -> tuple[Call, httpx.Response]:
        """The answer to ``call``, its body not read yet, and the call it answers: the one
        given, or another made by ``again`` for a fallback backend.

        Before an answer begins, a failure that another try may change (a backend that
        cannot be reached, a timeout, 408, 429, 5xx) is tried again, up to the backend's
        ``retries``, after a wait (the backend's ``retry-after`` when it gives one, else
        drawn at random up to an exponential bound: :class:`~.config.Retry`); then the
        backend's fallbacks are tried in turn (when ``again`` is given). A pool's key
        answered with 429 rests for the answer's ``retry-after`` (else 30 s), one
        answered with 401 or 403 is set aside, and the next key is tried at once. Every
        other answer is the answer. When every try failed, the last failure is the
        answer (a :class:`Refusal` when it was not the backend's: it could not be
        reached, or every key of a pool rests: a 429 with the soonest ``retry-after``).
        ``exchange`` is told which backend answered and how many retries and fallbacks
        it took.
        """
        if call.backend.keys:
            return await self._tried(call, None, exchange, again)
        try:
            answer = await self._once(call, call.headers)
        except Refusal as refusal:
            return await self._tried(call, refusal, exchange, again)
        if answer.status_code in _TRIED_AGAIN:
            return await self._tried(call, answer, exchange, again)
        return call, answer

    async def _tried(
        self,
        call: Call,
        outcome: httpx.Response | Refusal | None,
        exchange: Exchange | None,
        again: Callable[[Backend], Call] | None,
    ) -> tuple[Call, httpx.Response]:
        """``send`` past a first failure (``outcome``), or for a pool (``None``: no try
        yet). ``last`` is the latest failure, an answer held unread until another
        replaces it or it is the client's."""
        retry = self.config.retry
        last: tuple[Call, httpx.Response | Refusal] | None = None
        try:
            for n, backend in enumerate(self._chains.get(call.backend.name, (call.backend,))):
                if n:
                    if again is None:
                        break
                    try:
                        call = again(backend)
                    except Refusal:  # this fallback cannot take the request: the next
                        continue
                if exchange is not None:
                    exchange.backend = backend.name
                    if n:
                        exchange.fallbacks += 1
                pool = self._pools.get(backend.name)
                sent = tries = 0
                while True:
                    key = None
                    if outcome is None:
                        headers = call.headers
                        if pool is not None:
                            key = pool.pick(time.monotonic())
                            if key is None:
                                if sent == 0 or pool.resting(time.monotonic()):
                                    last = await _replaced(last, call, pool.refusal(backend))
                                break
                            name, value = key_header(backend, pool.keys[key])
                            headers = {**headers, name: value}
                        if sent and exchange is not None:
                            exchange.retries += 1
                        sent += 1
                        try:
                            outcome = await self._once(call, headers)
                        except Refusal as refusal:
                            outcome = refusal
                    else:
                        sent += 1
                    status = outcome.status if isinstance(outcome, Refusal) else outcome.status_code
                    refused_key = pool is not None and status in _KEY_REFUSED
                    if status not in _TRIED_AGAIN and not refused_key:
                        if isinstance(outcome, Refusal):
                            raise outcome
                        await _replaced(last, call, None)
                        last = None
                        return call, outcome
                    after = None if isinstance(outcome, Refusal) else _retry_after(outcome)
                    last = await _replaced(last, call, outcome)
                    outcome = None
                    if pool is not None and key is not None and refused_key:
                        pool.set_aside(key)
                        continue  # the next key, at once
                    if pool is not None and key is not None and status == 429:
                        pool.rest(key, _REST if after is None else after, time.monotonic())
                        continue
                    if tries >= backend.retries or (after is not None and after > retry.max):
                        break
                    bound = min(retry.max, retry.base * 2.0**tries)
                    tries += 1
                    await anyio.sleep(after if after is not None else random.uniform(0, bound))
            if last is None:  # the first backend always leaves its failure: not reached
                raise Refusal(502, "no backend can take this request")
            call, failed = last
            if isinstance(failed, Refusal):
                raise failed
            last = None
            return call, failed
        finally:
            if last is not None:
                await _replaced(last, call, None)

    async def _once(self, call: Call, given: Mapping[str, str]) -> httpx.Response:
        """The backend's answer to ``call`` sent once with the headers ``given``, its
        body not read yet (a backend that cannot be reached, or does not begin its
        answer in time, is a :class:`Refusal`).

        The request is the one ``AsyncClient.build_request`` makes (the client's default
        headers under the call's, its timeouts). On asyncio it goes through the proxy's
        own HTTP/1.1 transport (:meth:`~.transport.Http1Pool.post`: the same bytes, with
        no request object built; one write per request, the answer parsed in C, its
        head awaited with a timer rather than a cancel scope) unless a proxy of the
        environment is named for its URL; else to the transport that
        ``AsyncClient.send`` would pick for its URL (the pool, or that proxy). What
        ``send`` adds around that the proxy has no use for: no auth,
        redirect or hook is configured, and a backend's cookies are not kept from one
        request to the next.
        """
        client = self.client
        url, direct, auth = self._url(call.url)
        # The client's defaults first, each replaced by the call's header of that name
        # (whose names are in lower case), then the call's other headers.
        headers = [
            (lower, given[lower]) if lower in given else (name, value)
            for name, lower, value in self._defaults
        ]
        defaults = self._default_names
        headers += [(name, value) for name, value in given.items() if name not in defaults]
        if auth is not None:  # as httpx does: the URL's user info is the auth
            headers = [(n, v) for n, v in headers if n.lower() != "authorization"]
            headers.append(("Authorization", auth))
        try:
            if direct and self._pool is not None and _on_asyncio():
                return await self._pool.post(url, headers, call.body, self.config.timeouts.read)
            request = httpx.Request(
                "POST", url, headers=headers, content=call.body, extensions=self._extensions
            )
            with anyio.fail_after(self.config.timeouts.read):
                # httpx's own choice of transport (a private method): where a later httpx
                # has it no more, the client's send does the same, with its layers.
                pick = getattr(client, _PICK_TRANSPORT, None)
                if pick is None:
                    return await client.send(request, stream=True)
                answer: httpx.Response = await pick(url).handle_async_request(request)
            answer.request = request
            return answer
        except (TimeoutError, httpx.TimeoutException):
            raise Refusal(
                504, f"the {display_name(call.backend.api)} backend did not answer in time"
            ) from None
        except httpx.HTTPError as exc:
            raise Refusal(502, f"the backend cannot be reached: {type(exc).__name__}") from None

    def _url(self, text: str) -> tuple[httpx.URL, bool, str | None]:
        """The URL parsed, whether it goes straight to the backend (no proxy of the
        environment named for it, and an httpx that says so), and the ``Authorization``
        its user info makes (``None``: it has none)."""
        kept = self._urls.get(text)
        if kept is None:
            if len(self._urls) >= _URLS_KEPT:
                self._urls.clear()
            url = httpx.URL(text)
            client = self.client
            pick = getattr(client, _PICK_TRANSPORT, None)
            direct = pick is not None and pick(url) is getattr(client, "_transport", None)
            auth = None
            if url.username or url.password:
                auth = _basic_auth(url.username, url.password)
            kept = self._urls[text] = (url, direct, auth)
        return kept


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # another event loop (trio)
        return False
    return True


class _Pool:
    """A backend's keys, used in turn (per worker): a key that rests (after a 429) or
    was refused (a 401 or 403) is skipped."""

    __slots__ = ("_aside", "_next", "_until", "keys")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self._next = 0
        self._until = [0.0] * len(keys)  # when each key may be used again (monotonic)
        self._aside = [False] * len(keys)

    def pick(self, now: float) -> int | None:
        """The next key that may be used (its index), or ``None``."""
        count = len(self.keys)
        for step in range(count):
            index = (self._next + step) % count
            if not self._aside[index] and self._until[index] <= now:
                self._next = (index + 1) % count
                return index
        return None

    def rest(self, index: int, seconds: float, now: float) -> None:
        self._until[index] = max(self._until[index], now + min(seconds, _LONGEST_REST))

    def set_aside(self, index: int) -> None:
        self._aside[index] = True

    def resting(self, now: float) -> list[float]:
        """How long each resting key (not set aside) still rests."""
        return [
            until - now
            for until, aside in zip(self._until, self._aside, strict=True)
            if not aside and until > now
        ]

    def refusal(self, backend: Backend) -> Refusal:
        """What a request gets when no key may be used: a 429 until the soonest key
        rests no more, or a 502 when every key was refused."""
        resting = self.resting(time.monotonic())
        if resting:
            seconds = max(1, math.ceil(min(resting)))
            return Refusal(
                429,
                f"every key of the backend {backend.name!r} is rate limited",
                {"retry-after": str(seconds)},
            )
        return Refusal(502, f"the backend {backend.name!r} refused every key of its pool")


def _chain(first: Backend, by_name: Mapping[str, Backend]) -> tuple[Backend, ...]:
    """``first``, then its fallbacks in turn, each followed by its own (once each)."""
    order: dict[str, Backend] = {}

    def visit(backend: Backend) -> None:
        if backend.name not in order:
            order[backend.name] = backend
            for name in backend.fallbacks:
                visit(by_name[name])

    visit(first)
    return tuple(order.values())


async def _replaced(
    last: tuple[Call, httpx.Response | Refusal] | None,
    call: Call,
    outcome: httpx.Response | Refusal | None,
) -> tuple[Call, httpx.Response | Refusal] | None:
    """``(call, outcome)`` in place of ``last``, whose answer is closed."""
    if last is not None and isinstance(last[1], httpx.Response):
        with anyio.CancelScope(shield=True):
            await last[1].aclose()
    return None if outcome is None else (call, outcome)


def _retry_after(answer: httpx.Response) -> float | None:
    """The seconds an answer asks to wait (``retry-after-ms``, or ``retry-after`` in
    seconds or as an HTTP date), or ``None``."""
    headers = answer.headers
    value = headers.get("retry-after-ms")
    scale = 1e-3
    if value is None:
        value = headers.get("retry-after")
        scale = 1.0
        if value is None:
            return None
    try:
        seconds = float(value) * scale
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _basic_auth(username: str, password: str) -> str:
    token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
    return f"Basic {token}"
