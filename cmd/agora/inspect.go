package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mattn/go-runewidth"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/spf13/cobra"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/internal/arrowx"
	"github.com/agora-etl/agora/sinks"
	"github.com/agora-etl/agora/stages"
)

// InspectReport is what `agora inspect` prints: a Parquet file or a
// (Hive-partitioned) folder of them, described from the files' footers.
type InspectReport struct {
	// Path is the file or folder inspected.
	Path string `json:"path"`
	// Files are the Parquet files found, in name order.
	Files []InspectFile `json:"files"`
	// Rows is the row count over all files (from their footers).
	Rows int64 `json:"rows"`
	// RowGroups is the row group count over all files.
	RowGroups int `json:"row_groups"`
	// FileBytes is the size of the files on disk.
	FileBytes int64 `json:"file_bytes"`
	// CompressedBytes sums the column chunks' compressed sizes.
	CompressedBytes int64 `json:"compressed_bytes"`
	// UncompressedBytes sums the column chunks' uncompressed sizes.
	UncompressedBytes int64 `json:"uncompressed_bytes"`
	// Codecs are the compression codecs used.
	Codecs []string `json:"codecs"`
	// CreatedBy are the writers named in the footers.
	CreatedBy []string `json:"created_by"`
	// Schema lists the file columns, then the partition columns.
	Schema []InspectColumn `json:"schema"`
	// PartitionKeys are the key=value folder keys, outermost first.
	PartitionKeys []string `json:"partition_keys,omitempty"`
	// Partitions are the partition folders with their unescaped values.
	Partitions []InspectPartition `json:"partitions,omitempty"`
	// Head holds the first rows, partition values included.
	Head []map[string]any `json:"head,omitempty"`
	// Notes tell of schemas that differ between files.
	Notes []string `json:"notes,omitempty"`
}

// InspectFile is one Parquet file of an inspected path.
type InspectFile struct {
	// Path is the file.
	Path string `json:"path"`
	// Partition maps the partition keys of its folders to their values
	// (null for Hive's default partition).
	Partition map[string]*string `json:"partition,omitempty"`
	// Rows is the file's row count.
	Rows int64 `json:"rows"`
	// RowGroups is the file's row group count.
	RowGroups int `json:"row_groups"`
	// Bytes is the file's size.
	Bytes int64 `json:"bytes"`
}

// InspectColumn is one top-level column: its Arrow type in pipeline.yaml's
// grammar, its Parquet leaf types and its sizes over all files.
type InspectColumn struct {
	// Name is the column name.
	Name string `json:"name"`
	// Type is the Arrow type in pipeline.yaml's grammar.
	Type string `json:"type"`
	// Parquet is the physical and logical type of its leaf, or of each
	// leaf of a nested column, with its path ("s.a: INT64 …; s.b: …").
	Parquet string `json:"parquet"`
	// CompressedBytes sums its column chunks' compressed sizes.
	CompressedBytes int64 `json:"compressed_bytes"`
	// UncompressedBytes sums its column chunks' uncompressed sizes.
	UncompressedBytes int64 `json:"uncompressed_bytes"`
	// Partition marks a key=value folder, not stored in the files.
	Partition bool `json:"partition,omitempty"`
}

// InspectPartition is one partition directory and what it holds.
type InspectPartition struct {
	// Dir is the folder relative to the inspected path, as escaped on disk.
	Dir string `json:"dir"`
	// Values maps each key to its unescaped value (null for Hive's
	// default partition, as DuckDB and pyarrow read it).
	Values map[string]*string `json:"values"`
	// Files is the number of Parquet files in it.
	Files int `json:"files"`
	// Rows is their row count.
	Rows int64 `json:"rows"`
}

