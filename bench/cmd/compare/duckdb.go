package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" database/sql driver
)

// tableMarker starts one table's statement in a bench/sql file.
var tableMarker = regexp.MustCompile(`(?m)^-- table: *([A-Za-z0-9_]+) *$`)

// sqlTable is one table's COPY statement of a bench/sql file.
type sqlTable struct {
	Name string
	SQL  string
}

// splitSQL cuts a script into its "-- table: NAME" blocks and fills in
// {{data}} and {{out}}.
func splitSQL(script, data, out string) ([]sqlTable, error) {
	script = strings.NewReplacer("{{data}}", sqlPath(data), "{{out}}", sqlPath(out)).Replace(script)
	idx := tableMarker.FindAllStringSubmatchIndex(script, -1)
	if len(idx) == 0 {
		return nil, errors.New("no \"-- table: NAME\" block")
	}
	var tables []sqlTable
	for i, m := range idx {
		end := len(script)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		tables = append(tables, sqlTable{Name: script[m[2]:m[3]], SQL: strings.TrimSpace(script[m[1]:end])})
	}
	return tables, nil
}

// onlyTable returns the table called name of a script's tables, or an
// error when the script writes no such table.
func onlyTable(tables []sqlTable, name string) ([]sqlTable, error) {
	for _, t := range tables {
		if t.Name == name {
			return []sqlTable{t}, nil
		}
	}
	return nil, fmt.Errorf("no \"-- table: %s\" block", name)
}

// sqlPath escapes a path for a single-quoted SQL string.
func sqlPath(p string) string { return strings.ReplaceAll(p, "'", "''") }

// runDuckDBChild is the hidden subcommand: it runs every table block of a
// SQL file with DuckDB and prints {"tables": {name: rows}} as JSON.
func runDuckDBChild(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(duckdbChild, flag.ContinueOnError)
	file := fs.String("sql", "", "SQL file")
	data := fs.String("data", "", "data root")
	out := fs.String("out", "", "output folder")
	threads := fs.Int("threads", 2, "DuckDB threads")
	only := fs.String("table", "", "run only this table's statement")
	if err := fs.Parse(args); err != nil {
		return err
	}
	script, err := os.ReadFile(*file)
	if err != nil {
		return fmt.Errorf("read SQL: %w", err)
	}
	tables, err := splitSQL(string(script), *data, *out)
	if err != nil {
		return fmt.Errorf("%s: %w", *file, err)
	}
	if *only != "" {
		if tables, err = onlyTable(tables, *only); err != nil {
			return fmt.Errorf("%s: %w", *file, err)
		}
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return fmt.Errorf("open duckdb: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // SET applies per connection
	ctx := context.Background()
	for _, s := range []string{fmt.Sprintf("SET threads = %d", *threads), "SET TimeZone = 'UTC'"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	rep := childReport{Tables: map[string]int64{}}
	for _, t := range tables {
		var n int64
		// COPY ... TO returns the number of rows written as its result.
		if err := db.QueryRowContext(ctx, t.SQL).Scan(&n); err != nil {
			return fmt.Errorf("table %s: %w", t.Name, err)
		}
		rep.Tables[t.Name] = n
	}
	return json.NewEncoder(stdout).Encode(rep)
}
