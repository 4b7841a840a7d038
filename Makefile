# Headroom build and test entry points. `make demo` and `make test` are the
# two commands the README gives; CI runs .ci/run, which calls `make test`.

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/headroom-dev/headroom/internal/version.Version=$(VERSION)
BIN     := bin/headroom
STATICCHECK_VERSION ?= v0.8.2

.PHONY: build demo test check unit lint bench bench-ycsb test-fio clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/headroom

# The main job: the quickstart campaign on the embedded SQLite target.
demo: build
	./$(BIN) run examples/quickstart.yaml

# Everything CI checks: formatting, vet, the unit/integration tests, and the
# race detector on the concurrent packages.
test: check unit

check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

# Packages run one at a time (-p 1): the load engine's tests check timing
# (late requests, stalls) and must not compete for the CPU with other
# packages' tests.
unit: build
	$(GO) test -p 1 -count=1 ./...
	$(GO) test -p 1 -count=1 -race ./internal/load/ ./internal/store/

# The disk target against fio on the same file and settings (needs fio;
# about 20 s). Kept out of `make test` because cloud-disk IOPS drift.
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

clean:
	rm -rf bin
