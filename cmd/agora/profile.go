package main

import (
	"bytes"
	"io"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// watchPeakHeap samples the live heap every 100 ms and keeps, in path, the
// in-use heap profile taken when the live heap was largest. It is a
// diagnostic for memory work (hidden flag --peakheapprofile); the returned
// function stops it and writes the file.
func watchPeakHeap(path string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		var best []byte
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				if best != nil {
					os.WriteFile(path, best, 0o644)
				}
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if live := sample[0].Value.Uint64(); live > peak+peak/20 {
				peak = live
				var buf bytes.Buffer
				if pprof.Lookup("heap").WriteTo(&buf, 0) == nil {
					best = buf.Bytes()
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// startRecording creates path and starts a recorder writing to it (the
// CPU profiler, the execution tracer); the returned func stops it and
// closes the file. An empty path records nothing.
func startRecording(path string, start func(io.Writer) error, stop func()) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		stop()
		f.Close()
	}, nil
}
