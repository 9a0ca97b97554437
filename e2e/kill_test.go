package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// verifyRelease checks every file of a published release against its
// manifest.
func verifyRelease(t *testing.T, ds string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(ds, "manifest.json"))
	if err != nil {
		t.Fatalf("release unreadable: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ds, "_SUCCESS")); err != nil {
		t.Fatal("release lost its _SUCCESS")
	}
	var m struct {
		Tables []struct {
			Files []struct {
				Path   string `json:"path"`
				SHA256 string `json:"sha256"`
			} `json:"files"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tb := range m.Tables {
		for _, f := range tb.Files {
			b, err := os.ReadFile(filepath.Join(ds, filepath.FromSlash(f.Path)))
			if err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			sum := sha256.Sum256(b)
			if hex.EncodeToString(sum[:]) != f.SHA256 {
				t.Fatalf("%s does not match its manifest", f.Path)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("empty release")
	}
}

// TestKilledRunLeavesPreviousRelease kills a real agora run with SIGKILL
// at several moments and checks that the previous release still verifies,
// that every *.parquet anywhere under the output is a complete file, and
// that the next run recovers on its own.
func TestKilledRunLeavesPreviousRelease(t *testing.T) {
	data := t.TempDir()
	gen := exec.Command("go", "run", "./cmd/agora-gen", "crowdrag25", "--out", filepath.Join(data, "crowdrag25"), "--scale", "0.5")
	gen.Dir = ".."
	if b, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("generating input: %v\n%s", err, b)
	}
	out := t.TempDir()
	runAgoraArgs(t, "run", "--config", "../pipeline.yaml", "--data", data, "--out", out, "--only", "crowdrag25")
	ds := filepath.Join(out, "crowdrag25")
	verifyRelease(t, ds)
	db := openDuck(t)
	tmp := t.TempDir()
	for _, delay := range []time.Duration{30 * time.Millisecond, 150 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond} {
		cmd := exec.Command(agoraBin, "run", "--config", "../pipeline.yaml", "--data", data, "--out", out, "--only", "crowdrag25", "--force", "--mode", "overwrite", "--workers", "2")
		// A killed run leaves its temporary folder (the next run past a
		// minute removes it): keep it out of the machine's /tmp.
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		verifyRelease(t, ds)
		// Every file a reader's **/*.parquet glob can see is complete.
		filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && strings.HasSuffix(p, ".parquet") {
				var rows int64
				if err := db.QueryRow("SELECT sum(num_rows) FROM parquet_file_metadata('" + p + "')").Scan(&rows); err != nil {
					t.Errorf("after a kill at %v, %s is not a complete Parquet file: %v", delay, p, err)
				}
			}
			return nil
		})
	}
	// SIGTERM (and SIGINT) abort cleanly: exit 130, staging removed, the
	// previous release untouched.
	interrupted := 0
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(agoraBin, "run", "--config", "../pipeline.yaml", "--data", data, "--out", out, "--only", "crowdrag25", "--force", "--mode", "overwrite")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		started := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Signal once the run has begun writing (its staging directory
		// exists), not after a fixed delay: a run of this input takes
		// a few hundred milliseconds, less than a fixed delay on a fast
		// machine and more on a loaded one.
		waitForStaging(out, "crowdrag25", started, 10*time.Second)
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if code != 130 && code != 0 { // 0: the run finished before the signal
			t.Errorf("%v: exit %d (%v), want 130\n%s", sig, code, err, stderr.String())
		}
		if code == 130 {
			interrupted++
		}
		if code == 130 && !strings.Contains(stderr.String(), "interrupted") {
			t.Errorf("%v: stderr does not say it was interrupted:\n%s", sig, stderr.String())
		}
		verifyRelease(t, ds)
		entries, _ := os.ReadDir(out)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".agora-staging") {
				t.Errorf("%v left staging behind", sig)
			}
		}
	}
	if interrupted == 0 {
		t.Error("no run was interrupted: both finished before the signal, so the signal path went untested")
	}
	// The next run cleans up the killed run's staging and publishes.
	runAgoraArgs(t, "run", "--config", "../pipeline.yaml", "--data", data, "--out", out, "--only", "crowdrag25", "--force", "--mode", "overwrite")
	verifyRelease(t, ds)
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".agora-staging") || strings.HasPrefix(e.Name(), ".agora-old") {
			t.Errorf("left behind after recovery: %s", e.Name())
		}
	}
}

// waitForStaging waits until out holds the dataset's staging directory,
// changed since the run started (one a killed run left behind does not
// count), or until timeout. A run creates it once it starts writing,
// after it set up its signal handling.
func waitForStaging(out, dataset string, since time.Time, timeout time.Duration) {
	staging := filepath.Join(out, ".agora-staging-"+dataset)
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if fi, err := os.Stat(staging); err == nil && !fi.ModTime().Before(since) {
			return
		}
	}
}
