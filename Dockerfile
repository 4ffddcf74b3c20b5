# pgslow's image (docs/server.md, "The image"). Three stages on Debian 12 (bookworm): the build
# (cmake, then `cmake --install` into /opt/pgslow: the binary, the knob catalog, presets,
# scenario library, apply scripts and docs), kubectl (optional, checked against its published
# sha256), and a lean runtime with the shared libraries pgslow links, PostgreSQL 15's server
# (the managed cluster inside, and the `db` container of the Kubernetes Jobs `pgslow jobs`
# writes) and PgBouncer, without LLVM (PostgreSQL's JIT is left out), jq and psql.
#   make image                     # scripts/build-image.sh: the base by debootstrap, podman build, a smoke test
#   docker build -t pgslow .       # on a host that pulls debian:bookworm from a registry
#   docker run --rm pgslow check --offline /usr/local/share/pgslow/scenarios/quick.yaml
# KUBECTL_VERSION=none (what `make image` passes) leaves kubectl out: only the CloudNativePG
# recipe's apply script needs it, and dl.k8s.io must be reachable to fetch it.

FROM debian:bookworm AS build
WORKDIR /src
# The packages compiling pgslow needs, the same set `make run` installs (no test packages), and
# ccache.
COPY scripts/install-deps.sh scripts/with-progress scripts/
RUN scripts/install-deps.sh build && rm -rf /var/lib/apt/lists/*
COPY . .
# Only the pgslow target, configured without the tests (no GoogleTest or Google Benchmark here).
# The compiler cache outlives the build (a cache mount: podman/buildah and Docker's BuildKit), so
# a rebuild after a change compiles only what changed.
ENV CCACHE_DIR=/root/.cache/ccache CCACHE_BASEDIR=/src CCACHE_NOHASHDIR=true
RUN --mount=type=cache,id=pgslow-ccache,target=/root/.cache/ccache \
    cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr/local \
      -DPGSLOW_BUILD_TESTS=OFF \
    && cmake --build /build --target pgslow -j "$(nproc)" \
    && DESTDIR=/opt/pgslow cmake --install /build

FROM debian:bookworm-slim AS kubectl
ARG KUBECTL_VERSION=v1.31.2
ARG TARGETARCH=amd64
RUN mkdir /out && if [ "$KUBECTL_VERSION" = none ]; then exit 0; fi \
    && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      curl ca-certificates \
    && curl -fsSLo /out/kubectl "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/${TARGETARCH}/kubectl" \
    && curl -fsSLo /kubectl.sha256 "https://dl.k8s.io/release/${KUBECTL_VERSION}/bin/linux/${TARGETARCH}/kubectl.sha256" \
    && echo "$(cat /kubectl.sha256)  /out/kubectl" | sha256sum --check \
    && chmod 0755 /out/kubectl

FROM debian:bookworm-slim
# The user `postgres` is uid/gid 999, as in the official postgres images, made before
# postgresql-common would pick another: the Jobs' `db` container runs as 999 in either image.
# dpkg leaves out LLVM (postgresql-15 depends on libllvm14, 107 MB, for its JIT only; without
# llvmjit.so the server runs with JIT unavailable), the server's JIT bitcode, and the
# documentation, manual pages and translations (as bookworm-slim does; kept on a debootstrap base),
# but not PostgreSQL's own manual pages: its packages register them with update-alternatives.
RUN groupadd --system --gid 999 postgres \
    && useradd --system --uid 999 --gid 999 --home-dir /var/lib/postgresql --no-create-home \
         --shell /bin/bash postgres \
    && printf '%s\n' 'path-exclude=/usr/lib/*/libLLVM-*' 'path-exclude=/usr/lib/postgresql/*/lib/llvmjit*' \
         'path-exclude=/usr/lib/postgresql/*/lib/bitcode/*' \
         'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
         'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/locale/*' \
         > /etc/dpkg/dpkg.cfg.d/pgslow-lean \
    && mkdir -p /etc/postgresql-common \
    && echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf
# The libraries `ldd pgslow` names on bookworm (libpq5, yaml-cpp 0.7, spdlog 1.10, fmt 9,
# OpenSSL 3, cpp-httplib 0.11); PostgreSQL 15 and PgBouncer (the managed cluster and pooler,
# the Jobs' server), with psql; jq for the apply scripts.
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libpq5 libyaml-cpp0.7 libspdlog1.10 libfmt9 libssl3 libcpp-httplib0.11 \
      postgresql-15 postgresql-client-15 pgbouncer jq ca-certificates \
    && apt-get clean && rm -rf /var/lib/apt/lists/* \
    && install -d -o postgres -g postgres -m 0755 /var/lib/postgresql \
    && useradd --create-home --uid 10001 pgslow \
    && install -d -o 10001 -g 10001 -m 0700 /home/pgslow/work
COPY --from=build /opt/pgslow/usr/local/ /usr/local/
COPY --from=kubectl /out/ /usr/local/bin/
USER 10001
WORKDIR /home/pgslow
# The workdir (journal, lock) belongs on a volume that outlives the pod: after a killed Job,
# the next one (or `pgslow recover` with the same target options) restores from it.
VOLUME /home/pgslow/work
# pgslow makes its own folder inside: a volume mounted with fsGroup is group-writable, which
# pgslow refuses as a workdir (docs/user-guide.md, SECURITY).
ENTRYPOINT ["pgslow", "--workdir", "/home/pgslow/work/pgslow"]
CMD ["--help"]
