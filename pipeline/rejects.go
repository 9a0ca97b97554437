package pipeline

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// MaxRejectRowBytes caps the copy of a rejected row kept in _rejects.
const MaxRejectRowBytes = 64 << 10

// Reject is one row that did not pass, with why and where it came from.
type Reject struct {
	// Rule is what the row broke: decode, type, required, enum, range,
	// equal_lengths, list_length, sums_to, unique, explode.
	Rule string
	// Column is the column concerned, if one.
	Column string
	// Reason says what was wrong, with the values involved.
	Reason string
	// File and Line say where the row came from.
	File string
	Line int64
	// Row is the row as JSON (or the raw input line), cut at
	// MaxRejectRowBytes.
	Row string
}

// Flag is a failed check that does not reject its row: the row is
// written and the failure is counted in the summary and the manifest.
type Flag struct {
	Rule   string `json:"-"`
	Column string `json:"-"`
	// Check names the rule among the table's steps
	// (steps[2].validate[1]), so that two rules of one kind on one
	// column are counted apart.
	Check  string `json:"-"`
	Reason string `json:"reason"`
	File   string `json:"file"`
	Line   int64  `json:"line"`
}

// Rejects collects the rejected rows (and flagged checks) of one chunk.
// It is not safe for concurrent use; each chunk in flight has its own.
type Rejects struct {
	// File is the input file of the chunk.
	File  string
	list  []Reject
	flags []Flag
}

// Flag records a failed check (named as Flag.Check says) on row i of b
// without rejecting the row.
func (r *Rejects) Flag(b arrow.RecordBatch, i int, check, rule, column, reason string) {
	f := FileOf(b, i)
	if f == "" {
		f = r.File
	}
	r.flags = append(r.flags, Flag{Check: check, Rule: rule, Column: column, Reason: ValidText(reason), File: ValidText(f), Line: LineOf(b, i)})
}

// Flags returns the flagged checks.
func (r *Rejects) Flags() []Flag { return r.flags }

// Merge adds o's rejects and flags to r.
func (r *Rejects) Merge(o *Rejects) {
	r.list = append(r.list, o.list...)
	r.flags = append(r.flags, o.flags...)
}

// OneFile learns, from the files of batches seen one after the other,
// the one file they all came from: what a stage that holds batches (an
// aggregate, a whole-input derivation) emits at the end names it, as the
// input's rows did. Its zero value has seen nothing.
type OneFile struct {
	file string
	seen int // distinct files seen, up to 2
}

// See notes the file of one more batch ("" when it names none).
func (o *OneFile) See(file string) {
	switch {
	case o.seen == 0:
		o.file, o.seen = file, 1
	case o.seen == 1 && file != o.file:
		o.file, o.seen = "", 2
	}
}

// File is the one file every batch seen came from, or "" when they came
// from several, named none, or none were seen.
func (o *OneFile) File() string { return o.file }

// fillFile sets file as r's File, and as the File of the rejects already
// recorded, where they have none.
func (r *Rejects) fillFile(file string) {
	if r.File != "" || file == "" {
		return
	}
	r.File = file
	for i := range r.list {
		if r.list[i].File == "" {
			r.list[i].File = ValidText(file)
		}
	}
}

// Add records a reject as given.
func (r *Rejects) Add(x Reject) {
	if x.File == "" {
		x.File = r.File
	}
	// _rejects columns are UTF-8 strings, which readers check: a raw
	// line or file name that is not UTF-8 keeps its other bytes, and each
	// byte that is not shows as \xNN.
	x.Rule, x.Column, x.Reason = ValidText(x.Rule), ValidText(x.Column), ValidText(x.Reason)
	x.File, x.Row = ValidText(x.File), ValidText(x.Row)
	if len(x.Row) > MaxRejectRowBytes {
		// Cut after escaping, so the cap holds, and not inside a
		// character (valid UTF-8 now: at most three bytes back).
		cut := MaxRejectRowBytes
		for !utf8.RuneStart(x.Row[cut]) {
			cut--
		}
		x.Row = x.Row[:cut]
	}
	r.list = append(r.list, x)
}

