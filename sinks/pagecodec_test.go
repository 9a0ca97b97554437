package sinks

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// TestPageZstdSameBytes checks that the registered zstd codec frames pages
// byte for byte as arrow-go's own codec does, without the content
// checksum, incompressible ones (random bytes) too, and that the frames
// decode back.
func TestPageZstdSameBytes(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	z, ok := c.(*pageZstd)
	if !ok {
		t.Fatalf("zstd codec is %T, want *pageZstd", c)
	}
	// arrow-go's page reader streams pages and reports decoding errors
	// only through these interfaces.
	if _, ok := c.(compress.StreamingCodec); !ok {
		t.Error("the zstd codec lost streaming")
	}
	if _, ok := c.(compress.ErrorCodec); !ok {
		t.Error("the zstd codec lost DecodeWithError")
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	text := func(n int) []byte {
		var b bytes.Buffer
		for b.Len() < n {
			fmt.Fprintf(&b, "statement %d cites source %d; ", rnd.IntN(500), rnd.IntN(20))
		}
		return b.Bytes()[:n]
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		return b
	}
	for _, tc := range []struct {
		name  string
		page  []byte
		level int
	}{
		{"small text level 1", text(3000), 1},
		{"page of text level 1", text(1 << 20), 1},
		{"dictionary page level 1", text(5 << 20), 1},
		{"page of text level 3", text(1 << 20), 3},
		{"page of text default level", text(300 << 10), compress.DefaultCompressionLevel},
		{"random bytes level 1", random(1 << 20), 1},
		{"small random bytes", random(1000), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// As arrow-go's page writer calls it: grow a buffer to the
			// bound, compress into its storage.
			var buf bytes.Buffer
			buf.Grow(int(z.CompressBound(int64(len(tc.page)))))
			got := z.EncodeLevel(buf.Bytes(), tc.page, tc.level)
			want := arrowFrame(t, z, tc.page, tc.level)
			if !bytes.Equal(got, want) {
				t.Fatalf("frame differs from arrow-go's: %d bytes, want %d", len(got), len(want))
			}
			if back := z.Decode(nil, got); !bytes.Equal(back, tc.page) {
				t.Fatal("page does not decode to itself")
			}
		})
	}
}

// arrowFrame is the frame arrow-go's codec makes of page, with its content
// checksum taken out: the flag in the frame header descriptor (the byte
// after the 4-byte magic number) cleared and the last 4 bytes dropped.
func arrowFrame(t *testing.T, z *pageZstd, page []byte, level int) []byte {
	t.Helper()
	f := z.fullCodec.EncodeLevel(nil, page, level)
	const checksumFlag = 1 << 2
	if len(f) < 9 || f[4]&checksumFlag == 0 {
		t.Fatalf("arrow-go's frame (%d bytes) has no content checksum to take out", len(f))
	}
	f = bytes.Clone(f[:len(f)-4])
	f[4] &^= checksumFlag
	return f
}

