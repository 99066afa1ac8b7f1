package auth

import (
	"errors"

	"github.com/qhronos/qhronos/internal/repository"
)

// ErrInvalidAccess rejects an access level that is not read, write or admin
// (the original Qhronos accepted any value; we do not).
var ErrInvalidAccess = errors.New("access: must be read, write or admin")

// ParseAccess turns a request or claim value into an access level.
// "read_write" is accepted as an alias of write for clients of the original
// API; anything else, including different case, is an error.
func ParseAccess(s string) (repository.Access, error) {
	switch s {
	case "read":
		return repository.AccessRead, nil
	case "write", "read_write":
		return repository.AccessWrite, nil
	case "admin":
		return repository.AccessAdmin, nil
	}
	return "", ErrInvalidAccess
}

// rank orders access levels; 0 means unknown and allows nothing.
func rank(a repository.Access) int {
	switch a {
	case repository.AccessRead:
		return 1
	case repository.AccessWrite:
		return 2
	case repository.AccessAdmin:
		return 3
	}
	return 0
}