// ValidText returns s when it is valid UTF-8, else s with each byte that
// does not belong to a valid character written as \xNN (as Go's %q
// shows it), so that a reader that checks its strings can read it.
func ValidText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		c, n := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, "\\x%02x", s[i])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// AddRow records row i of b as rejected, reading its line from the
// LineColumn and its values as JSON.
func (r *Rejects) AddRow(b arrow.RecordBatch, i int, rule, column, reason string) {
	r.Add(Reject{Rule: rule, Column: column, Reason: reason, File: FileOf(b, i), Line: LineOf(b, i), Row: RowJSON(b, i)})
}

// RowError is an error at a place in an input that stops the run: a
// file, a line of it, or both. A source sets File (and Line where it
// knows it); a stage sets Line, and File when its batch has a
// FileColumn; for an input of one file, WithFile fills File in from the
// chunk's Rejects.
type RowError struct {
	File string
	Line int64
	Err  error
}

// Error gives file:line: cause, file: cause while the line is unknown,
// or line N: cause while the file is.
func (e *RowError) Error() string {
	switch {
	case e.File == "":
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

// Unwrap returns the cause.
func (e *RowError) Unwrap() error { return e.Err }

// WithFile sets file as the File of err when err is a RowError with none,
// and returns err. Only err itself is looked at, not what it wraps:
// fmt.Errorf fixes its text when it wraps, so a RowError under it would
// change without its text changing. Call it before wrapping.
func WithFile(err error, file string) error {
	if re, ok := err.(*RowError); ok && re.File == "" {
		re.File = file
	}
	return err
}

// FileOf returns the FileColumn value of row i, or "". It is a copy, not
// a view of b's buffer: a reject or flag outlives its batch, whose
// buffers a pooling allocator hands to the next batch once it is
// released.
func FileOf(b arrow.RecordBatch, i int) string {
	idx := b.Schema().FieldIndices(FileColumn)
	if len(idx) == 0 {
		return ""
	}
	if c, ok := b.Column(idx[0]).(*array.String); ok && c.IsValid(i) {
		return strings.Clone(c.Value(i))
	}
	return ""
}

// Len returns the number of rejects.
func (r *Rejects) Len() int { return len(r.list) }

// List returns the rejects; the slice is the collector's own.
func (r *Rejects) List() []Reject { return r.list }

// LineOf returns the source line of row i, or 0 when b has no LineColumn.
// A loop over many rows should take Lines once and call LineAt: finding
// the column copies the schema's index list.
func LineOf(b arrow.RecordBatch, i int) int64 { return LineAt(Lines(b), i) }

// Lines returns b's LineColumn, or nil when it has none.
func Lines(b arrow.RecordBatch) *array.Int64 {
	idx := b.Schema().FieldIndices(LineColumn)
	if len(idx) == 0 {
		return nil
	}
	c, _ := b.Column(idx[0]).(*array.Int64)
	return c
}

// LineAt returns row i's line from lines (a Lines column, or nil), or 0.
func LineAt(lines *array.Int64, i int) int64 {
	if lines != nil && lines.IsValid(i) {
		return lines.Value(i)
	}
	return 0
}

// RowJSON renders row i of b as a JSON object (keys sorted), leaving out
// internal columns.
func RowJSON(b arrow.RecordBatch, i int) string {
	m := make(map[string]any, b.NumCols())
	for c := 0; c < int(b.NumCols()); c++ {
		name := b.ColumnName(c)
		if len(name) > 0 && name[0] == '_' {
			continue
		}
		m[name] = b.Column(c).GetOneForMarshal(i)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return `{"error":"row not representable as JSON"}`
	}
	return string(out)
}
