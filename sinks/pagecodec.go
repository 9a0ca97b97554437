package sinks

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/xxh3"
)

// pageZstd replaces arrow-go's zstd codec for writing pages; decoding and
// streams (which arrow-go's page reader looks for by type assertion) stay
// with the wrapped codec. It makes arrow-go's frames without their 4-byte
// content checksum, and changes two costs:
//
//   - No content checksum: an xxhash of every page, 1% of the
//     instructions of a CrowdRAG-25 or Habermas run. libzstd, and so
//     DuckDB's and Arrow C++'s writers, leave it out by default; the
//     release's manifest holds a sha256 of every file.
//   - The encoder's lower-memory history: the window (4 MiB at level 1)
//     plus one block instead of twice the window. A smaller window would
//     save more but changes the output (0.1% larger on CrowdRAG-25).
//   - The encoder pool: a free list the collector does not empty, where
//     arrow-go's sync.Pool loses its encoders (and their history) at
//     every collection.
//
// For the columns a table lists in writer.shared_pages it also remembers
// the frames of the last pages (pageCache): a page identical to one
// compressed a moment ago, in any file, is not compressed again. The three
// style partitions of CrowdRAG-25 responses write the same dictionary of
// sources in every row group, because each style holds the same topics in
// the same order, and pipeline.yaml sizes those row groups by rows so that
// they line up. arrow-go hands a codec nothing about a page but its bytes
// and the column's compression level, so those columns are given the
// level sharedLevel(level), which EncodeLevel takes apart again.
//
// CompressBound stays the wrapped codec's, except for the length of a
// primed page: arrow-go's column writer grows one buffer to it and reuses
// that buffer for every page of a column chunk, so a smaller estimate
// would cost an allocation per page that compresses worse than the
// estimate.
type pageZstd struct {
	fullCodec
	mu     sync.Mutex
	free   map[zstd.EncoderLevel][]*zstd.Encoder
	cache  pageCache
	primed primedPages
}

// maxFreeEncoders bounds the encoders kept per level (each holds about
// 4 MiB of history at level 1): one per table writing at once.
const maxFreeEncoders = 4

