# agora — see README.md. `make run` and `make test` set up everything they need.
GO      ?= go
BIN     := bin/agora
NPM_DIR := e2e/js
VENV    := .venv
PYTHON  ?= python3
FUZZTIME ?= 30s

.PHONY: all build run check test unit e2e bench-test npm interop vet fmt fmt-check samples habermas-sample fuzz soak bench bench-quick bench-instr pgo config-reference clean

all: build

# The commit built from, in agora's version: a binary of other code does not
# take a release made by another for its own ("nothing to do").
REV := $(shell r=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD -- 2>/dev/null || r=$$r-dirty; echo $$r; })

build:
	$(GO) build -ldflags "-X main.buildRev=$(REV)" -o $(BIN) ./cmd/agora

## run: the whole pipeline on the shipped samples in testdata/, writing ./out
run: build
	./$(BIN) run --config pipeline.yaml --out out --mode overwrite

## check: validate pipeline.yaml and decode every input, writing nothing
check: build
	./$(BIN) check --config pipeline.yaml

## test: vet, formatting, unit tests with -race, then the end-to-end readers (DuckDB, hyparquet) and the bench module's own tests
test: vet fmt-check unit e2e bench-test

vet:
	$(GO) vet ./...
	cd e2e && $(GO) vet ./...
	cd bench && $(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# -pgo=off: tests check behaviour, and cmd/agora's default.pgo would make its race-instrumented
# test binary one more cold build of every dependency (the binaries agora runs are built with it)
unit:
	$(GO) test -race -pgo=off -count=1 ./...

npm: $(NPM_DIR)/node_modules/.package-lock.json

$(NPM_DIR)/node_modules/.package-lock.json: $(NPM_DIR)/package-lock.json $(NPM_DIR)/package.json
	npm ci --prefix $(NPM_DIR) --no-audit --no-fund

e2e: npm
	cd e2e && $(GO) test -count=1 ./...

## bench-test: the comparison tool's tests (a separate module, bench/): set parsing, medians, paired ratios,
## the SQL against pipeline.yaml, and a tiny whole comparison of agora and DuckDB (polars and pyarrow when .venv exists)
bench-test:
	cd bench && $(GO) test -count=1 ./...

## interop: Spark (local), pyarrow, pandas and polars read every table (a pinned Python venv in .venv)
interop: build $(VENV)/.installed
	AGORA_BIN=$(CURDIR)/$(BIN) $(VENV)/bin/python -m pytest -q -p no:cacheprovider interop

$(VENV)/.installed: interop/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r interop/requirements.txt
	touch $@

## samples: regenerate the shipped sample inputs (byte-identical to the committed ones)
samples:
	$(GO) run ./cmd/agora-gen crowdrag25 --out testdata/crowdrag25 --topics 6 --rated-topics 4
	rm -rf testdata/delidata && $(GO) run ./cmd/agora-gen delidata --out testdata/delidata --groups 12

## habermas-sample: the Habermas sample, written by pandas + pyarrow (the release's writer) from the Go generator's output
habermas-sample: $(VENV)/.installed
	$(VENV)/bin/python testdata/habermas/make_sample.py

## fuzz: run every fuzz target for FUZZTIME each
fuzz:
	@for pkg in ./stages ./sinks ./config; do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run=NONE -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

## soak: run the whole pipeline repeatedly on scaled inputs; live heap, open files and goroutines must stay flat
soak:
	SOAK_RUNS=$${SOAK_RUNS:-10} SOAK_SCALE=$${SOAK_SCALE:-0.5} $(GO) test -tags soak -run TestSoak -count=1 -v -timeout 60m ./cmd/agora

## bench: Go benchmarks of the stages and the writer, the pqarrow/parquet-go writer comparison, then
## agora against DuckDB, polars and pyarrow on generated inputs (bench/, a separate module; not part of make test).
## BENCH_ARGS go to the comparison, e.g. make bench BENCH_ARGS='--sets crowdrag25:10 --reps 3 --verify'
BENCH_ARGS ?=
bench: $(VENV)/.installed
	$(GO) test -run=NONE -bench=. -benchmem ./stages ./sinks ./internal/arrowx ./internal/mempool
	cd bench && $(GO) test -run=NONE -bench=. -benchmem -benchtime=5x ./writer
	cd bench && $(GO) run ./cmd/compare --repo .. $(BENCH_ARGS)

## bench-quick: the comparison on tiny inputs, one repetition (a smoke test)
bench-quick: $(VENV)/.installed
	cd bench && $(GO) run ./cmd/compare --repo .. --quick --verify $(BENCH_ARGS)

## bench-instr: this tree against BASE (a git revision) in instructions counted under valgrind,
## for changes too small for CPU seconds on a shared machine (bench/README.md), e.g.
## make bench-instr BASE=5e63b27 INSTR_ARGS='--sets "habermas:1;crowdrag25:10" --reps 3'
BASE ?=
INSTR_ARGS ?=
bench-instr:
	@test -n "$(BASE)" || { echo "make bench-instr needs BASE=<git revision>"; exit 2; }
	cd bench && $(GO) run ./cmd/instr --repo .. --base $(BASE) $(INSTR_ARGS)

## pgo: refresh cmd/agora/default.pgo, the CPU profile `go build` optimises agora with
## (profile-guided optimisation), from runs of pipeline.yaml on generated inputs (in .pgo/)
PGO_DIR := .pgo
pgo:
	rm -rf $(PGO_DIR) && mkdir -p $(PGO_DIR)
	$(GO) build -o $(PGO_DIR)/agora ./cmd/agora
	$(GO) build -o $(PGO_DIR)/agora-gen ./cmd/agora-gen
	$(PGO_DIR)/agora-gen crowdrag25 --out $(PGO_DIR)/data/crowdrag25 --scale 10
	$(PGO_DIR)/agora-gen delidata --out $(PGO_DIR)/data/delidata --scale 10
	$(PGO_DIR)/agora-gen habermas --out $(PGO_DIR)/data/habermas --scale 1
	$(PGO_DIR)/agora-gen habermas --out $(PGO_DIR)/wide/habermas --scale 1 --text-width 10
	for ds in crowdrag25 delidata habermas; do \
	  $(PGO_DIR)/agora run --config pipeline.yaml --data $(PGO_DIR)/data --only $$ds --out $(PGO_DIR)/out --mode overwrite --force --cpuprofile $(PGO_DIR)/$$ds.pprof || exit 1; \
	done
	$(PGO_DIR)/agora run --config pipeline.yaml --data $(PGO_DIR)/wide --only habermas --out $(PGO_DIR)/out --mode overwrite --force --cpuprofile $(PGO_DIR)/habermas-wide.pprof
	$(GO) tool pprof -proto $(PGO_DIR)/*.pprof > cmd/agora/default.pgo
	rm -rf $(PGO_DIR)

## config-reference: regenerate README.md's pipeline.yaml reference from config/ (go test ./config/gendoc checks it)
config-reference:
	$(GO) run ./config/gendoc

clean:
	rm -rf bin out $(VENV) $(PGO_DIR)
