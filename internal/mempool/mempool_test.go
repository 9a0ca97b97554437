package mempool

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		name       string
		size, want int
	}{
		{"power of two", 16 << 10, 16 << 10},
		{"just over a power of two", 16<<10 + 1, 20 << 10},
		{"a quarter over", 20 << 10, 20 << 10},
		{"between steps", 21 << 10, 24 << 10},
		{"last step", 31 << 10, 32 << 10},
		{"large", 100 << 20, 112 << 20},
		{"smallest for tests", 64, 64},
		{"small odd", 65, 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, cs := classOf(tc.size)
			if cs != tc.want {
				t.Fatalf("classOf(%d) size %d, want %d", tc.size, cs, tc.want)
			}
			if c2, cs2 := classOf(cs); c2 != c || cs2 != cs {
				t.Fatalf("a class's own size maps to class %d (%d), want %d (%d)", c2, cs2, c, cs)
			}
			if tc.size > 64 {
				if cp, _ := classOf(tc.size - 1); cp > c {
					t.Fatalf("class of %d is above that of %d", tc.size-1, tc.size)
				}
			}
		})
	}
}

// TestAllocateLikeGoAllocator: buffers are zeroed, aligned to 64 bytes and
// as long as their capacity, whether new or reused.
func TestAllocateLikeGoAllocator(t *testing.T) {
	a := New(1 << 30)
	for _, size := range []int{0, 1, 100, 16<<10 - 1, 16 << 10, 50_000, 1 << 20} {
		for round := range 2 {
			b := a.Allocate(size)
			if len(b) != size || cap(b) != size {
				t.Fatalf("size %d round %d: len %d cap %d", size, round, len(b), cap(b))
			}
			if size > 0 && addr(b)%alignment != 0 {
				t.Fatalf("size %d round %d: not aligned", size, round)
			}
			if !bytes.Equal(b, make([]byte, size)) {
				t.Fatalf("size %d round %d: not zeroed", size, round)
			}
			for i := range b {
				b[i] = 0xFF
			}
			a.Free(b)
		}
	}
}

func TestFreedBufferIsReused(t *testing.T) {
	noGC(t)
	a := New(1 << 30)
	b := a.Allocate(40_000)
	p := addr(b)
	a.Free(b)
	c := a.Allocate(33_000) // the same class (40 KiB)
	if addr(c) != p {
		t.Fatal("a buffer of the same class was not reused")
	}
	if a.held != 0 {
		t.Fatalf("held %d after reuse, want 0", a.held)
	}
	d := a.Allocate(100_000) // another class
	if addr(d) == p {
		t.Fatal("a buffer in use was handed out again")
	}
}

// TestUninitialized: the view hands a reused buffer out with its last
// user's bytes, and a new one zeroed; its buffers are the pool's, freed
// through either, and the pool's own Allocate still clears them.
func TestUninitialized(t *testing.T) {
	noGC(t)
	a := New(1 << 30)
	u := a.Uninitialized()
	b := u.Allocate(40_000)
	if !bytes.Equal(b, make([]byte, len(b))) {
		t.Fatal("a new buffer from the view is not zeroed")
	}
	for i := range b {
		b[i] = 0xFF
	}
	p := addr(b)
	u.Free(b)
	c := u.Allocate(33_000) // the same class (40 KiB)
	if addr(c) != p {
		t.Fatal("the view did not reuse a buffer it freed")
	}
	if !bytes.Equal(c, bytes.Repeat([]byte{0xFF}, len(c))) {
		t.Fatal("the view cleared a reused buffer")
	}
	a.Free(c)
	d := a.Allocate(33_000)
	if addr(d) != p {
		t.Fatal("the pool did not reuse a buffer freed from the view")
	}
	if !bytes.Equal(d, make([]byte, len(d))) {
		t.Fatal("the pool's Allocate did not clear a buffer the view dirtied")
	}
	for i := range d {
		d[i] = 0xEE
	}
	e := u.Reallocate(64_000, d)
	if !bytes.Equal(e[:len(d)], bytes.Repeat([]byte{0xEE}, len(d))) {
		t.Fatal("Reallocate through the view lost the buffer's bytes")
	}
	if f := u.Allocate(33_000); addr(f) != p {
		t.Fatal("Reallocate through the view did not free the old buffer to the pool")
	}
}

