// Package helm tests the Helm chart in ./qhronos: it renders the chart with
// Helm's own Go packages (no helm binary, no cluster, no network) for
// several value sets and checks the objects a deployment relies on. It is a
// module of its own so the main module's builds and tests never compile the
// Kubernetes libraries Helm pulls in.
package helm

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/qhronos/qhronos/internal/config"
)

const chartDir = "qhronos"

const dbURL = "postgres://qhronos:db-password-1234@pg.example.internal:5432/qhronos?sslmode=require"

// rendered is one render's objects by kind and name.
type rendered struct {
	deployments map[string]*appsv1.Deployment
	configMaps  map[string]*corev1.ConfigMap
	secrets     map[string]*corev1.Secret
	jobs        map[string]*batchv1.Job
	pdbs        map[string]*policyv1.PodDisruptionBudget
	services    map[string]*corev1.Service
	kinds       map[string][]string // every kind -> names, including CRDs such as ServiceMonitor
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return ch
}

// render renders the chart as `helm install rel` would, with vals over
// values.yaml.
func render(t *testing.T, vals string) (*rendered, error) {
	t.Helper()
	ch := loadChart(t)
	over, err := chartutil.ReadValues([]byte(vals))
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	rv, err := chartutil.ToRenderValues(ch, over.AsMap(),
		chartutil.ReleaseOptions{Name: "rel", Namespace: "jobs", IsInstall: true, Revision: 1}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatalf("render values: %v", err)
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		return nil, err
	}
	r := &rendered{
		deployments: map[string]*appsv1.Deployment{}, configMaps: map[string]*corev1.ConfigMap{},
		secrets: map[string]*corev1.Secret{}, jobs: map[string]*batchv1.Job{},
		pdbs: map[string]*policyv1.PodDisruptionBudget{}, services: map[string]*corev1.Service{}, kinds: map[string][]string{},
	}
	for name, body := range files {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(body, "\n---") {
			var head struct {
				Kind     string
				Metadata struct{ Name string }
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("%s: not YAML: %v\n%s", name, err, doc)
			}
			if head.Kind == "" {
				continue
			}
			r.kinds[head.Kind] = append(r.kinds[head.Kind], head.Metadata.Name)
			var obj any
			switch head.Kind {
			case "Deployment":
				obj = &appsv1.Deployment{}
			case "ConfigMap":
				obj = &corev1.ConfigMap{}
			case "Secret":
				obj = &corev1.Secret{}
			case "Job":
				obj = &batchv1.Job{}
			case "PodDisruptionBudget":
				obj = &policyv1.PodDisruptionBudget{}
			case "Service":
				obj = &corev1.Service{}
			default:
				continue
			}
			if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Fatalf("%s: %s %s does not match its Kubernetes type: %v", name, head.Kind, head.Metadata.Name, err)
			}
			switch o := obj.(type) {
			case *appsv1.Deployment:
				r.deployments[o.Name] = o
			case *corev1.ConfigMap:
				r.configMaps[o.Name] = o
			case *corev1.Secret:
				r.secrets[o.Name] = o
			case *batchv1.Job:
				r.jobs[o.Name] = o
			case *policyv1.PodDisruptionBudget:
				r.pdbs[o.Name] = o
			case *corev1.Service:
				r.services[o.Name] = o
			}
		}
	}
	return r, nil
}

func mustRender(t *testing.T, vals string) *rendered {
	t.Helper()
	r, err := render(t, vals)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

// settings is what qhronosd in a container would read: its environment
// (Secret references resolved from secret) and the mounted ConfigMap.
func settings(t *testing.T, r *rendered, c corev1.Container, secret map[string][]byte) (*config.Config, error) {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			v, ok := secret[ref.Key]
			if !ok && (ref.Optional == nil || !*ref.Optional) {
				t.Fatalf("%s: required key %s missing from Secret %s", e.Name, ref.Key, ref.Name)
			}
			env[e.Name] = string(v)
		default:
			t.Fatalf("%s: unexpected value source", e.Name)
		}
	}
	if path := env[config.ConfigEnv]; path != "" {
		cm := r.configMaps["rel-qhronos"]
		if cm == nil {
			t.Fatalf("%s=%s but no ConfigMap rel-qhronos", config.ConfigEnv, path)
		}
		file := filepath.Join(t.TempDir(), filepath.Base(path))
		if err := os.WriteFile(file, []byte(cm.Data[filepath.Base(path)]), 0o600); err != nil {
			t.Fatal(err)
		}
		env[config.ConfigEnv] = file
	}
	for name := range env {
		if _, ok := config.LookupKey(strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, config.EnvPrefix), "_", "."))); !ok &&
			name != config.ConfigEnv && !isKnownEnv(name) {
			t.Errorf("container %s sets %s, which is no setting of qhronosd", c.Name, name)
		}
	}
	cfg, warnings, err := config.Load(nil, func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	if len(warnings) > 0 {
		t.Errorf("container %s: config warnings %v", c.Name, warnings)
	}
	return cfg, cfg.Validate()
}

