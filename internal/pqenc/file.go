package pqenc

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/thrift/lib/go/thrift"
)

// Column is how one leaf column is encoded: its levels, encoding,
// statistics, page size and compression.
type Column struct {
	// MaxDef and MaxRep are the leaf's maximum definition and repetition
	// levels.
	MaxDef, MaxRep int16
	// SlotDef is the definition level from which a level has a slot in
	// the values given to Write (a value or a null): that of the
	// innermost list's elements, 0 without lists (a struct's children
	// have a slot for every row of the struct, null or not).
	SlotDef int16
	// leafRequired: the leaf is REQUIRED, so its values are written as
	// they are, whatever an Arrow validity bitmap says (as arrow-go does).
	leafRequired bool
	// Dictionary encodes the values through a dictionary page (byte
	// arrays only); the dictionary never falls back to PLAIN.
	Dictionary bool
	// Stats writes the chunk's minimum, maximum and null count.
	Stats bool
	// MaxStatsSize is the longest minimum or maximum written; longer
	// ones are left out, as arrow-go leaves them out.
	MaxStatsSize int
	// PageBytes is the size at which a data page is ended.
	PageBytes int
	// Compress compresses a page body into dst's storage; nil leaves
	// pages uncompressed.
	Compress func(dst, src []byte) []byte

	codec int32 // Parquet's CompressionCodec
	ptype parquet.Type
	path  []string
}

// ErrUnsupported is wrapped by Columns when a leaf's Arrow or Parquet type
// is one the encoder does not write; the caller writes through arrow-go
// then.
var ErrUnsupported = errors.New("not supported by agora's encoder")

// Columns returns the encoding of each leaf of sc (pqarrow.ToParquet of
// the Arrow schema whose leaf types are leafTypes, in the same order)
// under props.
func Columns(sc *schema.Schema, leafTypes []arrow.DataType, props *parquet.WriterProperties) ([]Column, error) {
	if sc.NumColumns() != len(leafTypes) {
		return nil, fmt.Errorf("%d leaf columns, %d leaf types", sc.NumColumns(), len(leafTypes))
	}
	if err := checkNodes(sc.Root()); err != nil {
		return nil, err
	}
	cols := make([]Column, sc.NumColumns())
	for i := range cols {
		d := sc.Column(i)
		path := d.Path()
		c := Column{
			MaxDef:       d.MaxDefinitionLevel(),
			MaxRep:       d.MaxRepetitionLevel(),
			SlotDef:      slotDef(d.SchemaNode()),
			leafRequired: d.SchemaNode().RepetitionType() == parquet.Repetitions.Required,
			Dictionary:   props.DictionaryEnabledFor(path),
			Stats:        props.StatisticsEnabledFor(path),
			MaxStatsSize: int(props.MaxStatsSizeFor(path)),
			PageBytes:    int(props.DataPageSize()),
			ptype:        d.PhysicalType(),
			path:         d.ColumnPath(),
		}
		if !writes(d.PhysicalType(), leafTypes[i]) {
			return nil, fmt.Errorf("column %s: arrow %s as %s: %w", path, leafTypes[i], d.PhysicalType(), ErrUnsupported)
		}
		if c.Dictionary && c.ptype != parquet.Types.ByteArray {
			return nil, fmt.Errorf("column %s: a dictionary of %s: %w", path, d.PhysicalType(), ErrUnsupported)
		}
		switch codec := props.CompressionFor(path); codec {
		case compress.Codecs.Uncompressed:
			c.codec = 0
		case compress.Codecs.Snappy, compress.Codecs.Zstd:
			c.codec = 1
			if codec == compress.Codecs.Zstd {
				c.codec = 6
			}
			cd, err := compress.GetCodec(codec)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", path, err)
			}
			level := props.CompressionLevelFor(path)
			c.Compress = func(dst, src []byte) []byte { return cd.EncodeLevel(dst, src, level) }
		default:
			return nil, fmt.Errorf("column %s: compression %s: %w", path, codec, ErrUnsupported)
		}
		cols[i] = c
	}
	return cols, nil
}

