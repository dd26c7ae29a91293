"""The translating proxy: an ASGI app (Starlette) that serves every API's client endpoints
on one port and answers each request from a configured backend, in the client's API.

One request goes through these steps, each in its own module:

1. The path names the client's API (each API's ``Http.endpoints`` in the registry; no
   API is named here: the routes, below). The client's key is checked in that API's
   own header, in constant time; the body is read up to the size cap (:mod:`.client`);
   the model is the one the path names, else the body's ``model``; streaming is the
   body's ``stream`` flag, else the endpoint's.
   A client's models and limits are checked once the model is known (:mod:`.people`).
2. The model picks the backend (``ProxyConfig.route``), and the request is made ready
   for it and sent (:mod:`.calls`, the one seam to the backends): same API on both
   sides, the request goes on byte for byte (only the model is rewritten when the
   route renames it); different APIs, it is translated (§10). A failure before the
   answer begins is tried again there, then sent to the backend's fallbacks, each time
   made ready for that backend.
3. The answer is relayed as it arrives (:mod:`.relay`): byte for byte, read alongside
   for the log, or normalized, given back the client's tool names and ids, and written
   in the client's API (:mod:`.writing`).
4. Before the first byte of the answer, every failure is an HTTP status with the client
   API's error body (:mod:`.refusals`): the backend's own status (and ``retry-after``),
   502 when the backend cannot be reached or sends what cannot be read, 504 on a
   timeout, 413 for an oversized request, 401 without a known key, 403 for a model the
   client may not use, 429 over its limits. After it, the
   failure is written as the client API's in-stream error. A client that leaves closes
   the backend's request.

A chat endpoint is routed to as an ASGI app of its own (:class:`_ChatRoute`) that writes
its answer itself (:class:`~.client.Responder`): once the request's body is read, the
backend's request, the answer as it arrives and a watch on the client run side by side,
and each piece goes to the client as soon as it is read.

Nothing is kept between requests but the pooled HTTP client and the clients' limits
(made at startup, one per configuration: a reload makes new ones, keeping the limits'
store when it names the same ``state``, and closes the old ones when their last request
ends) and the metrics, so the app scales with workers. Each request ends with one JSON
log line (:class:`~.counting.Exchange`), which never holds a prompt, an answer or a key,
and is counted in the metrics (:mod:`.metrics`). ``/health``, ``/ready`` (503 once the
server drains), ``/metrics`` and ``POST /admin/reload`` are the operator's.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import signal
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from types import FrameType
from typing import Any, Final

import anyio

from .._core.extras import missing_extra

try:
    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse, PlainTextResponse, Response
    from starlette.routing import BaseRoute, Route, request_response
    from starlette.types import ASGIApp, Receive, Scope, Send
except ImportError as exc:  # the `proxy` extra is not installed
    raise missing_extra("the proxy", "proxy", exc) from exc

from .._apis.registry import APIS
from .._apis.spec import Endpoint, Http
from .backend import http_of
from .calls import BackendClient, Call, prepare
from .client import Responder, json_object, path_of, read_body, watching
from .config import Backend, Client, ConfigError, ConfigFile, ProxyConfig
from .count_tokens import count_tokens
from .counting import ERROR_TEXT_CAP, Exchange
from .envelope import EnvelopeRoute
from .metrics import CONTENT_TYPE, Metrics
from .people import People
from .refusals import Refusal, error_response
from .relay import relay

__all__ = ["app"]

log: Final = logging.getLogger("laminate.proxy")

_STOPPING_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)


class _Generation:
    """One configuration, the client of its backends and its clients (:class:`People`),
    held by every request that began under it: a reload makes a new one, and the old
    one's are closed when its last request ends. The limits' store of the generation
    ``before`` is kept when the new configuration names the same ``state`` (the counts
    in the process go on across a reload)."""

    __slots__ = ("backends", "config", "people", "retired", "users")

    def __init__(self, config: ProxyConfig, before: _Generation | None = None) -> None:
        self.config = config
        self.backends = BackendClient(config)
        kept = None
        if before is not None and before.config.state == config.state:
            kept = before.people.limits
        self.people: People = People(config, kept)
        self.users = 0
        self.retired = False

    async def start(self) -> None:
        await self.people.start()
        try:
            await self.backends.start()
        except BaseException:
            await self.people.aclose()
            raise

    async def aclose(self, keep: People | None = None) -> None:
        """Close its backends' client and its limits' store (unless ``keep``, a later
        generation's clients, holds the same store)."""
        with anyio.CancelScope(shield=True):
            await self.backends.aclose()
            if keep is None or keep.limits is not self.people.limits:
                await self.people.aclose()


class _Proxy:
    """The app's state: its configuration (swapped whole by a reload), where log lines
    go, the metrics, and whether it is draining."""

    def __init__(
        self,
        config: ProxyConfig,
        source: ConfigFile | None,
        metrics_directory: str | None,
        reload_via: int | None,
    ) -> None:
        self.current = _Generation(config)
        self.source = source
        self.reload_via = reload_via
        self.write_log = config.log or _to_logger
        self.metrics = Metrics(metrics_directory)
        self.draining = False

    @property
    def config(self) -> ProxyConfig:
        return self.current.config

    def identify(self, request: Request, http: Http) -> Client | None:
        """The client presenting a request's key, by the current configuration."""
        return self.current.people.identify(request, http)

    def request_cap(self) -> int:
        """The largest request body, by the current configuration."""
        return self.current.config.max_request_bytes

    def finish(self, exchange: Exchange) -> None:
        """One request ended: its log line, its metrics."""
        now = time.perf_counter()
        self.write_log(exchange.line(now))
        self.metrics.record(exchange, now)

    async def _release(self, generation: _Generation) -> None:
        generation.users -= 1
        if generation.retired and generation.users == 0:
            await generation.aclose(self.current.people)

    async def reload(self) -> ProxyConfig:
        """Read the configuration again: requests from now on use it, running ones end
        on theirs. A file that is not a valid configuration is a :class:`ConfigError`,
        and the configuration stays as it was."""
        if self.source is None:
            raise ConfigError("this proxy was not started from a file (--config): nothing to read")
        config = self.source.load(os.environ)
        generation = _Generation(config, self.current)
        await generation.start()
        old, self.current = self.current, generation
        old.retired = True
        if old.users == 0:
            await old.aclose(generation.people)
        return config

    async def reload_logged(self) -> None:
        """A reload asked by a signal: its outcome goes to the log."""
        try:
            await self.reload()
        except ConfigError as exc:
            log.error("reload refused, the configuration is kept: %s", exc)
        else:
            log.warning("reloaded the configuration from %s", self.source and self.source.path)

    def drain(self) -> None:
        """The server was told to stop: ``/ready`` says so from now on."""
        if not self.draining:
            self.draining = True
            log.warning(
                "draining: %d streams still open, stopping when they end",
                self.metrics.open_streams,
            )

    async def chat(self, request: Request, send: Send, api: str, endpoint: Endpoint) -> None:
        """Answer one chat request. Once its body is read, everything runs beside a watch
        on the client (:func:`~.client.watching`): a client that leaves cancels the
        backend's request at once, before the answer began or while it streams."""
        exchange = Exchange(api, request.scope["method"], path_of(request))
        responder = Responder(request, send, exchange, self.finish)
        generation = self.current
        generation.users += 1
        client: Client | None = None
        try:
            config = generation.config
            client = generation.people.identify(request, http_of(api))
            exchange.client_name = client.name if client is not None else None
            body = await read_body(request, config.max_request_bytes)
            await watching(
                request,
                responder,
                lambda: self._chat(request, responder, endpoint, body, generation, client=client),
            )
        except Refusal as refusal:  # before the answer began
            exchange.error = refusal.message[:ERROR_TEXT_CAP]
            response = error_response(
                api, refusal.status, refusal.message, refusal.headers, overflow=refusal.overflow
            )
            await responder.respond(response)
        except ClientDisconnect:  # the client left while sending its request
            exchange.disconnected = True
        except Exception as exc:  # a bug: the server answers 500
            exchange.error = type(exc).__name__
            raise
        finally:
            if exchange.stream:
                self.metrics.open_streams -= 1
            if not responder.started:  # the client left before the answer began, or a bug
                exchange.status = 499 if exchange.disconnected else 500
            responder.log()
            try:
                await generation.people.charge(client, exchange)
            finally:
                await self._release(generation)

    async def _chat(
        self,
        request: Request,
        responder: Responder,
        endpoint: Endpoint,
        body: bytes,
        generation: _Generation,
        *,
        client: Client | None,
    ) -> None:
        exchange, api = responder.exchange, responder.exchange.client
        config = generation.config
        data = json_object(body)
        path_model = request.path_params.get("model")
        model = path_model if isinstance(path_model, str) else data.get("model")
        if not isinstance(model, str) or not model:
            raise Refusal(400, "the request names no model")
        exchange.client_model = model
        await generation.people.admit(client, model)
        stream = data.get("stream")
        exchange.stream = stream if isinstance(stream, bool) else endpoint.streams
        self.metrics.open_streams += exchange.stream
        backend, backend_model = config.route(model)
        exchange.backend, exchange.backend_model = backend.name, backend_model
        call = prepare(
            request,
            api,
            endpoint=endpoint,
            body=body,
            data=data,
            backend=backend,
            backend_model=backend_model,
            stream=exchange.stream,
        )

        def again(fallback: Backend) -> Call:  # the request, for a fallback backend
            fallback_model = config.model_at(fallback, model)
            made = prepare(
                request,
                api,
                endpoint=endpoint,
                body=body,
                data=data,
                backend=fallback,
                backend_model=fallback_model,
                stream=exchange.stream,
            )
            exchange.backend_model = fallback_model
            exchange.max_tokens_capped = made.capped
            return made

        exchange.max_tokens_capped = call.capped
        call, answer = await generation.backends.send(call, exchange, again)
        await relay(answer, responder, call, config.timeouts.idle, config.keepalive)

    async def count_tokens(self, request: Request, api: str) -> Response:
        generation = self.current
        generation.users += 1
        try:
            return await count_tokens(
                request, api, generation.backends, generation.people, self.finish
            )
        finally:
            await self._release(generation)

    async def models(self, request: Request) -> Response:
        names = self.config.models()
        data = [
            {
                "id": name,
                "object": "model",
                "type": "model",
                "created": 0,
                "created_at": "1970-01-01T00:00:00Z",
                "owned_by": "laminate",
                "display_name": name,
            }
            for name in names
        ]
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "has_more": False,
                "first_id": names[0] if names else None,
                "last_id": names[-1] if names else None,
            }
        )

    # -- seen from outside -----------------------------------------------------------------

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def ready(self, request: Request) -> Response:
        if self.draining:
            return JSONResponse({"status": "draining"}, 503)
        return JSONResponse({"status": "ready"})

    async def metrics_text(self, request: Request) -> Response:
        refused = _admin_refusal(request, self.config.admin_key, required=False)
        if refused is not None:
            return refused
        return PlainTextResponse(self.metrics.exposition(), media_type=CONTENT_TYPE)

    async def admin_reload(self, request: Request) -> Response:
        refused = _admin_refusal(request, self.config.admin_key, required=True)
        if refused is not None:
            return refused
        if self.source is None:
            return _error(409, "this proxy was not started from a file (--config): nothing to read")
        try:
            if self.reload_via is None:
                await self.reload()
            else:  # checked here, then read by every worker
                self.source.load(os.environ)
                os.kill(self.reload_via, signal.SIGHUP)
        except ConfigError as exc:
            log.error("reload refused, the configuration is kept: %s", exc)
            return _error(400, f"the configuration is kept: {exc}")
        if self.reload_via is None:
            log.warning("reloaded the configuration from %s", self.source.path)
        return JSONResponse({"status": "reloaded"})

    # -- signals ---------------------------------------------------------------------------

    def watch_signals(self) -> Callable[[], None]:
        """In the main thread (a server's process): SIGHUP reloads, and SIGTERM or SIGINT
        mark the app draining before the server's own handler stops accepting. Returns
        what puts the handlers back."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # another event loop (trio): no server of laminate's
            return lambda: None
        before: dict[int, Any] = {}

        def stopping(number: int, frame: FrameType | None) -> None:
            self.drain()
            handler = before[number]
            if callable(handler):
                handler(number, frame)

        def hangup(number: int, frame: FrameType | None) -> None:
            loop.call_soon_threadsafe(lambda: loop.create_task(self.reload_logged()))

        for number in _STOPPING_SIGNALS:
            before[number] = signal.signal(number, stopping)
        before[signal.SIGHUP] = signal.signal(signal.SIGHUP, hangup)

        def restore() -> None:
            for number, handler in before.items():
                signal.signal(number, handler)

        return restore


def _error(status: int, message: str) -> Response:
    return JSONResponse({"error": {"message": message}}, status)


def _admin_refusal(request: Request, expected: str | None, *, required: bool) -> Response | None:
    """The refusal of an admin request (``None``: it may go on): 403 when no admin key is
    set and one is ``required``, 401 when the key is not presented as a bearer token or
    ``x-api-key`` (compared in constant time)."""
    if expected is None:
        if required:
            return _error(403, "set admin_key_env in the configuration to reload over HTTP")
        return None
    presented = []
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer":
        presented.append(token)
    if "x-api-key" in request.headers:
        presented.append(request.headers["x-api-key"])
    want = expected.encode()
    matched = False
    for value in presented:
        matched |= hmac.compare_digest(value.encode(), want)
    if not matched:
        return _error(401, "missing or invalid admin key")
    return None


def _to_logger(line: str) -> None:
    log.info(line)


# -- routes --------------------------------------------------------------------------------


def _routes(proxy: _Proxy) -> list[BaseRoute]:
    exact: list[BaseRoute] = []
    counting: list[Route] = []  # a cloud's, before the paths a model could take
    patterned: list[BaseRoute] = []
    for name, record in APIS.items():
        if record.http is None:
            continue
        if record.http.count_tokens is not None:
            exact.append(Route(record.http.count_tokens, _counter(proxy, name), methods=["POST"]))
        for endpoint in record.http.endpoints:
            handler: ASGIApp = _ChatRoute(proxy, name, endpoint)
            if endpoint.envelope is not None:
                handler, count = _enveloped(proxy, name, record.http, endpoint)
                if count is not None and all(count.path != r.path for r in counting):
                    counting.append(count)
            if "{model}" in endpoint.path:
                path = endpoint.path.replace("{model}", "{model:path}")
                patterned.append(Route(path, handler, methods=["POST"]))
            else:
                exact.append(Route(endpoint.path, handler, methods=["POST"]))
    exact.append(Route("/v1/models", proxy.models, methods=["GET"]))
    exact.append(Route("/health", proxy.health, methods=["GET"]))
    exact.append(Route("/ready", proxy.ready, methods=["GET"]))
    exact.append(Route("/metrics", proxy.metrics_text, methods=["GET"]))
    exact.append(Route("/admin/reload", proxy.admin_reload, methods=["POST"]))
    return [*exact, *counting, *patterned]


def _enveloped(
    proxy: _Proxy, api: str, http: Http, endpoint: Endpoint
) -> tuple[ASGIApp, Route | None]:
    """A cloud's endpoint of ``api``, served by the app of the API's own endpoint; and
    the cloud's counting endpoint, when it has one and the API counts."""
    envelope = endpoint.envelope
    if envelope is None:
        raise ValueError(f"{endpoint.path} is the API's own endpoint")
    own = next(e for e in http.endpoints if e.path == envelope.path and e.envelope is None)
    chat = EnvelopeRoute(
        _ChatRoute(proxy, api, own),
        envelope,
        http,
        path=own.path,
        streams=endpoint.streams,
        counts=False,
        identify=proxy.identify,
        cap=proxy.request_cap,
    )
    if envelope.count_tokens is None or http.count_tokens is None:
        return chat, None
    count = EnvelopeRoute(
        request_response(_counter(proxy, api)),
        envelope,
        http,
        path=http.count_tokens,
        streams=False,
        counts=True,
        identify=proxy.identify,
        cap=proxy.request_cap,
    )
    return chat, Route(envelope.count_tokens, count, methods=["POST"])


