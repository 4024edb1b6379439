# AppShell container image: a release build with the static Swift standard library on a slim
# Debian runtime that holds only the C libraries it links. Built and run for real by
# `make test-container` (with stand-ins for the two base images: see the Deploying
# article). Build with Docker (BuildKit) or with `podman build --format docker` (the OCI
# format has no HEALTHCHECK).
ARG BUILDER_IMAGE=docker.io/library/swift:6.3-bookworm
ARG RUNTIME_IMAGE=docker.io/library/debian:bookworm-slim

FROM ${BUILDER_IMAGE} AS builder
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       pkg-config libmicrohttpd-dev libsqlite3-dev libsodium-dev libhiredis-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The manifest names the test targets too (one is an executable under Tests/): they must exist.
COPY Package.swift ./
COPY Tests ./Tests
COPY Sources ./Sources
# .build lives in a build cache, not in a layer: after a source change only the changed modules
# and those importing them are compiled again. It is emptied when the compiler differs from the
# one that filled it (another builder image), whose modules this one cannot read. The binary is
# stripped (symbols are for a debugger, which the image does not have) and copied out of the cache.
RUN --mount=type=cache,id=appshell-swift-build,sharing=locked,target=/src/.build \
    swift --version >/tmp/compiler 2>&1 \
    && if ! cmp -s /tmp/compiler .build/compiler; then \
         find .build -mindepth 1 -delete && cp /tmp/compiler .build/compiler; \
       fi \
    && swift build -c release --static-swift-stdlib --product appshell -Xlinker --strip-all \
    && install -D -m 0755 "$(swift build -c release --show-bin-path)/appshell" /out/appshell

FROM ${RUNTIME_IMAGE}
LABEL org.opencontainers.image.title="AppShell" \
      org.opencontainers.image.description="A server-side app shell in Swift over libmicrohttpd (the demo app)"
# Only what the binary links beyond glibc (ldd: libmicrohttpd, SQLite, libsodium, hiredis; their own
# dependencies come with them); no shell tools beyond the base image's. The user owns only /data.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       libmicrohttpd12 libsqlite3-0 libsodium23 libhiredis0.14 \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt/* /var/log/dpkg.log \
    && groupadd --gid 10001 appshell \
    && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin --no-log-init appshell \
    && install -d -o 10001 -g 10001 -m 0750 /data
WORKDIR /app
COPY config.json ./config.json
COPY Public ./Public
COPY --from=builder /out/appshell /usr/local/bin/appshell
# Listen on every interface of the container; the store and the form-token key (csrf.key, beside
# it) in the /data volume; SQLite's temporary files there too, so the root file system can be
# read-only without a tmpfs. In-flight requests get 8 s after SIGTERM: within the 10 s that
# `docker stop` and `podman stop` wait before SIGKILL. No APPSHELL_ALLOW_DEMO_ACCOUNT: on 0.0.0.0 the
# server refuses config.json's demo account (demo / appshell, which anyone can read) and exits 2;
# give the container its users (APPSHELL_USERS), or set the allowance to try the demo.
ENV APPSHELL_HOST=0.0.0.0 \
    APPSHELL_PORT=8080 \
    APPSHELL_STORE_PATH=/data/appshell.sqlite \
    APPSHELL_SHUTDOWN_TIMEOUT_SECONDS=8 \
    SQLITE_TMPDIR=/data
USER 10001:10001
VOLUME /data
EXPOSE 8080
STOPSIGNAL SIGTERM
# `appshell health` reads the same settings (the file, the APPSHELL_* variables) and asks the
# server on its port for /healthz, over TLS when it serves HTTPS, without a Host field: served
# whatever APPSHELL_ALLOWED_HOSTS says. No curl in the image.
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/appshell", "health", "--config", "/app/config.json"]
ENTRYPOINT ["/usr/local/bin/appshell"]
CMD ["--config", "/app/config.json"]
