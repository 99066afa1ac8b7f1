package auth

import (
	"context"
	"errors"
	"testing"

	"github.com/qhronos/qhronos/internal/model"
)

// FuzzAuthenticate feeds arbitrary bearers: no panic, and success only for the
// master token or a token naming a stored row. Seeds live in
// testdata/fuzz/FuzzAuthenticate plus a freshly minted token.
func FuzzAuthenticate(f *testing.F) {
	r := row("tok-1")
	store := newFakeTokens(r)
	clk := &clock{now: t0}
	a := NewAuthenticator(Config{MasterToken: testMaster, Keys: NewKeyring(keyNew, keyOld)}, store, clk.Now)
	valid, err := a.Mint(r)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(testMaster)
	f.Fuzz(func(t *testing.T, bearer string) {
		p, err := a.Authenticate(context.Background(), bearer)
		if err != nil {
			if !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("Authenticate error %v is not ErrUnauthenticated with a healthy store", err)
			}
			return
		}
		switch {
		case p.Master:
			if bearer != testMaster {
				t.Fatalf("bearer %q authenticated as master", bearer)
			}
		case p.TokenID != r.ID || p.Access != model.AccessWrite:
			t.Fatalf("bearer %q authenticated as unexpected principal %+v", bearer, p)
		}
	})
}
