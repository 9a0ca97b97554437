package stages

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// escU starts a JSON \uXXXX escape.
var escU = []byte(`\u`)

// inlineEscapes appends ln to dst with each \uXXXX escape of a printable
// character inside a string written as the character's UTF-8 bytes, and
// returns dst.
//
// The line means the same JSON afterwards, and fastjson decodes every
// string of it to the same bytes; a line fastjson rejects, it rejects
// still (FuzzInlineEscapes). Only escapes inside strings are written out:
// JSON has no backslash elsewhere, and `"" \u0020` must stay invalid, not
// become `""  `. Left for fastjson to decode are the other escapes (\n,
// \", ...); escapes of control characters, '"' and '\', which a JSON
// string cannot hold as they are; escapes of hex digits, which written
// out could complete a \u that fastjson keeps as text (`\u000\u0041` is
// not `\u000A`); and surrogates that do not form a pair, which fastjson
// keeps or replaces in its own way (a surrogate escape followed by any
// \uXXXX escape becomes U+FFFD with it, so both are left together). A \u
// without four hex digits is copied as it is. A backslash escapes the
// character after it, as in fastjson: `\\u0041` is a backslash and "u0041",
// and `\"` does not end the string.
//
// Python's json module and many others escape every non-ASCII character,
// and fastjson decodes each such escape with strconv and a string
// conversion: on CrowdRAG-25's texts that was a tenth of the decoding.
//
// lone reports whether a string of ln holds a \uXXXX escape of a UTF-16
// surrogate that is not half of a valid pair: no character, which
// fastjson keeps as the escape's text or turns into U+FFFD.
func inlineEscapes(dst, ln []byte) (out []byte, lone bool) {
	out, lone, _ = inlineEscapesChecked(dst, ln)
	return out, lone
}

// inlineEscapesChecked is inlineEscapes that also returns where the first
// escape JSON does not have starts in ln (see badEscape), or -1: the walk
// over the escapes is the same, and a line with many (every non-ASCII
// character escaped) is not walked twice.
func inlineEscapesChecked(dst, ln []byte) (out []byte, lone bool, bad int) {
	s := ln
	in := false // inside a string
	bad = -1
	for {
		j := bytes.IndexByte(s, '\\')
		if j < 0 {
			return append(dst, s...), lone, bad
		}
		// No backslash before j, so every quote before it opens or closes
		// a string. Escapes come in runs (every non-ASCII character of a
		// word): a short gap is counted in place, without a call.
		if j < 32 {
			for _, c := range s[:j] {
				if c == '"' {
					in = !in
				}
			}
		} else if bytes.Count(s[:j], quote)%2 == 1 {
			in = !in
		}
		dst = append(dst, s[:j]...)
		s = s[j:]
		if !in {
			// Outside a string a backslash is bad JSON, which fastjson
			// rejects there, before anything after it: kept, it escapes
			// nothing.
			dst = append(dst, s[0])
			s = s[1:]
			continue
		}
		if bad < 0 && !validEscape(s) {
			bad = len(ln) - len(s)
		}
		var l bool
		dst, s, l = inlineEscape(dst, s)
		lone = lone || l
	}
}

// validEscape reports whether the escape at the start of s (a backslash)
// is one JSON has.
func validEscape(s []byte) bool {
	if len(s) < 2 {
		return false
	}
	switch s[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		_, ok := hex4(s[2:])
		return ok
	}
	return false
}

// errLoneSurrogate is the reason a string with half a surrogate pair
// escaped is refused.
var errLoneSurrogate = errors.New(`a string holds a \u escape of a UTF-16 surrogate without its pair, which is no character`)

// quote is a JSON string's delimiter.
var quote = []byte{'"'}