class _ChatRoute:
    """The ASGI app of one chat endpoint: it writes its answer itself (streamed as it
    arrives), so it is routed to as an app rather than as a request-to-response
    function."""

    __slots__ = ("_api", "_endpoint", "_proxy")

    def __init__(self, proxy: _Proxy, api: str, endpoint: Endpoint) -> None:
        self._proxy = proxy
        self._api = api
        self._endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._proxy.chat(Request(scope, receive), send, self._api, self._endpoint)


def _counter(proxy: _Proxy, api: str) -> Callable[[Request], Awaitable[Response]]:
    async def count(request: Request) -> Response:
        return await proxy.count_tokens(request, api)

    return count


def app(
    config: ProxyConfig,
    *,
    source: ConfigFile | None = None,
    metrics_directory: str | None = None,
    reload_via: int | None = None,
) -> Starlette:
    """The proxy for ``config``, an ASGI app (serve it with uvicorn or any ASGI server).

    ``source``: the file a reload reads (``POST /admin/reload``, or SIGHUP when the app
    runs in a server's main thread); ``None``: no reload. ``metrics_directory``: where
    the workers of one server share their counts for ``GET /metrics`` (``None``: this
    process serves alone). ``reload_via``: the process that ``POST /admin/reload`` sends
    SIGHUP to, once the file is found valid (a supervisor that hands it on to every
    worker); ``None``: the app reloads itself."""
    if not isinstance(config, ProxyConfig):
        raise TypeError(f"app() takes a ProxyConfig, not {type(config).__name__}")
    if source is not None and not isinstance(source, ConfigFile):
        raise TypeError(f"app() takes a ConfigFile source, not {type(source).__name__}")
    proxy = _Proxy(config, source, metrics_directory, reload_via)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await proxy.current.start()
        restore = proxy.watch_signals()
        proxy.metrics.start()
        try:
            yield
        finally:
            restore()
            await proxy.metrics.stop()
            await proxy.current.aclose()

    return _App(routes=_routes(proxy), lifespan=lifespan)


class _App(Starlette):
    """Starlette's app, with the POST endpoints of a fixed path whose handler is an ASGI
    app of its own (every chat and counting endpoint but those that name a model in
    their path) called straight from a table of their paths: the route Starlette would
    pick (the first whose path and method match), without trying each route's pattern
    in turn or the middleware around them, whose only work for such a handler is a 500
    for an exception it lets out, which the server sends just the same."""

    def __init__(self, *, routes: list[BaseRoute], lifespan: Any) -> None:
        super().__init__(routes=routes, lifespan=lifespan)
        first: dict[str, Route] = {}
        for route in routes:
            if (
                isinstance(route, Route)
                and route.path_format == route.path
                and route.methods is not None
                and "POST" in route.methods
            ):
                first.setdefault(route.path, route)
        self._posts = {
            path: route.app for path, route in first.items() if route.app is route.endpoint
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and not scope.get("root_path"):
            handler = self._posts.get(scope["path"])
            if handler is not None:
                scope["app"] = self
                await handler(scope, receive, send)
                return
        await super().__call__(scope, receive, send)
