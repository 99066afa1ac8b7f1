# Developer shortcuts; CI runs ./.ci/run (services, vet, staticcheck, race tests, fuzz).
GO          ?= go
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || echo $(shell $(GO) env GOPATH)/bin/staticcheck)
BIN         ?= bin/qhronosd
IMAGE       ?= qhronos:local
VERSION     ?= $(shell ./scripts/release.sh --print-version)
COMMIT      ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE        ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
STAMP        = -X github.com/qhronos/qhronos/internal/buildinfo.version=$(VERSION) \
               -X github.com/qhronos/qhronos/internal/buildinfo.commit=$(COMMIT) \
               -X github.com/qhronos/qhronos/internal/buildinfo.date=$(DATE)

.PHONY: run test test-helm tidy lint bench build release ci docker clean

## run: build the server visibly (-v lists each package as it compiles), then start it embedded (SQLite in ./data, loopback only)
run:
	@echo "building bin/qhronosd (first build: a few minutes, listing packages; later builds: seconds)"
	$(GO) build -v -o bin/qhronosd ./cmd/qhronosd
	./bin/qhronosd

## test: the whole suite with the race detector (ending with the skipped tests and why), then the Helm chart's tests (their own module, see test-helm)
test:
	./scripts/test
	$(MAKE) test-helm

## test-helm: vet and test deploy/helm, a module of its own so the main module never compiles Kubernetes' libraries
test-helm:
	cd deploy/helm && $(GO) vet ./... && $(GO) test ./...

## tidy: go mod tidy in both modules (the chart's module follows the main one's requirements through its replace)
tidy:
	$(GO) mod tidy
	cd deploy/helm && $(GO) mod tidy

## lint: go vet and staticcheck
lint:
	$(GO) vet ./... && $(STATICCHECK) ./...

## bench: every benchmark, no tests
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

## build: a static, stamped server binary in bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w $(STAMP)" -o $(BIN) ./cmd/qhronosd

## release: versioned archives of qhronosd, qhronos and qhronos-bench for linux/darwin × amd64/arm64 and
## dist/checksums.txt (TARGETS=linux/amd64 for one; VERSION=v1.2.0 to name it); publishes nothing
release:
	GO=$(GO) ./scripts/release.sh

## ci: what CI runs
ci:
	./.ci/run

## docker: the production image, tagged $(IMAGE) (IMAGE=registry.example.com/qhronos:v1.2.0 to push it)
docker:
	docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg DATE=$(DATE) -t $(IMAGE) .

clean:
	rm -rf bin dist coverage.* *.out
