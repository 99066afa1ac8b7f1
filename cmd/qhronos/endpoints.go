package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newEndpointsCmd(a *app) *cobra.Command {
	cmd := group("endpoints", "Manage endpoints: shared delivery targets with their own secret, limits, auth and health",
		newEndpointsCreateCmd(a), newEndpointsListCmd(a), newEndpointsGetCmd(a), newEndpointsUpdateCmd(a),
		newEndpointsDeleteCmd(a), newEndpointsEnableCmd(a), newEndpointsDisableCmd(a), newEndpointsRotateSecretCmd(a),
		newEndpointsTestCmd(a), newEndpointsCircuitHistoryCmd(a))
	cmd.Aliases = []string{"endpoint", "ep"}
	cmd.Example = `  qhronos endpoints create --name billing --url https://billing.example.com/hooks --rate 5 --tag billing
  qhronos endpoints create -f endpoint.json     # auth and circuit as the API's JSON
  qhronos events create --name ping --start "in 1 hour" --action '{"type":"webhook","params":{"endpoint_id":"…"}}'`
	return cmd
}

// endpointFlags are the members of an endpoint as flags; update sends only
// the flags given.
type endpointFlags struct {
	file, name, description, url, secret, timeout     string
	headers, tags, scopes                             []string
	rate                                              float64
	burst, maxConcurrency                             int
	authType, username, password, tokenURL, clientID  string
	clientSecret, audience, certFile, keyFile, caFile string
	noRateLimit, noAuth, noTimeout, creating          bool
}

func (f *endpointFlags) register(cmd *cobra.Command, creating bool) {
	f.creating = creating
	fs := cmd.Flags()
	fs.StringVarP(&f.file, "file", "f", "", "read the endpoint as JSON (the API's fields) from a file, - for stdin; flags override it")
	fs.StringVar(&f.name, "name", "", "the endpoint's name")
	fs.StringVar(&f.description, "description", "", "description")
	fs.StringVar(&f.url, "url", "", "where deliveries go (http or https)")
	if creating {
		fs.StringVar(&f.secret, "secret", "", "signing secret (default: a generated whsec_ secret, shown once)")
	}
	fs.StringArrayVar(&f.headers, "header", nil, "a header added to every request, NAME=VALUE (repeatable)")
	fs.StringSliceVar(&f.tags, "tag", nil, "tag scoping the endpoint like an event (repeat or comma-separate)")
	fs.Float64Var(&f.rate, "rate", 0, "rate limit: deliveries per second across instances")
	fs.IntVar(&f.burst, "burst", 0, "rate limit burst (default: --rate rounded up)")
	fs.IntVar(&f.maxConcurrency, "max-concurrency", 0, "deliveries in flight at once across instances (0 unlimited)")
	fs.StringVar(&f.timeout, "timeout", "", "per-attempt timeout (e.g. 10s)")
	fs.StringVar(&f.authType, "auth", "", "outbound auth: basic, oauth2_client_credentials or mtls")
	fs.StringVar(&f.username, "username", "", "basic auth user")
	fs.StringVar(&f.password, "password", "", "basic auth password (write-only)")
	fs.StringVar(&f.tokenURL, "token-url", "", "OAuth2 token URL")
	fs.StringVar(&f.clientID, "client-id", "", "OAuth2 client id")
	fs.StringVar(&f.clientSecret, "client-secret", "", "OAuth2 client secret (write-only)")
	fs.StringSliceVar(&f.scopes, "scope", nil, "OAuth2 scope (repeat or comma-separate)")
	fs.StringVar(&f.audience, "audience", "", "OAuth2 audience")
	fs.StringVar(&f.certFile, "cert-file", "", "mTLS client certificate (PEM file)")
	fs.StringVar(&f.keyFile, "key-file", "", "mTLS private key (PEM file, write-only)")
	fs.StringVar(&f.caFile, "ca-file", "", "mTLS: a CA to trust for the receiver (PEM file)")
	if !creating {
		fs.BoolVar(&f.noRateLimit, "no-rate-limit", false, "remove the rate limit")
		fs.BoolVar(&f.noAuth, "no-auth", false, "remove the outbound auth")
		fs.BoolVar(&f.noTimeout, "no-timeout", false, "remove the endpoint's timeout")
	}
}

