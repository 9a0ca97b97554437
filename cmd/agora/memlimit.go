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

// gcSteady is the same share averaged over gcWindow intervals, above
// which the limit is raised too: a collector that is not past gcBusy in
// any one interval but stays this busy for seconds is working because
// the live data does not fit, not because of a burst of garbage.
// Logged every quarter second at a 270 MiB limit, the share averaged
// 0.16 on the one shipped run whose live data does not fit (Habermas at
// 10× rows) and stayed at or below 0.11 in every interval of the others.
const gcSteady = 0.12

// gcWindow is the number of intervals gcSteady is averaged over (one
// second at the quarter-second interval main uses).
const gcWindow = 4

// adaptiveMemoryLimit gives the runtime a soft memory limit and raises it
// by a quarter whenever the collector and the scavenger (which hands
// memory back to the system as the heap nears the limit, for the next
// batches to fault in again) took more than gcBusy of the CPU the process
// used over the last interval, or more than gcSteady over the last
// gcWindow intervals (see limitWatch): the live data does not fit under
// the limit, and holding to it would only burn CPU (the runtime lets the
// collector take up to half). Marking on processors that had nothing
// else to run (idle mark workers) is not counted, as runtime/metrics
// advises: it takes no CPU from the pipeline. Resident memory thus stays
// near the limit when the live data fits, and follows the live data when
// it does not. A ceiling above 0 bounds the limit, the first one too
// (see memoryCeiling): past it the process would be killed for its memory,
// and a busy collector is the lesser harm. raised, when not nil, is called
// with each new limit and the share that caused it, and once with
// atCeiling true when the limit is due a raise but is at the ceiling. The
// returned function stops the watcher and gives the runtime back its old
// limit.
func adaptiveMemoryLimit(limit, ceiling int64, every time.Duration, raised func(limit int64, share float64, atCeiling bool)) (stop func()) {
	if ceiling > 0 && limit > ceiling {
		limit = ceiling
	}
	old := debug.SetMemoryLimit(limit)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var w limitWatch
		var cur gcSample
		told := false // that the limit is at the ceiling
		cur.read()
		w.observe(cur)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			cur.read()
			share, raise := w.observe(cur)
			if !raise {
				continue
			}
			next := limit + limit/4
			if ceiling > 0 && next > ceiling {
				next = ceiling
			}
			if next <= limit {
				if raised != nil && !told {
					raised(limit, share, true)
				}
				told = true
				continue
			}
			limit = next
			debug.SetMemoryLimit(limit)
			if raised != nil {
				raised(limit, share, false)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		debug.SetMemoryLimit(old)
	}
}

// limitWatch decides, from one gcSample per interval, when the limit is
// to be raised. Its zero value is ready; the first sample only starts
// the count.
type limitWatch struct {
	// last holds the samples of the last gcWindow intervals and the one
	// before them, oldest first; it starts again after a raise, so that a
	// raised limit is judged only on what came after it.
	last []gcSample
}

// observe takes the sample at the end of an interval and reports whether
// to raise the limit, with the collector's share that decided it: the
// interval's, when past gcBusy, or else the window's, when the window is
// full and past gcSteady.
func (w *limitWatch) observe(cur gcSample) (share float64, raise bool) {
	if n := len(w.last); n > 0 {
		if s, ok := cur.gcShareSince(w.last[n-1]); ok && s > gcBusy {
			w.last = append(w.last[:0], cur)
			return s, true
		}
		if n == gcWindow+1 {
			w.last = append(w.last[:0], w.last[1:]...)
		}
	}
	w.last = append(w.last, cur)
	if len(w.last) == gcWindow+1 {
		if s, ok := cur.gcShareSince(w.last[0]); ok && s > gcSteady {
			w.last = append(w.last[:0], cur)
			return s, true
		}
	}
	return 0, false
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
