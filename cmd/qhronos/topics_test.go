package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// topics create|list|get|update|delete manage the catalogue: --schema reads
// a JSON Schema from a file or stdin, update sends only the flags given and
// --no-schema removes the schema (null). list shows NAME, DESCRIPTION,
// SCHEMA and UPDATED. A bad name or schema is the server's 400 naming the
// field, a read-only token's change its 403; a schema that is not JSON and
// conflicting or missing flags are usage errors, an unknown topic exit 3.
func TestTopicCommands(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		schema := filepath.Join(t.TempDir(), "digest.schema.json")
		require.NoError(t, os.WriteFile(schema, []byte(`{
  "type": "object",
  "required": ["plan"],
  "properties": {"plan": {"type": "string"}}
}
`), 0o600))

		var daily client.Topic
		ok(t, e, &daily, "topics", "create", "digest.daily", "--description", "the daily digest", "--schema", schema)
		require.Equal(t, "digest.daily", daily.Name)
		require.Equal(t, "the daily digest", daily.Description)
		require.NotNil(t, daily.Schema)
		require.JSONEq(t, `{"type":"object","required":["plan"],"properties":{"plan":{"type":"string"}}}`,
			string(*daily.Schema))
		r := cli(t, e, "", "topics", "create", "digest.weekly")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "digest.weekly", field(t, r.stdout, "NAME"))
		require.Equal(t, "-", field(t, r.stdout, "DESCRIPTION"))
		require.Equal(t, "none", field(t, r.stdout, "SCHEMA"))
		require.Contains(t, r.stdout, "(times in ")

		r = cli(t, e, "", "topics", "list")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, []string{"NAME", "DESCRIPTION", "SCHEMA", "UPDATED"}, strings.Fields(strings.Split(r.stdout, "\n")[0]))
		require.Equal(t, []string{"digest.daily", "the", "daily", "digest", "yes"}, row(t, r.stdout, "digest.daily")[:5])
		require.Equal(t, []string{"digest.weekly", "-", "no"}, row(t, r.stdout, "digest.weekly")[:3])
		var topics []client.Topic
		ok(t, e, &topics, "topics", "list")
		require.Len(t, topics, 2)
		require.Equal(t, "digest.daily", topics[0].Name, "in name order")

		r = cli(t, e, "", "topics", "get", "digest.daily")
		require.Equal(t, 0, r.code, r.stderr)
		// One line, cut short (PostgreSQL may store the members in another order).
		require.True(t, strings.HasPrefix(field(t, r.stdout, "SCHEMA"), `{"`), r.stdout)
		require.Contains(t, field(t, r.stdout, "SCHEMA"), "…")
		require.Contains(t, field(t, r.stdout, "SCHEMA"), "(-o json shows it all)", "a long schema is cut short")
		require.Equal(t, "1", field(t, r.stdout, "VERSION"))

		// update sends only the flags given: the description leaves the
		// schema; a schema from stdin; --no-schema removes it.
		var got client.Topic
		ok(t, e, &got, "topics", "update", "digest.daily", "--description", "sent at 07:00")
		require.Equal(t, "sent at 07:00", got.Description)
		require.NotNil(t, got.Schema, "the schema stays")
		r = cli(t, e, `{"type": "object"}`, "topics", "update", "digest.weekly", "--schema", "-", "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		require.NoError(t, jsonDecode(r.stdout, &got))
		require.JSONEq(t, `{"type":"object"}`, string(*got.Schema))
		require.Empty(t, got.Description)
		r = cli(t, e, "", "topics", "get", "digest.weekly")
		require.Equal(t, `{"type":"object"}`, field(t, r.stdout, "SCHEMA"))
		var cleared client.Topic // a fresh variable: the API's null schema leaves a pointer as it was
		ok(t, e, &cleared, "topics", "update", "digest.daily", "--no-schema")
		require.Nil(t, cleared.Schema)
		require.Equal(t, "sent at 07:00", cleared.Description, "the description stays")
		r = cli(t, e, "", "topics", "list")
		require.Equal(t, "no", row(t, r.stdout, "digest.daily")[4])

		reader := scopedEnv(t, e, srv, "read", "")
		ok(t, reader, &topics, "topics", "list")
		require.Len(t, topics, 2, "every token reads the catalogue")
		notJSON := filepath.Join(t.TempDir(), "broken.json")
		require.NoError(t, os.WriteFile(notJSON, []byte(`{"type":`), 0o600))
		for _, tc := range []errCase{
			{"bad name", e, []string{"topics", "create", "Digest.Daily"}, exitError, "name: "},
			{"empty segment", e, []string{"topics", "create", "digest..daily"}, exitError, "name: "},
			{"name taken", e, []string{"topics", "create", "digest.daily"}, exitError, `name: a topic named "digest.daily" exists`},
			{"schema not an object", e, []string{"topics", "update", "digest.daily", "--schema", "-"}, exitError, "schema: "},
			{"schema not JSON", e, []string{"topics", "create", "digest.monthly", "--schema", notJSON}, exitUsage, "--schema: "},
			{"no schema file", e, []string{"topics", "create", "digest.monthly", "--schema", notJSON + ".gone"}, exitUsage, "--schema: "},
			{"both ways", e, []string{"topics", "update", "digest.daily", "--no-schema", "--schema", schema}, exitUsage, "--no-schema"},
			{"nothing to change", e, []string{"topics", "update", "digest.daily"}, exitUsage, "nothing to change"},
			{"no name", e, []string{"topics", "get"}, exitUsage, "NAME"},
			{"no schema on create", e, []string{"topics", "create", "x", "--no-schema"}, exitUsage, "unknown flag"},
			{"reader cannot create", reader, []string{"topics", "create", "digest.monthly"}, exitError, "403"},
			{"reader cannot delete", reader, []string{"topics", "delete", "digest.daily"}, exitError, "403"},
			{"unknown get", e, []string{"topics", "get", "digest.monthly"}, exitNotFound, "not found"},
			{"unknown update", e, []string{"topics", "update", "digest.monthly", "--description", "x"}, exitNotFound, "not found"},
		} {
			stdin := ""
			if tc.name == "schema not an object" {
				stdin = `[1, 2]`
			}
			r := cli(t, tc.env, stdin, tc.args...)
			require.Equal(t, tc.code, r.code, "%s: %s", tc.name, r.stderr)
			require.Contains(t, r.stderr, tc.stderr, tc.name)
		}

		ok(t, e, nil, "topics", "delete", "digest.weekly")
		r = cli(t, e, "", "topics", "delete", "digest.weekly")
		require.Equal(t, exitNotFound, r.code, r.stderr)
		ok(t, e, &topics, "topics", "list")
		require.Len(t, topics, 1)
	})
}

// scopedEnv is e with a newly minted token of access and, unless empty,
// scope (a tag).
func scopedEnv(t *testing.T, e env, srv *qhronostest.Server, access, scope string) env {
	t.Helper()
	args := []string{"tokens", "create", "--sub", "cli-" + access, "--access", access, "--expires", "1h"}
	if scope != "" {
		args = append(args, "--scope", scope)
	}
	var tok client.Token
	ok(t, e, &tok, args...)
	require.NotNil(t, tok.Token)
	return env{"QHRONOS_SERVER": srv.URL, "QHRONOS_TOKEN": *tok.Token, "QHRONOS_CREDENTIALS": e["QHRONOS_CREDENTIALS"]}
}
