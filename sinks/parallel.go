package sinks

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// eachColumn runs a row group's n columns on workers goroutines, each
// taking the next column not yet taken. worker is called once on each
// goroutine and returns what encodes column i there (with the goroutine's
// own scratch) and, if not nil, what to call when the goroutine is done.
// The first error (a panic is one) stops every goroutine at its next
// column; eachColumn returns how many columns were taken and, of the
// columns that failed, the lowest one's error, so that the same bad row
// group reports the same column from run to run. done is not called on
// a goroutine that panicked.
func eachColumn(n, workers int, worker func() (do func(i int) error, done func())) (taken int, err error) {
	var (
		next   atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	workers = max(min(workers, n), 1)
	type failure struct {
		col int
		err error
	}
	fails := make([]failure, workers)
	for w := range workers {
		wg.Go(func() {
			col := -1
			defer func() {
				if r := recover(); r != nil {
					fails[w] = failure{col, fmt.Errorf("internal error encoding a column: %v", r)}
					failed.Store(true)
				}
			}()
			do, done := worker()
			for !failed.Load() {
				col = int(next.Add(1) - 1)
				if col >= n {
					break
				}
				if err := do(col); err != nil {
					fails[w] = failure{col, err}
					failed.Store(true)
					break
				}
			}
			if done != nil {
				done()
			}
		})
	}
	wg.Wait()
	taken = min(int(next.Load()), n)
	first := failure{col: n}
	for _, f := range fails {
		if f.err != nil && (first.err == nil || f.col < first.col) {
			first = f
		}
	}
	return taken, first.err
}

// recoverColumn, deferred, turns a panic while encoding a column into
// the error *err.
func recoverColumn(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("internal error encoding a column: %v", r)
	}
}