func newInspectCmd(stdout io.Writer) *cobra.Command {
	var head int
	var format string
	cmd := &cobra.Command{
		Use:   "inspect PATH",
		Short: "Describe a Parquet file or a Hive-partitioned folder: schema, rows, sizes, partitions, first rows",
		Long: `inspect reads the footers of a Parquet file, or of every *.parquet file under a
folder (files and folders whose name starts with "_" or "." are passed over, as
Spark does), and prints the schema with Parquet physical and logical types, the
rows, row groups, compressed and uncompressed sizes, codecs, the partition
values of key=value folders (unescaped), and the first rows.`,
		Example: `  agora inspect out/crowdrag25/ratings
  agora inspect out/crowdrag25/ratings --head 0 --format json
  agora inspect out/delidata/groups/part-00000.parquet --head 20`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("--format must be text or json, got %q", format)}
			}
			if head < 0 {
				return usageError{fmt.Errorf("--head must be ≥ 0, got %d", head)}
			}
			rep, err := inspectPath(cmd.Context(), args[0], head)
			if err != nil {
				return err
			}
			if format == "json" {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(rep)
			}
			printInspect(stdout, rep)
			return nil
		},
	}
	cmd.Flags().IntVarP(&head, "head", "n", 5, "print the first N rows (0: none)")
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	return cmd
}

// parquetFiles lists the Parquet files under root in name order, skipping
// names that start with "_" or "." (markers, rejects, temporary files).
func parquetFiles(root string) ([]string, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{root}, nil
	}
	var out []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root && (strings.HasPrefix(d.Name(), "_") || strings.HasPrefix(d.Name(), ".")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("no *.parquet files under %s", root)
	}
	return out, err
}

// partitionOf parses the key=value folders between root and a file.
func partitionOf(root, p string) (keys []string, vals map[string]*string, dir string, err error) {
	rel, err := filepath.Rel(root, filepath.Dir(p))
	if err != nil || rel == "." {
		return nil, nil, "", err
	}
	for _, seg := range strings.Split(filepath.ToSlash(rel), "/") {
		k, v, ok := strings.Cut(seg, "=")
		if !ok {
			continue
		}
		u, err := sinks.UnescapePartitionValue(v)
		if err != nil {
			// Not agora's escaping (b=%ZZ, written by another tool):
			// the value as it stands, as pyarrow and DuckDB read it.
			u = &v
		}
		if vals == nil {
			vals = map[string]*string{}
		}
		keys = append(keys, k)
		vals[k] = u // nil: the default partition
	}
	return keys, vals, filepath.ToSlash(rel), nil
}

