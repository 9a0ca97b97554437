//go:build soak

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestSoak runs the whole pipeline again and again on scaled inputs and
// checks that live heap, open files and goroutines stay flat: nothing
// accumulates from run to run. Run with `make soak` (SOAK_RUNS, SOAK_SCALE).
func TestSoak(t *testing.T) {
	runs, scale := 10, "0.5"
	if v, err := strconv.Atoi(os.Getenv("SOAK_RUNS")); err == nil {
		runs = v
	}
	if v := os.Getenv("SOAK_SCALE"); v != "" {
		scale = v
	}
	data := t.TempDir()
	for _, ds := range []string{"crowdrag25", "delidata", "habermas"} {
		gen := exec.Command("go", "run", "./cmd/agora-gen", ds, "--out", filepath.Join(data, ds), "--scale", scale)
		gen.Dir = "../.."
		if b, err := gen.CombinedOutput(); err != nil {
			t.Fatalf("generating %s: %v\n%s", ds, err, b)
		}
	}
	cfg, err := loadConfig("../../pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	type sample struct {
		heap            uint64
		fds, goroutines int
		seconds         float64
	}
	var samples []sample
	for i := 0; i < runs; i++ {
		start := time.Now()
		opts := runOptions{ConfigPath: "../../pipeline.yaml", Data: data, Out: out, Mode: "overwrite", Force: true}
		if err := runAll(context.Background(), cfg, opts, func(*DatasetResult) {}); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fds, _ := os.ReadDir("/proc/self/fd")
		s := sample{heap: ms.HeapAlloc, fds: len(fds), goroutines: runtime.NumGoroutine(), seconds: time.Since(start).Seconds()}
		samples = append(samples, s)
		t.Logf("run %d: %.2f s, live heap %.1f MB, %d open files, %d goroutines", i+1, s.seconds, float64(s.heap)/1e6, s.fds, s.goroutines)
	}
	first, last := samples[1], samples[len(samples)-1] // run 1 warms caches
	if float64(last.heap) > 1.2*float64(first.heap)+4e6 {
		t.Errorf("live heap grew from %.1f MB to %.1f MB", float64(first.heap)/1e6, float64(last.heap)/1e6)
	}
	if last.fds > first.fds {
		t.Errorf("open files grew from %d to %d", first.fds, last.fds)
	}
	if last.goroutines > first.goroutines {
		t.Errorf("goroutines grew from %d to %d", first.goroutines, last.goroutines)
	}
}
