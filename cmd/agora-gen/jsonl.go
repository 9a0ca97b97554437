package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

// This file reproduces the byte-level output of
//
//	df.to_json(path, orient="records", lines=True, compression="gzip")
//
// in pandas, whose vendored ujson encoder writes compact JSON, forces
// ASCII output (every non-ASCII rune becomes \uXXXX with lowercase hex,
// astral runes become a UTF-16 surrogate pair), escapes "/" as "\/" and
// prints doubles with double_precision=10 (ten digits after the decimal
// point, trailing zeros trimmed, whole numbers as "1.0").

const hexDigits = "0123456789abcdef"

// doublePrecision is pandas' default to_json double_precision.
const doublePrecision = 10

// appendJSONString appends s as a JSON string literal, escaped exactly like
// pandas' ujson encoder with ensure_ascii=True and encode_html_chars=False.
// s must be valid UTF-8 (ujson refuses invalid input, so do we).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				dst = append(dst, '\\', '"')
			case '\\':
				dst = append(dst, '\\', '\\')
			case '/':
				dst = append(dst, '\\', '/')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				if c < 0x20 {
					dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
				} else {
					dst = append(dst, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			panic(fmt.Sprintf("appendJSONString: invalid UTF-8 at byte %d of %q", i, s))
		}
		if r >= 0x10000 {
			r -= 0x10000
			dst = appendU16(dst, uint16(0xd800+(r>>10)))
			dst = appendU16(dst, uint16(0xdc00+(r&0x3ff)))
		} else {
			dst = appendU16(dst, uint16(r))
		}
		i += size
	}
	return append(dst, '"')
}

func appendU16(dst []byte, v uint16) []byte {
	return append(dst, '\\', 'u',
		hexDigits[v>>12&0xf], hexDigits[v>>8&0xf], hexDigits[v>>4&0xf], hexDigits[v&0xf])
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10}

// appendPandasFloat appends v the way pandas' ujson Buffer_AppendDoubleUnchecked
// does with double_precision=10: a fixed number of decimals, round half
// per ujson's rule, trailing zeros trimmed, "X.0" for whole numbers. NaN is
// written as null (pandas maps NaN to null before encoding). Values beyond
// ujson's thresholds fall back to printf("%.10g").
func appendPandasFloat(dst []byte, value float64) []byte {
	if math.IsNaN(value) {
		return append(dst, "null"...)
	}
	if math.IsInf(value, 0) {
		panic("appendPandasFloat: infinite value")
	}
	const thresMax = float64(1e16) - 1
	const thresMin = 1e-15
	neg := false
	if value < 0 {
		neg = true
		value = -value
	}
	if value > thresMax || (value != 0 && value < thresMin) {
		if neg {
			value = -value
		}
		return strconv.AppendFloat(dst, value, 'g', doublePrecision, 64)
	}
	p := pow10[doublePrecision]
	whole := uint64(value)
	tmp := float64(value-float64(whole)) * p
	frac := uint64(tmp)
	diff := tmp - float64(frac)
	if diff > 0.5 {
		frac++
	} else if diff == 0.5 && (frac == 0 || frac&1 == 1) {
		frac++
	}
	if float64(frac) >= p {
		frac = 0
		whole++
	}
	if neg {
		dst = append(dst, '-')
	}
	dst = strconv.AppendUint(dst, whole, 10)
	dst = append(dst, '.')
	if frac == 0 {
		return append(dst, '0')
	}
	count := doublePrecision
	for frac%10 == 0 {
		count--
		frac /= 10
	}
	digits := strconv.AppendUint(nil, frac, 10)
	for i := len(digits); i < count; i++ {
		dst = append(dst, '0')
	}
	return append(dst, digits...)
}

// lineBuilder assembles one JSON object (one JSON Lines record) with keys
// in insertion order.
type lineBuilder struct {
	b     []byte
	first bool
}

func (l *lineBuilder) begin() {
	l.b = append(l.b[:0], '{')
	l.first = true
}

func (l *lineBuilder) key(k string) {
	if !l.first {
		l.b = append(l.b, ',')
	}
	l.first = false
	l.b = appendJSONString(l.b, k)
	l.b = append(l.b, ':')
}

func (l *lineBuilder) str(k, v string) {
	l.key(k)
	l.b = appendJSONString(l.b, v)
}

// strOrNull writes v, or null when v is empty.
func (l *lineBuilder) strOrNull(k, v string) {
	l.key(k)
	if v == "" {
		l.b = append(l.b, "null"...)
		return
	}
	l.b = appendJSONString(l.b, v)
}

func (l *lineBuilder) float(k string, v float64) {
	l.key(k)
	l.b = appendPandasFloat(l.b, v)
}

func (l *lineBuilder) int(k string, v int) {
	l.key(k)
	l.b = strconv.AppendInt(l.b, int64(v), 10)
}

func (l *lineBuilder) strList(k string, vs []string) {
	l.key(k)
	l.b = appendStrList(l.b, vs)
}

func (l *lineBuilder) floatList(k string, vs []float64) {
	l.key(k)
	l.b = append(l.b, '[')
	for i, v := range vs {
		if i > 0 {
			l.b = append(l.b, ',')
		}
		l.b = appendPandasFloat(l.b, v)
	}
	l.b = append(l.b, ']')
}

func (l *lineBuilder) end() []byte {
	l.b = append(l.b, '}', '\n')
	return l.b
}

func appendStrList(dst []byte, vs []string) []byte {
	dst = append(dst, '[')
	for i, v := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, v)
	}
	return append(dst, ']')
}

// jsonlGzFile streams JSON Lines records into DIR/NAME.gz. The gzip member
// header carries NAME (like Python's gzip module does for pandas), a zero
// modification time and best compression, so output is reproducible. Data
// goes to a temporary file that is renamed into place on a successful close.
type jsonlGzFile struct {
	f       *os.File
	gz      *gzip.Writer
	bw      *bufio.Writer
	tmp     string
	final   string
	records int
}

func createJSONLGz(dir, name string) (*jsonlGzFile, error) {
	final := filepath.Join(dir, name+".gz")
	tmp := final + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, err
	}
	gz, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	gz.Header.Name = name
	gz.Header.ModTime = time.Unix(0, 0) // MTIME 0: "no time stamp" (RFC 1952)
	gz.Header.OS = 255
	return &jsonlGzFile{f: f, gz: gz, bw: bufio.NewWriterSize(gz, 1<<16), tmp: tmp, final: final}, nil
}

func (j *jsonlGzFile) write(line []byte) error {
	j.records++
	_, err := j.bw.Write(line)
	return err
}

// close flushes everything and renames the file into place. If err is
// non-nil (a failure upstream) the temporary file is removed instead.
func (j *jsonlGzFile) close(err error) error {
	if err == nil {
		err = j.bw.Flush()
	}
	if cerr := j.gz.Close(); err == nil {
		err = cerr
	}
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(j.tmp, j.final)
	}
	if err != nil {
		os.Remove(j.tmp)
	}
	return err
}
