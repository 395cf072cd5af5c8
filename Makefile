# Ordo's build. `make help` lists the targets.
GO        ?= go
BIN       ?= $(CURDIR)/bin
FUZZTIME  ?= 10s
BENCHTIME ?= 1s
DATA      ?= ../shared/bench/toolret
.PHONY: help build install dist test crash bench bench-eino bench-recommender fuzz lint run proto clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

build: ## build ordo and the bundled plugins into ./bin
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/...

# Release builds (install, dist): stripped, no local paths (TRIMPATH; the
# install test empties it to reuse its build cache), VERSION in `ordo
# version` (cli.Version) and the commit from the build info, which
# -buildvcs=auto records even where GOFLAGS turns it off.
PREFIX   ?= $(HOME)/.local
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
DIST     ?= $(BIN)/dist
TRIMPATH ?= -trimpath
RELEASE   = $(TRIMPATH) -buildvcs=auto -ldflags '-s -w -X github.com/ordo-run/ordo/cmd/ordo/internal/cli.Version=$(VERSION)'

install: ## install ordo and the bundled plugins beside it into PREFIX/bin (default ~/.local/bin; put it on PATH)
	@mkdir -p $(PREFIX)/bin
	$(GO) build $(RELEASE) -o $(PREFIX)/bin/ ./cmd/...
	@echo "installed ordo $(VERSION) and the bundled plugins in $(PREFIX)/bin"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "$(PREFIX)/bin is not on PATH: export PATH=\"$(PREFIX)/bin:\$$PATH\"";; esac

dist: ## release archives (linux, darwin; amd64, arm64) and their SHA256SUMS in bin/dist
	rm -rf $(DIST)
	@set -e; for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do \
	  name=ordo-$(VERSION)-$${target%/*}-$${target#*/}; echo "== $$name"; \
	  CGO_ENABLED=0 GOOS=$${target%/*} GOARCH=$${target#*/} $(GO) build $(RELEASE) -o $(DIST)/$$name/ ./cmd/...; \
	  cp README.md $(DIST)/$$name/; \
	  tar -C $(DIST) -czf $(DIST)/$$name.tar.gz $$name; \
	  rm -r $(DIST)/$$name; \
	done
	cd $(DIST) && sha256sum *.tar.gz > SHA256SUMS

test: ## run the whole test suite with the race detector
	$(GO) test -race -count=1 -timeout 30m ./...

crash: ## the crash and takeover trials at full size (50 kills inside each side-effecting tool, 10 server takeovers), fixed seed unless ORDO_CRASH_SEED is set
	ORDO_CRASH_SEED=$${ORDO_CRASH_SEED:-20260805} ORDO_CRASH_KILLS=50 ORDO_TAKEOVER_KILLS=10 $(GO) test -count=1 -timeout 45m -v \
	  -run 'TestCrashInsideEveryTool|TestCrashRecoveryPostgres|TestTakeoverFinishesDeadServersRuns' ./agent/ ./cmd/ordo/

bench: ## run every Go benchmark once (figures in README)
	$(GO) test -run='^$$' -bench=. -benchtime=$(BENCHTIME) -benchmem ./...

bench-eino: ## Ordo's orchestration cost per step beside Eino's compose chain and DAG, in one run (separate module bench/eino)
	cd bench/eino && $(GO) test -run='^$$' -bench=PerStep -benchtime=$(BENCHTIME) -count=3 .

bench-recommender: build ## tool-retrieval figures on the Seal-Tools and MetaTool dev sets
	$(BIN)/ordo tools eval --tools $(DATA)/seal-tools/tools.jsonl --queries $(DATA)/seal-tools/queries-dev.jsonl
	$(BIN)/ordo tools eval --tools $(DATA)/metatool/tools.jsonl --queries $(DATA)/metatool/queries-dev.jsonl

.PHONY: semantic-vectors
semantic-vectors: ## re-make the recommender's built-in meaning vectors from npm (Node; not needed to build)
	sh recommender/embed/semantic/internal/distil/distil.sh

fuzz: ## run each fuzz target for FUZZTIME
	@set -e; for file in $$(grep -rl --include='*_test.go' '^func Fuzz' .); do \
	  dir=$$(dirname $$file); \
	  for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$file); do \
	    echo "== $$dir $$target"; \
	    $(GO) test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$(FUZZTIME) ./$$dir; \
	  done; \
	done

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# make run uses the data directory every ordo command uses (data_dir), so the
# commands it prints work as printed.
run: build ## the first run: a bundled example plan end to end, no API key needed
	@echo "Running examples/first-run.plan.json with --yes (approves what policy allows, including the chat post it asks to confirm)."
	$(BIN)/ordo run --plan examples/first-run.plan.json --yes
	@case ":$$PATH:" in *":$(BIN):"*) ;; *) echo "ordo is $(BIN)/ordo; for the commands above as printed: export PATH=\"$(BIN):\$$PATH\"";; esac

proto: ## regenerate the plugin protocol's Go code (needs protoc, protoc-gen-go, protoc-gen-go-grpc)
	$(GO) generate ./plugins/proto/...

clean: ## remove build output and the local data dir
	rm -rf $(BIN) .ordo