// TestOutBounded: buffers dropped without Free cannot grow the map of
// buffers out past its limit; the buffers out when it is cleared are not
// kept when freed, and the ones handed out after are.
func TestOutBounded(t *testing.T) {
	noGC(t)
	a := New(1 << 30)
	a.outLimit = 8
	var bs [][]byte
	for range 20 {
		bs = append(bs, a.Allocate(minPooled))
		if len(a.out) > a.outLimit {
			t.Fatalf("%d buffers out in the map, limit %d", len(a.out), a.outLimit)
		}
	}
	// 20 allocations with a limit of 8: cleared before the 9th and the
	// 17th, so the last 4 are in the map.
	for _, b := range bs {
		a.Free(b)
	}
	if want := 4 * minPooled; a.held != want {
		t.Fatalf("held %d, want %d (the four buffers handed out since the map was cleared)", a.held, want)
	}
}

func TestBudget(t *testing.T) {
	noGC(t)
	a := New(100 << 10)
	var bs [][]byte
	for range 4 {
		bs = append(bs, a.Allocate(40<<10))
	}
	for _, b := range bs {
		a.Free(b)
	}
	if a.held != 80<<10 {
		t.Fatalf("held %d, want two 40 KiB buffers within the 100 KiB budget", a.held)
	}
}

// TestForeignBuffersNotKept: a buffer this allocator did not hand out, or
// one freed twice, is never put on a free list.
func TestForeignBuffersNotKept(t *testing.T) {
	noGC(t)
	a := New(1 << 30)
	a.Free(make([]byte, 64<<10))
	b := a.Allocate(64 << 10)
	a.Free(b)
	a.Free(b)
	if a.held != 64<<10 {
		t.Fatalf("held %d, want only the one buffer handed out", a.held)
	}
	x, y := a.Allocate(64<<10), a.Allocate(64<<10)
	if addr(x) == addr(y) {
		t.Fatal("a buffer freed twice was handed out twice")
	}
}

func TestReallocate(t *testing.T) {
	noGC(t)
	a := New(1 << 30)
	b := a.Allocate(20_000)
	for i := range b {
		b[i] = byte(i)
	}
	old := addr(b)
	g := a.Reallocate(70_000, b)
	if len(g) != 70_000 || cap(g) != 70_000 {
		t.Fatalf("len %d cap %d", len(g), cap(g))
	}
	for i := range 20_000 {
		if g[i] != byte(i) {
			t.Fatalf("byte %d not kept", i)
		}
	}
	if !bytes.Equal(g[20_000:], make([]byte, 50_000)) {
		t.Fatal("grown part not zeroed")
	}
	if r := a.Allocate(20_000); addr(r) != old {
		t.Fatal("the buffer left by Reallocate was not freed for reuse")
	}
	s := a.Reallocate(100, g)
	if addr(s) != addr(g) || len(s) != 100 {
		t.Fatal("shrinking should keep the buffer")
	}
	// Growing into a reused buffer: its old bytes past the copy are
	// cleared, not left.
	for i := range g {
		g[i] = 0xFF
	}
	a.Free(g)
	c := a.Allocate(20_000)
	for i := range c {
		c[i] = 7
	}
	h := a.Reallocate(70_000, c)
	if addr(h) != addr(g) {
		t.Fatal("Reallocate did not reuse the freed buffer of its class")
	}
	if !bytes.Equal(h[:20_000], bytes.Repeat([]byte{7}, 20_000)) {
		t.Fatal("bytes not kept when growing into a reused buffer")
	}
	if !bytes.Equal(h[20_000:], make([]byte, 50_000)) {
		t.Fatal("grown part of a reused buffer not zeroed")
	}
}

