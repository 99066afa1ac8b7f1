// Package deploy tests the monitoring files shipped in deploy/: every metric
// the Grafana dashboard and the Prometheus alert rules name is one a running
// qhronosd exports, and (with promtool, which CI installs) every dashboard
// query parses.
package deploy

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

func TestMain(m *testing.M) { qhronostest.Main(m) }

const (
	dashboardFile = "grafana/qhronos.json"
	alertsFile    = "prometheus/alerts.yml"
)

// dashboardExprs reads every query of the dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &dash))
	var exprs []string
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, q := range p.Targets {
			require.NotEmpty(t, q.Expr, "panel %q", p.Title)
			exprs = append(exprs, q.Expr)
		}
	}
	return exprs
}

// alertExprs reads every rule expression of the alert rules.
func alertExprs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(alertsFile)
	require.NoError(t, err)
	var rules struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	require.NoError(t, yaml.Unmarshal(raw, &rules))
	var exprs []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	require.NotEmpty(t, exprs)
	return exprs
}

var metricName = regexp.MustCompile(`\b(?:qhronos|process|go)_[a-z0-9_]+\b`)

// TestMonitoringNamesExportedMetrics starts a qhronosd, reads its /metrics
// and checks that each metric the dashboard and the rules query exists
// there (a histogram's _bucket, _count and _sum count as its family).
func TestMonitoringNamesExportedMetrics(t *testing.T) {
	t.Parallel()
	srv := qhronostest.Start(t, qhronostest.SQLite)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// The second scrape also sees the first one counted in the HTTP metrics.
	var families map[string]*dto.MetricFamily
	for range 2 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/metrics", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err = parser.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
	}

	used := map[string][]string{}
	for file, exprs := range map[string][]string{dashboardFile: dashboardExprs(t), alertsFile: alertExprs(t)} {
		for _, e := range exprs {
			for _, name := range metricName.FindAllString(e, -1) {
				used[name] = append(used[name], file)
			}
		}
	}
	require.NotEmpty(t, used)
	var missing []string
	for name, files := range used {
		family := name
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok {
				if f, found := families[base]; found && (f.GetType().String() == "HISTOGRAM" || f.GetType().String() == "SUMMARY") {
					family = base
				}
			}
		}
		if _, ok := families[family]; !ok {
			missing = append(missing, name+" (in "+strings.Join(files, ", ")+")")
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "metrics the monitoring files query but qhronosd does not export")
}

// TestDashboardQueriesParse checks every dashboard query with promtool, as
// recording rules (Grafana's $__rate_interval and $job filled in). CI
// installs promtool; elsewhere the test skips without it.
func TestDashboardQueriesParse(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool not installed (CI installs Debian's prometheus package)")
		}
		t.Skip("promtool not installed (Debian: apt-get install prometheus)")
	}
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for _, e := range dashboardExprs(t) {
		e = strings.NewReplacer("$__rate_interval", "5m", "$job", ".*").Replace(e)
		rules = append(rules, rule{Record: "dashboard:query", Expr: e})
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	require.NoError(t, os.WriteFile(file, out, 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	msg, err := exec.CommandContext(ctx, promtool, "check", "rules", file).CombinedOutput()
	require.NoError(t, err, "promtool check rules on the dashboard's queries:\n%s", msg)
}
