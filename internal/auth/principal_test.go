package auth

import (
	"errors"
	"slices"
	"testing"

	"github.com/qhronos/qhronos/internal/model"
)

var (
	master    = Principal{Subject: "master", Master: true, Access: model.AccessAdmin}
	admin     = Principal{Subject: "ops", Access: model.AccessAdmin, TokenID: "t-admin"}
	writerAB  = Principal{Subject: "alice", Access: model.AccessWrite, Scope: []string{"a", "b"}, TokenID: "t-w"}
	readerA   = Principal{Subject: "bob", Access: model.AccessRead, Scope: []string{"a"}, TokenID: "t-r"}
	unscoped  = Principal{Subject: "carol", Access: model.AccessWrite, Scope: nil, TokenID: "t-empty"}
	anonymous = Principal{}
)

func TestPrincipalAllows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Principal
		need model.Access
		want bool
	}{
		{"master read", master, model.AccessRead, true},
		{"master admin", master, model.AccessAdmin, true},
		{"admin admin", admin, model.AccessAdmin, true},
		{"admin write", admin, model.AccessWrite, true},
		{"admin read", admin, model.AccessRead, true},
		{"write admin", writerAB, model.AccessAdmin, false},
		{"write write", writerAB, model.AccessWrite, true},
		{"write read", writerAB, model.AccessRead, true},
		{"read write", readerA, model.AccessWrite, false},
		{"read read", readerA, model.AccessRead, true},
		{"unknown need", admin, model.Access("root"), false},
		{"zero principal", anonymous, model.AccessRead, false},
		{"unknown own level", Principal{Access: "superuser"}, model.AccessRead, false},
	}
	for _, tt := range tests {
		if got := tt.p.Allows(tt.need); got != tt.want {
			t.Errorf("%s: Allows(%q) = %v, want %v", tt.name, tt.need, got, tt.want)
		}
	}
}

func TestPrincipalCanRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Principal
		tags []string
		want bool
	}{
		{"master untagged", master, nil, true},
		{"admin other tenant", admin, []string{"z"}, true},
		{"one shared tag", writerAB, []string{"b", "z"}, true},
		{"no shared tag", writerAB, []string{"z"}, false},
		{"untagged event scoped token", writerAB, nil, false},
		{"reader in scope", readerA, []string{"a"}, true},
		{"empty scope sees nothing", unscoped, []string{"a"}, false},
		{"empty scope untagged", unscoped, nil, false},
		{"zero principal", anonymous, []string{"a"}, false},
		{"tags are case sensitive", readerA, []string{"A"}, false},
	}
	for _, tt := range tests {
		if got := tt.p.CanRead(tt.tags); got != tt.want {
			t.Errorf("%s: CanRead(%q) = %v, want %v", tt.name, tt.tags, got, tt.want)
		}
	}
}

func TestPrincipalCanCreate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		p       Principal
		tags    []string
		wantErr error
	}{
		{"master untagged", master, nil, nil},
		{"admin any tags", admin, []string{"z"}, nil},
		{"admin untagged", admin, nil, nil},
		{"inside scope", writerAB, []string{"a", "b"}, nil},
		{"subset of scope", writerAB, []string{"b"}, nil},
		{"one tag outside", writerAB, []string{"a", "z"}, ErrOutsideScope},
		{"no tags", writerAB, nil, ErrOutsideScope},
		{"empty tags", writerAB, []string{}, ErrOutsideScope},
		{"empty scope", unscoped, []string{"a"}, ErrOutsideScope},
		{"read token", readerA, []string{"a"}, ErrInsufficientAccess},
	}
	for _, tt := range tests {
		err := tt.p.CanCreate(tt.tags)
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
			t.Errorf("%s: CanCreate(%q) = %v, want %v", tt.name, tt.tags, err, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrForbidden) {
			t.Errorf("%s: CanCreate error %v does not wrap ErrForbidden", tt.name, err)
		}
	}
	err := writerAB.CanCreate([]string{"z"})
	if got, want := err.Error(), "tags: outside token scope"; got != want {
		t.Errorf("CanCreate outside scope text = %q, want %q", got, want)
	}
}