func isKnownEnv(name string) bool {
	for _, k := range config.Keys() {
		if k.Env == name {
			return true
		}
	}
	return false
}

func hook(annotations map[string]string) []string {
	return strings.Split(annotations["helm.sh/hook"], ",")
}

// With only a database URL, one Deployment serves and dispatches; it is
// probed on /ready and /health, outlives its drain, runs read-only and
// non-root, and its configuration loads and validates as production.
func TestChartCombined(t *testing.T) {
	t.Parallel()
	r := mustRender(t, "database: {url: \""+dbURL+"\"}\nredis: {url: redis://:redis-pass-5678@redis.example.internal:6379/0}\n")

	d := r.deployments["rel-qhronos-server"]
	if d == nil || len(r.deployments) != 1 {
		t.Fatalf("deployments %v, want rel-qhronos-server alone", r.kinds["Deployment"])
	}
	secret := r.secrets["rel-qhronos"]
	if secret == nil {
		t.Fatalf("no generated Secret rel-qhronos; kinds %v", r.kinds)
	}
	checkPod(t, r, d.Spec.Template.Spec, secret.Data, true)
	if got := r.services["rel-qhronos"].Spec.Selector["app.kubernetes.io/component"]; got != "server" {
		t.Errorf("Service routes to component %q, want server", got)
	}
	if r.pdbs["rel-qhronos-server"] == nil || r.pdbs["rel-qhronos-server"].Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("want a PodDisruptionBudget with maxUnavailable 1 for the server, got %v", r.pdbs)
	}
	for _, kind := range []string{"ServiceMonitor", "Ingress"} {
		if len(r.kinds[kind]) > 0 {
			t.Errorf("%s rendered though not enabled", kind)
		}
	}
	if len(r.kinds["ServiceAccount"]) != 1 || d.Spec.Template.Spec.ServiceAccountName != "rel-qhronos" {
		t.Errorf("want the pods on the chart's ServiceAccount, got %q (%v)", d.Spec.Template.Spec.ServiceAccountName, r.kinds["ServiceAccount"])
	}

	// The generated Secret: the URLs given, four distinct secrets long
	// enough for production; a hook before the migration, kept on uninstall.
	for _, k := range []string{"master-token", "jwt-secret", "hmac-default-secret", "secrets-encryption-key"} {
		if len(secret.Data[k]) < 32 {
			t.Errorf("generated %s has %d bytes, want >= 32", k, len(secret.Data[k]))
		}
	}
	if string(secret.Data["database-url"]) != dbURL {
		t.Errorf("database-url = %q", secret.Data["database-url"])
	}
	if !slices.Contains(hook(secret.Annotations), "pre-install") || secret.Annotations["helm.sh/hook-weight"] != "-10" ||
		secret.Annotations["helm.sh/resource-policy"] != "keep" {
		t.Errorf("the Secret must be a pre-install hook before the migration (weight -10), kept on uninstall: %v", secret.Annotations)
	}
	checkMigration(t, r, secret.Data)
	checkNoSecretInConfigMaps(t, r, secret.Data)
}