// TestPageZstdConcurrent compresses from several goroutines at once, as
// tables writing together do; run with -race.
func TestPageZstdConcurrent(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	page := bytes.Repeat([]byte("a repeated source text, "), 20000)
	want := c.EncodeLevel(nil, page, 1)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				if got := c.EncodeLevel(nil, page, 1); !bytes.Equal(got, want) {
					errs <- fmt.Errorf("goroutine %d, page %d: frames differ", g, i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// newPageZstd is a codec of its own, with its own cache, for a test.
func newPageZstd(t *testing.T) *pageZstd {
	t.Helper()
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	return &pageZstd{fullCodec: c.(*pageZstd).fullCodec, free: map[zstd.EncoderLevel][]*zstd.Encoder{}}
}

// textPage is n bytes of compressible text that differ with seed.
func textPage(n int, seed uint64) []byte {
	rnd := rand.New(rand.NewPCG(seed, 7))
	var b bytes.Buffer
	for b.Len() < n {
		fmt.Fprintf(&b, "source %d says %d; ", rnd.IntN(1000), rnd.IntN(50))
	}
	return b.Bytes()[:n]
}

// TestPageCache: a page of a shared_pages column compressed again is
// taken from the cache with the frame compressing gives; pages of other
// columns, small pages, other levels and other bytes under the same hash
// are not; the cache keeps at most its limit, oldest out first.
func TestPageCache(t *testing.T) {
	big := cacheMinPage + 1000
	s1 := sharedLevel(1)
	for _, tc := range []struct {
		name       string
		pages      [][]byte
		levels     []int
		hits, miss int64
	}{
		{"same page twice", [][]byte{textPage(big, 1), textPage(big, 1)}, []int{s1, s1}, 1, 1},
		{"same page three times", [][]byte{textPage(big, 1), textPage(big, 1), textPage(big, 1)}, []int{s1, s1, s1}, 2, 1},
		{"two pages", [][]byte{textPage(big, 1), textPage(big, 2), textPage(big, 1)}, []int{s1, s1, s1}, 1, 2},
		{"another level", [][]byte{textPage(big, 1), textPage(big, 1)}, []int{s1, sharedLevel(3)}, 0, 2},
		{"default level", [][]byte{textPage(big, 1), textPage(big, 1)}, []int{sharedLevel(compress.DefaultCompressionLevel), sharedLevel(compress.DefaultCompressionLevel)}, 1, 1},
		{"columns not shared are not kept", [][]byte{textPage(big, 1), textPage(big, 1)}, []int{1, 1}, 0, 0},
		{"small pages are not kept", [][]byte{textPage(100, 1), textPage(100, 1)}, []int{s1, s1}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := newPageZstd(t)
			for i, p := range tc.pages {
				var buf bytes.Buffer
				buf.Grow(int(z.CompressBound(int64(len(p)))))
				got := z.EncodeLevel(buf.Bytes(), p, tc.levels[i])
				level, _ := sharedOf(tc.levels[i])
				if want := arrowFrame(t, z, p, level); !bytes.Equal(got, want) {
					t.Fatalf("page %d: frame differs from arrow-go's", i)
				}
			}
			if z.cache.hits != tc.hits || z.cache.misses != tc.miss {
				t.Errorf("hits %d, misses %d; want %d, %d", z.cache.hits, z.cache.misses, tc.hits, tc.miss)
			}
		})
	}

	t.Run("same hash other bytes", func(t *testing.T) {
		var c pageCache
		a, b := textPage(1000, 1), textPage(1000, 2)
		c.add(zstd.SpeedFastest, 42, a, []byte("frame of a"))
		if _, ok := c.get(zstd.SpeedFastest, 42, b, nil); ok {
			t.Fatal("a page was taken for another with the same hash")
		}
		if got, ok := c.get(zstd.SpeedFastest, 42, a, []byte("x")); !ok || string(got) != "xframe of a" {
			t.Fatalf("got %q, %v", got, ok)
		}
	})

	t.Run("oldest go past the limit", func(t *testing.T) {
		c := pageCache{limit: 3 * 1200} // three pages of 1,000 bytes and frames of 100, as allocated
		for i := range uint64(5) {
			c.add(zstd.SpeedFastest, i, textPage(1000, i), make([]byte, 100))
			if c.bytes > c.limit {
				t.Fatalf("after page %d: %d bytes over %d", i, c.bytes, c.limit)
			}
		}
		for i := range uint64(5) {
			_, ok := c.get(zstd.SpeedFastest, i, textPage(1000, i), nil)
			if want := i >= 2; ok != want {
				t.Errorf("page %d kept %v, want %v", i, ok, want)
			}
		}
		c.add(zstd.SpeedFastest, 9, textPage(4000, 9), nil)
		if _, ok := c.get(zstd.SpeedFastest, 9, textPage(4000, 9), nil); ok || c.bytes > c.limit {
			t.Fatalf("a page over the limit was kept (%d bytes)", c.bytes)
		}
		if _, ok := c.get(zstd.SpeedFastest, 4, textPage(1000, 4), nil); !ok {
			t.Fatal("a page over the limit let the others go")
		}
	})
}

// TestPrimedCompressBound: while a page is primed, the bound for its
// length is its frame's length; the primed page then compresses into a
// buffer of that size, as does another page of the same length that was
// not primed (the buffer grows), each to the frame compressing gives.
// Once taken, the bound is the wrapped codec's again.
func TestPrimedCompressBound(t *testing.T) {
	z := newPageZstd(t)
	page, other := textPage(64<<10, 1), textPage(64<<10, 2)
	n := int64(len(page))
	full := z.fullCodec.CompressBound(n)
	want := z.EncodeLevel(nil, page, 1)
	wantOther := z.EncodeLevel(nil, other, 1)
	if got := z.CompressBound(n); got != full {
		t.Fatalf("bound before priming = %d, want the wrapped codec's %d", got, full)
	}
	z.prime(page, 1, nil)
	bound := z.CompressBound(n)
	if bound != int64(len(want)) {
		t.Fatalf("bound of a primed length = %d, want the frame's %d", bound, len(want))
	}
	if got := z.EncodeLevel(make([]byte, 0, bound), other, 1); !bytes.Equal(got, wantOther) {
		t.Error("a page of the primed length that was not primed compressed differently")
	}
	if got := z.EncodeLevel(make([]byte, 0, bound), page, 1); !bytes.Equal(got, want) {
		t.Error("the primed page compressed differently")
	}
	if got := z.CompressBound(n); got != full {
		t.Errorf("bound after the primed page was taken = %d, want the wrapped codec's %d", got, full)
	}
}

// TestPrimedPagesGoBack: a frame primed with an allocator is compressed
// from a page the caller may reuse at once, and goes back to the
// allocator when it is taken or forgotten.
func TestPrimedPagesGoBack(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	z := newPageZstd(t)
	page := textPage(64<<10, 3)
	want := z.EncodeLevel(nil, page, 1)
	buf := mem.Allocate(len(page))
	copy(buf, page)
	z.prime(buf, 1, mem)
	clear(buf) // the caller's to reuse: only the hash and the frame are kept
	mem.Free(buf)
	if got := z.EncodeLevel(nil, page, 1); !bytes.Equal(got, want) {
		t.Error("the primed page compressed differently")
	}
	if z.primedHits() != 1 {
		t.Errorf("%d primed frames taken, want 1", z.primedHits())
	}
	forgotten := z.prime(textPage(32<<10, 4), 1, mem)
	z.primed.forget(forgotten)
	z.primed.forget(forgotten) // a second forget finds nothing
	if n := z.primed.n.Load(); n != 0 {
		t.Errorf("%d primed pages left behind", n)
	}
}
