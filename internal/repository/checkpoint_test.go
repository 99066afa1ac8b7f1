package repository_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

// The embedded database's write-ahead log is copied back into the database
// file while the server runs, not only when it stops: the file holds what
// was written within moments, and the log does not grow with every write.
// (The writes run on a connection of their own, and SQLite checkpoints in
// the connection that commits; a checkpoint beside the writer, tried
// before, never found the log wholly copied between two transactions, so
// the log was never started over and grew with every write: 300 MB here.)
func TestTheEmbeddedLogIsCheckpointedWhileTheStoreRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openSQLiteIn(t, dir)
	size := func(name string) int64 {
		fi, err := os.Stat(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			return 0
		}
		require.NoError(t, err)
		return fi.Size()
	}
	const padding = 12 << 10
	pad, err := json.Marshal(map[string]string{"pad": strings.Repeat("x", padding)})
	require.NoError(t, err)
	// About 5 MB of events a round, each in its own transaction: past the
	// 1,000 pages (4 MB) of log that start a checkpoint.
	const rounds, perRound = 3, 400
	var maxLog int64
	for r := range rounds {
		before := size("qhronos.db")
		for range perRound {
			e := newEvent()
			e.Metadata = pad
			mustCreate(t, s, e)
		}
		maxLog = max(maxLog, size("qhronos.db-wal"))
		// The round reaches the database file while the store stays open.
		copied := qhronostest.Eventually(60*time.Second, nil, func() bool {
			return size("qhronos.db") >= before+int64(perRound)*padding
		})
		require.True(t, copied, "round %d: the database file stayed at %d bytes, the log at %d",
			r, size("qhronos.db"), size("qhronos.db-wal"))
	}
	// The log is written over from its start once it was copied back: it
	// stays near the 4 MB that start a checkpoint, where the rounds wrote
	// about 15 MB of events and more than twice that of log.
	require.Less(t, max(maxLog, size("qhronos.db-wal")), int64(12<<20), "the log grows with every write")
}