// readOnlyEndpointFields are the endpoint resource's fields no request sets.
var readOnlyEndpointFields = []string{"id", "state", "disabled_reason", "state_changed_at", "opened_at",
	"cool_down_until", "health", "previous_secret_expires_at", "version", "created_by", "created_at", "updated_at",
	"secret", "resumed"}

// body builds the request's members from --file and the flags that were
// set.
func (f *endpointFlags) body(cmd *cobra.Command, stdin io.Reader) (map[string]any, error) {
	out := map[string]any{}
	if f.file != "" {
		b, err := readInput(f.file, stdin)
		if err != nil {
			return nil, usagef("--file: %v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&out); err != nil {
			return nil, usagef("--file: not a JSON object: %v", err)
		}
		// What `endpoints get -o json` prints is accepted.
		for _, k := range readOnlyEndpointFields {
			delete(out, k)
		}
		if !f.creating {
			delete(out, "secret")
		}
	}
	set := cmd.Flags().Changed
	for flag, member := range map[string]string{"name": "name", "description": "description", "url": "url",
		"secret": "secret", "timeout": "timeout"} {
		if set(flag) {
			v, _ := cmd.Flags().GetString(flag)
			out[member] = v
		}
	}
	if set("tag") {
		out["tags"] = f.tags
	}
	if set("max-concurrency") {
		out["max_concurrency"] = f.maxConcurrency
	}
	if set("header") {
		headers := map[string]string{}
		for _, h := range f.headers {
			name, value, ok := strings.Cut(h, "=")
			if !ok || name == "" {
				return nil, usagef("--header %q: use NAME=VALUE", h)
			}
			headers[name] = value
		}
		out["headers"] = headers
	}
	if set("rate") || set("burst") {
		if !set("rate") {
			return nil, usagef("--burst needs --rate")
		}
		rl := map[string]any{"per_second": f.rate}
		if set("burst") {
			rl["burst"] = f.burst
		}
		out["rate_limit"] = rl
	}
	if f.noRateLimit {
		out["rate_limit"] = nil
	}
	if f.noTimeout {
		out["timeout"] = nil
	}
	auth, err := f.auth(set)
	if err != nil {
		return nil, err
	}
	if auth != nil {
		out["auth"] = auth
	}
	if f.noAuth {
		out["auth"] = nil
	}
	if f.creating && (out["name"] == nil || out["url"] == nil) {
		return nil, usagef("--name and --url are required (or give them in --file)")
	}
	return out, nil
}

// auth builds the auth member from the auth flags; nil when none was set.
func (f *endpointFlags) auth(set func(string) bool) (map[string]any, error) {
	if !set("auth") {
		for _, name := range []string{"username", "password", "token-url", "client-id", "client-secret", "scope",
			"audience", "cert-file", "key-file", "ca-file"} {
			if set(name) {
				return nil, usagef("--%s needs --auth", name)
			}
		}
		return nil, nil
	}
	auth := map[string]any{"type": f.authType}
	for flag, member := range map[string]string{"username": "username", "password": "password",
		"token-url": "token_url", "client-id": "client_id", "client-secret": "client_secret", "audience": "audience"} {
		if set(flag) {
			auth[member] = map[string]string{"username": f.username, "password": f.password, "token-url": f.tokenURL,
				"client-id": f.clientID, "client-secret": f.clientSecret, "audience": f.audience}[flag]
		}
	}
	if set("scope") {
		auth["scopes"] = f.scopes
	}
	for flag, member := range map[string]string{"cert-file": "certificate", "key-file": "private_key", "ca-file": "ca_certificate"} {
		if !set(flag) {
			continue
		}
		path := map[string]string{"cert-file": f.certFile, "key-file": f.keyFile, "ca-file": f.caFile}[flag]
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, usagef("--%s: %v", flag, err)
		}
		auth[member] = string(b)
	}
	return auth, nil
}

// readInput reads a file, or stdin for "-".
func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}

