# A small pgslow image (docs/server.md, "pgslow as a Kubernetes Job"). Three stages on Debian
# 12 (bookworm): the build (cmake, then `cmake --install` into /opt/pgslow: the binary, the
# knob catalog, presets, scenario library, apply scripts and docs), kubectl (checked against
# its published sha256), and a slim runtime with only the shared libraries pgslow links and
# the tools the apply scripts of scripts/targets/ use (jq, kubectl).
# It holds no PostgreSQL server: it runs beside one, through a `command` target.
#   docker build -t pgslow .
#   docker run --rm pgslow check --offline /usr/local/share/pgslow/scenarios/quick.yaml
# (No Docker engine runs where pgslow is developed: this file is kept correct by reading, and
# by the same `cmake --install` the .deb package test exercises.)

FROM debian:bookworm AS build
WORKDIR /src
# The packages compiling pgslow needs, the same set `make run` installs (no test packages).
COPY scripts/install-deps.sh scripts/with-progress scripts/
RUN PGSLOW_DEPS_OPTIONAL=0 scripts/install-deps.sh build && rm -rf /var/lib/apt/lists/*
COPY . .
# Only the pgslow target, configured without the tests (no GoogleTest or Google Benchmark here).
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr/local \
      -DPGSLOW_BUILD_TESTS=OFF \
    && cmake --build /build --target pgslow -j "$(nproc)" \
    && DESTDIR=/opt/pgslow cmake --install /build

FROM debian:bookworm-slim AS kubectl
ARG KUBECTL_VERSION=v1.31.2
ARG TARGETARCH=amd64
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      curl ca-certificates \
    && curl -fsSLo /kubectl "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/${TARGETARCH}/kubectl" \
    && curl -fsSLo /kubectl.sha256 "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/${TARGETARCH}/kubectl.sha256" \
    && echo "$(cat /kubectl.sha256)  /kubectl" | sha256sum --check \
    && chmod 0755 /kubectl

FROM debian:bookworm-slim
# The libraries `ldd pgslow` names on bookworm (libpq5, yaml-cpp 0.7, spdlog 1.10, fmt 9,
# OpenSSL 3, cpp-httplib 0.11), psql for looking around, jq for the apply scripts.
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libpq5 libyaml-cpp0.7 libspdlog1.10 libfmt9 libssl3 libcpp-httplib0.11 \
      postgresql-client-15 jq ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 pgslow \
    && install -d -o 10001 -g 10001 -m 0700 /home/pgslow/work
COPY --from=build /opt/pgslow/usr/local/ /usr/local/
COPY --from=kubectl /kubectl /usr/local/bin/kubectl
USER 10001
WORKDIR /home/pgslow
# The workdir (journal, lock) belongs on a volume that outlives the pod: after a killed Job,
# the next one (or `pgslow recover` with the same target options) restores from it.
VOLUME /home/pgslow/work
# pgslow makes its own folder inside: a volume mounted with fsGroup is group-writable, which
# pgslow refuses as a workdir (docs/user-guide.md, SECURITY).
ENTRYPOINT ["pgslow", "--workdir", "/home/pgslow/work/pgslow"]
CMD ["--help"]
