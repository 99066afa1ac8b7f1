package actions

import (
	"strings"

	"github.com/qhronos/qhronos/internal/outbound"
)

// checkStreamKey refuses a stream under the coordination Redis's key
// prefix when the operator lets destinations reach that Redis
// (outbound.allow_coordination_redis): Qhronos's own keys (locks, rate
// limits, wake-ups) must never become a tenant's stream. It applies to
// every redis_stream destination, since a host name or an endpoint may
// lead to the coordination Redis at delivery. Without the setting the
// coordination Redis is refused as a whole (outbound.Reserved).
func checkStreamKey(r *outbound.Reserved, stream string) error {
	if r == nil || !r.Allowed || r.KeyPrefix == "" || !strings.HasPrefix(stream, r.KeyPrefix) {
		return nil
	}
	return &ParamError{Param: "stream", Reason: "must not start with " + r.KeyPrefix +
		" (the coordination Redis's own keys)"}
}
