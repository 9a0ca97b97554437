package stages

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/internal/arrowx"
)

// windowTake builds lag (fill=false) or fill_down (fill=true) of column
// col by the key columns keys.
//
// Between batches it carries one value per key seen, copied out of the
// batches, so no batch is kept alive (window). A batch costs what its
// own rows and the carried values they ask for cost, not what every key
// seen so far does: rebuilding the carry of every key for each batch
// made DeliData at 50× (25,000 groups) spend a fifth of its CPU sorting
// the keys, and grew with the square of the input.
//
// Grouped (config.Derivation.Grouped: the input holds each key's rows
// together), it carries the value of the last row's key only: a key's
// value is let go by the end of the batch in which another key starts.
// A key that comes back after rows of another key is then an error, as
// for a grouped aggregate; the keys whose rows ended are kept as their
// hashes in a keySet (which spills past UniqueMemKeys) to know them.
func windowTake(mem memory.Allocator, in *arrow.Schema, col int, keys []int, fill, grouped bool) (*Deriver, error) {
	if grouped && len(keys) == 0 {
		return nil, fmt.Errorf("grouped needs the key columns (by)")
	}
	w := &window{mem: mem, t: in.Field(col).Type, pos: map[keyHash]slot{}}
	if grouped {
		w.done = newKeySet()
	}
	return &Deriver{Type: w.t, Ordered: true, Close: w.release, Compute: func(b arrow.RecordBatch) (arrow.Array, error) {
		return w.next(b, col, keys, fill)
	}}, nil
}

// window is the state of a lag or fill_down: each key's carried value,
// held in chunks of values. A batch that sets keys adds one chunk of
// their new values; a key's older value stays in its chunk, dead, until
// the chunks hold twice as many values as there are keys (and at least
// compactMin), when the live ones are copied into one chunk. So the
// carry holds at most about twice the keys' values, and each value is
// copied a bounded number of times on average.
//
// Keys are held as their 96-bit hashes (keyHash), as unique and
// occurrence hold theirs: 12 bytes a key, whatever its values' length,
// and no string made for each row.
type window struct {
	mem     memory.Allocator
	t       arrow.DataType
	chunks  []arrow.Array
	owners  [][]keyHash      // owners[c][r]: the key chunks[c] row r was written for
	pos     map[keyHash]slot // where each key's carried value is
	stored  int              // values in chunks, live or dead
	scratch []byte           // a row key's encoding, for hashRowKey

	// Grouped only: the keys whose rows ended, and the key of the last
	// row seen (open says there was one).
	done *keySet
	last keyHash
	open bool
}

// slot is a carried value's place: a chunk and a row of it.
type slot struct{ chunk, row int32 }

// compactMin is the fewest values in the chunks for which they are
// compacted.
const compactMin = 1024