// inspectPath describes a file or folder and reads its first head rows.
func inspectPath(ctx context.Context, root string, head int) (*InspectReport, error) {
	files, err := parquetFiles(root)
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	rep := &InspectReport{Path: root}
	var schema *arrow.Schema
	var firstKeyed string // the first file, whose folders' keys the others must have
	colIdx := map[string]int{}
	parts := map[string]*InspectPartition{}
	var partOrder []string
	for _, p := range files {
		keys, vals, dir, err := partitionOf(root, p)
		if err != nil {
			return nil, err
		}
		switch {
		case len(rep.Files) == 0:
			rep.PartitionKeys, firstKeyed = keys, p
		case !slices.Equal(keys, rep.PartitionKeys):
			// Not one table: a folder of several tables, or a stray file.
			if tables := releaseTables(root); len(tables) > 0 {
				return nil, fmt.Errorf("inspect: %s is a dataset's release, of the tables %s: inspect one table's folder at a time, such as %s", root, strings.Join(tables, ", "), filepath.Join(root, tables[0]))
			}
			return nil, fmt.Errorf("inspect: %s holds more than one table's files (%s with %s, %s with %s): inspect one table's folder at a time", root, filepath.Join(".", mustRel(root, firstKeyed)), partitionText(rep.PartitionKeys), filepath.Join(".", mustRel(root, p)), partitionText(keys))
		}
		if why := stages.NotParquet(p); why != "" {
			// Where arrow-go would say "file is smaller than indicated
			// metadata size" of a JSON file.
			return nil, fmt.Errorf("inspect %s: not a Parquet file: %s", p, why)
		}
		rdr, err := file.OpenParquetFile(p, false)
		if err != nil {
			return nil, fmt.Errorf("inspect %s: not a readable Parquet file: %w", p, err)
		}
		md := rdr.MetaData()
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		var sc *arrow.Schema
		if err == nil {
			sc, err = fr.Schema()
		}
		if err != nil {
			rdr.Close()
			return nil, fmt.Errorf("inspect %s: schema: %w", p, err)
		}
		if schema == nil {
			schema = sc
			for i, f := range sc.Fields() {
				// Each leaf's physical and logical type: a nested column
				// (a struct, a map) has several, shown with their paths.
				var leaves []string
				for _, c := range md.Schema.Columns() {
					if c.ColumnPath()[0] != f.Name {
						continue
					}
					t := c.PhysicalType().String()
					if lt := c.LogicalType(); lt != nil && lt.String() != "None" {
						t += " " + lt.String()
					}
					leaves = append(leaves, c.ColumnPath().String()+": "+t)
				}
				leaf := strings.Join(leaves, "; ")
				if len(leaves) == 1 {
					_, leaf, _ = strings.Cut(leaves[0], ": ")
				}
				rep.Schema = append(rep.Schema, InspectColumn{Name: f.Name, Type: config.FormatType(f.Type), Parquet: leaf})
				colIdx[f.Name] = i
			}
		} else if !schema.Equal(sc) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s has another schema than the first file: columns %s", p, strings.Join(arrowx.FieldNames(sc), ", ")))
		}
		fi, _ := os.Stat(p)
		f := InspectFile{Path: p, Partition: vals, Rows: md.NumRows, RowGroups: md.NumRowGroups(), Bytes: fi.Size()}
		rep.Files = append(rep.Files, f)
		rep.Rows += md.NumRows
		rep.RowGroups += md.NumRowGroups()
		rep.FileBytes += fi.Size()
		if cb := md.GetCreatedBy(); !slices.Contains(rep.CreatedBy, cb) {
			rep.CreatedBy = append(rep.CreatedBy, cb)
		}
		for g := range md.NumRowGroups() {
			rg := md.RowGroup(g)
			for c := range rg.NumColumns() {
				cc, err := rg.ColumnChunk(c)
				if err != nil {
					rdr.Close()
					return nil, fmt.Errorf("inspect %s: row group %d: %w", p, g, err)
				}
				rep.CompressedBytes += cc.TotalCompressedSize()
				rep.UncompressedBytes += cc.TotalUncompressedSize()
				if codec := cc.Compression().String(); !slices.Contains(rep.Codecs, codec) {
					rep.Codecs = append(rep.Codecs, codec)
				}
				if i, ok := colIdx[cc.PathInSchema()[0]]; ok {
					rep.Schema[i].CompressedBytes += cc.TotalCompressedSize()
					rep.Schema[i].UncompressedBytes += cc.TotalUncompressedSize()
				}
			}
		}
		rdr.Close()
		if dir != "" && len(keys) > 0 {
			pt, ok := parts[dir]
			if !ok {
				pt = &InspectPartition{Dir: dir, Values: vals}
				parts[dir] = pt
				partOrder = append(partOrder, dir)
			}
			pt.Files++
			pt.Rows += md.NumRows
		}
	}
	for _, d := range partOrder {
		rep.Partitions = append(rep.Partitions, *parts[d])
	}
	for _, k := range rep.PartitionKeys {
		rep.Schema = append(rep.Schema, InspectColumn{Name: k, Type: "string", Parquet: "folder " + k + "=…", Partition: true})
	}
	if head > 0 {
		rep.Head, err = headRows(ctx, files, root, head)
		if err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// mustRel is p relative to root, or p itself.
func mustRel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}

