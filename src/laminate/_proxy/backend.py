"""Calling a backend: its URL, its headers (its key in its API's own header, or a SigV4
signature), and the client headers that may travel on with a request.

A client's key never reaches a backend: every header that can hold a key (any API's key
headers, AWS's signature headers) is dropped from what is forwarded.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit

from .._apis.registry import APIS
from .._apis.spec import Http
from .config import Backend, ConfigError

__all__ = [
    "backend_headers",
    "backend_url",
    "forwarded_headers",
    "http_of",
    "key_header",
    "strip_query_key",
    "warm_signer",
]

# Hop-by-hop headers (RFC 9110 7.6.1) and what httpx sets itself.
_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
        "cookie",
    }
)
_KEY_HEADERS: Final = frozenset(
    name for record in APIS.values() if record.http for name in record.http.key_headers
) | {"api-key"}
_KEY_QUERIES: Final = frozenset(
    record.http.key_query for record in APIS.values() if record.http and record.http.key_query
)
log: Final = logging.getLogger("laminate.proxy")
_REGION: Final = re.compile(r"\.([a-z]{2}(?:-[a-z]+)+-\d)\.amazonaws\.com$")


def http_of(api: str) -> Http:
    """How ``api`` is reached over HTTP (the proxy serves and calls only APIs with one:
    a route exists only for them, and a :class:`Backend` checks it when built)."""
    record = APIS[api]
    if record.http is None:
        raise ConfigError(f"the proxy does not serve or call {api!r}")
    return record.http


def backend_url(backend: Backend, path: str) -> str:
    """The backend's URL for an endpoint ``path`` (with its query) of its API."""
    prefix = http_of(backend.api).base_path
    if prefix and (path == prefix or path.startswith(prefix + "/")):
        path = path[len(prefix) :]
    return backend.base_url.rstrip("/") + path


def strip_query_key(query: str) -> str:
    """A query string without the parameters that carry a key."""
    if not query:
        return query
    kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in _KEY_QUERIES]
    return urlencode(kept)


def forwarded_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The client's headers that travel on to a backend of the same API: not the
    hop-by-hop ones, and none that can hold a key or a signature."""
    return {
        name: value
        for name, value in headers
        if name not in _HOP and name not in _KEY_HEADERS and not name.startswith("x-amz-")
    }


def backend_headers(
    backend: Backend, url: str, body: bytes, headers: Mapping[str, str]
) -> dict[str, str]:
    """``headers`` plus what the backend's API needs: its fixed headers and the key (or,
    for a signed API without a key, a SigV4 signature over the request)."""
    http = http_of(backend.api)
    out = dict(headers)
    out.setdefault("content-type", "application/json")
    out["accept-encoding"] = "identity"
    for name, value in http.headers:
        out.setdefault(name, value)
    if backend.key is not None:
        name, value = key_header(backend, backend.key)
        out[name] = value
    elif http.signing is not None and not backend.keys:  # a pool's key is set per request
        out.update(_sigv4(http.signing, url, body, out))
    return out


def key_header(backend: Backend, key: str) -> tuple[str, str]:
    """The header that carries ``key`` to ``backend`` (its API's own), and its value."""
    name = http_of(backend.api).key_headers[0]
    return name, f"Bearer {key}" if name == "authorization" else key


def _sigv4(service: str, url: str, body: bytes, headers: Mapping[str, str]) -> dict[str, str]:
    try:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
    except ImportError:
        raise ConfigError(
            f"signing requests for {service} needs botocore (pip install botocore), "
            "or give the backend a key (--backend-key-env)"
        ) from None
    session = _aws_session()
    credentials = session.get_credentials()
    if credentials is None:
        raise ConfigError(
            f"no AWS credentials to sign requests for {service}: set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (or a profile), or give the backend a key"
        )
    match = _REGION.search(urlsplit(url).hostname or "")
    region = (
        match.group(1)
        if match
        else os.environ.get("AWS_REGION") or session.get_config_variable("region")
    )
    if not region:
        raise ConfigError(f"no AWS region to sign requests for {service}: set AWS_REGION")
    signed: Any = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
    SigV4Auth(credentials.get_frozen_credentials(), service, region).add_auth(signed)
    return {k.lower(): v for k, v in signed.headers.items()}


def warm_signer() -> None:
    """Import botocore and find the AWS credentials now, so the first signed request
    does not wait for them (a missing botocore or credentials is said by that request)."""
    try:
        _aws_session().get_credentials()
    except Exception:  # said again, clearly, when a request is signed
        log.debug("laminate proxy: the SigV4 signer could not be prepared", exc_info=True)


@functools.cache
def _aws_session() -> Any:
    # One per process: botocore finds and refreshes the credentials of the usual AWS
    # environment (variables, profile, instance role) itself.
    from botocore.session import Session

    return Session()
