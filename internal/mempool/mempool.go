// Package mempool holds an Arrow allocator that keeps freed buffers for
// reuse, so that a run which builds and releases buffers of the same
// sizes over and over does not hand them all to the garbage collector.
package mempool

import (
	"math/bits"
	"sync"
	"unsafe"
	"weak"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

const (
	// minPooled is the smallest buffer kept. Below 16 KiB Go's own
	// allocator is about as fast per buffer, but the bytes add up: at
	// Habermas 10x rows, buffers under 16 KiB (builders' first growth
	// steps, arrow-go's encoder sinks) were 4.3 GB of the run's 17 GB
	// of allocation, and keeping those from 4 KiB cut them to 1.4 GB and
	// the collections from 120 to 100. From 1 KiB took the collections
	// to 90 but cost 2% more instructions at Habermas 1x (the map, the
	// lock and a weak pointer per buffer), where 4 KiB cost none.
	minPooled = 4 << 10
	// maxOut bounds the map of buffers handed out. A buffer dropped
	// without Free (arrow-go's encoders keep their sink buffers in a
	// sync.Pool, which the collector empties) leaves its entry behind
	// until its address is handed out again; past maxOut entries the map
	// is cleared, and the buffers then out are not kept when freed.
	maxOut = 1 << 16
	// maxPooled is the largest buffer kept.
	maxPooled = 256 << 20
	// steps is the number of size classes per doubling: a buffer takes
	// at most a quarter more memory than was asked for.
	steps     = 4
	alignment = 64
)

// Allocator is a memory.Allocator that keeps the buffers of 4 KiB and
// more it handed out, once freed, in free lists by size class, up to a
// budget of bytes listed, and hands them out again. It is safe for
// concurrent use.
//
// The lists hold their buffers through weak pointers: a freed buffer is
// reused until the next collection takes it, and is never live data to
// the collector, so the pool does not raise the heap the collector lets
// grow (with strong references, 32 MiB of them added 10 to 40 MB to a
// run's peak RSS).
//
// Its buffers are what memory.GoAllocator's are: zeroed, aligned to 64
// bytes, with a capacity equal to their length (arrow-go's compute
// kernels rely on that). What differs is that a buffer must not be used
// after it is freed, since its bytes go to the next Allocate; Arrow's
// reference counting is what guarantees that. A buffer that is dropped
// without Free is left to the collector, as with memory.GoAllocator.
type Allocator struct {
	budget  int
	minSize int
	poison  bool

	mu sync.Mutex
	// held is the bytes of the buffers listed, some of which the
	// collector may have taken since.
	held int
	// out maps the start of each pooled-size buffer handed out and not
	// yet freed to its size class. Only a buffer found here is kept on
	// Free, so a buffer from anywhere else is never taken for one of
	// ours. It holds addresses, not references: a buffer dropped without
	// Free is still collected (and its entry replaced when the address
	// is handed out again, or dropped when the map reaches outLimit).
	out      map[uintptr]int
	outLimit int // maxOut; tests set less
	classes  [64 * steps][]weak.Pointer[byte]
	reused   int
}

// Reused returns how many buffers were handed out again after a Free.
func (a *Allocator) Reused() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reused
}

// New returns an Allocator that lists at most budget bytes of freed
// buffers.
func New(budget int) *Allocator {
	return &Allocator{budget: budget, minSize: minPooled, outLimit: maxOut, out: map[uintptr]int{}}
}

// NewPoisoning returns an Allocator for tests: it keeps buffers from
// minSize bytes (at least 64) instead of 4 KiB, and overwrites each
// buffer freed to it with 0xA5, so that a use after Free shows.
func NewPoisoning(budget, minSize int) *Allocator {
	a := New(budget)
	a.minSize = max(minSize, alignment)
	a.poison = true
	return a
}

