package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// verifyInChild runs verifyValues in a child process (see verifyChild).
func verifyInChild(agoraOut, otherOut string, tables []string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find own binary: %w", err)
	}
	cmd := exec.Command(self, verifyChild, "--agora", agoraOut, "--other", otherOut, "--tables", strings.Join(tables, ","))
	_, _, _, out, err := child(cmd)
	if err != nil {
		return "", err
	}
	var v string
	if err := json.Unmarshal(out, &v); err != nil {
		return "", fmt.Errorf("verify report %q: %w", out, err)
	}
	return v, nil
}

// runVerifyChild is the hidden subcommand of --verify: it prints
// verifyValues' result as a JSON string.
func runVerifyChild(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(verifyChild, flag.ContinueOnError)
	agoraOut := fs.String("agora", "", "agora's output folder of the dataset")
	otherOut := fs.String("other", "", "the other engine's output folder")
	tables := fs.String("tables", "", "tables to compare, comma-separated")
	if err := fs.Parse(args); err != nil {
		return err
	}
	v, err := verifyValues(*agoraOut, *otherOut, strings.Split(*tables, ","))
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(v)
}

// verifyValues compares each table another engine wrote with agora's, by
// value (DuckDB EXCEPT ALL both ways over agora's columns, partitions
// read as Hive columns), and returns "equal" or the tables that differ.
func verifyValues(agoraOut, otherOut string, tables []string) (string, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return "", fmt.Errorf("open duckdb: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "SET TimeZone = 'UTC'"); err != nil {
		return "", fmt.Errorf("set time zone: %w", err)
	}
	var diffs []string
	for _, t := range tables {
		a := fmt.Sprintf("read_parquet('%s', hive_partitioning = true)", sqlPath(filepath.Join(agoraOut, t, "**", "*.parquet")))
		b := fmt.Sprintf("read_parquet('%s', hive_partitioning = true)", sqlPath(filepath.Join(otherOut, t, "**", "*.parquet")))
		rows, err := db.QueryContext(ctx, "SELECT column_name FROM (DESCRIBE SELECT * FROM "+a+")")
		if err != nil {
			return "", fmt.Errorf("%s: columns: %w", t, err)
		}
		var cols []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return "", fmt.Errorf("%s: columns: %w", t, err)
			}
			cols = append(cols, `"`+strings.ReplaceAll(c, `"`, `""`)+`"`)
		}
		rows.Close()
		list := strings.Join(cols, ", ")
		var onlyA, onlyB int64
		q := fmt.Sprintf("SELECT (SELECT count(*) FROM (SELECT %[1]s FROM %[2]s EXCEPT ALL SELECT %[1]s FROM %[3]s)), "+
			"(SELECT count(*) FROM (SELECT %[1]s FROM %[3]s EXCEPT ALL SELECT %[1]s FROM %[2]s))", list, a, b)
		if err := db.QueryRowContext(ctx, q).Scan(&onlyA, &onlyB); err != nil {
			diffs = append(diffs, fmt.Sprintf("%s: not comparable (%s)", t, firstLine(err.Error())))
			continue
		}
		if onlyA != 0 || onlyB != 0 {
			diffs = append(diffs, fmt.Sprintf("%s: %d rows only in agora, %d only here", t, onlyA, onlyB))
		}
	}
	if len(diffs) == 0 {
		return "equal", nil
	}
	return "DIFFER " + strings.Join(diffs, "; "), nil
}
