# Countdown image: one multi-call executable, `countdown`, on a slim Debian runtime, linked under the name of each
# production command it runs (countdown-worker, countdown-admin, countdown-api, countdown-console).
#
#   docker build -t countdown:dev .
#   docker build --build-arg VERSION="$(git describe --tags --always)" --build-arg REVISION="$(git rev-parse HEAD)" -t countdown:1.4.0 .
#   docker build --target development -t countdown-development:dev .   # the fake FCM, for the development compose stack
#
# VERSION is what `--version`, the first log line and countdown_build_info report: it is written into
# Sources/Telemetry/VERSION (embedded at compile time) before building; without it the committed file's
# version (the next release with a -dev suffix) is kept.
#
# The default command is the worker; run the others by naming them: `countdown-admin migrate`,
# `countdown-api`, `countdown-console` (or `countdown admin migrate`, and so on). One binary instead of four:
# Foundation's ICU data (37 MB) and the shared code are in the image once.
# The production image (the last stage, `runtime`) holds the production commands only. The `development` stage is an
# image of its own for the development compose stack: the fake FCM (countdown-fake-fcm) and openssl, which generates
# its throwaway service account; the benchmark (countdown-bench) is in neither image.
# No secret goes into the image: service accounts, keys and URLs come from files and environment at run time.
# scripts/lint-deploy checks this file against Package.swift (packages, products) and the commands the multi-call
# executable knows (Sources/countdown/MultiCall.swift) on every test run.

ARG SWIFT_IMAGE=swift:6.3-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---------------------------------------------------------------------------------------------------------
FROM ${SWIFT_IMAGE} AS build
SHELL ["/bin/bash", "-euo", "pipefail", "-c"]

# The -dev packages of the .systemLibrary targets in Package.swift.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libpq-dev \
      libhiredis-dev \
      libssl-dev \
      libmicrohttpd-dev \
      libcurl4-openssl-dev \
      pkg-config \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
# Tests/ is needed too: SwiftPM loads every target of the manifest, test targets included.
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests

ARG VERSION=""
RUN if [ -n "${VERSION}" ]; then printf '%s\n' "${VERSION}" > Sources/Telemetry/VERSION; fi \
 && echo "building version $(cat Sources/Telemetry/VERSION)"

# The multi-call `countdown` and a link to it for each of COMMANDS (space-separated; each a command it dispatches to).
# The executable loses its DWARF debug information (`strip --strip-debug`) but keeps its symbol table, so the
# backtracer still names functions in a crash report (`--strip-all` would save 15 MB more, the symbol table, and leave
# most frames as bare addresses; the image stays under its size target without that).
ARG COMMANDS="countdown-worker countdown-admin countdown-api countdown-console"
RUN --mount=type=cache,target=/src/.build,id=countdown-swiftpm-build \
    mkdir -p /out/bin /out/libexec \
 && swift build -c release --static-swift-stdlib --product countdown < /dev/null \
 && install -m 0755 "$(swift build -c release --static-swift-stdlib --show-bin-path < /dev/null)/countdown" /out/bin/ \
 && strip --strip-debug /out/bin/countdown \
 && for command in ${COMMANDS}; do ln -s countdown "/out/bin/${command}"; done \
 && install -m 0755 /usr/libexec/swift/linux/swift-backtrace-static /out/libexec/ \
 && ls -l /out/bin

# ---------------------------------------------------------------------------------------------------------
# The development executables: the fake FCM, built beside the production executable (same sources, same cache).
FROM build AS build-development
RUN --mount=type=cache,target=/src/.build,id=countdown-swiftpm-build \
    mkdir -p /out/development \
 && swift build -c release --static-swift-stdlib --product countdown-fake-fcm < /dev/null \
 && install -m 0755 "$(swift build -c release --static-swift-stdlib --show-bin-path < /dev/null)/countdown-fake-fcm" /out/development/ \
 && strip --strip-debug /out/development/countdown-fake-fcm \
 && ls -l /out/development

# ---------------------------------------------------------------------------------------------------------
# What both images share: the runtime libraries of libssl-dev and libmicrohttpd-dev (libssl3, libmicrohttpd12),
# ca-certificates for TLS, curl for the health checks, tini as PID 1 so signals reach the process and children are
# reaped, the numeric user, and the labels but title and description.
# `apt-get clean`: no downloaded packages or apt caches in the layer, whatever the base image's apt settings.
FROM ${RUNTIME_IMAGE} AS runtime-base
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libssl3 \
      libmicrohttpd12 \
      ca-certificates \
      curl \
      tini \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 countdown \
 && useradd --system --uid 10001 --gid countdown --home-dir /var/lib/countdown --no-create-home \
      --shell /usr/sbin/nologin countdown \
 && install -d -o countdown -g countdown -m 0750 /var/lib/countdown /var/lib/countdown/fcm

ARG VERSION=""
ARG REVISION=unknown
LABEL org.opencontainers.image.version="${VERSION:-dev}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="debian:bookworm-slim" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /var/lib/countdown
ENTRYPOINT ["/usr/bin/tini", "--"]

# ---------------------------------------------------------------------------------------------------------
# The development image (`--target development`): the fake FCM for the development compose stack, never deployed,
# and openssl, which generates its throwaway service account (compose's fcm-account).
FROM runtime-base AS development
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssl \
 && apt-get clean && rm -rf /var/lib/apt/lists/*
COPY --from=build-development /out/development/ /usr/local/bin/
LABEL org.opencontainers.image.title="countdown-development" \
      org.opencontainers.image.description="Countdown's development stand-ins (the fake FCM); not for production"
USER 10001:10001
EXPOSE 8085
CMD ["countdown-fake-fcm", "--help"]

# ---------------------------------------------------------------------------------------------------------
# The production image: the last stage, what `docker build` without --target builds.
FROM runtime-base AS runtime

# The other runtime libraries of the -dev packages above (libpq5, libhiredis0.14, libcurl4); tzdata for time zones.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libpq5 \
      libhiredis0.14 \
      libcurl4 \
      tzdata \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/*

COPY --from=build /out/bin/ /usr/local/bin/
COPY --from=build /out/libexec/swift-backtrace-static /usr/local/libexec/countdown/swift-backtrace-static
COPY --chmod=0755 deploy/docker/countdown-healthcheck /usr/local/bin/countdown-healthcheck

LABEL org.opencontainers.image.title="countdown" \
      org.opencontainers.image.description="Starts and ends scheduled-stream iOS Live Activities and sends stream reminders: worker, admin, API and console"

ENV SWIFT_BACKTRACE="enable=yes,sanitize=yes,threads=all,images=all,interactive=no,swift-backtrace=/usr/local/libexec/countdown/swift-backtrace-static"

# Numeric so that Kubernetes' runAsNonRoot can verify it.
USER 10001:10001
WORKDIR /var/lib/countdown
# 9090: worker health and metrics (HTTP_ADDR); 8080: API (API_ADDR).
EXPOSE 9090 8080

HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/countdown-healthcheck"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["countdown-worker"]
