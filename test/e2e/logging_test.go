package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

// The embedded default logs one readable line per delivery attempt, and a
// rejected request (a client's 4xx) not at all at the default level.
func TestEmbeddedLogsEveryDelivery(t *testing.T) {
	dir := t.TempDir()
	p := startEmbedded(t, "embedded", dir, embeddedEnv(t))
	raw, err := os.ReadFile(filepath.Join(dir, "data", "secrets.json"))
	require.NoError(t, err)
	var secrets struct {
		MasterToken string `json:"master_token"`
	}
	require.NoError(t, json.Unmarshal(raw, &secrets))
	c := &client{t: t, token: secrets.MasterToken, http: &http.Client{Timeout: 5 * time.Second}}
	rc := newReceiver(t)

	status, _, err := c.do("POST", p.url+"/events", map[string]any{"name": "bad"})
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, status)
	id, err := c.createEvent(p, "logged", time.Now().Add(500*time.Millisecond), rc.URL())
	require.NoError(t, err)
	occ := c.onlyOccurrence(p, id)
	c.waitStatus(p, occ.ID, "completed", 15*time.Second)

	line := regexp.MustCompile(`(?m)^.*delivery attempt.*` + occ.ID + `.*$`).FindString(p.stderr.String())
	require.NotEmpty(t, line, "one line for the attempt:\n%s", p.stderr.String())
	for _, want := range []string{id, `"outcome": "completed"`, `"status_code": 200`, `"duration": "`} {
		require.Contains(t, line, want)
	}
	require.NotContains(t, p.stderr.String(), "request rejected", "a client's 400 is logged at debug only")
	require.NotContains(t, line, secrets.MasterToken)
}

// Production stays quiet about deliveries unless log.deliveries is set.
func TestProductionLogsDeliveriesOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "log.deliveries"}[on], func(t *testing.T) {
			d := newDeployment(t)
			if on {
				d.env["QHRONOS_LOG_DELIVERIES"] = "true"
			}
			p := d.start("prod")
			c := d.client()
			rc := newReceiver(t)
			id, err := c.createEvent(p, "quiet", time.Now().Add(300*time.Millisecond), rc.URL())
			require.NoError(t, err)
			occ := c.onlyOccurrence(p, id)
			c.waitStatus(p, occ.ID, "completed", 15*time.Second)
			logged := strings.Contains(p.stderr.String(), `"msg":"delivery attempt"`)
			require.Equal(t, on, logged, "stderr:\n%s", qhronostest.Tail(p.stderr.String(), 4<<10))
		})
	}
}
