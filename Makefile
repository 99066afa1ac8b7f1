# Developer shortcuts; CI runs ./.ci/run (services, vet, staticcheck, race tests, fuzz).
GO          ?= go
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || echo $(shell $(GO) env GOPATH)/bin/staticcheck)
BIN         ?= bin/qhronosd
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: run test lint bench build ci docker clean

## run: start the embedded server (SQLite in ./data, loopback only)
run:
	$(GO) run ./cmd/qhronosd

## test: the whole suite with the race detector
test:
	$(GO) test -race ./...

## lint: go vet and staticcheck
lint:
	$(GO) vet ./... && $(STATICCHECK) ./...

## bench: every benchmark, no tests
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

## build: a static binary in bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w -X main.version=$(VERSION)" -o $(BIN) ./cmd/qhronosd

## ci: what CI runs
ci:
	./.ci/run

## docker: the production image
docker:
	docker build --build-arg VERSION=$(VERSION) -t qhronos:local .

clean:
	rm -rf bin coverage.* *.out
