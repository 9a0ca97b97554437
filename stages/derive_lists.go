package stages

import (
	"cmp"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
)

func init() {
	Register("align_by_key", "[list<string> ids, list<string> keys, list values]", "Reorders values (aligned with keys) to follow ids: element i is the value whose key is ids[i], null where no key matches, every element null when keys or values are null (rankings matched to candidates by id; an unranked comparison keeps its candidates). A row whose keys and values differ in length is rejected.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 3)
		if err != nil {
			return nil, err
		}
		for _, c := range idx[:2] {
			if err := wantType(in, c, isStringList, "list<string>"); err != nil {
				return nil, err
			}
		}
		vt, ok := in.Field(idx[2]).Type.(*arrow.ListType)
		if !ok {
			return nil, fmt.Errorf("column %s is %s, want a list", d.Args[2], config.FormatType(in.Field(idx[2]).Type))
		}
		return &Deriver{Type: arrow.ListOf(vt.Elem()), ComputeRows: func(b arrow.RecordBatch, bad map[int]string) (arrow.Array, error) {
			ids, keys, vals := b.Column(idx[0]).(*array.List), b.Column(idx[1]).(*array.List), b.Column(idx[2]).(*array.List)
			// Gather positions into vals' child array, then take.
			ib := array.NewInt64Builder(mem)
			defer ib.Release()
			offsets := []int32{0}
			valid := make([]bool, 0, b.NumRows())
			for i := 0; i < int(b.NumRows()); i++ {
				ks, ke := keys.ValueOffsets(i)
				vs, ve := vals.ValueOffsets(i)
				if keys.IsValid(i) && vals.IsValid(i) && ke-ks != ve-vs {
					// Misaligned whatever ids holds, a null list too.
					bad[i] = fmt.Sprintf("%s has %d elements, %s has %d", d.Args[1], ke-ks, d.Args[2], ve-vs)
				}
				if ids.IsNull(i) {
					offsets = append(offsets, offsets[len(offsets)-1])
					valid = append(valid, false)
					continue
				}
				if keys.IsNull(i) || vals.IsNull(i) {
					// No key matches any id: a null for each (a comparison
					// left unranked keeps its candidates, each with no
					// rank).
					is, ie := ids.ValueOffsets(i)
					ib.AppendNulls(int(ie - is))
					offsets = append(offsets, int32(ib.Len()))
					valid = append(valid, true)
					continue
				}
				pos := map[string]int64{}
				kv := keys.ListValues().(*array.String)
				for j := ks; j < ke && j-ks < ve-vs; j++ {
					if kv.IsNull(int(j)) {
						continue // a null key names no candidate
					}
					if _, dup := pos[kv.Value(int(j))]; !dup {
						pos[kv.Value(int(j))] = vs + (j - ks)
					}
				}
				iv := ids.ListValues().(*array.String)
				is, ie := ids.ValueOffsets(i)
				for j := is; j < ie; j++ {
					if p, ok := pos[iv.Value(int(j))]; ok && !iv.IsNull(int(j)) {
						ib.Append(p)
					} else {
						ib.AppendNull() // no key matches, or a null id
					}
				}
				offsets = append(offsets, int32(ib.Len()))
				valid = append(valid, true)
			}
			pidx := ib.NewArray()
			defer pidx.Release()
			child, err := takeOne(mem, vals.ListValues(), pidx)
			if err != nil {
				return nil, err
			}
			defer child.Release()
			lb := array.NewListBuilder(mem, vt.Elem())
			defer lb.Release()
			lb.AppendValues(offsets[:len(offsets)-1], valid)
			// Replace the (empty) child with the gathered values.
			shell := lb.NewListArray()
			defer shell.Release()
			data := array.NewData(arrow.ListOf(vt.Elem()), shell.Len(), []*memory.Buffer{shell.Data().Buffers()[0], memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets))}, []arrow.ArrayData{child.Data()}, shell.NullN(), 0)
			defer data.Release()
			return array.MakeFromData(data), nil
		}}, nil
	})

	Register("enum_index", "[column], values: [names in order]", "The 1-based position of the value in values (a Likert name → 1..7); null for a value not listed (such as MOCK). A number or bool column compares by its text, as any_in does.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		if err := wantType(in, idx[0], func(t arrow.DataType) bool { return isTextual(t) && !isList(t) }, "a string, number or bool"); err != nil {
			return nil, err
		}
		pos := map[string]int64{}
		for i, v := range d.Values {
			if _, ok := pos[v]; !ok { // a name listed twice: its first place
				pos[v] = int64(i + 1)
			}
		}
		if len(pos) == 0 {
			return nil, fmt.Errorf("values must list the names in order")
		}
		return &Deriver{Type: arrow.PrimitiveTypes.Int64, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			col := b.Column(idx[0])
			return int64Of(mem, b, func(i int) (int64, bool) {
				if col.IsNull(i) {
					return 0, false
				}
				p, ok := pos[valueString(col, i)]
				return p, ok
			}), nil
		}}, nil
	})

	Register("any_in", "[columns...], values", "True when any of the columns holds one of values (is_mock: a MOCK rating or a -1 rank); numbers compare by their decimal form.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, -1)
		if err != nil {
			return nil, err
		}
		for _, c := range idx {
			if err := wantType(in, c, isTextual, "a string, number or bool, or a list of them"); err != nil {
				return nil, err
			}
		}
		set := map[string]bool{}
		for _, v := range d.Values {
			set[v] = true
		}
		return &Deriver{Type: arrow.FixedWidthTypes.Boolean, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			bb := array.NewBooleanBuilder(mem)
			defer bb.Release()
			for i := 0; i < int(b.NumRows()); i++ {
				hit := false
				for _, c := range idx {
					col := b.Column(c)
					if col.IsNull(i) {
						continue
					}
					if l, isL := col.(*array.List); isL {
						// Each element as text, as a column of its type
						// is: a list<int64> of ranks holds -1.
						s, e := l.ValueOffsets(i)
						vals := l.ListValues()
						for j := int(s); j < int(e) && !hit; j++ {
							hit = vals.IsValid(j) && set[valueString(vals, j)]
						}
					} else if set[valueString(col, i)] {
						hit = true
					}
				}
				bb.Append(hit)
			}
			return bb.NewArray(), nil
		}}, nil
	})

	Register("equals", "[column a, column b]", "True when a equals b, compared as text (5 equals \"5\"), null when either is null.", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 2)
		if err != nil {
			return nil, err
		}
		return &Deriver{Type: arrow.FixedWidthTypes.Boolean, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
			bb := array.NewBooleanBuilder(mem)
			defer bb.Release()
			for i := 0; i < int(b.NumRows()); i++ {
				if b.Column(idx[0]).IsNull(i) || b.Column(idx[1]).IsNull(i) {
					bb.AppendNull()
					continue
				}
				bb.Append(rowKey(b, idx[:1], i) == rowKey(b, idx[1:], i))
			}
			return bb.NewArray(), nil
		}}, nil
	})

	Register("lead", "[column], by: [key columns]", "The value of the next row with the same key (input order); null on a key's last row. Keeps a 12-byte hash and a row number per key and, per row, the next row's number and a copy of the value; the rows themselves go to a temporary file when the column and keys are the step's input (not derived in the same step).", func(mem memory.Allocator, in *arrow.Schema, d config.Derivation) (*Deriver, error) {
		idx, err := argColumns(in, d, 1)
		if err != nil {
			return nil, err
		}
		keys, err := keyIndexes(in, d)
		if err != nil {
			return nil, err
		}
		// Two passes: Observe links each row to the next row of its key
		// and keeps a copy of the values; Compute, batch by batch in the
		// same order, looks them up.
		var (
			last    = map[keyHash]int64{}
			next    []int64       // per row, the next row with its key, or -1
			vals    []arrow.Array // the column, a copy per batch observed
			all     arrow.Array   // vals joined, at the first Compute
			done    int64         // rows computed
			buf     []byte
			copyErr error
		)
		release := func() {
			releaseAll(vals)
			vals = nil
			if all != nil {
				all.Release()
				all = nil
			}
		}
		return &Deriver{Type: in.Field(idx[0]).Type, Whole: true, Uses: append(append([]int(nil), idx...), keys...),
			Observe: func(b arrow.RecordBatch) {
				base := int64(len(next))
				for i := 0; i < int(b.NumRows()); i++ {
					k := hashRowKey(&buf, b, keys, i)
					if m, ok := last[k]; ok {
						next[m] = base + int64(i)
					}
					last[k] = base + int64(i)
					next = append(next, -1)
				}
				// A copy: the batch's other columns need not stay.
				c, err := array.Concatenate([]arrow.Array{b.Column(idx[0])}, mem)
				if err != nil {
					copyErr = cmp.Or(copyErr, err)
					return
				}
				vals = append(vals, c)
			},
			Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
				if copyErr != nil {
					return nil, copyErr
				}
				if all == nil {
					clear(last)
					switch len(vals) {
					case 0:
						all = array.MakeArrayOfNull(mem, in.Field(idx[0]).Type, 0)
					case 1:
						all, vals = vals[0], nil
					default:
						var err error
						if all, err = array.Concatenate(vals, mem); err != nil {
							return nil, err
						}
						releaseAll(vals)
						vals = nil
					}
				}
				n := int(b.NumRows())
				if done+int64(n) > int64(len(next)) {
					return nil, fmt.Errorf("lead: %d rows computed, %d observed", done+int64(n), len(next))
				}
				at := next[done : done+int64(n)]
				done += int64(n)
				pidx := int64Of(mem, b, func(i int) (int64, bool) { return at[i], at[i] >= 0 })
				defer pidx.Release()
				return takeOne(mem, all, pidx)
			},
			Close: func() {
				release()
				clear(last)
				next, done = nil, 0
			},
		}, nil
	})
}
