package stages

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// escU starts a JSON \uXXXX escape.
var escU = []byte(`\u`)

// inlineEscapes appends ln to dst with each \uXXXX escape of a printable
// character written as the character's UTF-8 bytes, and returns dst.
// from is the index of the first `\u` in ln.
//
// The line means the same JSON afterwards, and fastjson decodes every
// string of it to the same bytes (FuzzInlineEscapes). Left for fastjson
// to decode are the other escapes (\n, \", ...); escapes of control
// characters, '"' and '\', which a JSON string cannot hold as they are;
// escapes of hex digits, which written out could complete a \u that
// fastjson keeps as text (`\u000\u0041` is not `\u000A`); and surrogates
// that do not form a pair, which fastjson keeps or replaces in its own
// way (a surrogate escape followed by any \uXXXX escape becomes U+FFFD
// with it, so both are left together). A \u without four hex digits is
// copied as it is. Escaped backslashes are skipped as pairs, so the "u"
// of `\\u0041` is text.
//
// Python's json module and many others escape every non-ASCII character,
// and fastjson decodes each such escape with strconv and a string
// conversion: on CrowdRAG-25's texts that was a tenth of the decoding.
func inlineEscapes(dst, ln []byte, from int) []byte {
	// Escapes start at a backslash that is not itself escaped: find the
	// first backslash of the run that ends at from.
	i := from
	for i > 0 && ln[i-1] == '\\' {
		i--
	}
	dst = append(dst, ln[:i]...)
	s := ln[i:]
	for {
		j := bytes.IndexByte(s, '\\')
		if j < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:j]...)
		s = s[j:]
		if len(s) < 2 || s[1] != 'u' {
			n := min(2, len(s)) // an escape of one character, or a lone final backslash
			dst = append(dst, s[:n]...)
			s = s[n:]
			continue
		}
		r, ok := hex4(s[2:])
		switch {
		case !ok:
			dst = append(dst, s[:2]...) // not an escape: fastjson keeps "\u" and reads on
			s = s[2:]
		case utf16.IsSurrogate(r):
			if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if r2, ok := hex4(s[8:]); ok {
					if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
						dst = utf8.AppendRune(dst, p)
					} else {
						dst = append(dst, s[:12]...)
					}
					s = s[12:]
					continue
				}
			}
			dst = append(dst, s[:6]...)
			s = s[6:]
		case r < 0x20 || r == '"' || r == '\\' || r < 0x80 && isHex(byte(r)):
			dst = append(dst, s[:6]...)
			s = s[6:]
		default:
			dst = utf8.AppendRune(dst, r)
			s = s[6:]
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// hex4 reads four hex digits at the start of s.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
