# Headroom build and test entry points. `make demo` and `make test` are the
# two commands the README gives; CI runs .ci/run, which calls `make test`.

SHELL   := /bin/bash
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

.PHONY: build demo test deps check unit fuzz-short lint bench bench-ycsb bench-redis bench-latte bench-pgbench test-fio clean

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

# The suite has two parts (docs/testing.md). Packages whose tests need
# root, the lab, real servers, a browser or a quiet CPU (they judge timing
# or load levels) are SERIAL_PKGS: they run one package at a time, after the
# others. Every other package is pure and runs in parallel at Go's default.
# Each part's go test -json is kept in $(TESTLOG) and summarised by
# scripts/testtimes (slowest packages and tests; docs/testing.md's table
# comes from it). The hostile spec corpus runs again with -v so that its
# count of inputs and of clear errors shows in the output.
SERIAL_PKGS := agent apptier campaign cgroupself cli clockoffset deploy explore infra lab load monitor pgstore probe report/browsertest report/pressure store target
SERIAL_RE   := /internal/($(subst $(eval) ,|,$(strip $(SERIAL_PKGS))))(/|$$)
TESTLOG     ?= .test-logs
TESTTIMES   := bin/testtimes

$(TESTTIMES): $(wildcard scripts/testtimes/*.go)
	$(GO) build -o $@ ./scripts/testtimes

unit: build $(TESTTIMES)
	@mkdir -p $(TESTLOG)
	@echo "== pure packages, in parallel"
	set -o pipefail; $(GO) test -json -count=1 -timeout 20m $$($(GO) list ./... | grep -v -E '$(SERIAL_RE)') \
	  | $(TESTTIMES) -stream -n 15 -save $(TESTLOG)/pure.json
	@echo "== packages that need root, the lab, servers or a quiet CPU, one at a time"
	set -o pipefail; HEADROOM_REQUIRE_SERVERS=$${HEADROOM_REQUIRE_SERVERS:-$$(dpkg -s $(SERVER_PACKAGES) >/dev/null 2>&1 && echo 1 || echo 0)} \
	HEADROOM_REQUIRE_LAB=$${HEADROOM_REQUIRE_LAB:-$$([ "$$(id -u)" = 0 ] && echo 1 || echo 0)} \
	  $(GO) test -json -p 1 -count=1 -timeout 40m $$($(GO) list ./... | grep -E '$(SERIAL_RE)') \
	  | $(TESTTIMES) -stream -n 25 -save $(TESTLOG)/serial.json
	$(GO) test -count=1 -run '^TestHostileCorpus$$' -v ./internal/spec/
	$(GO) test -p 1 -count=1 -race ./internal/load/ ./internal/store/
	@$(MAKE) --no-print-directory fuzz-short
	@$(TESTTIMES) -markdown $(TESTLOG)/pure.json $(TESTLOG)/serial.json > $(TESTLOG)/table.md && echo "per-package table: $(TESTLOG)/table.md"

# The fuzz targets of the readers of hostile bytes that combine constructs
# (docs/testing.md, "Fuzzing"): each runs for FUZZTIME in make test, one
# after the other, after everything else; longer with
# `make fuzz-short FUZZTIME=10m`. A finding fails the target and is kept
# under the package's testdata/fuzz, where it then runs with go test.
FUZZ_SHORT := spec:FuzzCombined monitor/importer:FuzzParseIostat monitor/importer:FuzzParseSar \
  monitor/importer:FuzzParseCloudWatch monitor/importer:FuzzParsePrometheus store:FuzzHdrDecode
FUZZTIME   ?= 15s

fuzz-short:
	@for t in $(FUZZ_SHORT); do pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "== fuzz $$fn (internal/$$pkg) for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) ./internal/$$pkg/ || exit 1; done

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
