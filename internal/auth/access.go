package auth

import (
	"errors"

	"github.com/qhronos/qhronos/internal/model"
)

// ErrInvalidAccess rejects an access level that is not read, write or admin
// (the original Qhronos accepted any value; we do not).
var ErrInvalidAccess = errors.New("access: must be read, write or admin")

// ParseAccess turns a request or claim value into an access level.
// "read_write" is accepted as an alias of write for clients of the original
// API; anything else, including different case, is an error.
func ParseAccess(s string) (model.Access, error) {
	switch s {
	case "read":
		return model.AccessRead, nil
	case "write", "read_write":
		return model.AccessWrite, nil
	case "admin":
		return model.AccessAdmin, nil
	}
	return "", ErrInvalidAccess
}

// storedAccess is the access level of a token row or its JWT's claim:
// ParseAccess's, plus the portal's, which no request may ask for and which
// only redeeming a portal link stores.
func storedAccess(s string) (model.Access, error) {
	if s == string(model.AccessPortal) {
		return model.AccessPortal, nil
	}
	return ParseAccess(s)
}

// rank orders access levels; 0 means unknown and allows nothing (the
// portal's level too: Principal.WithinPortal lends it write access on the
// routes the API opens to it).
func rank(a model.Access) int {
	switch a {
	case model.AccessRead:
		return 1
	case model.AccessWrite:
		return 2
	case model.AccessAdmin:
		return 3
	}
	return 0
}
