# laminate proxy: the translating gateway in a container.
#
#   docker build -t laminate-proxy .
#   docker run -p 8082:8082 -v ./proxy.toml:/etc/laminate/proxy.toml:ro \
#       -e PROXY_KEY -e ANTHROPIC_API_KEY laminate-proxy
#
# The configuration is a mounted TOML file (docs/proxy.md); the keys it names come from
# the environment. Inside the container the proxy listens on 0.0.0.0 (the container's own
# interfaces; the port is reachable only where it is published), so the file must set
# api_key_env (or the command add --allow-anyone). See docs/deploy.md.

FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# The extras installed: add a word here to install more ("proxy,fast,redis": clients' limits in Redis).
ARG EXTRAS=proxy,fast

WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install ".[${EXTRAS}]" \
    && rm -rf /src

RUN groupadd --system --gid 10001 laminate \
    && useradd --system --uid 10001 --gid 10001 --create-home --home-dir /home/laminate \
        --shell /usr/sbin/nologin laminate
USER 10001:10001
WORKDIR /home/laminate

EXPOSE 8082
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8082/health', timeout=2)"]

ENTRYPOINT ["laminate", "proxy"]
CMD ["--config", "/etc/laminate/proxy.toml", "--host", "0.0.0.0", "--port", "8082"]
