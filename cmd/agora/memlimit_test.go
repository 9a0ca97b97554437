package main

import (
	"math"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

var sink [][]byte

// Live data above the limit makes the collector busy; the limit must then
// rise instead of the collector burning CPU, and be given back at the end.
func TestAdaptiveMemoryLimitRisesWhenLiveDataDoesNotFit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	const start = 4 << 20
	var reported atomic.Int64
	stop := adaptiveMemoryLimit(start, 0, 20*time.Millisecond, func(limit int64, share float64, _ bool) {
		if share <= gcSteady {
			t.Errorf("raised at a collector share of %.2f, not above %.2f", share, gcSteady)
		}
		reported.Store(limit)
	})
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
	// The watcher may raise again between the last look and stop.
	if got := reported.Load(); got < raised {
		t.Errorf("raised reported %d, below the runtime's limit of %d", got, raised)
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after stop = %d, want the old %d", got, before)
	}
}

// TestGCShareSince checks the share of the CPU used between two samples
// that went to the collector and the scavenger: idle marking left out of
// the collector's time, idle time out of the CPU used.
func TestGCShareSince(t *testing.T) {
	at := func(gc, gcIdle, scavenge, total, idle float64) gcSample {
		return gcSample{gc: gc, gcIdle: gcIdle, scavenge: scavenge, total: total, idle: idle}
	}
	for _, tc := range []struct {
		name      string
		prev, cur gcSample
		share     float64
		ok        bool
	}{
		{"busy collector", at(1, 0, 0, 10, 0), at(1.5, 0, 0, 11, 0), 0.5, true},
		{"idle marking is not a cost", at(0, 0, 0, 0, 0), at(0.5, 0.4, 0, 2, 1), 0.1, true},
		{"idle time is not CPU used", at(0, 0, 0, 0, 0), at(0.25, 0, 0, 2, 1), 0.25, true},
		{"scavenging is a cost", at(1, 0, 1, 4, 0), at(1.1, 0, 1.3, 5, 0), 0.4, true},
		{"nothing used", at(1, 0, 0, 4, 1), at(1, 0, 0, 5, 2), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			share, ok := tc.cur.gcShareSince(tc.prev)
			if ok != tc.ok || math.Abs(share-tc.share) > 1e-9 {
				t.Errorf("gcShareSince = %.3f, %v; want %.3f, %v", share, ok, tc.share, tc.ok)
			}
		})
	}
}

// TestLimitWatch feeds the watcher's rule one sample per interval, each
// with the given share of one CPU second to the collector, and checks at
// which intervals it raises the limit.
func TestLimitWatch(t *testing.T) {
	steady := func(share float64, n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = share
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		shares []float64 // per interval, after the first sample
		raises []int     // intervals (1-based) that raise
	}{
		{"quiet", steady(0.05, 20), nil},
		{"one busy interval", append(steady(0.05, 3), 0.3, 0.05), []int{4}},
		{"busy at the limit is not above it", []float64{gcBusy}, nil},
		{"steady share raises once the window is full", steady(0.16, gcWindow), []int{gcWindow}},
		{"and again a window after a raise", steady(0.16, 2*gcWindow+1), []int{gcWindow, 2 * gcWindow}},
		{"a short burst under gcBusy averages out", append([]float64{0.2}, steady(0.05, 4*gcWindow)...), nil},
		// 0.05 for a window, then 0.2: the window's average passes 0.12
		// (0.125) once half of it is at 0.2.
		{"the window slides", append(steady(0.05, gcWindow), steady(0.2, gcWindow)...), []int{gcWindow + gcWindow/2}},
		{"steady just under the threshold", steady(gcSteady-0.001, 4*gcWindow), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w limitWatch
			var s gcSample
			w.observe(s)
			var got []int
			for i, share := range tc.shares {
				s.total++
				s.gc += share
				if sh, raise := w.observe(s); raise {
					got = append(got, i+1)
					if sh <= gcSteady {
						t.Errorf("interval %d raised at a share of %.3f", i+1, sh)
					}
				}
			}
			if !slices.Equal(got, tc.raises) {
				t.Errorf("raised at intervals %v, want %v", got, tc.raises)
			}
		})
	}
}
