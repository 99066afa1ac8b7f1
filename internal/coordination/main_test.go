package coordination_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind: every
// subscription, relay and redis-server watcher must end with its context or
// at cleanup.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
