package auth

import (
	"errors"
	"testing"

	"github.com/qhronos/qhronos/internal/model"
)

func TestParseAccess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    model.Access
		wantErr bool
	}{
		{"read", model.AccessRead, false},
		{"write", model.AccessWrite, false},
		{"read_write", model.AccessWrite, false},
		{"admin", model.AccessAdmin, false},
		{"", "", true},
		{"READ", "", true},
		{"superuser", "", true},
		{"admin ", "", true},
		{"master", "", true},
	}
	for _, tt := range tests {
		got, err := ParseAccess(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseAccess(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if tt.wantErr && !errors.Is(err, ErrInvalidAccess) {
			t.Errorf("ParseAccess(%q) error = %v, want ErrInvalidAccess", tt.in, err)
		}
	}
}
