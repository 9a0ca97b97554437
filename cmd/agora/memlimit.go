package main

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// gcBusy is the share of CPU time spent collecting garbage over one
// interval above which the soft memory limit is raised.
const gcBusy = 0.25

// adaptiveMemoryLimit gives the runtime a soft memory limit and raises it
// by a quarter whenever, over the last interval, the collector took more
// than gcBusy of the CPU: the live data does not fit under the limit, and
// holding to it would only burn CPU (the runtime lets the collector take
// up to half). Resident memory thus stays near the limit when the live
// data fits, and follows the live data when it does not. The returned
// function stops the watcher and gives the runtime back its old limit.
func adaptiveMemoryLimit(limit int64, every time.Duration) (stop func()) {
	old := debug.SetMemoryLimit(limit)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		samples := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/total:cpu-seconds"}}
		metrics.Read(samples)
		gc0, all0 := samples[0].Value.Float64(), samples[1].Value.Float64()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(samples)
			gc, all := samples[0].Value.Float64(), samples[1].Value.Float64()
			if d := all - all0; d > 0 && (gc-gc0)/d > gcBusy {
				limit += limit / 4
				debug.SetMemoryLimit(limit)
			}
			gc0, all0 = gc, all
		}
	}()
	return func() {
		close(done)
		<-finished
		debug.SetMemoryLimit(old)
	}
}
