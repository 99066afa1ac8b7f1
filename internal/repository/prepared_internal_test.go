package repository

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPreparedChunksArePowersOfTwoUpToTheLimit(t *testing.T) {
	for n := 0; n <= 1100; n++ {
		sum := 0
		for i, size := range preparedChunks(n, 256) {
			require.LessOrEqual(t, size, 256)
			require.Equal(t, 0, size&(size-1), "n=%d: %d is not a power of two", n, size)
			if i > 0 {
				require.LessOrEqual(t, size, preparedChunks(n, 256)[i-1], "largest first")
			}
			sum += size
		}
		require.Equal(t, n, sum)
	}
	require.Equal(t, []int{256, 32, 8, 4}, preparedChunks(300, 256))
	require.Equal(t, []int{1000, 1000, 7}, fixedChunks(2007, 1000))
}

// Hot statements run prepared once the background preparation is done,
// inside transactions too, and many transactions asking for new texts at
// once (each holding a connection) do not wait on each other for one.
func TestHotStatementsArePreparedOnceAndServeTransactions(t *testing.T) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, t.TempDir())
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	_, err = s.exec(ctx, `CREATE TABLE hot (k INTEGER NOT NULL, v TEXT NOT NULL)`)
	require.NoError(t, err)

	insert := func(tx *Store, k int) error {
		sizes := preparedChunks(k%7+1, 4)
		for _, n := range sizes {
			q := `INSERT INTO hot (k, v) VALUES ` + strings.TrimSuffix(strings.Repeat("(?, 'x'), ", n), ", ")
			args := make([]any, n)
			for i := range args {
				args[i] = k
			}
			if _, err := tx.execHot(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := g * 100; k < g*100+20; k++ {
				if err := s.WithTx(ctx, func(tx *Store) error { return insert(tx, k) }); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var rows int
	require.NoError(t, s.get(ctx, &rows, `SELECT COUNT(*) FROM hot`))
	want := 0
	for g := range 16 {
		for k := g * 100; k < g*100+20; k++ {
			want += k%7 + 1
		}
	}
	require.Equal(t, want, rows, "every row written once, prepared or not")

	// Every text asked for is prepared by now, or soon: later calls use it.
	q := `SELECT COUNT(*) FROM hot WHERE k = ?`
	require.Eventually(t, func() bool { return s.stmts.get(s.db, q) != nil }, time.Minute, 10*time.Millisecond)
	var got []int
	require.NoError(t, s.WithTx(ctx, func(tx *Store) error { return tx.selectHot(ctx, &got, q, 3) }))
	require.Equal(t, []int{4}, got)
}
