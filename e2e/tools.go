//go:build tools

package e2e

import _ "github.com/duckdb/duckdb-go/v2"
