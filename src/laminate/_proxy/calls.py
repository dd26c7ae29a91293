"""The exchange with a backend: a client's request made ready for it (:class:`Call`,
made by :func:`prepare`) and sent through one seam (:meth:`BackendClient.send`).

Every request the proxy makes goes through :meth:`BackendClient.send`, the chat answers
and the token counts alike, and nothing after it depends on which backend answered: what
decides between backends before the first byte of an answer (a retry, a fallback to
another backend, the next key of a pool) belongs beside it, around ``prepare`` and
``send``. The answer comes back unread; relaying it is :mod:`.relay`'s.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote

import anyio
import httpx
from starlette.requests import Request

from .._apis.spec import Endpoint
from .._apis.translate import Translation, translate_request
from .._core.errors import LaminateError, TranslationError
from .backend import (
    backend_headers,
    backend_url,
    forwarded_headers,
    http_of,
    strip_query_key,
    warm_signer,
)
from .config import Backend, ConfigError, ProxyConfig
from .refusals import Refusal, display_name

try:
    from .transport import Http1Pool
except ImportError:  # no httptools: httpx's transport alone
    Http1Pool = None  # type: ignore[assignment,misc]

__all__ = ["BackendClient", "Call", "prepare", "signed"]

# httpx's AsyncClient method that picks the transport for a URL (private: see `send`).
_PICK_TRANSPORT: Final = "_transport_for_url"
# The backend URLs kept parsed (one per endpoint and backend, as a rule; a path with a
# model in it, or a query, adds more).
_URLS_KEPT: Final = 256


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
    :class:`Refusal`)."""
    raw_path = request.scope.get("raw_path") or request.url.path.encode()
    path = raw_path.decode("latin-1")
    path_model = request.path_params.get("model")
    if isinstance(path_model, str) and backend_model != path_model:
        path = endpoint.path.replace("{model}", quote(backend_model, safe=""))
    elif not isinstance(path_model, str) and backend_model != data.get("model"):
        data = {**data, "model": backend_model}
        body = json.dumps(data, ensure_ascii=False).encode()
    query = request.url.query
    array = stream and http_of(api).streams_array(query)
    query = strip_query_key(query)
    path_and_query = f"{path}?{query}" if query else path
    if backend.api == api:
        url = backend_url(backend, path_and_query)
        headers = signed(backend, url, body, forwarded_headers(request.headers.items()))
        return Call(backend, url, body, headers, stream, None, array)
    # A request the backend's API cannot express is this client's request being
    # unsupported on this route: a 400 in the client's shape, which SDKs do not retry
    # (a 5xx such as 501 would be retried, and fail again).
    backend_name = f"the {display_name(backend.api)} backend"
    try:
        translation = translate_request(
            data,
            api,
            backend.api,
            path=path_and_query,
            max_tokens_field=backend.max_tokens_field,
        )
    except TranslationError as exc:
        if exc.reason == "unsupported":
            raise Refusal(400, f"{backend_name} cannot take this request: {exc}") from None
        raise Refusal(400, f"the request cannot be translated for {backend_name}: {exc}") from None
    except LaminateError as exc:
        raise Refusal(400, f"the request cannot be sent to {backend_name}: {exc}") from None
    content = json.dumps(translation.body, ensure_ascii=False).encode()
    url = backend_url(backend, translation.path)
    headers = signed(backend, url, content, {})
    return Call(backend, url, content, headers, stream, translation, array)


def signed(backend: Backend, url: str, body: bytes, headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` with what ``backend`` needs (its key, or a signature): a backend that
    cannot be signed for is a 502."""
    try:
        return backend_headers(backend, url, body, headers)
    except ConfigError as exc:
        raise Refusal(502, str(exc)) from None


class BackendClient:
    """The proxy's client of its backends: one pooled HTTP client per worker, made at
    startup, through which every request to a backend goes (:meth:`send`)."""

    def __init__(self, config: ProxyConfig) -> None:
        self.config = config
        self._client: httpx.AsyncClient | None = None
        # What every request to a backend carries from the client, made with it: its
        # default headers (name as sent, name in lower case, value) and its timeouts, as
        # httpcore reads them.
        self._defaults: tuple[tuple[str, str, str], ...] = ()
        self._default_names: frozenset[str] = frozenset()
        self._extensions: dict[str, Any] = {}
        # The backends' URLs, parsed once, with whether each goes straight to its backend.
        self._urls: dict[str, tuple[httpx.URL, bool]] = {}
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

    async def send(self, call: Call) -> httpx.Response:
        """The backend's answer to ``call``, its body not read yet (a backend that cannot
        be reached, or does not begin its answer in time, is a :class:`Refusal`).

        The request is the one ``AsyncClient.build_request`` makes (the client's default
        headers under the call's, its timeouts). On asyncio it goes through the proxy's
        own HTTP/1.1 transport (:class:`~.transport.Http1Pool`: one write per request,
        the answer parsed in C) unless a proxy of the environment is named for its URL;
        else to the transport that ``AsyncClient.send`` would pick for its URL (the pool,
        or that proxy). What ``send`` adds around that the proxy has no use for: no auth,
        redirect or hook is configured, and a backend's cookies are not kept from one
        request to the next.
        """
        client = self.client
        url, direct = self._url(call.url)
        # The client's defaults first, each replaced by the call's header of that name
        # (whose names are in lower case), then the call's other headers.
        given = call.headers
        headers = [
            (lower, given[lower]) if lower in given else (name, value)
            for name, lower, value in self._defaults
        ]
        defaults = self._default_names
        headers += [(name, value) for name, value in given.items() if name not in defaults]
        if url.username or url.password:  # as httpx does: the URL's user info is the auth
            headers = [(n, v) for n, v in headers if n.lower() != "authorization"]
            headers.append(("Authorization", _basic_auth(url.username, url.password)))
        request = httpx.Request(
            "POST", url, headers=headers, content=call.body, extensions=self._extensions
        )
        try:
            with anyio.fail_after(self.config.timeouts.read):
                if direct and self._pool is not None and _on_asyncio():
                    return await self._pool.send(request)
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

    def _url(self, text: str) -> tuple[httpx.URL, bool]:
        """The URL parsed, and whether it goes straight to the backend (no proxy of the
        environment named for it, and an httpx that says so)."""
        kept = self._urls.get(text)
        if kept is None:
            if len(self._urls) >= _URLS_KEPT:
                self._urls.clear()
            url = httpx.URL(text)
            client = self.client
            pick = getattr(client, _PICK_TRANSPORT, None)
            direct = pick is not None and pick(url) is getattr(client, "_transport", None)
            kept = self._urls[text] = (url, direct)
        return kept


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # another event loop (trio)
        return False
    return True


def _basic_auth(username: str, password: str) -> str:
    token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
    return f"Basic {token}"
