// Package migrations embeds the SQL schema of each backend, applied in order
// of the numeric prefix of each file name.
package migrations

import "embed"

// FS holds postgres/*.sql and sqlite/*.sql.
//
//go:embed postgres/*.sql sqlite/*.sql
var FS embed.FS
