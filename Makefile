# Headroom build and test entry points. `make demo` and `make test` are the
# two commands the README gives; CI runs .ci/run, which calls `make test`.

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/headroom-dev/headroom/internal/version.Version=$(VERSION)
BIN     := bin/headroom
STATICCHECK_VERSION ?= v0.8.2

# Debian packages of the servers the integration tests run as private
# instances (internal/deploy), fio for the disk target's comparison, and
# iproute2 and iptables for the lab (namespaces, shaped links, partitions),
# and Chromium (with a font) for the test that opens report.html.
SERVER_PACKAGES := postgresql postgresql-contrib mariadb-server mariadb-client redis-server redis-tools fio iproute2 iptables openssh-server chromium fonts-liberation

.PHONY: build demo test deps check unit lint bench bench-ycsb bench-redis bench-latte bench-pgbench test-fio clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/headroom

# The main job: the quickstart campaign on the embedded SQLite target.
demo: build
	./$(BIN) run examples/quickstart.yaml

# Everything CI checks: formatting, vet, the unit/integration tests, and the
# race detector on the concurrent packages.
test: deps check unit

# Installs the server packages the tests need when they are missing (as
# root, through apt-get). The tests start their own private instances, so
# no system service is started or changed. Without root the tests that need
# a missing server are skipped, and say which package to install. Servers
# that come as Java archives (deps/jars/*: Cassandra, DynamoDB Local) are
# fetched from Maven Central into a cache once and checked against their
# committed checksums (scripts/fetch-jars.sh).
deps:
	@missing=""; for p in $(SERVER_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "server packages: all installed"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing:$$missing"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	else echo "not installed:$$missing (run as root or apt-get install them; tests that need them are skipped)"; fi
	@for d in deps/jars/*/; do [ -f "$$d/pom.xml" ] && bash scripts/fetch-jars.sh "$$(basename "$$d")"; done; true

check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

# Packages run one at a time (-p 1): the load engine's tests check timing
# (late requests, stalls) and must not compete for the CPU with other
# packages' tests. internal/campaign took 19 minutes on a day this machine
# ran three times slower, hence 40 minutes a package. The hostile spec corpus runs again with -v so that its
# count of inputs and of clear errors shows in the output.
unit: build
	HEADROOM_REQUIRE_SERVERS=$${HEADROOM_REQUIRE_SERVERS:-$$(dpkg -s $(SERVER_PACKAGES) >/dev/null 2>&1 && echo 1 || echo 0)} \
	HEADROOM_REQUIRE_LAB=$${HEADROOM_REQUIRE_LAB:-$$([ "$$(id -u)" = 0 ] && echo 1 || echo 0)} \
	  $(GO) test -p 1 -count=1 -timeout 40m ./...
	$(GO) test -count=1 -run '^TestHostileCorpus$$' -v ./internal/spec/
	$(GO) test -p 1 -count=1 -race ./internal/load/ ./internal/store/

# The disk target against fio on the same file and settings (needs fio;
# about 20 s). Not part of make test: this VM's disk speed swings by 30%
# from one 0.4 s round to the next, and a median of 8 rounds still fell
# outside 10% now and then, which would turn CI red for no code change.
test-fio:
	HEADROOM_FIO_TEST=1 $(GO) test -count=1 -run TestAgreesWithFio -v ./internal/target/disk/

# staticcheck is fetched through the Go module proxy on first use.
lint:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# Benchmarks are not part of `make test`; docs/performance.md explains each.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/load/ ./internal/workload/

bench-ycsb: build
	bash bench/compare-ycsb.sh

bench-redis: build
	bash bench/compare-redis.sh

bench-latte: build
	bash bench/compare-latte.sh

bench-pgbench: build
	bash bench/compare-pgbench.sh

clean:
	rm -rf bin
