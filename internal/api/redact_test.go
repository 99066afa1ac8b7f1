package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/redact"
)

// Credentials an apicall and an endpoint carry; none may be readable back.
const (
	credAuthorization = "Bearer s3cret-bearer-value"
	credURLUser       = "deploy-user"
	credURLPassword   = "url-pa55word"
	credQuerySig      = "query-sig-value"
	credFormBody      = "client_secret=form-s3cret&pw=form-pw"
	credPin           = "pin-4711"
)

var allCreds = []string{credAuthorization, "s3cret-bearer-value", credURLUser, credURLPassword, credQuerySig,
	"form-s3cret", "form-pw", credPin, "bearer-member", "private-member"}

func requireNoCredential(t *testing.T, what string, body []byte) {
	t.Helper()
	for _, c := range allCreds {
		require.NotContains(t, string(body), c, "%s shows a credential: %s", what, body)
	}
}

// TestSensitiveValuesAreWriteOnly: an apicall's headers, URL userinfo and
// query, credential members and form bodies, and an endpoint's headers and
// URL userinfo are answered as fingerprints (never the value) by GET, list
// and history; sending the answer back keeps the stored values, which the
// delivery still uses; a fingerprint that stands for nothing is refused.
func TestSensitiveValuesAreWriteOnly(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			reader := e.mint("read", []string{"team-a"})
			params := map[string]any{"method": "POST",
				"url":     "http://" + credURLUser + ":" + credURLPassword + "@127.0.0.1:9999/call?sig=" + credQuerySig,
				"headers": map[string]string{"Authorization": credAuthorization, "X-Tenant": "acme"},
				"body":    map[string]any{"nested": []any{map[string]any{"bearer": "bearer-member", "PIN": credPin, "private": "private-member"}}, "name": "n"}}
			body := eventBody("team-a")
			delete(body, "webhook")
			body["action"] = map[string]any{"type": "apicall", "params": params}
			created := e.do("POST", "/events", e.master, body)
			require.Equal(t, http.StatusCreated, created.Status, "%s", created.Body)
			requireNoCredential(t, "the create answer", created.Body)
			id := created.object(t)["id"].(string)

			got := e.do("GET", "/events/"+id, reader, nil)
			require.Equal(t, http.StatusOK, got.Status, "%s", got.Body)
			requireNoCredential(t, "GET /events/{id}", got.Body)
			shown := got.object(t)["action"].(map[string]any)["params"].(map[string]any)
			auth := shown["headers"].(map[string]any)["Authorization"].(string)
			require.True(t, redact.IsFingerprint(auth), "the header shows as a fingerprint: %s", auth)
			require.Equal(t, e.srv.redact.Fingerprint(credAuthorization), auth)
			require.Contains(t, shown["url"], "@127.0.0.1:9999/call?sig="+redact.Mask, "host and path stay readable")
			list := e.do("GET", "/events", reader, nil)
			requireNoCredential(t, "GET /events", list.Body)

			// Sent back unchanged (with a rename), the stored secrets stay.
			var full map[string]any
			got.json(t, &full)
			full["name"] = "renamed"
			delete(full, "endpoint_id") // not accepted back by PUT (a separate defect)
			res := e.do("PUT", "/events/"+id, e.master, full)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			requireNoCredential(t, "the PUT answer", res.Body)
			stored, err := e.store.GetEvent(context.Background(), id)
			require.NoError(t, err)
			var storedParams map[string]any
			require.NoError(t, json.Unmarshal(stored.Action.Params, &storedParams))
			require.Equal(t, params["url"], storedParams["url"], "the delivery still goes to the real URL")
			require.Equal(t, credAuthorization, storedParams["headers"].(map[string]any)["Authorization"])
			require.Equal(t, credPin, storedParams["body"].(map[string]any)["nested"].([]any)[0].(map[string]any)["PIN"])

			// A fingerprint elsewhere, or after the URL changed, is refused.
			shownAgain := e.do("GET", "/events/"+id, e.master, nil).object(t)
			p := shownAgain["action"].(map[string]any)["params"].(map[string]any)
			p["headers"].(map[string]any)["X-Other"] = auth
			res = e.do("PUT", "/events/"+id, e.master, map[string]any{"action": shownAgain["action"]})
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			require.Equal(t, "action.params.headers.X-Other", res.object(t)["field"])
			delete(p["headers"].(map[string]any), "X-Other")
			p["url"] = "http://127.0.0.2:9999/elsewhere"
			res = e.do("PUT", "/events/"+id, e.master, map[string]any{"action": shownAgain["action"]})
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			require.Contains(t, res.object(t)["error"], "must be given again")

			// A form body is write-only whole.
			params["body"] = credFormBody
			params["url"] = "http://127.0.0.1:9999/call"
			res = e.do("PUT", "/events/"+id, e.master, map[string]any{"action": map[string]any{"type": "apicall", "params": params}})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			requireNoCredential(t, "the PUT answer", res.Body)

			hist := e.do("GET", "/events/"+id+"/history", reader, nil)
			require.Equal(t, http.StatusOK, hist.Status, "%s", hist.Body)
			requireNoCredential(t, "the history", hist.Body)
			require.True(t, strings.Contains(string(hist.Body), redact.Mask), "history shows fingerprints")

			// A legacy webhook event: its URL's userinfo and query.
			hookURL := "http://" + credURLUser + ":" + credURLPassword + "@127.0.0.1:9999/hook?token=" + credQuerySig
			hook := eventBody("team-a")
			hook["webhook"] = hookURL
			hookID := e.createEvent(e.master, hook)["id"].(string)
			gotHook := e.do("GET", "/events/"+hookID, reader, nil)
			requireNoCredential(t, "GET of a webhook event", gotHook.Body)
			var hookFull map[string]any
			gotHook.json(t, &hookFull)
			delete(hookFull, "endpoint_id")
			hookFull["description"] = "edited"
			res = e.do("PUT", "/events/"+hookID, e.master, hookFull)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			storedHook, err := e.store.GetEvent(context.Background(), hookID)
			require.NoError(t, err)
			require.Equal(t, hookURL, storedHook.Webhook, "the round trip keeps the real URL")
			require.Contains(t, string(storedHook.Action.Params), credURLPassword)

			// Endpoints: header values and URL userinfo.
			ep := endpointBody("team-a")
			ep["url"] = "http://" + credURLUser + ":" + credURLPassword + "@127.0.0.1:9999/hooks?sig=" + credQuerySig
			ep["headers"] = map[string]string{"X-Api-Key": credAuthorization}
			createdEP := e.do("POST", "/endpoints", e.master, ep)
			require.Equal(t, http.StatusCreated, createdEP.Status, "%s", createdEP.Body)
			requireNoCredential(t, "the endpoint create answer", createdEP.Body)
			epID := createdEP.object(t)["id"].(string)
			gotEP := e.do("GET", "/endpoints/"+epID, reader, nil)
			requireNoCredential(t, "GET /endpoints/{id}", gotEP.Body)
			requireNoCredential(t, "GET /endpoints", e.do("GET", "/endpoints", reader, nil).Body)
			shownEP := gotEP.object(t)
			res = e.do("PATCH", "/endpoints/"+epID, e.master, map[string]any{"url": shownEP["url"],
				"headers": shownEP["headers"], "name": "renamed"})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			storedEP, err := e.store.GetEndpoint(context.Background(), epID)
			require.NoError(t, err)
			require.Equal(t, ep["url"], storedEP.URL)
			require.Equal(t, credAuthorization, storedEP.Headers["X-Api-Key"])
			res = e.do("PATCH", "/endpoints/"+epID, e.master, map[string]any{"url": "http://127.0.0.2:9999/hooks"})
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			require.Equal(t, "headers.X-Api-Key", res.object(t)["field"], "the headers do not follow a new url")
		})
	}
}
