package events

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// marshalOrNull's reflection-free shapes answer byte for byte what
// json.Marshal does, escapes included.
func TestMarshalOrNullIsJSONMarshal(t *testing.T) {
	plain, escaped := "nightly report", "<b>\"tab\"\there\u2028 & ünïcode\x01"
	for _, v := range []any{nil, "", plain, escaped, (*string)(nil), &plain, &escaped,
		[]string(nil), []string{}, []string{plain}, []string{plain, escaped, ""}} {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		require.Equal(t, string(want), string(marshalOrNull(v)), "%#v", v)
	}
}
