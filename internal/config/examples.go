package config

import "strings"

// ExampleSecrets are the placeholder secrets shipped in docker-compose.yml
// (and quoted in config.yaml's comments). Production refuses every one of
// them, so copying the example file can never yield a guessable server. A
// test checks that each secret in docker-compose.yml appears here.
var ExampleSecrets = []string{
	"example-master-token-CHANGE-ME-0123456789abcdef",
	"example-jwt-secret-CHANGE-ME-0123456789abcdef",
	"example-hmac-secret-CHANGE-ME-0123456789abcdef",
	"example-encryption-key-CHANGE-ME-0123456789abcdef",
}

// placeholderMarkers catch slightly edited examples ("…CHANGE-ME…abcdeg").
var placeholderMarkers = []string{"change-me", "changeme", "change_me"}

// isExampleSecret reports whether s is a shipped example or still carries
// a change-me marker.
func isExampleSecret(s string) bool {
	for _, e := range ExampleSecrets {
		if s == e {
			return true
		}
	}
	lower := strings.ToLower(s)
	for _, m := range placeholderMarkers {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}
