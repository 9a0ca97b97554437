package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestByteIdenticalAcrossWorkersAndGOMAXPROCS publishes every dataset
// with --workers 1 under GOMAXPROCS=1 and with --workers 8 under
// GOMAXPROCS=2, and compares the sha256 of every published file.
func TestByteIdenticalAcrossWorkersAndGOMAXPROCS(t *testing.T) {
	digest := func(procs, workers string) map[string]string {
		out := t.TempDir()
		cmd := exec.Command(agoraBin, "run", "--config", "../pipeline.yaml", "--data", "../testdata", "--out", out, "--workers", workers)
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+procs)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("GOMAXPROCS=%s --workers %s: %v\n%s", procs, workers, err, b)
		}
		sums := map[string]string{}
		filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || strings.HasSuffix(p, ".lock") {
				return nil
			}
			b, _ := os.ReadFile(p)
			s := sha256.Sum256(b)
			rel, _ := filepath.Rel(out, p)
			sums[rel] = hex.EncodeToString(s[:])
			return nil
		})
		return sums
	}
	a, b := digest("1", "1"), digest("2", "8")
	if len(a) < 100 || len(a) != len(b) {
		t.Fatalf("%d files vs %d", len(a), len(b))
	}
	for p, s := range a {
		if b[p] != s {
			t.Errorf("%s differs", p)
		}
	}
}
