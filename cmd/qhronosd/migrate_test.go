package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// files lists every file under dir (relative paths), or nil when dir does
// not exist.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	sort.Strings(out)
	return out
}

// `qhronosd migrate status` reads only: it creates no data directory, no
// database and no secrets, works while the server holds the directory, and
// on PostgreSQL needs only the database URL.
func TestMigrateStatusOnlyReads(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		code, out, errOut := runCmd(t, "migrate", "status", "--data-dir", dir)
		require.Equal(t, 0, code, "stderr: %s", errOut)
		require.Contains(t, out, "no database in "+dir)
		require.Contains(t, out, " pending\n")
		require.NoDirExists(t, dir, "status created the data directory")

		code, _, errOut = runCmd(t, "migrate", "up", "--data-dir", dir)
		require.Equal(t, 0, code, "stderr: %s", errOut)
		// As a running server does: hold the directory.
		release, err := config.LockDataDir(dir)
		require.NoError(t, err)
		defer func() { _ = release() }()
		before := files(t, dir)
		code, out, errOut = runCmd(t, "migrate", "status", "--data-dir", dir)
		require.Equal(t, 0, code, "stderr: %s", errOut)
		require.Contains(t, out, " applied ")
		require.NotContains(t, out, " pending\n")
		require.Equal(t, before, files(t, dir), "status wrote nothing in the data directory")

		// Beside a server that has the database open (its WAL in use).
		store, err := repository.OpenSQLite(context.Background(), dir)
		require.NoError(t, err)
		defer store.Close()
		_, err = store.Migrate(context.Background())
		require.NoError(t, err)
		code, out, errOut = runCmd(t, "migrate", "status", "--data-dir", dir)
		require.Equal(t, 0, code, "stderr: %s", errOut)
		require.Contains(t, out, " applied ")
	})
	t.Run("postgres", func(t *testing.T) {
		url := repositorytest.PostgresSchema(t)
		for _, k := range []string{"QHRONOS_AUTH_MASTER_TOKEN", "QHRONOS_AUTH_JWT_SECRET", "QHRONOS_HMAC_DEFAULT_SECRET",
			"QHRONOS_SECRETS_ENCRYPTION_KEY"} {
			t.Setenv(k, "")
		}
		code, out, errOut := runCmd(t, "migrate", "status", "--database-url", url)
		require.Equal(t, 0, code, "no production secrets needed: %s", errOut)
		require.Contains(t, out, " pending\n")
		require.NotContains(t, out, " applied ")
		db, err := sqlx.Open("pgx", url)
		require.NoError(t, err)
		defer db.Close()
		var exists bool
		require.NoError(t, db.Get(&exists, `SELECT to_regclass('schema_migrations') IS NOT NULL`))
		require.False(t, exists, "status created schema_migrations")
		require.False(t, strings.Contains(errOut, "secret"), "%s", errOut)
	})
}