func TestPoisoning(t *testing.T) {
	noGC(t)
	a := NewPoisoning(1<<30, 64)
	b := a.Allocate(100)
	full := unsafe.Slice(unsafe.SliceData(b), 112)
	a.Free(b)
	for i, c := range full {
		if c != 0xA5 {
			t.Fatalf("byte %d of a freed buffer is %#x, want 0xa5", i, c)
		}
	}
	if c := a.Allocate(100); !bytes.Equal(c, make([]byte, 100)) {
		t.Fatal("a reused poisoned buffer was not zeroed")
	}
}

func TestConcurrentUse(t *testing.T) {
	a := New(4 << 20)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				size := 16<<10 + (g*997+i*131)%(200<<10)
				b := a.Allocate(size)
				b[0], b[size-1] = byte(g), byte(i)
				if b[0] != byte(g) || b[size-1] != byte(i) {
					t.Error("buffer shared between goroutines")
					return
				}
				if i%3 == 0 {
					b = a.Reallocate(size*2, b)
				}
				a.Free(b)
			}
		})
	}
	wg.Wait()
	if a.held > 4<<20 {
		t.Fatalf("held %d over the budget", a.held)
	}
}

func TestClassSizeInvertsClassOf(t *testing.T) {
	for size := 64; size <= 1<<30; size += size/7 + 1 {
		c, cs := classOf(size)
		if got := classSize(c); got != cs {
			t.Fatalf("classSize(%d) = %d, want %d (size %d)", c, got, cs, size)
		}
	}
}

// TestCollectedBuffersNotHeld: the free lists hold their buffers weakly,
// so that what they hold does not count as live data for the collector;
// a buffer collected is dropped from its list.
func TestCollectedBuffersNotHeld(t *testing.T) {
	a := New(1 << 30)
	for range 8 {
		a.Free(a.Allocate(1 << 20))
	}
	runtime.GC()
	runtime.GC()
	a.mu.Lock()
	a.dropCollected()
	held := a.held
	a.mu.Unlock()
	if held != 0 {
		t.Fatalf("held %d after collection, want 0", held)
	}
	if b := a.Allocate(1 << 20); len(b) != 1<<20 || !bytes.Equal(b, make([]byte, 1<<20)) {
		t.Fatal("allocating after collection gave a bad buffer")
	}
}

// noGC stops the collector for the test, so that the buffers it frees
// stay in the free lists.
func noGC(t *testing.T) {
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}

// BenchmarkBuilderGrowth builds string arrays of about 4 MiB, appending
// value by value as arrow-go's Parquet reader does, so that the builder
// grows its data buffer by doubling, and releases each: with Go's
// allocator every outgrown buffer and every released array is garbage,
// with the pool they are the next array's. B/op is what reaches Go's
// heap; heap_x_go is that over Go's allocator's, measured in the same
// run. A 128 MiB ballast stands for a run's live data, so that the
// collector (which takes the listed buffers) runs about as often per
// byte allocated as in a run; in a bare test heap it would run every few
// MB.
func BenchmarkBuilderGrowth(b *testing.B) {
	ballast := make([]byte, 128<<20)
	defer runtime.KeepAlive(ballast)
	value := bytes.Repeat([]byte("a statement of a few hundred bytes, "), 10)
	build := func(mem memory.Allocator) {
		bld := array.NewBinaryBuilder(mem, arrow.BinaryTypes.String)
		for range (4 << 20) / len(value) {
			bld.Append(value)
		}
		a := bld.NewArray()
		bld.Release()
		a.Release()
	}
	heap := func(mem memory.Allocator, n int) float64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			build(mem)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	}
	goHeap := heap(memory.NewGoAllocator(), 20)
	for _, tc := range []struct {
		name string
		mem  func() memory.Allocator
	}{
		{"go", func() memory.Allocator { return memory.NewGoAllocator() }},
		{"pool", func() memory.Allocator { return New(32 << 20) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			mem := tc.mem()
			b.ReportAllocs()
			b.SetBytes(4 << 20)
			b.ResetTimer()
			for b.Loop() {
				build(mem)
			}
			b.StopTimer()
			b.ReportMetric(heap(mem, 20)/goHeap, "heap_x_go")
		})
	}
}
