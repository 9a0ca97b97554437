package sinks

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// HiveNull is the directory value Hive, Spark, Arrow and DuckDB read as
// NULL.
const HiveNull = "__HIVE_DEFAULT_PARTITION__"

// ErrPartitionValue is returned for a partition value that cannot be
// written as a directory name (too long once escaped).
var ErrPartitionValue = errors.New("bad partition value")

// maxSegment is the longest directory name most file systems allow.
const maxSegment = 255

// maxPartitionPath is the longest the partition folders of a file may
// be together, so that with the output folder, dataset, table and file
// name a path stays within Linux's 4096 bytes (PATH_MAX).
const maxPartitionPath = 2048

// needsEscape reports whether Hive/Spark escape c in a path segment, plus
// space (which DuckDB needs escaped) and '%' itself.
func needsEscape(c byte) bool {
	if c < 0x20 || c == 0x7f {
		return true
	}
	switch c {
	case '"', '#', '%', '\'', '*', '/', ':', '=', '?', '\\', '{', '[', ']', '^', ' ':
		return true
	}
	return false
}

// EscapePartitionValue escapes a value for a Hive path segment the way
// Spark does (percent-encoding with upper-case hex) with space added, so
// that Spark, DuckDB, pyarrow and polars all decode it to the original.
// Non-ASCII UTF-8 is kept as is: Spark decodes %XX one byte per char and
// would garble encoded UTF-8. A null becomes __HIVE_DEFAULT_PARTITION__;
// so do the empty string (Spark and DuckDB read an empty segment as null)
// and a literal "__HIVE_DEFAULT_PARTITION__" is escaped so that Spark and
// DuckDB keep it distinct (pyarrow and polars unescape before comparing
// and still read it as null). A value spelled "null" in any case is
// escaped too, because DuckDB reads the bare word as NULL.
func EscapePartitionValue(v *string) string {
	if v == nil || *v == "" {
		return HiveNull
	}
	s := *v
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscape(c) {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	out := b.String()
	if out == HiveNull {
		// Keep a literal sentinel apart from NULL: escape its first '_'.
		out = "%5F" + out[1:]
	}
	if out == "." || out == ".." {
		out = strings.ReplaceAll(out, ".", "%2E")
	}
	if strings.EqualFold(out, "null") {
		// DuckDB reads a segment spelled NULL as SQL NULL; an escaped first
		// letter keeps the string.
		out = fmt.Sprintf("%%%02X", out[0]) + out[1:]
	}
	return out
}

// UnescapePartitionValue reverses EscapePartitionValue; HiveNull gives nil.
func UnescapePartitionValue(s string) (*string, error) {
	if s == HiveNull {
		return nil, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) {
			return nil, fmt.Errorf("%w: truncated escape in %q", ErrPartitionValue, s)
		}
		var x byte
		for _, h := range []byte{s[i+1], s[i+2]} {
			x <<= 4
			switch {
			case h >= '0' && h <= '9':
				x |= h - '0'
			case h >= 'A' && h <= 'F':
				x |= h - 'A' + 10
			case h >= 'a' && h <= 'f':
				x |= h - 'a' + 10
			default:
				return nil, fmt.Errorf("%w: bad escape in %q", ErrPartitionValue, s)
			}
		}
		b.WriteByte(x)
		i += 2
	}
	out := b.String()
	return &out, nil
}

// PartitionPath builds "col=value/col2=value2" for the given values.
func PartitionPath(cols []string, vals []*string) (string, error) {
	segs := make([]string, len(cols))
	for i, c := range cols {
		seg := c + "=" + EscapePartitionValue(vals[i])
		if len(seg) > maxSegment {
			return "", fmt.Errorf("%w: %s value is %d bytes escaped; a directory name holds at most %d", ErrPartitionValue, c, len(seg), maxSegment)
		}
		segs[i] = seg
	}
	p := strings.Join(segs, "/")
	if len(p) > maxPartitionPath {
		return "", fmt.Errorf("%w: the partition folders (%s) come to %d bytes escaped; together they hold at most %d", ErrPartitionValue, strings.Join(cols, ", "), len(p), maxPartitionPath)
	}
	return p, nil
}

// Partition is a partition folder: its path ("col=value/...") and its
// values as readers will see them (nil for null and "").
type Partition struct {
	Path   string
	Values []*string
}

// Partitioner finds the partition of a row. The raw values are looked up
// in a cache first, so a folder name is escaped once per distinct value,
// not once per row; the cache holds at most limit values (the outcome of
// a value that does not fit is worked out again each time). A value too
// long for a folder name gives an error wrapping ErrPartitionValue, and
// that outcome is cached too. A Partitioner is not safe for concurrent
// use.
type Partitioner struct {
	cols  []string // partition column names
	idx   []int    // their columns in the batches
	limit int
	cache map[string]partitionOutcome
	key   []byte
	// The raw values and outcomes of the last recentKeys distinct rows
	// (hit is the one the row before matched): rows come in runs of one
	// partition (sorted inputs, unpartitioned batches), or in turns of a
	// few (an unpivot's rows, one per name, on a partition by name), and
	// both are answered without a map lookup, with the same *Partition.
	recent        [recentKeys]recentKey
	nRecent, next int
	hit           int
}