func TestPrincipalCanModify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		p       Principal
		current []string
		want    bool
	}{
		{"master", master, []string{"z"}, true},
		{"admin untagged", admin, nil, true},
		{"all current tags inside", writerAB, []string{"a", "b"}, true},
		{"shared with another tenant", writerAB, []string{"a", "z"}, false},
		{"untagged event", writerAB, nil, false},
		{"read token", readerA, []string{"a"}, false},
		{"empty scope", unscoped, []string{"a"}, false},
		{"zero principal", anonymous, []string{"a"}, false},
	}
	for _, tt := range tests {
		if got := tt.p.CanModify(tt.current); got != tt.want {
			t.Errorf("%s: CanModify(%q) = %v, want %v", tt.name, tt.current, got, tt.want)
		}
	}
}

func TestPrincipalScopeFilter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		p                Principal
		wantTags         []string
		wantUnrestricted bool
	}{
		{"master", master, nil, true},
		{"admin", admin, nil, true},
		{"writer", writerAB, []string{"a", "b"}, false},
		{"reader", readerA, []string{"a"}, false},
		{"empty scope", unscoped, []string{}, false},
		{"zero principal", anonymous, []string{}, false},
	}
	for _, tt := range tests {
		tags, unrestricted := tt.p.ScopeFilter()
		if !slices.Equal(tags, tt.wantTags) || unrestricted != tt.wantUnrestricted {
			t.Errorf("%s: ScopeFilter() = %q, %v; want %q, %v", tt.name, tags, unrestricted, tt.wantTags, tt.wantUnrestricted)
		}
		if !tt.wantUnrestricted && tags == nil {
			t.Errorf("%s: restricted filter is nil; want a non-nil (possibly empty) list", tt.name)
		}
	}
	tags, _ := writerAB.ScopeFilter()
	tags[0] = "z"
	if writerAB.Scope[0] != "a" {
		t.Errorf("changing the filter changed the principal's scope")
	}
}

func TestPrincipalKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p    Principal
		want string
	}{
		{master, "master"},
		{admin, "jwt:t-admin"},
		{writerAB, "jwt:t-w"},
		{Principal{Subject: "alice", Access: model.AccessWrite, TokenID: "t-other"}, "jwt:t-other"},
	}
	for _, tt := range tests {
		if got := tt.p.Key(); got != tt.want {
			t.Errorf("Key() of %s/%s = %q, want %q", tt.p.Subject, tt.p.TokenID, got, tt.want)
		}
	}
}

func TestPrincipalCanMint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		p       Principal
		access  model.Access
		scope   []string
		wantErr error
	}{
		{"master admin any scope", master, model.AccessAdmin, []string{"z"}, nil},
		{"master read empty scope", master, model.AccessRead, nil, nil},
		{"admin mints admin", admin, model.AccessAdmin, nil, nil},
		{"admin mints write any scope", admin, model.AccessWrite, []string{"z"}, nil},
		{"writer mints read inside scope", writerAB, model.AccessRead, []string{"a"}, nil},
		{"writer mints write same scope", writerAB, model.AccessWrite, []string{"a", "b"}, nil},
		{"writer mints admin", writerAB, model.AccessAdmin, []string{"a"}, ErrAccessTooWide},
		{"writer widens scope", writerAB, model.AccessRead, []string{"a", "z"}, ErrScopeTooWide},
		{"reader mints write", readerA, model.AccessWrite, []string{"a"}, ErrAccessTooWide},
		{"empty scope cannot add tags", unscoped, model.AccessRead, []string{"a"}, ErrScopeTooWide},
		{"unknown access", master, model.Access("root"), nil, ErrInvalidAccess},
		{"zero principal", anonymous, model.AccessRead, nil, ErrAccessTooWide},
	}
	for _, tt := range tests {
		err := tt.p.CanMint(tt.access, tt.scope)
		if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
			t.Errorf("%s: CanMint(%q, %q) = %v, want %v", tt.name, tt.access, tt.scope, err, tt.wantErr)
		}
	}
}
