package sinks

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// TestPageZstdSameBytes checks that the registered zstd codec frames pages
// byte for byte as arrow-go's own codec does, incompressible ones (random
// bytes) too, and that the frames decode back.
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
			want := z.fullCodec.EncodeLevel(nil, tc.page, tc.level)
			if !bytes.Equal(got, want) {
				t.Fatalf("frame differs from arrow-go's: %d bytes, want %d", len(got), len(want))
			}
			if back := z.Decode(nil, got); !bytes.Equal(back, tc.page) {
				t.Fatal("page does not decode to itself")
			}
		})
	}
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
