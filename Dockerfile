# AppShell container image: a release build with the static Swift standard library on a slim
# Debian runtime that holds only the C libraries it links.
ARG BUILDER_IMAGE=swift:6.3-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${BUILDER_IMAGE} AS builder
RUN apt-get update \
    && apt-get install -y --no-install-recommends pkg-config libmicrohttpd-dev libsqlite3-dev libsodium-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
# The manifest also names the test targets (one is an executable under Tests/): they must exist.
COPY Tests ./Tests
RUN swift build -c release --static-swift-stdlib --product appshell \
    && install -D "$(swift build -c release --show-bin-path)/appshell" /out/appshell

FROM ${RUNTIME_IMAGE}
RUN apt-get update \
    && apt-get install -y --no-install-recommends libmicrohttpd12 libsqlite3-0 libsodium23 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /data /app \
    && chown 10001:10001 /data
WORKDIR /app
COPY --from=builder /out/appshell /usr/local/bin/appshell
COPY Public ./Public
COPY config.json ./config.json
ENV APPSHELL_HOST=0.0.0.0 \
    APPSHELL_PORT=8080 \
    APPSHELL_STORE_PATH=/data/appshell.sqlite
USER 10001:10001
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /healthz HTTP/1.0\\r\\n\\r\\n' >&3 && grep -q '\"status\":\"ok\"' <&3"]
ENTRYPOINT ["/usr/local/bin/appshell"]
CMD ["--config", "/app/config.json"]