// next derives the column for batch b.
func (w *window) next(b arrow.RecordBatch, col int, keys []int, fill bool) (arrow.Array, error) {
	ctx := context.Background()
	n := int(b.NumRows())
	src := b.Column(col)
	// Where each row's value comes from: a row of b (from >= 0), a
	// carried value (-1 - its index in carried), or nowhere (null).
	const none = int64(-1 << 62)
	from := make([]int64, n)
	var (
		latest  = map[keyHash]int{} // key → its row in b that set it last
		set     []keyHash           // keys set in b, in first-set order
		asked   = map[keyHash]int{} // key → its index in carried
		carried []slot              // carried values asked for
	)
	// setBy records that row i sets key k's value.
	setBy := func(k keyHash, i int) {
		if _, ok := latest[k]; !ok {
			set = append(set, k)
		}
		latest[k] = i
	}
	for i := range n {
		k := hashRowKey(&w.scratch, b, keys, i)
		if w.done != nil && (!w.open || k != w.last) {
			if err := w.nextKey(b, keys, i, k); err != nil {
				return nil, err
			}
		}
		if fill && src.IsValid(i) {
			setBy(k, i) // fill_down: a value is its own row's
		}
		switch r, ok := latest[k]; {
		case ok:
			from[i] = int64(r)
		default:
			if m, ok := asked[k]; ok {
				from[i] = -1 - int64(m)
			} else if s, ok := w.pos[k]; ok {
				asked[k] = len(carried)
				from[i] = -1 - int64(len(carried))
				carried = append(carried, s)
			} else {
				from[i] = none
			}
		}
		if !fill {
			setBy(k, i) // lag: the next row's, null or not
		}
	}
	// The rows to take from: the carried values asked for, b's column,
	// and one null.
	parts := make([]arrow.Array, 0, 3)
	defer func() { releaseAll(parts) }()
	var at []int64 // carried value m's row in the first part
	if len(carried) > 0 {
		a, place, err := w.gather(ctx, carried)
		if err != nil {
			return nil, err
		}
		parts, at = append(parts, a), place
	}
	src.Retain()
	parts = append(parts, src)
	parts = append(parts, array.MakeArrayOfNull(w.mem, w.t, 1))
	all, err := array.Concatenate(parts, w.mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	base, null := int64(len(carried)), int64(len(carried)+n)
	idx := make([]int64, n)
	for i, f := range from {
		switch {
		case f == none:
			idx[i] = null
		case f < 0:
			idx[i] = at[-1-f]
		default:
			idx[i] = base + f
		}
	}
	out, err := arrowx.CopyRows(ctx, w.mem, []arrow.Array{all}, idx)
	if err != nil {
		return nil, err
	}
	if err := w.keep(ctx, src, set, latest); err != nil {
		out[0].Release()
		return nil, err
	}
	return out[0], nil
}

// nextKey (grouped) notes that row i of b starts the rows of key k: the
// last row's key has ended, and k must not have.
func (w *window) nextKey(b arrow.RecordBatch, keys []int, i int, k keyHash) error {
	if w.open {
		if err := w.done.set(w.last, 0); err != nil {
			return fmt.Errorf("grouped: %w", err)
		}
	}
	_, ended, err := w.done.get(k)
	if err != nil {
		return fmt.Errorf("grouped: %w", err)
	}
	if ended {
		return groupComesAgain(b, b, keys, i)
	}
	w.last, w.open = k, true
	return nil
}

// gather copies the carried values in slots into one array, in chunk
// order; at[m] is where slots[m] went.
func (w *window) gather(ctx context.Context, slots []slot) (arrow.Array, []int64, error) {
	order := make([]int, len(slots))
	for m := range order {
		order[m] = m
	}
	slices.SortFunc(order, func(x, y int) int {
		return cmp.Or(cmp.Compare(slots[x].chunk, slots[y].chunk), cmp.Compare(slots[x].row, slots[y].row))
	})
	at := make([]int64, len(slots))
	var sels []arrowx.Rows
	for j, m := range order {
		s := slots[m]
		at[m] = int64(j)
		if len(sels) == 0 || sels[len(sels)-1].Cols[0] != w.chunks[s.chunk] {
			sels = append(sels, arrowx.Rows{Cols: []arrow.Array{w.chunks[s.chunk]}})
		}
		last := &sels[len(sels)-1]
		last.Idx = append(last.Idx, int64(s.row))
	}
	cols, err := arrowx.TakeFrom(ctx, w.mem, sels)
	if err != nil {
		return nil, nil, err
	}
	return cols[0], at, nil
}

// keep carries the values b set: one new chunk with the last value of
// each key set, in first-set order. It then compacts the chunks if they
// hold too many dead values.
func (w *window) keep(ctx context.Context, src arrow.Array, set []keyHash, latest map[keyHash]int) error {
	if w.done != nil {
		// Grouped: only the last row's key can be asked for again. The
		// value carried is let go when it is replaced or its key ended.
		set = nil
		if _, ok := latest[w.last]; ok {
			set = []keyHash{w.last}
		}
		if _, carried := w.pos[w.last]; len(set) > 0 || !carried {
			w.close()
			clear(w.pos)
		}
	}
	if len(set) == 0 {
		return nil
	}
	rows := make([]int64, len(set))
	for j, k := range set {
		rows[j] = int64(latest[k])
	}
	cols, err := arrowx.CopyRows(ctx, w.mem, []arrow.Array{src}, rows)
	if err != nil {
		return err
	}
	c := int32(len(w.chunks))
	w.chunks = append(w.chunks, cols[0])
	w.owners = append(w.owners, set)
	for j, k := range set {
		w.pos[k] = slot{c, int32(j)}
	}
	w.stored += len(set)
	if w.stored < compactMin || w.stored <= 2*len(w.pos) {
		return nil
	}
	return w.compact(ctx)
}

// compact copies the live carried values into one chunk.
func (w *window) compact(ctx context.Context) error {
	var (
		sels   []arrowx.Rows
		owners []keyHash
	)
	for c, ks := range w.owners {
		var idx []int64
		for r, k := range ks {
			if w.pos[k] == (slot{int32(c), int32(r)}) {
				idx = append(idx, int64(r))
				owners = append(owners, k)
			}
		}
		if len(idx) > 0 {
			sels = append(sels, arrowx.Rows{Cols: []arrow.Array{w.chunks[c]}, Idx: idx})
		}
	}
	cols, err := arrowx.TakeFrom(ctx, w.mem, sels)
	if err != nil {
		return err
	}
	w.close()
	w.chunks, w.owners, w.stored = append(w.chunks, cols[0]), append(w.owners, owners), len(owners)
	for r, k := range owners {
		w.pos[k] = slot{0, int32(r)}
	}
	return nil
}

// release lets the chunks and the ended keys go.
func (w *window) release() {
	w.close()
	if w.done != nil {
		w.done.close()
	}
}

// close lets the chunks go.
func (w *window) close() {
	releaseAll(w.chunks)
	clear(w.chunks)
	clear(w.owners)
	w.chunks, w.owners, w.stored = w.chunks[:0], w.owners[:0], 0
}
