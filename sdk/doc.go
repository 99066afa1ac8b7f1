// Package sdk holds the clients in other languages (typescript/, python/);
// its Go test runs their test suites against the real qhronosd, so
// `go test ./...` covers them.
package sdk
