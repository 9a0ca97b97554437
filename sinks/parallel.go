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
// column; eachColumn returns how many columns were taken and the error of
// the lowest-numbered goroutine that failed.
func eachColumn(n, workers int, worker func() (do func(i int) error, done func())) (taken int, err error) {
	var (
		next   atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	workers = max(min(workers, n), 1)
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					errs[w] = fmt.Errorf("internal error encoding a column: %v", r)
					failed.Store(true)
				}
			}()
			do, done := worker()
			if done != nil {
				defer done()
			}
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := do(i); err != nil {
					errs[w] = err
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	taken = min(int(next.Load()), n)
	for _, err := range errs {
		if err != nil {
			return taken, err
		}
	}
	return taken, nil
}
