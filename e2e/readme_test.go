package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeSQLSnippetsRun runs the README's DuckDB snippets (the code
// blocks marked <!-- run: sql -->) against the output of agora run, so the
// README cannot drift from what works.
func TestReadmeSQLSnippetsRun(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)<!-- run: sql -->\\s*```\\w*\\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("the README has no runnable SQL snippets")
	}
	dir := t.TempDir()
	runAgora(t, "../testdata", filepath.Join(dir, "out"))
	t.Chdir(dir)
	db := openDuck(t)
	for _, b := range blocks {
		for _, stmt := range strings.Split(b[1], ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			rows, err := db.Query(stmt)
			if err != nil {
				t.Fatalf("README snippet fails: %v\n%s", err, stmt)
			}
			n := 0
			for rows.Next() {
				n++
			}
			rows.Close()
			if strings.Contains(strings.ToUpper(stmt), "SELECT") && n == 0 {
				t.Errorf("README snippet returns no rows:\n%s", stmt)
			}
		}
	}
}
