# A small pgslow image: built from this tree in a Debian 12 build stage, installed from its own
# Debian package (CPack) into a slim runtime with only the shared libraries pgslow needs. It
# holds no PostgreSQL server: it is meant to run beside one (a Kubernetes Job next to a
# CloudNativePG cluster, docs/server.md), through a `command` target.
#   docker build -t pgslow .
#   docker run --rm pgslow check --offline /usr/share/pgslow/scenarios/quick.yaml
FROM debian:12 AS build
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      cmake ninja-build g++ make pkg-config dpkg-dev file libpq-dev libyaml-cpp-dev libspdlog-dev \
      libfmt-dev libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPGSLOW_WERROR=ON \
    && cmake --build /build --target pgslow -j "$(nproc)" \
    && cd /build && cpack -G DEB -B /pkg

FROM debian:12-slim
COPY --from=build /pkg/*.deb /tmp/
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      /tmp/*.deb postgresql-client-15 \
    && rm -rf /var/lib/apt/lists/* /tmp/*.deb \
    && useradd --create-home --uid 10001 pgslow
USER pgslow
WORKDIR /home/pgslow
ENTRYPOINT ["pgslow", "--workdir", "/home/pgslow/.pgslow"]
CMD ["--help"]