// headRows reads the first n rows over the files in order, adding the
// partition values as columns.
func headRows(ctx context.Context, files []string, root string, n int) ([]map[string]any, error) {
	var out []map[string]any
	for _, p := range files {
		if len(out) >= n {
			break
		}
		_, vals, _, err := partitionOf(root, p)
		if err != nil {
			return nil, err
		}
		err = func() error {
			rdr, err := file.OpenParquetFile(p, false)
			if err != nil {
				return err
			}
			defer rdr.Close()
			// The rows keep views of the batches' strings after the
			// batches are released: a pool (memory.DefaultAllocator, as
			// main sets it) would hand those bytes to the next batch,
			// while Go's allocator leaves them to the collector, which
			// keeps them as long as a view does.
			fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: int64(n)}, memory.NewGoAllocator())
			if err != nil {
				return err
			}
			rr, err := fr.GetRecordReader(ctx, nil, nil)
			if err != nil {
				return err
			}
			defer rr.Release()
			for len(out) < n && rr.Next() {
				b := rr.RecordBatch()
				for i := 0; i < int(b.NumRows()) && len(out) < n; i++ {
					row := map[string]any{}
					for c, f := range b.Schema().Fields() {
						row[f.Name] = headValue(b.Column(c), i)
					}
					for k, v := range vals {
						if v != nil {
							row[k] = *v
						} else {
							row[k] = nil
						}
					}
					out = append(out, row)
				}
			}
			if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			return nil
		}()
		if err != nil {
			return nil, fmt.Errorf("inspect %s: rows: %w", p, err)
		}
	}
	return out, nil
}

// headValue is row i of a as inspect shows it: nested values as JSON
// whose struct fields keep the file's order (arrow-go hands a struct over
// as a Go map, which encoding/json would sort), others as arrow-go
// hands them to encoding/json.
func headValue(a arrow.Array, i int) any {
	switch a.DataType().ID() {
	case arrow.STRUCT, arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST:
		var b []byte
		return json.RawMessage(appendJSON(b, a, i))
	}
	return a.GetOneForMarshal(i)
}

// appendJSON appends row i of a as JSON: structs field by field in
// schema order, lists element by element, anything else (maps included,
// whose keys are data, not schema) through encoding/json.
func appendJSON(b []byte, a arrow.Array, i int) []byte {
	if a.IsNull(i) {
		return append(b, "null"...)
	}
	switch x := a.(type) {
	case *array.Struct:
		b = append(b, '{')
		for k, f := range x.DataType().(*arrow.StructType).Fields() {
			if k > 0 {
				b = append(b, ',')
			}
			name, _ := json.Marshal(f.Name)
			b = append(append(b, name...), ':')
			b = appendJSON(b, x.Field(k), i)
		}
		return append(b, '}')
	case *array.Map:
		// a map's keys are data: encoding/json's order is as good as any
	case array.ListLike:
		lo, hi := x.ValueOffsets(i)
		b = append(b, '[')
		for j := lo; j < hi; j++ {
			if j > lo {
				b = append(b, ',')
			}
			b = appendJSON(b, x.ListValues(), int(j))
		}
		return append(b, ']')
	}
	v, err := json.Marshal(a.GetOneForMarshal(i))
	if err != nil {
		v, _ = json.Marshal(a.ValueStr(i))
	}
	return append(b, v...)
}

// releaseTables lists the tables of the release in root (its folders
// but _rejects), or nothing when root holds no manifest.json.
func releaseTables(root string) []string {
	if _, err := os.Stat(filepath.Join(root, "manifest.json")); err != nil {
		return nil
	}
	entries, _ := os.ReadDir(root)
	var tables []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), "_") && !strings.HasPrefix(e.Name(), ".") {
			tables = append(tables, e.Name())
		}
	}
	return tables
}

// partitionText says what partition folders a file is under.
func partitionText(keys []string) string {
	if len(keys) == 0 {
		return "no partition folders"
	}
	return "partition folders " + strings.Join(keys, ", ")
}

