package stages

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// carriedType is the type a carried column (extra_columns: carry) is
// written as: the file's own, but made to keep the promises declared
// columns keep, so that every reader takes it (the README's Spark-safe
// layout: no unsigned or large types, timestamps as microseconds UTC).
// Large and view texts and lists become plain ones, dictionaries their
// values, unsigned and narrow integers int32 or int64, half floats
// float32, timestamps microseconds UTC (digits below the microsecond
// cut, as for declared ones), date64 date32, the null type string, and
// the same inside lists, structs and maps; field metadata (pyarrow's
// PARQUET:field_id) is left behind. ok is false for a type no reader is
// promised (durations, intervals, times of day, unions, extension
// types), which a declared column must then name.
func carriedType(t arrow.DataType) (out arrow.DataType, ok bool) {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return arrow.BinaryTypes.String, true
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return arrow.BinaryTypes.Binary, true
	case arrow.BOOL, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64, arrow.DATE32, arrow.DECIMAL128, arrow.DECIMAL256, arrow.FIXED_SIZE_BINARY:
		return t, true
	case arrow.NULL:
		// pandas' all-None column: Parquet's null type is not one every
		// reader takes, and a null string says as much.
		return arrow.BinaryTypes.String, true
	case arrow.INT8, arrow.INT16, arrow.UINT8, arrow.UINT16:
		return arrow.PrimitiveTypes.Int32, true
	case arrow.UINT32, arrow.UINT64:
		return arrow.PrimitiveTypes.Int64, true // a uint64 past int64 stops the run at its row
	case arrow.FLOAT16:
		return arrow.PrimitiveTypes.Float32, true
	case arrow.DATE64:
		return arrow.FixedWidthTypes.Date32, true
	case arrow.TIMESTAMP:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, true
	case arrow.DICTIONARY:
		return carriedType(t.(*arrow.DictionaryType).ValueType)
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW:
		elem, ok := carriedType(t.(arrow.ListLikeType).Elem())
		if !ok {
			return nil, false
		}
		return arrow.ListOf(elem), true
	case arrow.STRUCT:
		st := t.(*arrow.StructType)
		fields := make([]arrow.Field, st.NumFields())
		for i, f := range st.Fields() {
			ft, ok := carriedType(f.Type)
			if !ok {
				return nil, false
			}
			fields[i] = arrow.Field{Name: f.Name, Type: ft, Nullable: true}
		}
		return arrow.StructOf(fields...), true
	case arrow.MAP:
		m := t.(*arrow.MapType)
		k, ok1 := carriedType(m.KeyType())
		v, ok2 := carriedType(m.ItemType())
		if !ok1 || !ok2 {
			return nil, false
		}
		return arrow.MapOf(k, v), true
	}
	return nil, false
}
