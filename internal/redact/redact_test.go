package redact_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/redact"
)

var r = redact.New([]byte("unit-test-key"))

func TestFingerprintIsKeyedAndShaped(t *testing.T) {
	t.Parallel()
	fp := r.Fingerprint("1234")
	require.True(t, redact.IsFingerprint(fp), fp)
	require.Equal(t, fp, r.Fingerprint("1234"), "stable")
	require.NotEqual(t, fp, redact.New([]byte("another key")).Fingerprint("1234"), "keyed")
	require.NotEqual(t, fp, r.Fingerprint("1235"))
}

func TestURLHidesUserinfoAndQueryValues(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://example.com/h":                   "https://example.com/h",
		"https://bob@example.com/h":               "https://" + r.Fingerprint("bob") + "@example.com/h",
		"https://bob:pw@example.com:8443/a%20b?x": "https://" + r.Fingerprint("bob:pw") + "@example.com:8443/a%20b?x",
		"http://h/p?sig=abc&code=c&n=1#frag":      "http://h/p?sig=" + r.Fingerprint("abc") + "&code=" + r.Fingerprint("c") + "&n=" + r.Fingerprint("1") + "#frag",
		"not a url":                               "not a url",
	} {
		require.Equal(t, want, r.URL(in), in)
	}
}

func TestDocumentHidesCredentialsAtAnyDepth(t *testing.T) {
	t.Parallel()
	in := `{"method":"POST","headers":{"X-A":"1"},"body":{"list":[{"Bearer":"b","PIN":1234,"privateKey":{"k":"v"},
		"Signature":"s","otp_code":"c","name":"n"}],"form":"client_secret=x&pw=y","json":"{\"password\":\"p\"}",
		"plain":"hello","compact":"{\"password\":\"p2\",\"u\":\"http://a/b\"}","link":"https://h/p?token=t","bad":"http://u:pw@h/%zz"}}`
	var got map[string]any
	require.NoError(t, json.Unmarshal(r.JSON(json.RawMessage(in)), &got))
	require.Equal(t, "POST", got["method"])
	require.Equal(t, r.Fingerprint("1"), got["headers"].(map[string]any)["X-A"])
	body := got["body"].(map[string]any)
	item := body["list"].([]any)[0].(map[string]any)
	require.Equal(t, r.Fingerprint("b"), item["Bearer"])
	require.Equal(t, r.Fingerprint("1234"), item["PIN"])
	require.Equal(t, r.Fingerprint(`{"k":"v"}`), item["privateKey"])
	require.Equal(t, r.Fingerprint("s"), item["Signature"])
	require.Equal(t, r.Fingerprint("c"), item["otp_code"])
	require.Equal(t, "n", item["name"])
	require.Equal(t, r.Fingerprint("client_secret=x&pw=y"), body["form"])
	require.Equal(t, r.Fingerprint(`{"password":"p"}`), body["json"])
	require.Equal(t, "hello", body["plain"])
	require.Equal(t, r.Fingerprint(`{"password":"p2","u":"http://a/b"}`), body["compact"], "a JSON body naming a URL")
	require.Equal(t, "https://h/p?token="+r.Fingerprint("t"), body["link"], "a URL keeps its host in view")
	require.Equal(t, r.Fingerprint("http://u:pw@h/%zz"), body["bad"], "an unparsable URL hides whole")
}

func TestRestorePutsBackOnlyWhatWasShownThere(t *testing.T) {
	t.Parallel()
	stored := json.RawMessage(`{"url":"https://u:p@h/x?sig=1","headers":{"Authorization":"Bearer t"},"body":{"pin":42}}`)
	shown := r.JSON(stored)
	got, err := r.Restore("action.params", shown, stored)
	require.NoError(t, err)
	require.JSONEq(t, string(stored), string(got), "sent back unchanged: the stored values")

	var doc map[string]any
	require.NoError(t, json.Unmarshal(shown, &doc))
	doc["headers"].(map[string]any)["X-Copy"] = doc["headers"].(map[string]any)["Authorization"]
	moved, _ := json.Marshal(doc)
	_, err = r.Restore("action.params", moved, stored)
	var re *redact.RestoreError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "action.params.headers.X-Copy", re.Field)

	delete(doc["headers"].(map[string]any), "X-Copy")
	doc["url"] = "https://elsewhere.example/x"
	moved, _ = json.Marshal(doc)
	_, err = r.Restore("action.params", moved, stored)
	require.ErrorAs(t, err, &re)
	require.True(t, re.Moved, "a new url takes no stored secret along: %v", err)

	_, err = r.Restore("action.params", shown, nil)
	require.ErrorAs(t, err, &re, "nothing stored: a fingerprint stands for nothing")
}