// recentKeys is how many distinct rows a Partitioner remembers ahead of
// its map: CrowdRAG-25's unpivots give each row 7 dimensions in turn.
const recentKeys = 8

// recentKey is a row's raw values and its outcome.
type recentKey struct {
	key []byte
	out partitionOutcome
}

type partitionOutcome struct {
	p   *Partition
	err error
}

// NewPartitioner finds partitions on columns idx of the batches, named
// cols, remembering at most limit distinct values.
func NewPartitioner(cols []string, idx []int, limit int) *Partitioner {
	return &Partitioner{cols: cols, idx: idx, limit: limit}
}

// NewTablePartitioner returns the Partitioner of a table of schema in,
// partitioned by cols (each one PartitionColumn allows): it remembers at
// most the maxPartitions partitions the table may write, plus values that
// name the same folder (null and ""). The table's sink and check's count
// of partitions both use it.
func NewTablePartitioner(in *arrow.Schema, cols []string, maxPartitions int) (*Partitioner, error) {
	idx := make([]int, len(cols))
	for k, c := range cols {
		i, err := PartitionColumn(in, c)
		if err != nil {
			return nil, fmt.Errorf("partition_by: %w", err)
		}
		idx[k] = i
	}
	return NewPartitioner(cols, idx, maxPartitions+2), nil
}

// TooManyPartitions is the error of a table that would write more than
// maxPartitions partitions.
func TooManyPartitions(maxPartitions int) error {
	return fmt.Errorf("%w: more than writer.max_partitions (%d); partition on a column with fewer values", ErrTooManyPartitions, maxPartitions)
}

// Of returns row i's partition. Rows with the same raw values as the row
// before get the same *Partition, and so do rows whose values come in
// turns of at most recentKeys.
func (p *Partitioner) Of(b arrow.RecordBatch, i int) (*Partition, error) {
	key := p.key[:0]
	for _, c := range p.idx {
		a := b.Column(c)
		if a.IsNull(i) {
			key = append(key, 0)
			continue
		}
		key = append(key, 1)
		switch v := a.(type) {
		case *array.String:
			s := v.Value(i)
			key = binary.AppendUvarint(key, uint64(len(s)))
			key = append(key, s...)
		case *array.Int64:
			key = binary.AppendVarint(key, v.Value(i))
		case *array.Int32:
			key = binary.AppendVarint(key, int64(v.Value(i)))
		case *array.Boolean:
			if v.Value(i) {
				key = append(key, 1)
			} else {
				key = append(key, 0)
			}
		default:
			s := a.ValueStr(i)
			key = binary.AppendUvarint(key, uint64(len(s)))
			key = append(key, s...)
		}
	}
	p.key = key
	if p.nRecent > 0 && bytes.Equal(key, p.recent[p.hit].key) {
		o := p.recent[p.hit].out
		return o.p, o.err
	}
	for k := range p.nRecent {
		if bytes.Equal(key, p.recent[k].key) {
			p.hit = k
			o := p.recent[k].out
			return o.p, o.err
		}
	}
	o := p.lookup(b, i, key)
	r := &p.recent[p.next]
	r.key, r.out = append(r.key[:0], key...), o
	p.hit, p.next = p.next, (p.next+1)%recentKeys
	p.nRecent = min(p.nRecent+1, recentKeys)
	return o.p, o.err
}

// lookup returns the outcome of row i, whose raw values are key: cached,
// or worked out and cached.
func (p *Partitioner) lookup(b arrow.RecordBatch, i int, key []byte) partitionOutcome {
	if o, ok := p.cache[string(key)]; ok {
		return o
	}
	vs := make([]*string, len(p.idx))
	for k, c := range p.idx {
		vs[k] = partValue(b.Column(c), i)
	}
	var o partitionOutcome
	if path, err := PartitionPath(p.cols, vs); err != nil {
		o.err = err
	} else {
		o.p = &Partition{Path: path, Values: vs}
	}
	if len(p.cache) < p.limit {
		if p.cache == nil {
			p.cache = map[string]partitionOutcome{}
		}
		p.cache[string(key)] = o
	}
	return o
}

// partValue returns row i's partition value as readers will see it: an
// empty string is written as the null directory, so it is nil here too.
func partValue(a arrow.Array, i int) *string {
	if a.IsNull(i) {
		return nil
	}
	var s string
	if sa, ok := a.(*array.String); ok {
		s = strings.Clone(sa.Value(i)) // kept: not a view of the batch's buffer
	} else {
		s = a.ValueStr(i)
	}
	if s == "" {
		return nil
	}
	return &s
}
