# Ordo's build. `make help` lists the targets.
GO        ?= go
BIN       ?= $(CURDIR)/bin
FUZZTIME  ?= 10s
BENCHTIME ?= 1s
DATA      ?= ../shared/bench/toolret
# make run keeps its data in ./.ordo; no other target (make test included) sees it.
run: export ORDO_DATA_DIR ?= $(CURDIR)/.ordo

.PHONY: help build test crash bench bench-eino bench-recommender fuzz lint run proto clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

build: ## build ordo and the bundled plugins into ./bin
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/...

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

run: build ## the first run: a bundled example plan end to end, no API key needed
	@echo "Running examples/first-run.plan.json with --yes (approves what policy allows, including the chat post it asks to confirm)."
	$(BIN)/ordo run --plan examples/first-run.plan.json --yes

proto: ## regenerate the plugin protocol's Go code (needs protoc, protoc-gen-go, protoc-gen-go-grpc)
	$(GO) generate ./plugins/proto/...

clean: ## remove build output and the local data dir
	rm -rf $(BIN) .ordo