func endpointTable(ep *client.Endpoint) *table {
	rate := "unlimited"
	if ep.RateLimit != nil {
		rate = strconv.FormatFloat(ep.RateLimit.PerSecond, 'f', -1, 64) + "/s"
		if ep.RateLimit.Burst != nil {
			rate += fmt.Sprintf(" (burst %d)", *ep.RateLimit.Burst)
		}
	}
	auth := "none"
	if ep.Auth != nil {
		auth = string(ep.Auth.Type)
	}
	ratio := "-"
	if ep.Health.SuccessRatio != nil {
		ratio = fmt.Sprintf("%.1f%% of %d", 100**ep.Health.SuccessRatio, ep.Health.Attempts)
	}
	p50 := "-"
	if ep.Health.LatencyMs.P50 != nil {
		p50 = fmt.Sprintf("%d ms", *ep.Health.LatencyMs.P50)
	}
	lastError := "-"
	if ep.Health.LastError != nil {
		lastError = *ep.Health.LastError
	}
	state := string(ep.State)
	if ep.DisabledReason != "" {
		state += " (" + ep.DisabledReason + ")"
	}
	t := fields("id", ep.ID, "name", ep.Name, "url", ep.URL, "state", state, "success (last hour)", ratio,
		"latency p50", p50, "last error", lastError, "rate limit", rate,
		"max concurrency", fmt.Sprint(ep.MaxConcurrency), "auth", auth, "tags", strings.Join(ep.Tags, ", "),
		"version", fmt.Sprint(ep.Version))
	if ep.Secret != nil {
		t.add("secret (shown once)", *ep.Secret)
	}
	if ep.PreviousSecretExpiresAt != nil {
		t.add("previous secret until", ep.PreviousSecretExpiresAt.Format(time.RFC3339))
	}
	if ep.Resumed != nil {
		t.add("resumed", fmt.Sprint(*ep.Resumed))
	}
	return t
}

