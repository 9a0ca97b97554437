package sinks

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// pageZstd replaces arrow-go's zstd codec for writing pages; decoding and
// streams (which arrow-go's page reader looks for by type assertion) stay
// with the wrapped codec. It makes the same bytes and changes two costs:
//
//   - The encoder's lower-memory history: the window (4 MiB at level 1)
//     plus one block instead of twice the window. A smaller window would
//     save more but changes the output (0.1% larger on CrowdRAG-25).
//   - The encoder pool: a free list the collector does not empty, where
//     arrow-go's sync.Pool loses its encoders (and their history) at
//     every collection.
//
// CompressBound stays the wrapped codec's: arrow-go's column writer grows
// one buffer to it and reuses that buffer for every page of a column
// chunk, so a smaller estimate would cost an allocation per page that
// compresses worse than the estimate.
type pageZstd struct {
	fullCodec
	mu   sync.Mutex
	free map[zstd.EncoderLevel][]*zstd.Encoder
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
	l := zstd.EncoderLevelFromZstd(level)
	if level == compress.DefaultCompressionLevel {
		l = zstd.SpeedDefault
	}
	enc, err := z.get(l)
	if err != nil {
		// Options are constants; should they ever be refused, the
		// wrapped codec still compresses.
		return z.fullCodec.EncodeLevel(dst, src, level)
	}
	defer z.put(l, enc)
	return enc.EncodeAll(src, dst[:0])
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
	// The options arrow-go's codec uses, and a history half the size.
	return zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(l),
		zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true),
		zstd.WithLowerEncoderMem(true))
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
