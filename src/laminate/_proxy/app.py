"""The translating proxy: an ASGI app (Starlette) that serves every API's client endpoints
on one port and answers each request from a configured backend, in the client's API.

One request goes through these steps, each in its own module:

1. The path names the client's API (each API's ``Http.endpoints`` in the registry; no
   API is named here: the routes, below). The client's key is checked in that API's
   own header, in constant time; the body is read up to the size cap (:mod:`.client`);
   the model is the one the path names, else the body's ``model``; streaming is the
   body's ``stream`` flag, else the endpoint's.
   A client's models and limits are checked once the model is known.
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

Nothing is kept between requests but the pooled HTTP client (made at startup), so the
app scales with workers. Each request ends with one JSON log line
(:class:`~.counting.Exchange`), which never holds a prompt, an answer or a key.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Final

from .._core.extras import missing_extra

try:
    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import BaseRoute, Route, request_response
    from starlette.types import ASGIApp, Receive, Scope, Send
except ImportError as exc:  # the `proxy` extra is not installed
    raise missing_extra("the proxy", "proxy", exc) from exc

from .._apis.registry import APIS
from .._apis.spec import Endpoint, Http
from .backend import http_of
from .calls import BackendClient, Call, prepare
from .client import Responder, json_object, read_body, watching
from .config import Backend, Client, ProxyConfig
from .count_tokens import count_tokens
from .counting import Exchange
from .envelope import EnvelopeRoute
from .people import People
from .refusals import Refusal, error_response
from .relay import relay

__all__ = ["app"]

log: Final = logging.getLogger("laminate.proxy")


class _Proxy:
    """The app's state: its config, the client of its backends, where log lines go."""

    def __init__(self, config: ProxyConfig) -> None:
        self.config = config
        self.backends = BackendClient(config)
        self.people = People(config)
        self.write_log = config.log or _to_logger

    async def chat(self, request: Request, send: Send, api: str, endpoint: Endpoint) -> None:
        """Answer one chat request. Once its body is read, everything runs beside a watch
        on the client (:func:`~.client.watching`): a client that leaves cancels the
        backend's request at once, before the answer began or while it streams."""
        exchange = Exchange(api)
        responder = Responder(request, send, exchange, self.write_log)
        client: Client | None = None
        try:
            client = self.people.identify(request, http_of(api))
            exchange.client_name = client.name if client is not None else None
            body = await read_body(request, self.config.max_request_bytes)
            await watching(
                request,
                responder,
                lambda: self._chat(request, responder, endpoint, body, client),
            )
        except Refusal as refusal:  # before the answer began
            exchange.error = refusal.message[:200]
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
            if not responder.started:  # the client left before the answer began, or a bug
                exchange.status = 499 if exchange.disconnected else 500
            responder.log()
            await self.people.charge(client, exchange)

    async def _chat(
        self,
        request: Request,
        responder: Responder,
        endpoint: Endpoint,
        body: bytes,
        client: Client | None,
    ) -> None:
        exchange, api = responder.exchange, responder.exchange.client
        data = json_object(body)
        path_model = request.path_params.get("model")
        model = path_model if isinstance(path_model, str) else data.get("model")
        if not isinstance(model, str) or not model:
            raise Refusal(400, "the request names no model")
        await self.people.admit(client, model)
        stream = data.get("stream")
        exchange.stream = stream if isinstance(stream, bool) else endpoint.streams
        backend, backend_model = self.config.route(model)
        exchange.backend, exchange.backend_model = backend.name, backend_model
        exchange.client_model = model
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
            fallback_model = self.config.model_at(fallback, model)
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
        call, answer = await self.backends.send(call, exchange, again)
        await relay(answer, responder, call, self.config.timeouts.idle, self.config.keepalive)

    async def count_tokens(self, request: Request, api: str) -> Response:
        return await count_tokens(request, api, self.backends, self.people, self.write_log)

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
    config = proxy.config
    chat = EnvelopeRoute(
        _ChatRoute(proxy, api, own),
        envelope,
        http,
        path=own.path,
        streams=endpoint.streams,
        counts=False,
        identify=proxy.people.identify,
        cap=config.max_request_bytes,
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
        identify=proxy.people.identify,
        cap=config.max_request_bytes,
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


def app(config: ProxyConfig) -> Starlette:
    """The proxy for ``config``, an ASGI app (serve it with uvicorn or any ASGI server)."""
    if not isinstance(config, ProxyConfig):
        raise TypeError(f"app() takes a ProxyConfig, not {type(config).__name__}")
    proxy = _Proxy(config)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await proxy.people.start()
        try:
            await proxy.backends.start()
            try:
                yield
            finally:
                await proxy.backends.aclose()
        finally:
            await proxy.people.aclose()

    return Starlette(routes=_routes(proxy), lifespan=lifespan)
