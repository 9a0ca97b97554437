package main

import (
	"runtime/debug"
	"testing"
	"time"
)

var sink [][]byte

// Live data above the limit makes the collector busy; the limit must then
// rise instead of the collector burning CPU, and be given back at the end.
func TestAdaptiveMemoryLimitRisesWhenLiveDataDoesNotFit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	const start = 4 << 20
	stop := adaptiveMemoryLimit(start, 20*time.Millisecond)
	live := make([][]byte, 0, 64)
	for range 64 {
		live = append(live, make([]byte, 1<<20)) // 64 MiB live, 16× the limit
	}
	deadline := time.Now().Add(3 * time.Second)
	raised := int64(start)
	for time.Now().Before(deadline) && raised <= start {
		for range 200 {
			sink = append(sink[:0], make([]byte, 64<<10)) // garbage
		}
		raised = debug.SetMemoryLimit(-1)
	}
	stop()
	if raised <= start {
		t.Errorf("limit stayed at %d with %d MiB live", raised, len(live))
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after stop = %d, want the old %d", got, before)
	}
}