// Credential-like names beyond the first list hide too (issue #34); the
// short ones that occur inside ordinary words hide only as a word of the
// name, so "footprint" stays readable.
func TestCredentialNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"passphrase", "keyPassphrase", "pwd", "db_pwd", "otp", "OTP", "x-otp", "otp.value",
		"userOTP", "OTPValue", "otp2", "totp", "hotp_seed", "jwt", "id_jwt", "X-JWT-Assertion", "session", "session_id",
		"x-session-token", "SessionId", "cookie", "Set-Cookie", "cookies"} {
		require.True(t, redact.CredentialName(name), "%s must hide", name)
	}
	for _, name := range []string{"footprint", "hotpot", "Footprint", "name", "description", "region"} {
		require.False(t, redact.CredentialName(name), "%s must stay readable", name)
	}
	var got map[string]any
	require.NoError(t, json.Unmarshal(r.JSON(json.RawMessage(`{"passphrase":"p","otp":"123456","jwt":"e.y.j",
		"headers_note":"h","footprint":"42 kB","form":"pwd=x&user=u"}`)), &got))
	require.Equal(t, r.Fingerprint("p"), got["passphrase"])
	require.Equal(t, r.Fingerprint("123456"), got["otp"])
	require.Equal(t, r.Fingerprint("e.y.j"), got["jwt"])
	require.Equal(t, "42 kB", got["footprint"])
	require.Equal(t, r.Fingerprint("pwd=x&user=u"), got["form"], "a form with a pwd field hides whole")
}

// A URL that is a credential as a whole (a notification channel's) shows
// only its scheme and host; the answer sent back keeps it, and its
// fingerprint under another host is refused (issue #34).
func TestSecretURLShowsOnlyWhereItGoes(t *testing.T) {
	t.Parallel()
	slack := "https://hooks.slack.com/services/T000/B000/XXXXsecretXXXX"
	shown := r.SecretURL(slack)
	require.Equal(t, "https://hooks.slack.com/"+r.Fingerprint(slack), shown)
	for in, want := range map[string]string{
		"https://ops.example.com":                  "https://ops.example.com",
		"https://ops.example.com/":                 "https://ops.example.com/",
		"https://ops.example.com:8443/n?token=abc": "https://ops.example.com:8443/" + r.Fingerprint("https://ops.example.com:8443/n?token=abc"),
		"https://u:p@ops.example.com":              "https://ops.example.com/" + r.Fingerprint("https://u:p@ops.example.com"),
		"":                                         "",
	} {
		require.Equal(t, want, r.SecretURL(in), in)
	}

	got, err := r.RestoreSecretURL("url", shown, slack)
	require.NoError(t, err)
	require.Equal(t, slack, got, "sent back as shown: the stored URL")
	got, err = r.RestoreSecretURL("url", "https://new.example/hook", slack)
	require.NoError(t, err)
	require.Equal(t, "https://new.example/hook", got, "a new URL in full replaces it")

	var re *redact.RestoreError
	_, err = r.RestoreSecretURL("url", "https://evil.example/"+r.Fingerprint(slack), slack)
	require.ErrorAs(t, err, &re)
	require.True(t, re.Moved, "another host takes no stored path: %v", err)
	_, err = r.RestoreSecretURL("url", "https://hooks.slack.com/"+r.Fingerprint("other"), slack)
	require.ErrorAs(t, err, &re)
	require.False(t, re.Moved)
	_, err = r.RestoreSecretURL("url", shown, "")
	require.ErrorAs(t, err, &re, "nothing stored")
}
