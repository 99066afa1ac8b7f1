package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// FuzzCreateEndpoint posts arbitrary endpoint bodies, on PostgreSQL (whose
// text refuses what SQLite stores): never a 5xx, a refused body writes no
// row, and no answer carries a write-only secret.
func FuzzCreateEndpoint(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","url":"http://127.0.0.1:9/h","tags":["team-a"]}`,
		`{"name":"a","url":"http://127.0.0.1:9/h","rate_limit":{"per_second":5,"burst":2},"max_concurrency":3,"timeout":"5s"}`,
		`{"name":"a","url":"http://127.0.0.1:9/h","headers":{"X-Team":"a"},"circuit":{"failures":2,"cool_down":"1s"}}`,
		`{"name":"a","url":"http://127.0.0.1:9/h","auth":{"type":"basic","username":"u","password":"pw-secret-1"}}`,
		`{"name":"a","url":"http://127.0.0.1:9/h","auth":{"type":"oauth2_client_credentials","token_url":"http://127.0.0.1:9/t","client_id":"c","client_secret":"pw-secret-1"}}`,
		`{"name":"a","url":"http://127.0.0.1:9/h","auth":{"type":"mtls","certificate":"x","private_key":"pw-secret-1"}}`,
		`{"name":"a\u0000","url":"http://127.0.0.1:9/h"}`,
		`{"name":"a","url":"http://127.0.0.1:9/h","headers":{"X-A":"\ud800"}}`,
		"{\"name\":\"a\",\"url\":\"http://127.0.0.1:9/h\",\"description\":\"\xff\"}",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	e := fuzzEnv(f, repositorytest.Postgres)
	tokens := fuzzTokens(e)
	count := func(t *testing.T) (n int) {
		require.NoError(t, e.store.DB().QueryRowContext(context.Background(),
			`SELECT (SELECT count(*) FROM endpoints) + (SELECT count(*) FROM endpoint_health)`).Scan(&n))
		return n
	}
	f.Fuzz(func(t *testing.T, body []byte, scoped bool) {
		e := e.withT(t)
		token := tokens[0]
		if scoped {
			token = tokens[1]
		}
		before := count(t)
		res := e.do("POST", "/endpoints", token, body)
		if res.Status >= 500 {
			t.Fatalf("status %d for body %q: %s", res.Status, body, res.Body)
		}
		var shown struct {
			Auth map[string]any `json:"auth"`
		}
		if json.Unmarshal(res.Body, &shown) == nil {
			for _, secret := range []string{"password", "client_secret", "private_key"} {
				if _, ok := shown.Auth[secret]; ok {
					t.Fatalf("an answer carries the write-only auth.%s: %s", secret, res.Body)
				}
			}
		}
		after := count(t)
		if res.Status >= 400 {
			assertErrorBody(t, res)
			if after != before {
				t.Fatalf("rows after a %d: got %d, want unchanged %d (body %q)", res.Status, after, before, body)
			}
			return
		}
		require.Equal(t, http.StatusCreated, res.Status)
		require.Equal(t, before+2, after, "an endpoint and its health row")
	})
}
