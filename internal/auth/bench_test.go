package auth

import (
	"context"
	"testing"
)

// BenchmarkAuthenticateJWT measures the per-request cost of a valid JWT on the
// cached path (signature and claim checks, no store lookup).
func BenchmarkAuthenticateJWT(b *testing.B) {
	r := row("tok-1")
	clk := &clock{now: t0}
	a := NewAuthenticator(Config{MasterToken: testMaster, Keys: NewKeyring(keyNew)}, newFakeTokens(r), clk.Now)
	bearer, err := a.Mint(r)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		if _, err := a.Authenticate(ctx, bearer); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticateMaster measures the constant-time master comparison.
func BenchmarkAuthenticateMaster(b *testing.B) {
	a := NewAuthenticator(Config{MasterToken: testMaster, Keys: NewKeyring(keyNew)}, newFakeTokens(), nil)
	ctx := context.Background()
	for b.Loop() {
		if _, err := a.Authenticate(ctx, testMaster); err != nil {
			b.Fatal(err)
		}
	}
}