// classOf returns the size class of a buffer of size bytes and the size
// of the buffers of that class.
func classOf(size int) (int, int) {
	k := bits.Len(uint(size - 1)) // 2^(k-1) < size <= 2^k
	step := 1 << (k - 3)
	n := (size + step - 1) / step // 5..8
	return (k-1)*steps + n - steps, n * step
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// Allocate returns a zeroed buffer of size bytes, aligned to 64 bytes.
func (a *Allocator) Allocate(size int) []byte { return a.allocate(size, 0) }

// allocate is Allocate, except that a reused buffer is cleared only from
// byte clearFrom on (a new one is all zero): callers that write the
// bytes before it themselves pass where they stop.
func (a *Allocator) allocate(size, clearFrom int) []byte {
	if size < a.minSize || size > maxPooled {
		return goAllocator.Allocate(size)
	}
	c, cs := classOf(size)
	a.mu.Lock()
	var b []byte
	for l := a.classes[c]; len(l) > 0 && b == nil; l = a.classes[c] {
		p := l[len(l)-1]
		l[len(l)-1] = weak.Pointer[byte]{}
		a.classes[c] = l[:len(l)-1]
		a.held -= cs
		if v := p.Value(); v != nil {
			b = unsafe.Slice(v, cs)
			a.reused++
		}
	}
	if b == nil {
		a.mu.Unlock()
		b = goAllocator.Allocate(cs)
		a.mu.Lock()
	} else if clearFrom < size {
		clear(b[clearFrom:size])
	}
	if len(a.out) >= a.outLimit {
		clear(a.out)
	}
	a.out[addr(b)] = c
	a.mu.Unlock()
	return b[:size:size]
}

// Uninitialized returns a view of a whose Allocate and Reallocate do not
// clear a buffer they reuse: its bytes are what the buffer's last user
// left. It is for callers that overwrite every byte they ask for before
// anything reads it (the partition gather's offsets and values), which
// saves clearing them first; padding past the size asked for (to 64
// bytes) is not cleared either. Buffers from the view are a's: either
// may free them.
func (a *Allocator) Uninitialized() memory.Allocator { return uninitialized{a} }

// uninitialized is the view Uninitialized returns.
type uninitialized struct{ a *Allocator }

// Allocate is Allocator.Allocate without clearing a reused buffer.
func (u uninitialized) Allocate(size int) []byte { return u.a.allocate(size, size) }

// Reallocate is Allocator.Reallocate without clearing a reused buffer
// past b's bytes.
func (u uninitialized) Reallocate(size int, b []byte) []byte {
	return u.a.reallocate(size, b, size)
}

// Free is Allocator.Free.
func (u uninitialized) Free(b []byte) { u.a.Free(b) }

// goAllocator makes the buffers: zeroed, aligned to 64 bytes, as long
// as asked for.
var goAllocator memory.GoAllocator

// Reallocate returns a buffer of size bytes that starts with b's bytes:
// b itself when it is large enough, else a new buffer, and then b is
// freed.
func (a *Allocator) Reallocate(size int, b []byte) []byte {
	return a.reallocate(size, b, len(b))
}

// reallocate is Reallocate; a reused buffer is cleared from clearFrom on
// (len(b), what the copy does not overwrite, or size for none of it).
func (a *Allocator) reallocate(size int, b []byte, clearFrom int) []byte {
	if size <= cap(b) {
		return b[:size]
	}
	nb := a.allocate(size, clearFrom)
	copy(nb, b)
	a.Free(b)
	return nb
}

// Free keeps b for reuse when this Allocator handed it out at a pooled
// size and the budget allows; otherwise b is left to the collector.
func (a *Allocator) Free(b []byte) {
	if cap(b) < a.minSize || cap(b) > maxPooled {
		return
	}
	p := addr(b)
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.out[p]
	if !ok {
		return
	}
	delete(a.out, p)
	cc, cs := classOf(cap(b))
	if cc != c {
		return // resliced shorter than handed out: not ours to judge
	}
	if a.held+cs > a.budget {
		a.dropCollected()
		if a.held+cs > a.budget {
			return
		}
	}
	// The buffer was made with cs bytes from p (Allocate), so the whole
	// of it is ours again.
	if a.poison {
		full := unsafe.Slice(unsafe.SliceData(b), cs)
		for i := range full {
			full[i] = 0xA5
		}
	}
	a.held += cs
	a.classes[c] = append(a.classes[c], weak.Make(unsafe.SliceData(b)))
}

// dropCollected removes from the free lists the buffers the collector
// has taken.
func (a *Allocator) dropCollected() {
	for c, l := range a.classes {
		if len(l) == 0 {
			continue
		}
		cs := classSize(c)
		kept := l[:0]
		for _, p := range l {
			if p.Value() != nil {
				kept = append(kept, p)
			} else {
				a.held -= cs
			}
		}
		clear(l[len(kept):])
		a.classes[c] = kept
	}
}

// classSize returns the size of the buffers of class c (at least 1),
// the inverse of classOf.
func classSize(c int) int {
	j := c - 1
	return (j%steps + steps + 1) << (j/steps - 2)
}

var (
	_ memory.Allocator = (*Allocator)(nil)
	_ memory.Allocator = uninitialized{}
)
