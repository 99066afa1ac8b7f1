package actions

import (
	"net/http"
	"strings"
	"time"
)

// HeaderRunToken carries a callback event's run token on every delivery of
// the occurrence (HTTP requests and broker messages alike).
const HeaderRunToken = "Qhronos-Run-Token"

// Run is what a delivery of a callback event tells its receiver about the
// run it starts: the token that completes it (valid for this occurrence
// only, the same on every re-send), where to complete it or say it is
// alive, and by when. The payload carries it as "run".
type Run struct {
	Token        string
	CompleteURL  string
	HeartbeatURL string
	Deadline     time.Time
}

// hideRunToken keeps the run token out of a recorded request: it is a
// bearer credential, and whoever may read an attempt may not complete its
// run for that.
func hideRunToken(sent *SentRequest, run *Run) {
	if sent == nil || run == nil || run.Token == "" {
		return
	}
	for name, v := range sent.Headers {
		if strings.EqualFold(name, HeaderRunToken) {
			sent.Headers[name] = Redacted
		} else if strings.Contains(v, run.Token) {
			sent.Headers[name] = strings.ReplaceAll(v, run.Token, Redacted)
		}
	}
	sent.Body = strings.ReplaceAll(sent.Body, run.Token, Redacted)
}

// setRunHeader adds the run token to h when the request starts a run.
func setRunHeader(h http.Header, run *Run) {
	if run != nil {
		h.Set(HeaderRunToken, run.Token)
	}
}