func newEndpointsCreateCmd(a *app) *cobra.Command {
	var f endpointFlags
	cmd := &cobra.Command{
		Use:   "create --name NAME --url URL [flags]",
		Short: "Create an endpoint; its signing secret is shown once",
		Example: `  qhronos endpoints create --name billing --url https://billing.example.com/hooks --rate 5 --max-concurrency 2
  qhronos endpoints create --name erp --url https://erp.example.com/in --auth oauth2_client_credentials \
    --token-url https://id.example.com/token --client-id qhronos --client-secret "$SECRET" --scope erp.write`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := f.body(cmd, a.stdin)
			if err != nil {
				return err
			}
			var in client.EndpointInput
			if err := decodeStrict(body, &in); err != nil {
				return usagef("--file: not an endpoint: %v", err)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ep, err := c.Endpoints.Create(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.render(ep, endpointTable(ep))
		},
	}
	f.register(cmd, true)
	return cmd
}

// decodeStrict turns members into v, refusing unknown ones.
func decodeStrict(members map[string]any, v any) error {
	b, err := json.Marshal(members)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func newEndpointsUpdateCmd(a *app) *cobra.Command {
	var f endpointFlags
	cmd := &cobra.Command{
		Use:   "update ENDPOINT_ID [flags]",
		Short: "Change an endpoint: only the flags given change; omitted write-only secrets are kept",
		Example: `  qhronos endpoints update 5c9d… --rate 10 --burst 20
  qhronos endpoints update 5c9d… --no-rate-limit --timeout 5s`,
		Args: exactArgs("ENDPOINT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := f.body(cmd, a.stdin)
			if err != nil {
				return err
			}
			if len(body) == 0 {
				return usagef("nothing to change: give a flag or --file")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ep, err := c.Endpoints.UpdateFields(cmd.Context(), args[0], body)
			if err != nil {
				return err
			}
			return a.render(ep, endpointTable(ep))
		},
	}
	f.register(cmd, false)
	return cmd
}

func newEndpointsListCmd(a *app) *cobra.Command {
	var tags []string
	var state string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List endpoints, newest first",
		Example: `  qhronos endpoints list --tag billing --state open`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p := client.ListEndpointsParams{Tags: tags}
			if state != "" {
				s := client.ListEndpointsParamsState(state)
				if !s.Valid() {
					return usagef("--state: healthy, degraded, open or disabled")
				}
				p.State = &s
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			eps := []client.Endpoint{}
			for ep, err := range c.Endpoints.All(cmd.Context(), p) {
				if err != nil {
					return err
				}
				eps = append(eps, ep)
			}
			t := &table{header: []string{"ID", "NAME", "STATE", "URL", "SUCCESS", "TAGS"}}
			for _, ep := range eps {
				ratio := "-"
				if ep.Health.SuccessRatio != nil {
					ratio = fmt.Sprintf("%.1f%%", 100**ep.Health.SuccessRatio)
				}
				t.add(ep.ID, ep.Name, string(ep.State), ep.URL, ratio, strings.Join(ep.Tags, ", "))
			}
			return a.render(eps, t)
		},
	}
	cmd.Flags().StringArrayVar(&tags, "tag", nil, "endpoints with any of these tags (repeatable)")
	cmd.Flags().StringVar(&state, "state", "", "only endpoints in this state: healthy, degraded, open or disabled")
	return cmd
}

// endpointCmd is a command that takes an endpoint id and shows the
// endpoint call returns.
func endpointCmd(a *app, use, short, example string, call func(c *client.Client, cmd *cobra.Command, id string) (*client.Endpoint, error)) *cobra.Command {
	return &cobra.Command{
		Use:     use + " ENDPOINT_ID",
		Short:   short,
		Example: example,
		Args:    exactArgs("ENDPOINT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ep, err := call(c, cmd, args[0])
			if err != nil {
				return err
			}
			return a.render(ep, endpointTable(ep))
		},
	}
}

func newEndpointsGetCmd(a *app) *cobra.Command {
	return endpointCmd(a, "get", "Show one endpoint with its state and recent health", "  qhronos endpoints get 5c9d…",
		func(c *client.Client, cmd *cobra.Command, id string) (*client.Endpoint, error) {
			return c.Endpoints.Get(cmd.Context(), id)
		})
}

func newEndpointsEnableCmd(a *app) *cobra.Command {
	return endpointCmd(a, "enable", "Enable an endpoint; occurrences that failed while it was disabled resume within the catch-up window",
		"  qhronos endpoints enable 5c9d…",
		func(c *client.Client, cmd *cobra.Command, id string) (*client.Endpoint, error) {
			return c.Endpoints.Enable(cmd.Context(), id)
		})
}

func newEndpointsDisableCmd(a *app) *cobra.Command {
	return endpointCmd(a, "disable", "Disable an endpoint: its due occurrences fail with reason endpoint_disabled",
		"  qhronos endpoints disable 5c9d…",
		func(c *client.Client, cmd *cobra.Command, id string) (*client.Endpoint, error) {
			return c.Endpoints.Disable(cmd.Context(), id)
		})
}

func newEndpointsRotateSecretCmd(a *app) *cobra.Command {
	var grace time.Duration
	cmd := endpointCmd(a, "rotate-secret", "Issue a new signing secret (shown once); the old one signs too until the grace ends",
		"  qhronos endpoints rotate-secret 5c9d… --grace 48h",
		func(c *client.Client, cmd *cobra.Command, id string) (*client.Endpoint, error) {
			return c.Endpoints.RotateSecret(cmd.Context(), id, grace)
		})
	cmd.Flags().DurationVar(&grace, "grace", 24*time.Hour, "how long the previous secret keeps signing")
	return cmd
}

func newEndpointsTestCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "test ENDPOINT_ID",
		Short: "Send one signed test webhook to an endpoint now and show what the receiver answered",
		Long: "Sends one signed test webhook to an endpoint now, with its URL, auth, headers, signing secret and timeout.\n" +
			"It is not an attempt: nothing is logged and the circuit does not count it. A disabled endpoint is\n" +
			"tested too. A failed delivery prints delivered false and exits 0; broker endpoints are refused.",
		Example: `  qhronos endpoints test 5c9d…`,
		Args:    exactArgs("ENDPOINT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.Endpoints.Test(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			t := &table{header: []string{"DELIVERED", "STATUS", "DURATION", "ERROR"}}
			t.add(fmt.Sprint(res.Delivered), num(res.StatusCode), fmt.Sprintf("%dms", res.DurationMs), str(res.Error))
			return a.render(res, t)
		},
	}
}

func newEndpointsDeleteCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "delete ENDPOINT_ID",
		Short:   "Delete an endpoint no event names",
		Example: `  qhronos endpoints delete 5c9d…`,
		Args:    exactArgs("ENDPOINT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.Endpoints.Delete(cmd.Context(), args[0]); err != nil {
				return err
			}
			return a.render(map[string]string{"deleted": args[0]}, &table{rows: [][]string{{"deleted " + args[0]}}})
		},
	}
}