// writes reports whether the encoder writes an Arrow leaf type as
// Parquet physical type t, its values as they are.
func writes(t parquet.Type, dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		return t == parquet.Types.ByteArray
	case arrow.INT64:
		return t == parquet.Types.Int64
	case arrow.TIMESTAMP:
		// Microseconds only: pqarrow would convert other units.
		return t == parquet.Types.Int64 && dt.(*arrow.TimestampType).Unit == arrow.Microsecond
	case arrow.INT32, arrow.DATE32:
		return t == parquet.Types.Int32
	case arrow.FLOAT64:
		return t == parquet.Types.Double
	case arrow.FLOAT32:
		return t == parquet.Types.Float
	case arrow.BOOL:
		return t == parquet.Types.Boolean
	}
	return false
}

// checkNodes refuses a schema with a node whose logical type or physical
// details the footer writer does not serialize.
func checkNodes(n schema.Node) error {
	if _, ok := logicalKind(n.LogicalType()); !ok {
		return fmt.Errorf("column %s: logical type %s: %w", n.Path(), n.LogicalType(), ErrUnsupported)
	}
	switch n := n.(type) {
	case *schema.GroupNode:
		for i := range n.NumFields() {
			if err := checkNodes(n.Field(i)); err != nil {
				return err
			}
		}
	case *schema.PrimitiveNode:
		if n.PhysicalType() == parquet.Types.FixedLenByteArray || n.DecimalMetadata().IsSet {
			return fmt.Errorf("column %s: %w", n.Path(), ErrUnsupported)
		}
	}
	return nil
}

// logicalKind returns the LogicalType union field of lt (0 for none),
// and whether the footer writer serializes it.
func logicalKind(lt schema.LogicalType) (int16, bool) {
	if lt == nil || !lt.IsSerialized() {
		return 0, true
	}
	switch lt.(type) {
	case schema.NoLogicalType:
		return 0, true
	case schema.StringLogicalType:
		return 1, true
	case schema.MapLogicalType:
		return 2, true
	case schema.ListLogicalType:
		return 3, true
	case schema.DateLogicalType:
		return 6, true
	case schema.TimestampLogicalType:
		return 8, true
	case schema.IntLogicalType:
		return 10, true
	case schema.JSONLogicalType:
		return 12, true
	}
	return 0, false
}

// chunkMeta is what the footer keeps of a written column chunk. Its
// statistics are a range of the writer's stats bytes, so that a footer of
// many chunks holds no pointers for the collector to follow.
type chunkMeta struct {
	offset, dataOffset     int64 // the chunk's first byte; its first data page
	compressed, uncompress int64
	numValues, nullCount   int64
	statsAt                int32 // min at stats[statsAt:statsAt+minLen], max after it
	minLen, maxLen         int32
	dataPages              int32
	dict, hasStats, minMax bool
}

// rowGroupMeta is what the footer keeps of a written row group.
type rowGroupMeta struct {
	rows, offset, compressed, uncompressed int64
}

// FileWriter writes a Parquet file: the magic bytes, row groups of
// column chunks encoded by Encoders, and the footer (Thrift compact
// FileMetaData) with the schema and key-value metadata. It is not safe
// for concurrent use.
type FileWriter struct {
	w         io.Writer
	pos       int64
	sc        *schema.Schema
	cols      []Column
	kv        [][2]string
	createdBy string

	groups  []rowGroupMeta
	chunks  []chunkMeta // every row group's, in order
	stats   []byte
	inGroup bool
	next    int // the column the current row group writes next
	rows    int64
	err     error
	t       *tw
}

// NewFileWriter writes the magic bytes and returns a writer of files of
// schema sc with columns cols (from Columns), key-value metadata kv (in
// order) and created_by createdBy.
func NewFileWriter(w io.Writer, sc *schema.Schema, cols []Column, kv [][2]string, createdBy string) (*FileWriter, error) {
	f := &FileWriter{w: w, sc: sc, cols: cols, kv: kv, createdBy: createdBy, t: newTW()}
	f.write([]byte("PAR1"))
	return f, f.err
}

func (f *FileWriter) write(p []byte) {
	if f.err != nil {
		return
	}
	n, err := f.w.Write(p)
	f.pos += int64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	f.err = err
}