// Split mode: an API Deployment behind the Service (dispatch off) and a
// dispatcher (dispatch on), secrets from an existing Secret, a longer
// drain that lengthens the grace period, ServiceMonitor and Ingress.
func TestChartSplitExistingSecret(t *testing.T) {
	t.Parallel()
	r := mustRender(t, `
mode: split
secrets: {existingSecret: qhronos-prod}
shutdown: {drainSeconds: 120}
config:
  scheduler: {workers: 128, lookahead: 48h}
  log: {level: debug}
serviceMonitor: {enabled: true}
ingress: {enabled: true, className: nginx}
`)
	if len(r.secrets) != 0 {
		t.Errorf("an existing Secret is used, none generated: got %v", r.kinds["Secret"])
	}
	// What the operator's Secret holds.
	secret := map[string][]byte{"database-url": []byte(dbURL), "master-token": []byte(strings.Repeat("m", 40)),
		"jwt-secret": []byte(strings.Repeat("j", 40)), "hmac-default-secret": []byte(strings.Repeat("h", 40)),
		"secrets-encryption-key": []byte(strings.Repeat("e", 40))}
	api, disp := r.deployments["rel-qhronos-api"], r.deployments["rel-qhronos-dispatcher"]
	if api == nil || disp == nil || len(r.deployments) != 2 {
		t.Fatalf("deployments %v, want rel-qhronos-api and rel-qhronos-dispatcher", r.kinds["Deployment"])
	}
	for _, c := range append(api.Spec.Template.Spec.Containers, disp.Spec.Template.Spec.Containers...) {
		for _, e := range c.Env {
			if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef.Name != "qhronos-prod" {
				t.Errorf("%s reads Secret %s, want qhronos-prod", e.Name, ref.SecretKeyRef.Name)
			}
		}
	}
	apiCfg := checkPod(t, r, api.Spec.Template.Spec, secret, false)
	dispCfg := checkPod(t, r, disp.Spec.Template.Spec, secret, true)
	if apiCfg.Scheduler.Workers != 128 || apiCfg.Scheduler.Lookahead != 48*time.Hour || dispCfg.Log.Level != "debug" {
		t.Errorf("config from values not applied: workers %d lookahead %s level %s",
			apiCfg.Scheduler.Workers, apiCfg.Scheduler.Lookahead, dispCfg.Log.Level)
	}
	if dispCfg.Scheduler.DrainTimeout != 120*time.Second {
		t.Errorf("drain timeout %s, want shutdown.drainSeconds = 120s", dispCfg.Scheduler.DrainTimeout)
	}
	if got := r.services["rel-qhronos"].Spec.Selector["app.kubernetes.io/component"]; got != "api" {
		t.Errorf("Service routes to component %q, want api (the dispatcher takes no requests)", got)
	}
	if len(r.pdbs) != 2 {
		t.Errorf("want a PodDisruptionBudget per Deployment, got %v", r.kinds["PodDisruptionBudget"])
	}
	for _, kind := range []string{"ServiceMonitor", "Ingress"} {
		if len(r.kinds[kind]) != 1 {
			t.Errorf("%s enabled but rendered %v", kind, r.kinds[kind])
		}
	}
	checkMigration(t, r, secret)
	checkNoSecretInConfigMaps(t, r, secret)
}

// checkPod checks one qhronosd pod and returns the settings it would run with.
func checkPod(t *testing.T, r *rendered, pod corev1.PodSpec, secret map[string][]byte, dispatch bool) *config.Config {
	t.Helper()
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	probePath := func(p *corev1.Probe) string {
		if p == nil || p.HTTPGet == nil {
			return "(none)"
		}
		return p.HTTPGet.Path
	}
	if got := probePath(c.ReadinessProbe); got != "/ready" {
		t.Errorf("readiness probe GET %s, want /ready (503 while the database is down)", got)
	}
	if got := probePath(c.LivenessProbe); got != "/health" {
		t.Errorf("liveness probe GET %s, want /health (a database outage must not restart the pods)", got)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resource requests %v, want cpu and memory", c.Resources.Requests)
	}
	sc, psc := c.SecurityContext, pod.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("container security context %+v, want a read-only root file system and no privilege escalation", sc)
	}
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("pod security context %+v, want non-root", psc)
	}
	cfg, err := settings(t, r, c, secret)
	if err != nil {
		t.Fatalf("qhronosd would refuse this pod's configuration: %v", err)
	}
	if !cfg.Production() || cfg.Database.URL != dbURL {
		t.Errorf("want production on %s, got database.url %q", dbURL, cfg.Database.URL)
	}
	if cfg.Scheduler.Dispatch != dispatch {
		t.Errorf("scheduler.dispatch = %v, want %v", cfg.Scheduler.Dispatch, dispatch)
	}
	if want := fmt.Sprintf("0.0.0.0:%d", c.Ports[0].ContainerPort); cfg.Server.Addr != want {
		t.Errorf("server.addr %q, want %q: the probes and the Service reach the container port", cfg.Server.Addr, want)
	}
	grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	if need := cfg.Server.ShutdownTimeout + cfg.Scheduler.DrainTimeout; grace <= need {
		t.Errorf("terminationGracePeriodSeconds %s must exceed shutdown_timeout + drain_timeout (%s), or Kubernetes kills the drain", grace, need)
	}
	return cfg
}