// Encode compresses src at the default level.
func (z *pageZstd) Encode(dst, src []byte) []byte {
	return z.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

// EncodeLevel compresses src into dst's storage at a zstd level, mapped
// onto the encoder's speeds as arrow-go maps it.
func (z *pageZstd) EncodeLevel(dst, src []byte, level int) []byte {
	level, shared := sharedOf(level)
	l := encoderLevel(level)
	if out, ok := z.primed.take(l, src, dst[:0]); ok {
		return out
	}
	cached := shared && len(src) >= cacheMinPage
	var sum uint64
	if cached {
		sum = xxh3.Hash(src)
		if out, ok := z.cache.get(l, sum, src, dst[:0]); ok {
			return out
		}
	}
	enc, err := z.get(l)
	if err != nil {
		// Options are constants; should they ever be refused, the
		// wrapped codec still compresses.
		return z.fullCodec.EncodeLevel(dst, src, level)
	}
	out := enc.EncodeAll(src, dst[:0])
	z.put(l, enc)
	if cached {
		z.cache.add(l, sum, src, out)
	}
	return out
}

// CompressBound is the wrapped codec's bound, or, when a page of n bytes
// was primed, the longest frame primed for that length. arrow-go grows a
// new, zeroed buffer to the bound for every dictionary page, and the
// dictionary pages are the primed ones. A page of that length that is not
// primed (or compresses worse) only makes EncodeAll grow the buffer.
func (z *pageZstd) CompressBound(n int64) int64 {
	if f, ok := z.primed.frameLen(int(n)); ok {
		return int64(f)
	}
	return z.fullCodec.CompressBound(n)
}

// encoderLevel maps a zstd level onto the encoder's speeds as arrow-go
// maps it.
func encoderLevel(level int) zstd.EncoderLevel {
	if level == compress.DefaultCompressionLevel {
		return zstd.SpeedDefault
	}
	return zstd.EncoderLevelFromZstd(level)
}

// prime compresses page at level now and keeps the frame until
// EncodeLevel is asked for it (once) or forget is called with the token
// returned. The column-parallel writer primes a column's dictionary page
// on the goroutine that encoded the column: arrow-go compresses it when
// the row group closes, which closes the columns one after another.
//
// prime keeps the frame, and of the page only its length and a 128-bit
// hash to know it again by, so the caller may reuse the page's buffer as
// soon as prime returns. With mem non-nil the frame is compressed into a
// buffer of mem's, copied to one of its length, and that goes back to
// mem once the frame is taken or forgotten. Pages and frames made fresh
// for each row group were a fifth of the allocation of a Habermas run at
// 1w10 (1.2 of 5.5 GB; with mem: 4.4 GB in all, 88 and 91 collections
// in single runs against 95) and 5% at 10× rows (14.0 → 13.3 GB).
func (z *pageZstd) prime(page []byte, level int, mem memory.Allocator) *primedPage {
	var dst []byte
	if mem != nil {
		dst = mem.Allocate(int(z.fullCodec.CompressBound(int64(len(page)))))
	}
	frame := z.EncodeLevel(dst[:0], page, level)
	level, _ = sharedOf(level)
	p := &primedPage{level: encoderLevel(level), n: len(page), sum: primedSum(page), frame: frame}
	if mem != nil {
		p.mem = mem
		p.frame = mem.Allocate(len(frame))
		copy(p.frame, frame)
		mem.Free(dst)
	}
	z.primed.add(p)
	return p
}

// primedSum is the hash a primed page is known again by: its 128-bit
// XXH3. A page of the same length and level that is not the primed one
// would have to match all 128 bits to take its frame.
//
// XXH3 rather than two maphashes under independent seeds (the same 128
// bits): a dictionary page is hashed when it is primed and again when
// arrow-go hands it over, and on this machine's AVX-512 XXH3 hashes a
// 450 KiB page in 8 µs, where the two maphashes took 72 µs. That was 3%
// of a CrowdRAG-25 run's CPU, whose dictionary pages of source texts
// are the large ones.
func primedSum(page []byte) [2]uint64 {
	h := xxh3.Hash128(page)
	return [2]uint64{h.Lo, h.Hi}
}

// primedPages holds the pages compressed ahead of time by prime, by
// length: a page of another length is looked up without a hash or a
// comparison.
type primedPages struct {
	mu    sync.Mutex
	n     atomic.Int64 // pages held, read without the lock
	bylen map[int][]*primedPage
	hits  int64
}

// primedPage is a page compressed ahead of time: its length, its hash
// and its frame.
type primedPage struct {
	level zstd.EncoderLevel
	n     int
	sum   [2]uint64
	frame []byte
	mem   memory.Allocator // when not nil, frame's owner, which release gives it back to
}

// release gives the frame back to its allocator; the page is no longer
// held.
func (e *primedPage) release() {
	if e.mem != nil {
		e.mem.Free(e.frame)
	}
	e.frame, e.mem = nil, nil
}

func (p *primedPages) add(e *primedPage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bylen == nil {
		p.bylen = map[int][]*primedPage{}
	}
	p.bylen[e.n] = append(p.bylen[e.n], e)
	p.n.Add(1)
}

// take appends the frame of a primed page equal to src to dst, and
// forgets the page.
func (p *primedPages) take(l zstd.EncoderLevel, src, dst []byte) ([]byte, bool) {
	if p.n.Load() == 0 {
		return dst, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var (
		sum    [2]uint64
		hashed bool // src is hashed only when a page of its length is held
	)
	for i, e := range p.bylen[len(src)] {
		if !hashed {
			sum, hashed = primedSum(src), true
		}
		if e.level == l && e.sum == sum {
			p.drop(i, e)
			p.hits++
			out := append(dst, e.frame...)
			e.release()
			return out, true
		}
	}
	return dst, false
}

// frameLen is the length of the longest frame primed for a page of n
// bytes, if one is held.
func (p *primedPages) frameLen(n int) (int, bool) {
	if p.n.Load() == 0 {
		return 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := 0, false
	for _, e := range p.bylen[n] {
		l, ok = max(l, len(e.frame)), true
	}
	return l, ok
}

// forget drops e if it is still held.
func (p *primedPages) forget(e *primedPage) {
	if e == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.bylen[e.n] {
		if x == e {
			p.drop(i, e)
			e.release()
			return
		}
	}
}

// drop removes entry i, e, of its length's list; the lock is held.
func (p *primedPages) drop(i int, e *primedPage) {
	l := p.bylen[e.n]
	l = append(l[:i], l[i+1:]...)
	if len(l) == 0 {
		delete(p.bylen, e.n)
	} else {
		p.bylen[e.n] = l
	}
	p.n.Add(-1)
}

// sharedFlag marks a compression level as one of a shared_pages column:
// far above zstd's levels (1 to 22), and above the flag plus any level.
const sharedFlag = 1 << 20

// sharedLevel is the compression level given to the columns of
// writer.shared_pages: level, marked for the page cache. The default
// level is zstd's level 3, which it maps to.
func sharedLevel(level int) int {
	if level == compress.DefaultCompressionLevel {
		level = 3
	}
	return sharedFlag + level
}

// sharedOf takes a level from sharedLevel apart; other levels are
// returned as they are.
func sharedOf(level int) (int, bool) {
	if level > sharedFlag/2 {
		return level - sharedFlag, true
	}
	return level, false
}

// cacheMinPage is the smallest page whose frame is remembered; smaller
// pages are compressed as they come (a lookup costs a hash, a lock and,
// when it misses, two copies).
const cacheMinPage = 4 << 10

// cacheBytes bounds the pages and frames a pageCache holds. The row groups
// of one table's partitions fill one after another, so their pages of the
// shared_pages columns come within a few megabytes of each other:
// CrowdRAG-25 at 10x rows finds all it can (2 of every 3 pages) with 4 MiB
// as with 32. A page larger than the bound is not kept.
const cacheBytes = 8 << 20

// pageCache holds the last pages of shared_pages columns compressed and
// their frames, oldest first, at most cacheBytes of them. zstd is deterministic for a level and
// these options, so a remembered frame is the frame compressing would give.
type pageCache struct {
	mu      sync.Mutex
	entries []cachedPage
	bytes   int
	limit   int   // cacheBytes; tests set less
	hits    int64 // pages found
	misses  int64 // pages compressed and added
}

// cachedPage is a remembered page and its frame. sum is the page's
// 64-bit XXH3; a page with the same sum is then compared byte for byte,
// so the hash only picks the candidate.
type cachedPage struct {
	level      zstd.EncoderLevel
	sum        uint64
	src, frame []byte
}

// get appends the frame of a remembered page equal to src to dst.
func (c *pageCache) get(l zstd.EncoderLevel, sum uint64, src, dst []byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.entries) - 1; i >= 0; i-- {
		e := &c.entries[i]
		if e.sum == sum && e.level == l && bytes.Equal(e.src, src) {
			c.hits++
			return append(dst, e.frame...), true
		}
	}
	c.misses++
	return dst, false
}

// add remembers copies of a page and its frame (arrow-go compresses data
// pages into one buffer it reuses), and lets the oldest go while the
// storage held passes the limit. A page larger than the limit is not kept
// and lets nothing go.
func (c *pageCache) add(l zstd.EncoderLevel, sum uint64, src, frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit == 0 {
		c.limit = cacheBytes
	}
	if len(src)+len(frame) > c.limit {
		return
	}
	e := cachedPage{level: l, sum: sum, src: bytes.Clone(src), frame: bytes.Clone(frame)}
	c.entries = append(c.entries, e)
	c.bytes += cap(e.src) + cap(e.frame)
	for c.bytes > c.limit && len(c.entries) > 1 {
		c.bytes -= cap(c.entries[0].src) + cap(c.entries[0].frame)
		n := copy(c.entries, c.entries[1:])
		c.entries[n] = cachedPage{}
		c.entries = c.entries[:n]
	}
}

func (z *pageZstd) get(l zstd.EncoderLevel) (*zstd.Encoder, error) {
	z.mu.Lock()
	if f := z.free[l]; len(f) > 0 {
		enc := f[len(f)-1]
		z.free[l] = f[:len(f)-1]
		z.mu.Unlock()
		return enc, nil
	}
	z.mu.Unlock()
	// The options arrow-go's codec uses, a history half the size, and no
	// content checksum.
	return zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(l),
		zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true),
		zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false))
}

func (z *pageZstd) put(l zstd.EncoderLevel, enc *zstd.Encoder) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if len(z.free[l]) < maxFreeEncoders {
		z.free[l] = append(z.free[l], enc)
	}
}

// fullCodec is what arrow-go's zstd codec implements: block and streaming
// compression, and decoding that returns its errors.
type fullCodec interface {
	compress.ErrorCodec
	compress.StreamingCodec
}

func init() {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		return // no zstd codec to wrap; arrow-go reports it when one is asked for
	}
	// Wrap only a codec that keeps every ability arrow-go looks for.
	if base, ok := c.(fullCodec); ok {
		if _, done := c.(*pageZstd); !done {
			compress.RegisterCodec(compress.Codecs.Zstd, &pageZstd{fullCodec: base, free: map[zstd.EncoderLevel][]*zstd.Encoder{}})
		}
	}
}
