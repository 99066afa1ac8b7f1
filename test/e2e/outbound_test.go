package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// In production (database.url set) loopback stays closed even when the
// server itself listens on 127.0.0.1: a tenant's URL must not reach the
// services beside it. A loopback URL, literal or by name, is refused at
// create naming outbound.allow_cidrs, and nothing is written. (Names that
// resolve to loopback only later are refused at dial: internal/outbound's
// rebinding tests.)
func TestProductionNeverOpensLoopback(t *testing.T) {
	d := newDeployment(t)
	delete(d.env, "QHRONOS_OUTBOUND_ALLOW_CIDRS")
	local := newReceiver(t) // "another local service"
	p := d.start("prod")
	c := d.client()

	for _, target := range []string{local.srv.URL + "/status",
		strings.Replace(local.srv.URL, "127.0.0.1", "localhost", 1) + "/status",
		strings.Replace(local.srv.URL, "127.0.0.1", "[::ffff:127.0.0.1]", 1) + "/status"} {
		status, body, err := c.do("POST", p.url+"/events", map[string]any{"name": "probe",
			"start_time": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "tags": []string{"t"},
			"action": map[string]any{"type": "apicall", "params": map[string]any{"method": "GET", "url": target}}})
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", target, body)
		require.Contains(t, string(body), "outbound.allow_cidrs", target)
		require.Contains(t, string(body), `"field":"action.params.url"`, target)
	}
	status, body, err := c.do("GET", p.url+"/events", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.JSONEq(t, "[]", string(body), "nothing was written")
	require.Zero(t, local.total, "the local service never received a request")
}