// humanBytes prints a size in B, KiB, MiB or GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n)/unit, "KiB"
	for _, next := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, u = v/unit, next
	}
	return fmt.Sprintf("%.1f %s", v, u)
}

// cell formats one value for a text table: JSON for nested values, long
// strings cut to width terminal columns (a CJK character or an emoji
// takes two), control characters escaped.
func cell(v any, width int) string {
	var s string
	switch x := v.(type) {
	case nil:
		s = "null"
	case string:
		s = x
	default:
		b, err := json.Marshal(x)
		if err != nil {
			s = fmt.Sprint(x)
		} else {
			s = string(b)
		}
	}
	s = strings.NewReplacer("\n", `\n`, "\t", `\t`, "\r", `\r`).Replace(s)
	return runewidth.Truncate(s, width, "…")
}

func printInspect(w io.Writer, rep *InspectReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "path\t%s\n", rep.Path)
	fmt.Fprintf(tw, "files\t%d\n", len(rep.Files))
	fmt.Fprintf(tw, "rows\t%d\n", rep.Rows)
	fmt.Fprintf(tw, "row groups\t%d\n", rep.RowGroups)
	fmt.Fprintf(tw, "size\t%s on disk; column chunks %s compressed, %s uncompressed\n", humanBytes(rep.FileBytes), humanBytes(rep.CompressedBytes), humanBytes(rep.UncompressedBytes))
	fmt.Fprintf(tw, "compression\t%s\n", strings.Join(rep.Codecs, ", "))
	fmt.Fprintf(tw, "created by\t%s\n", strings.Join(rep.CreatedBy, "; "))
	if len(rep.PartitionKeys) > 0 {
		fmt.Fprintf(tw, "partitioned by\t%s (%d partitions)\n", strings.Join(rep.PartitionKeys, ", "), len(rep.Partitions))
	}
	tw.Flush()
	for _, n := range rep.Notes {
		fmt.Fprintln(w, "note:", n)
	}

	fmt.Fprintln(w, "\nschema:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  column\ttype\tparquet\tcompressed\tuncompressed\t")
	for _, c := range rep.Schema {
		comp, unc := humanBytes(c.CompressedBytes), humanBytes(c.UncompressedBytes)
		if c.Partition {
			comp, unc = "-", "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t\n", c.Name, c.Type, c.Parquet, comp, unc)
	}
	tw.Flush()

	if len(rep.Partitions) > 0 {
		fmt.Fprintln(w, "\npartitions:")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  folder\tvalues\tfiles\trows\t")
		for _, p := range rep.Partitions {
			var vs []string
			for _, k := range rep.PartitionKeys {
				if v := p.Values[k]; v != nil {
					vs = append(vs, fmt.Sprintf("%s=%q", k, *v))
				} else {
					vs = append(vs, k+"=null") // unquoted: no value, not the string "null"
				}
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t\n", p.Dir, strings.Join(vs, " "), p.Files, p.Rows)
		}
		tw.Flush()
	}

	if len(rep.Head) > 0 {
		fmt.Fprintf(w, "\nfirst %d rows:\n", len(rep.Head))
		var names []string
		for _, c := range rep.Schema {
			names = append(names, c.Name)
		}
		rows := [][]string{names}
		for _, r := range rep.Head {
			cells := make([]string, len(names))
			for i, n := range names {
				cells[i] = cell(r[n], 24)
			}
			rows = append(rows, cells)
		}
		printAligned(w, rows)
	}
}

// printAligned prints rows as columns two spaces apart, each as wide as
// its widest cell in terminal columns (tabwriter counts a CJK character
// or an emoji as one column, so the columns after one drifted).
func printAligned(w io.Writer, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], runewidth.StringWidth(c))
		}
	}
	var line strings.Builder
	for _, r := range rows {
		line.Reset()
		line.WriteString("  ")
		for i, c := range r {
			line.WriteString(c)
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-runewidth.StringWidth(c)+2))
			}
		}
		fmt.Fprintln(w, line.String())
	}
}
