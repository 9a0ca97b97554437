package main

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// gcBusy is the share of the CPU the process used, over one interval,
// spent collecting garbage and returning memory to the system, above
// which the soft memory limit is raised.
const gcBusy = 0.25

// adaptiveMemoryLimit gives the runtime a soft memory limit and raises it
// by a quarter whenever, over the last interval, the collector and the
// scavenger (which hands memory back to the system as the heap nears the
// limit, for the next batches to fault in again) took more than gcBusy of
// the CPU the process used: the live data does not fit under the limit,
// and holding to it would only burn CPU (the runtime lets the collector
// take up to half). Marking on processors that had nothing else to run
// (idle mark workers) is not counted, as runtime/metrics advises: it takes
// no CPU from the pipeline. Resident memory thus stays near the limit when
// the live data fits, and follows the live data when it does not. raised,
// when not nil, is called with each new limit and the share that caused
// it. The returned function stops the watcher and gives the runtime back
// its old limit.
func adaptiveMemoryLimit(limit int64, every time.Duration, raised func(limit int64, share float64)) (stop func()) {
	old := debug.SetMemoryLimit(limit)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var prev, cur gcSample
		prev.read()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			cur.read()
			if share, ok := cur.gcShareSince(prev); ok && share > gcBusy {
				limit += limit / 4
				debug.SetMemoryLimit(limit)
				if raised != nil {
					raised(limit, share)
				}
			}
			prev = cur
		}
	}()
	return func() {
		close(done)
		<-finished
		debug.SetMemoryLimit(old)
	}
}

// gcSample is the runtime's CPU accounting at one moment, in seconds.
type gcSample struct {
	gc, gcIdle, scavenge, total, idle float64
}

// gcSampleNames are the runtime/metrics read into a gcSample, in read's
// order.
var gcSampleNames = [...]string{
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/gc/mark/idle:cpu-seconds",
	"/cpu/classes/scavenge/total:cpu-seconds",
	"/cpu/classes/total:cpu-seconds",
	"/cpu/classes/idle:cpu-seconds",
}

// read takes the sample.
func (s *gcSample) read() {
	var ms [len(gcSampleNames)]metrics.Sample
	for i, name := range gcSampleNames {
		ms[i].Name = name
	}
	metrics.Read(ms[:])
	for i, v := range []*float64{&s.gc, &s.gcIdle, &s.scavenge, &s.total, &s.idle} {
		*v = ms[i].Value.Float64()
	}
}

// gcShareSince returns the share of the CPU used between prev and s that
// went to collecting garbage (idle marking left out) and to scavenging;
// ok is false when no CPU was used.
func (s gcSample) gcShareSince(prev gcSample) (share float64, ok bool) {
	used := (s.total - s.idle) - (prev.total - prev.idle)
	if used <= 0 {
		return 0, false
	}
	cost := (s.gc - s.gcIdle + s.scavenge) - (prev.gc - prev.gcIdle + prev.scavenge)
	return cost / used, true
}