// inlineEscape appends the escape at the start of s (a backslash) to dst,
// written out where it can be, and returns the rest of s and whether the
// escape was of a surrogate without its pair.
func inlineEscape(dst, s []byte) ([]byte, []byte, bool) {
	if len(s) < 2 || s[1] != 'u' {
		n := min(2, len(s)) // an escape of one character, or a lone final backslash
		return append(dst, s[:n]...), s[n:], false
	}
	r, ok := hex4(s[2:])
	switch {
	case !ok:
		return append(dst, s[:2]...), s[2:], false // not an escape: fastjson keeps "\u" and reads on
	case utf16.IsSurrogate(r):
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if r2, ok := hex4(s[8:]); ok {
				if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
					return utf8.AppendRune(dst, p), s[12:], false
				}
				return append(dst, s[:12]...), s[12:], true
			}
		}
		return append(dst, s[:6]...), s[6:], true
	case r < 0x20 || r == '"' || r == '\\' || r < 0x80 && isHex(byte(r)):
		return append(dst, s[:6]...), s[6:], false
	}
	return utf8.AppendRune(dst, r), s[6:], false
}

// isHex reports whether c is a hex digit.
func isHex(c byte) bool { return hexValue[c] >= 0 }

// hexValue is the value of a hex digit byte, or -1.
var hexValue = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := range 10 {
		t['0'+i] = int8(i)
	}
	for i := range 6 {
		t['a'+i], t['A'+i] = int8(10+i), int8(10+i)
	}
	return t
}()

// hex4 reads four hex digits at the start of s, as strconv.ParseUint
// with base 16 does for fastjson (either case, no sign or prefix).
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	a, b, c, d := hexValue[s[0]], hexValue[s[1]], hexValue[s[2]], hexValue[s[3]]
	if a|b|c|d < 0 {
		return 0, false
	}
	return rune(a)<<12 | rune(b)<<8 | rune(c)<<4 | rune(d), true
}

// badEscape returns an error for the first escape in ln, a line that
// parsed as JSON, that JSON does not have: a backslash before anything
// but " \ / b f n r t, or a \u without four hex digits. fastjson keeps
// such an escape as text (`"a\qb"` reads as a, backslash, q, b) where
// Python's json, DuckDB and pyarrow refuse the line. In a line that
// parsed, a backslash is inside a string (fastjson refuses one anywhere
// else), so the scan jumps from backslash to backslash.
func badEscape(ln []byte) error {
	for i := 0; ; {
		j := bytes.IndexByte(ln[i:], '\\')
		if j < 0 {
			return nil
		}
		i += j
		if !validEscape(ln[i:]) {
			return escapeError(ln, i)
		}
		i += 2 // the escaped character is not an escape of its own
	}
}

// escapeError describes the escape JSON does not have at ln[i:].
func escapeError(ln []byte, i int) error {
	switch {
	case i+1 >= len(ln):
		return fmt.Errorf("a backslash ends the line at byte %d", i+1)
	case ln[i+1] == 'u':
		return fmt.Errorf("invalid escape %s at byte %d: \\u wants four hex digits", shownEscape(ln[i:min(i+6, len(ln))]), i+1)
	}
	_, size := utf8.DecodeRune(ln[i+1:])
	return fmt.Errorf("invalid escape %s at byte %d", shownEscape(ln[i:i+1+size]), i+1)
}

// shownEscape is an escape's bytes as an error shows them: as they are
// when they are printable text, else quoted.
func shownEscape(b []byte) string {
	for _, r := range string(b) {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return strconv.Quote(string(b))
		}
	}
	return string(b)
}

// infinityWord is the word Python's json writes for an infinite float
// (Infinity, -Infinity).
var infinityWord = []byte("Infinity")

// pythonInfinity appends ln to dst with each Infinity outside strings
// written as Inf, the word fastjson reads (it takes "Inf" and then fails
// on "inity"), and reports whether it wrote any. Python's json.dumps
// writes Infinity and -Infinity for infinite floats, as it writes NaN.
func pythonInfinity(dst, ln []byte) ([]byte, bool) {
	in, esc, changed := false, false, false
	for i := 0; i < len(ln); i++ {
		c := ln[i]
		switch {
		case in && esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && c == 'I' && bytes.HasPrefix(ln[i:], infinityWord):
			dst = append(dst, "Inf"...)
			i += len(infinityWord) - 1
			changed = true
			continue
		}
		dst = append(dst, c)
	}
	return dst, changed
}