// The migration runs as a Job hook before install and upgrade, after the
// Secret, with the same database and secrets as the server.
func checkMigration(t *testing.T, r *rendered, secret map[string][]byte) {
	t.Helper()
	job := r.jobs["rel-qhronos-migrate"]
	if job == nil {
		t.Fatalf("no migration Job; kinds %v", r.kinds)
	}
	if h := hook(job.Annotations); !slices.Contains(h, "pre-install") || !slices.Contains(h, "pre-upgrade") {
		t.Errorf("migration Job hook %v, want pre-install and pre-upgrade", h)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if strings.Join(c.Args, " ") != "migrate up" {
		t.Errorf("migration runs %v, want migrate up", c.Args)
	}
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever || job.Spec.BackoffLimit == nil {
		t.Errorf("migration Job restart policy %q, backoff %v", job.Spec.Template.Spec.RestartPolicy, job.Spec.BackoffLimit)
	}
	if sa := job.Spec.Template.Spec.ServiceAccountName; sa != "" {
		t.Errorf("the migration runs before the chart's ServiceAccount exists, yet names %q", sa)
	}
	cfg, err := settings(t, r, c, secret)
	if err != nil {
		t.Fatalf("qhronosd migrate would refuse its configuration: %v", err)
	}
	if cfg.Database.URL != dbURL {
		t.Errorf("migration database.url %q, want %q", cfg.Database.URL, dbURL)
	}
}

// No ConfigMap holds a secret, a URL with a password, or any value of the Secret.
func checkNoSecretInConfigMaps(t *testing.T, r *rendered, secret map[string][]byte) {
	t.Helper()
	if len(r.configMaps) == 0 {
		t.Fatal("no ConfigMap")
	}
	for name, cm := range r.configMaps {
		for file, data := range cm.Data {
			for k, v := range secret {
				if len(v) > 0 && strings.Contains(data, string(v)) {
					t.Errorf("ConfigMap %s %s holds the Secret's %s", name, file, k)
				}
			}
			for _, bad := range []string{"password", "postgres://", "redis://", "master_token", "jwt_secret", "default_secret", "encryption_key"} {
				if strings.Contains(data, bad) {
					t.Errorf("ConfigMap %s %s mentions %q:\n%s", name, file, bad, data)
				}
			}
		}
	}
}

// Values that would put a secret in the ConfigMap, or break the grace
// period, stop the render with a message naming the value.
func TestChartRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ vals, want string }{
		{"{}", "database.url: set the PostgreSQL URL"},
		{`{database: {url: x}, config: {auth: {master_token: abcdefabcdefabcdefabcdefabcdefabcdef}}}`, "config.auth.master_token: secrets and URLs do not belong in the ConfigMap"},
		{`{database: {url: x}, config: {database: {url: "` + dbURL + `"}}}`, "config.database.url:"},
		{`{database: {url: x}, config: {redis: {password: p}}}`, "config.redis.password:"},
		{`{database: {url: x}, config: {notifications: {smtp: {password: p}}}}`, "config.notifications.smtp.password:"},
		{`{database: {url: x}, config: {scheduler: {drain_timeout: 5m}}}`, "config.scheduler.drain_timeout: set shutdown.drainSeconds"},
		{`{database: {url: x}, config: {server: {shutdown_timeout: 5m}}}`, "config.server.shutdown_timeout: set shutdown.httpSeconds"},
		{`{database: {url: x}, mode: both}`, `mode: must be combined or split, got "both"`},
	} {
		_, err := render(t, tc.vals)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %s: got error %v, want one containing %q", tc.vals, err, tc.want)
		}
	}
}

// helm lint, as the CLI runs it, finds nothing wrong with the chart for
// each value set (offline: no schema download, no cluster).
func TestChartLint(t *testing.T) {
	t.Parallel()
	for _, vals := range []string{
		"database: {url: \"" + dbURL + "\"}",
		"{mode: split, secrets: {existingSecret: qhronos-prod}, serviceMonitor: {enabled: true}, ingress: {enabled: true}}",
	} {
		v, err := chartutil.ReadValues([]byte(vals))
		if err != nil {
			t.Fatal(err)
		}
		l := lint.All(chartDir, v.AsMap(), "jobs", false)
		for _, m := range l.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("lint with %s: %s", vals, m)
			}
		}
	}
}
