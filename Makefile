# Parapet build. Tools are pinned and installed into .tools/ on first use.
GO        ?= go
TOOLS     := $(CURDIR)/.tools
BUF_VERSION              := v1.47.2
PROTOC_GEN_GO_VERSION    := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2

BINARIES := shieldd agentctl

.PHONY: all build deps test test-short race fuzz bench proto tools run lint fmt vet clean images compose-test

all: build

build:
	@mkdir -p bin
	$(GO) build -o bin/ ./shieldd ./agentctl

## test: the whole suite with the race detector (what CI runs). It first
## installs what the tests need (deps), so it passes on a fresh machine.
test: deps
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) test -race -count=1 ./...

## deps: what the tests need beyond Go modules: Debian's chromium for the
## web page's browser test (engine/web); nothing when it is there already or
## PARAPET_SKIP_BROWSER=1 skips that test.
deps:
	@[ "$$PARAPET_SKIP_BROWSER" = 1 ] || command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; }

test-short:
	$(GO) test -count=1 ./...

## fuzz: run each fuzz target for FUZZTIME (default 20s).
# FUZZMINIMIZE bounds how long a worker shrinks an input: Go's default
# (60s) lets one large seed that finds new coverage (an embedded policy
# of 13 KB in rules/policy) take a whole short run, 18 executions in 40s
# against 50 000 with 5s. A crashing input is still written, shrunk less.
# Go 1.26's fuzz coordinator can fail a run that found nothing with
# "context deadline exceeded" when -fuzztime ends mid-execution
# (golang/go#75804, fixed in Go 1.27). A failure counts only when it wrote
# a failing input to testdata/fuzz/<target>/, or is not that message.
FUZZTIME ?= 20s
FUZZMINIMIZE ?= 5s
fuzz:
	@log=$$(mktemp); trap 'rm -f "$$log" "$$log.rc"' EXIT; \
	for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; \
	    before=$$(ls "$$dir/testdata/fuzz/$$f" 2>/dev/null | wc -l); \
	    { $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$pkg 2>&1; echo $$? >"$$log.rc"; } | tee "$$log"; \
	    [ "$$(cat "$$log.rc")" = 0 ] && continue; \
	    after=$$(ls "$$dir/testdata/fuzz/$$f" 2>/dev/null | wc -l); \
	    if [ "$$after" = "$$before" ] && tail -n 4 "$$log" | grep -qx '    context deadline exceeded'; then \
	      echo "   not a finding: no failing input written; Go's fuzz coordinator stopped at -fuzztime (golang/go#75804)"; \
	    else exit 1; fi; \
	  done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./benchmarks/...

## run: the main job on embedded defaults (the offline demo of README.md).
run: build
	./bin/agentctl run --provider scripted --script examples/demo/script.yaml \
		--workspace examples/demo/workspace --on-escalate deny "Tidy up this project"

## images: static binaries (CGO_ENABLED=0) and the FROM-scratch images
## parapet/shieldd, parapet/loadgen and parapet/agentctl (the engine), all
## :$(IMAGE_TAG), that docker-compose.yaml runs. Nothing is pulled. The
## empty directories are what a scratch image lacks: /tmp, the engine's
## workspace and database directory, shieldd's audit log directory.
IMAGE_TAG  ?= dev
IMAGES_DIR ?= bin/images
DOCKER     ?= docker
STATIC_BUILD := CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w'
images:
	@mkdir -p $(IMAGES_DIR)/shieldd/log/shieldd $(IMAGES_DIR)/loadgen \
	  $(IMAGES_DIR)/agentctl/rootfs/tmp $(IMAGES_DIR)/agentctl/home/workspace $(IMAGES_DIR)/agentctl/state/parapet
	@chmod 1777 $(IMAGES_DIR)/agentctl/rootfs/tmp
	$(STATIC_BUILD) -o $(IMAGES_DIR)/shieldd/shieldd ./shieldd
	$(STATIC_BUILD) -o $(IMAGES_DIR)/loadgen/loadgen ./benchmarks/loadgen
	$(STATIC_BUILD) -o $(IMAGES_DIR)/agentctl/agentctl ./agentctl
	$(DOCKER) build -q -t parapet/shieldd:$(IMAGE_TAG) -f deploy/shieldd.Dockerfile $(IMAGES_DIR)/shieldd
	$(DOCKER) build -q -t parapet/loadgen:$(IMAGE_TAG) -f deploy/loadgen.Dockerfile $(IMAGES_DIR)/loadgen
	$(DOCKER) build -q -t parapet/agentctl:$(IMAGE_TAG) -f deploy/agentctl.Dockerfile $(IMAGES_DIR)/agentctl

## compose-test: the compose stack: one Chat and one Converse through the
## engine, judged on a replica, then load with a replica stopped
## (deploy/compose_test.go); fails, rather than skips, without a Docker engine.
compose-test:
	PARAPET_COMPOSE_TEST=require $(GO) test -count=1 -v -run '^TestComposeStack$$' ./deploy/

$(TOOLS)/buf:
	GOBIN=$(TOOLS) $(GO) install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
$(TOOLS)/protoc-gen-go:
	GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
$(TOOLS)/protoc-gen-go-grpc:
	GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)

tools: $(TOOLS)/buf $(TOOLS)/protoc-gen-go $(TOOLS)/protoc-gen-go-grpc

## proto: regenerate the committed Go code from proto/.
proto: tools
	PATH=$(TOOLS):$$PATH $(TOOLS)/buf generate

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

clean:
	rm -rf bin
