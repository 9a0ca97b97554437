package pqenc

import (
	"context"

	"github.com/apache/thrift/lib/go/thrift"
)

// tw writes Thrift's compact protocol, the encoding of Parquet's page
// headers and footer, through Apache Thrift's own protocol writer (the
// library arrow-go uses too), so that field deltas, zigzag varints and
// the booleans folded into field headers are Thrift's, not agora's. It
// keeps the first error; a memory buffer returns none.
type tw struct {
	buf *thrift.TMemoryBuffer
	p   *thrift.TCompactProtocol
	ctx context.Context
	err error
}

func newTW() *tw {
	buf := thrift.NewTMemoryBufferLen(256)
	return &tw{buf: buf, p: thrift.NewTCompactProtocolConf(buf, &thrift.TConfiguration{}), ctx: context.Background()}
}

// reset empties the buffer for the next message.
func (t *tw) reset() { t.buf.Reset(); t.err = nil }

// bytes returns what was written since the last reset.
func (t *tw) bytes() []byte { return t.buf.Bytes() }

func (t *tw) keep(err error) {
	if t.err == nil {
		t.err = err
	}
}

func (t *tw) begin()                           { t.keep(t.p.WriteStructBegin(t.ctx, "")) }
func (t *tw) end()                             { t.keep(t.p.WriteFieldStop(t.ctx)); t.keep(t.p.WriteStructEnd(t.ctx)) }
func (t *tw) field(id int16, typ thrift.TType) { t.keep(t.p.WriteFieldBegin(t.ctx, "", typ, id)) }
func (t *tw) list(typ thrift.TType, n int)     { t.keep(t.p.WriteListBegin(t.ctx, typ, n)) }
func (t *tw) i32(id int16, v int32)            { t.field(id, thrift.I32); t.keep(t.p.WriteI32(t.ctx, v)) }
func (t *tw) i64(id int16, v int64)            { t.field(id, thrift.I64); t.keep(t.p.WriteI64(t.ctx, v)) }
func (t *tw) i16(id int16, v int16)            { t.field(id, thrift.I16); t.keep(t.p.WriteI16(t.ctx, v)) }
func (t *tw) i8(id int16, v int8)              { t.field(id, thrift.BYTE); t.keep(t.p.WriteByte(t.ctx, v)) }
func (t *tw) boolean(id int16, v bool)         { t.field(id, thrift.BOOL); t.keep(t.p.WriteBool(t.ctx, v)) }
func (t *tw) str(id int16, v string)           { t.field(id, thrift.STRING); t.keep(t.p.WriteString(t.ctx, v)) }
func (t *tw) bin(id int16, v []byte)           { t.field(id, thrift.STRING); t.keep(t.p.WriteBinary(t.ctx, v)) }
func (t *tw) structField(id int16)             { t.field(id, thrift.STRUCT); t.begin() }
func (t *tw) listField(id int16, typ thrift.TType, n int) {
	t.field(id, thrift.LIST)
	t.list(typ, n)
}
func (t *tw) listI32(v int32)      { t.keep(t.p.WriteI32(t.ctx, v)) }
func (t *tw) listStr(v string)     { t.keep(t.p.WriteString(t.ctx, v)) }
func (t *tw) emptyStruct(id int16) { t.structField(id); t.end() }
