package pqenc

import "encoding/binary"

// appendRLE appends vals in Parquet's RLE / bit-packing hybrid encoding
// at bit width w (without a length prefix): a run of 8 or more equal
// values is one RLE run, and everything between runs is bit-packed in
// groups of 8. A bit-packed stretch ends only at a multiple of 8 values
// or at the end of vals, whose last group is padded with zeros (readers
// stop at the page's value count), so no value is ever padded in the
// middle of the stream.
func appendRLE[T int16 | int32](dst []byte, vals []T, w int) []byte {
	n := len(vals)
	runAt := func(i int) int {
		j := i + 1
		for j < n && vals[j] == vals[i] {
			j++
		}
		return j - i
	}
	for i := 0; i < n; {
		if r := runAt(i); r >= 8 {
			dst = binary.AppendUvarint(dst, uint64(r)<<1)
			dst = appendLE(dst, uint64(vals[i]), (w+7)/8)
			i += r
			continue
		}
		// A bit-packed stretch, a group of 8 at a time, until a run of 8
		// starts at a group's end.
		j := i
		for {
			j += 8
			if j >= n {
				j = n
				break
			}
			if runAt(j) >= 8 {
				break
			}
		}
		dst = appendBitPacked(dst, vals[i:j], w)
		i = j
	}
	return dst
}

// appendLE appends the low size bytes of v, little-endian.
func appendLE(dst []byte, v uint64, size int) []byte {
	for k := range size {
		dst = append(dst, byte(v>>(8*k)))
	}
	return dst
}

// appendBitPacked appends one bit-packed run of vals (padded with zeros
// to a multiple of 8) at bit width w, least significant bit first.
func appendBitPacked[T int16 | int32](dst []byte, vals []T, w int) []byte {
	groups := (len(vals) + 7) / 8
	dst = binary.AppendUvarint(dst, uint64(groups)<<1|1)
	var acc uint64
	bits := 0
	for k := range groups * 8 {
		var v uint64
		if k < len(vals) {
			v = uint64(uint32(vals[k]))
		}
		acc |= v << bits
		bits += w
		for bits >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			bits -= 8
		}
	}
	// groups*8*w is a multiple of 8 bits: nothing is left in acc.
	return dst
}