// BeginRowGroup starts a row group of rows rows; its chunks follow in
// column order.
func (f *FileWriter) BeginRowGroup(rows int64) error {
	if f.inGroup {
		return errors.New("row group begun twice")
	}
	f.inGroup, f.next = true, 0
	f.groups = append(f.groups, rowGroupMeta{rows: rows, offset: f.pos})
	return f.err
}

// WriteChunk writes the next column's chunk of the current row group.
func (f *FileWriter) WriteChunk(c *Chunk) error {
	if !f.inGroup || f.next >= len(f.cols) {
		return errors.New("column chunk outside a row group")
	}
	m := chunkMeta{
		offset:     f.pos,
		dataOffset: f.pos + int64(len(c.Dict)),
		compressed: int64(len(c.Dict) + len(c.Data)),
		uncompress: c.uncompressed,
		numValues:  c.numValues,
		nullCount:  c.nullCount,
		dataPages:  c.dataPages,
		dict:       len(c.Dict) > 0,
		hasStats:   c.hasStats,
		minMax:     c.hasMinMax,
		statsAt:    int32(len(f.stats)),
		minLen:     int32(len(c.minVal)),
		maxLen:     int32(len(c.maxVal)),
	}
	if m.minMax {
		f.stats = append(append(f.stats, c.minVal...), c.maxVal...)
	}
	f.write(c.Dict)
	f.write(c.Data)
	f.chunks = append(f.chunks, m)
	g := &f.groups[len(f.groups)-1]
	g.compressed += m.compressed
	g.uncompressed += m.uncompress
	f.next++
	return f.err
}

// EndRowGroup ends the current row group.
func (f *FileWriter) EndRowGroup() error {
	if !f.inGroup || f.next != len(f.cols) {
		return fmt.Errorf("row group ended after %d of %d columns", f.next, len(f.cols))
	}
	f.inGroup = false
	f.rows += f.groups[len(f.groups)-1].rows
	return f.err
}

// TotalCompressedBytes is the bytes of the column chunks written.
func (f *FileWriter) TotalCompressedBytes() int64 {
	var n int64
	for _, g := range f.groups {
		n += g.compressed
	}
	return n
}

// Close writes the footer: FileMetaData, its length and the magic bytes.
// It does not close the underlying writer.
func (f *FileWriter) Close() error {
	if f.inGroup {
		return errors.New("close inside a row group")
	}
	t := f.t
	t.reset()
	t.begin()
	t.i32(1, 2)
	nodes := 0
	countNodes(f.sc.Root(), &nodes)
	t.listField(2, thrift.STRUCT, nodes)
	writeNode(t, f.sc.Root(), true)
	t.i64(3, f.rows)
	t.listField(4, thrift.STRUCT, len(f.groups))
	k := 0
	for gi, g := range f.groups {
		t.begin()
		t.listField(1, thrift.STRUCT, len(f.cols))
		for ci := range f.cols {
			f.writeChunkMeta(t, &f.cols[ci], &f.chunks[k])
			k++
		}
		t.i64(2, g.uncompressed)
		t.i64(3, g.rows)
		t.i64(5, g.offset)
		t.i64(6, g.compressed)
		t.i16(7, int16(gi))
		t.end()
	}
	if len(f.kv) > 0 {
		t.listField(5, thrift.STRUCT, len(f.kv))
		for _, kv := range f.kv {
			t.begin()
			t.str(1, kv[0])
			t.str(2, kv[1])
			t.end()
		}
	}
	t.str(6, f.createdBy)
	t.listField(7, thrift.STRUCT, len(f.cols))
	for range f.cols {
		t.begin()
		t.emptyStruct(1) // TYPE_ORDER
		t.end()
	}
	t.end()
	if t.err != nil {
		return t.err
	}
	footer := t.bytes()
	f.write(footer)
	n := len(footer)
	f.write([]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24), 'P', 'A', 'R', '1'})
	return f.err
}

func (f *FileWriter) writeChunkMeta(t *tw, c *Column, m *chunkMeta) {
	t.begin()
	t.i64(2, m.offset)
	t.structField(3)
	t.i32(1, int32(c.ptype))
	if m.dict {
		t.listField(2, thrift.I32, 3)
		t.listI32(encPlain)
		t.listI32(encRLE)
		t.listI32(encRLEDict)
	} else {
		t.listField(2, thrift.I32, 2)
		t.listI32(encPlain)
		t.listI32(encRLE)
	}
	t.listField(3, thrift.STRING, len(c.path))
	for _, p := range c.path {
		t.listStr(p)
	}
	t.i32(4, c.codec)
	t.i64(5, m.numValues)
	t.i64(6, m.uncompress)
	t.i64(7, m.compressed)
	t.i64(9, m.dataOffset)
	if m.dict {
		t.i64(11, m.offset)
	}
	if m.hasStats {
		t.structField(12)
		if m.minMax {
			minV := f.stats[m.statsAt : m.statsAt+m.minLen]
			maxV := f.stats[m.statsAt+m.minLen : m.statsAt+m.minLen+m.maxLen]
			if c.ptype != parquet.Types.ByteArray {
				// The deprecated max and min too, as arrow-go writes them
				// for signed orders: readers older than min_value and
				// max_value read only these.
				t.bin(1, maxV)
				t.bin(2, minV)
			}
			t.i64(3, m.nullCount)
			t.bin(5, maxV)
			t.bin(6, minV)
		} else {
			t.i64(3, m.nullCount)
		}
		t.end()
	}
	pages := 1
	if m.dict {
		pages = 2
	}
	t.listField(13, thrift.STRUCT, pages)
	if m.dict {
		t.begin()
		t.i32(1, pageDictionary)
		t.i32(2, encPlain)
		t.i32(3, 1)
		t.end()
	}
	t.begin()
	t.i32(1, pageData)
	if m.dict {
		t.i32(2, encRLEDict)
	} else {
		t.i32(2, encPlain)
	}
	t.i32(3, m.dataPages)
	t.end()
	t.end() // ColumnMetaData
	t.end() // ColumnChunk
}

func countNodes(n schema.Node, count *int) {
	*count++
	if g, ok := n.(*schema.GroupNode); ok {
		for i := range g.NumFields() {
			countNodes(g.Field(i), count)
		}
	}
}

// writeNode writes n and the nodes below it, depth first, as
// SchemaElements, as arrow-go writes them: the root without a
// repetition.
func writeNode(t *tw, n schema.Node, root bool) {
	t.begin()
	switch n := n.(type) {
	case *schema.PrimitiveNode:
		t.i32(1, int32(n.PhysicalType()))
		t.i32(3, int32(n.RepetitionType()))
		t.str(4, n.Name())
	case *schema.GroupNode:
		if !root {
			t.i32(3, int32(n.RepetitionType()))
		}
		t.str(4, n.Name())
		t.i32(5, int32(n.NumFields()))
	}
	if ct := n.ConvertedType(); ct != schema.ConvertedTypes.None {
		t.i32(6, int32(ct))
	}
	if id := n.FieldID(); id >= 0 {
		t.i32(9, id)
	}
	if kind, _ := logicalKind(n.LogicalType()); kind != 0 {
		t.structField(10)
		t.structField(kind)
		switch lt := n.LogicalType().(type) {
		case schema.TimestampLogicalType:
			t.boolean(1, lt.IsAdjustedToUTC())
			t.structField(2)
			t.emptyStruct(int16(lt.TimeUnit()) + 1) // MILLIS 1, MICROS 2, NANOS 3
			t.end()
		case schema.IntLogicalType:
			t.i8(1, lt.BitWidth())
			t.boolean(2, lt.IsSigned())
		}
		t.end()
		t.end()
	}
	t.end()
	if g, ok := n.(*schema.GroupNode); ok {
		for i := range g.NumFields() {
			writeNode(t, g.Field(i), false)
		}
	}
}

// ColumnPath returns leaf column i's dotted path.
func (f *FileWriter) ColumnPath(i int) string { return f.sc.Column(i).Path() }

// slotDef returns the definition level of the elements of the innermost
// repeated node above (or at) leaf, 0 when there is none.
func slotDef(leaf schema.Node) int16 {
	var path []schema.Node
	for n := leaf; n != nil && n.Parent() != nil; n = n.Parent() {
		path = append(path, n)
	}
	var def, slot int16
	for i := len(path) - 1; i >= 0; i-- {
		switch path[i].RepetitionType() {
		case parquet.Repetitions.Optional:
			def++
		case parquet.Repetitions.Repeated:
			def++
			slot = def
		}
	}
	return slot
}
