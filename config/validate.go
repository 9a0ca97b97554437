package config

import (
	"errors"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

var (
	identRE       = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	placeholderRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)
)

// At returns a FieldError for path, with the line of that path in the
// file. Builders use it to report problems found after loading.
func (c *Config) At(path string, err error) *FieldError {
	return &FieldError{File: c.file, Line: c.lineOf(path), Path: path, Err: err}
}

// expand replaces {var} placeholders in input column names with one
// column per value of the var.
func (c *Config) expand() error {
	var errs []error
	for _, id := range c.order {
		d := c.Datasets[id]
		for _, inID := range d.inputOrder {
			in := d.Inputs[inID]
			if in == nil {
				continue
			}
			var cols []Column
			var src []int
			for i, col := range in.Columns {
				m := placeholderRE.FindAllStringSubmatch(col.Name, -1)
				if len(m) == 0 {
					cols = append(cols, col)
					src = append(src, i)
					continue
				}
				if len(m) > 1 {
					errs = append(errs, c.At(fmt.Sprintf("datasets.%s.inputs.%s.columns[%d].name", id, inID, i),
						fmt.Errorf("%w: at most one {var} placeholder per column name", ErrInvalid)))
					continue
				}
				values, ok := d.Vars[m[0][1]]
				if !ok {
					errs = append(errs, c.At(fmt.Sprintf("datasets.%s.inputs.%s.columns[%d].name", id, inID, i),
						fmt.Errorf("%w: var %q is not declared in datasets.%s.vars", ErrReference, m[0][1], id)))
					continue
				}
				for _, v := range values {
					e := col
					e.Name = strings.ReplaceAll(col.Name, m[0][0], v)
					e.Description = strings.ReplaceAll(col.Description, m[0][0], v)
					cols = append(cols, e)
					src = append(src, i)
				}
			}
			in.Columns, in.colSrc = cols, src
		}
	}
	return errors.Join(errs...)
}

// srcCol returns the place in pipeline.yaml's column list of column i
// (after {var} expansion, one entry there is a column per value).
func (in *Input) srcCol(i int) int {
	if i < len(in.colSrc) {
		return in.colSrc[i]
	}
	return i
}

// minBatchBytes is the smallest batch_bytes accepted.
const minBatchBytes = 4 << 10

// Validate checks the whole config and returns every problem at once,
// joined; each is a *FieldError naming the line and the field path.
func (c *Config) Validate() error {
	var errs []error
	said := map[string]bool{}
	add := func(path string, sentinel error, format string, args ...any) {
		e := c.At(path, fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...)))
		// A column written once with a {var} placeholder is checked once
		// per value, with the same outcome: said once.
		if !said[e.Error()] {
			said[e.Error()] = true
			errs = append(errs, e)
		}
	}
	if c.Version != 1 {
		add("version", ErrInvalid, "must be 1, got %d", c.Version)
	}
	if c.Workers < 0 {
		add("workers", ErrInvalid, "must be ≥ 0 (0 means one per CPU), got %d", c.Workers)
	}
	if c.BatchRows < 1 {
		add("batch_rows", ErrInvalid, "must be ≥ 1, got %d", c.BatchRows)
	}
	if c.BatchBytes < minBatchBytes {
		add("batch_bytes", ErrInvalid, "must be ≥ %d (4 KiB; below it a batch holds a line or two and per-batch work dominates), got %d", minBatchBytes, c.BatchBytes)
	}
	if c.MemoryLimit < -1 || (c.MemoryLimit > 0 && c.MemoryLimit < 32<<20) {
		add("memory_limit", ErrInvalid, "must be -1 (the runtime's own) or at least 33554432 (32 MiB), got %d", c.MemoryLimit)
	}
	if c.ChannelDepth < 0 {
		add("channel_depth", ErrInvalid, "must be ≥ 0, got %d", c.ChannelDepth)
	}
	c.validateWriter("writer", c.Writer, add)
	if len(c.Datasets) == 0 {
		add("datasets", ErrRequired, "declare at least one dataset")
	}
	for _, id := range c.order {
		c.validateDataset(id, c.Datasets[id], add)
	}
	for _, id := range c.empty {
		add("datasets."+id, ErrRequired, "empty dataset: declare its inputs and tables, or remove it")
	}
	return errors.Join(errs...)
}

type addFunc func(path string, sentinel error, format string, args ...any)

func (c *Config) validateWriter(path string, w Writer, add addFunc) {
	switch w.Compression {
	case "zstd":
		if w.CompressionLevel < 1 || w.CompressionLevel > 22 {
			add(path+".compression_level", ErrInvalid, "zstd level must be 1..22, got %d", w.CompressionLevel)
		}
	case "snappy":
		if len(w.SharedPages) > 0 {
			add(path+".shared_pages", ErrInvalid, "works with zstd only, and compression is snappy: leave shared_pages out (it only saves compressing a page twice)")
		}
	default:
		add(path+".compression", ErrInvalid, "must be zstd or snappy (readable by Spark and DuckDB), got %q", w.Compression)
	}
	if w.Encoder != "agora" && w.Encoder != "arrow-go" {
		add(path+".encoder", ErrInvalid, "must be agora or arrow-go, got %q", w.Encoder)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"row_group_rows", w.RowGroupRows}, {"row_group_bytes", w.RowGroupBytes}, {"data_page_bytes", w.DataPageBytes}, {"buffer_bytes", w.BufferBytes}, {"file_rows", w.FileRows}, {"file_bytes", w.FileBytes}, {"file_row_groups", w.FileRowGroups}, {"max_partitions", int64(w.MaxPartitions)}} {
		if f.v < 1 {
			add(path+"."+f.name, ErrInvalid, "must be ≥ 1, got %d", f.v)
		}
	}
}

// ownWriterErrors passes on the errors of a table's effective writer
// that its own writer block takes part in. A bad value of the config's
// writer is reported once, at the config's writer, and not again at
// every table with a writer block of its own (where the line would name
// a block that does not hold it).
func ownWriterErrors(over Writer, add addFunc) addFunc {
	own := map[string]bool{
		"compression":       over.Compression != "",
		"compression_level": over.CompressionLevel != 0 || over.Compression != "",
		"encoder":           over.Encoder != "",
		"row_group_rows":    over.RowGroupRows != 0,
		"row_group_bytes":   over.RowGroupBytes != 0,
		"data_page_bytes":   over.DataPageBytes != 0,
		"buffer_bytes":      over.BufferBytes != 0,
		"file_rows":         over.FileRows != 0,
		"file_bytes":        over.FileBytes != 0,
		"file_row_groups":   over.FileRowGroups != 0,
		"max_partitions":    over.MaxPartitions != 0,
		"shared_pages":      over.SharedPages != nil || over.Compression != "",
	}
	return func(path string, sentinel error, format string, args ...any) {
		if own[path[strings.LastIndex(path, ".")+1:]] {
			add(path, sentinel, format, args...)
		}
	}
}

func (c *Config) validateDataset(id string, d *Dataset, add addFunc) {
	p := "datasets." + id
	if !identRE.MatchString(id) {
		add(p, ErrInvalid, "dataset id %q must be lower case letters, digits and _", id)
	}
	if d == nil {
		add(p, ErrRequired, "empty dataset")
		return
	}
	if len(d.Inputs) == 0 {
		add(p+".inputs", ErrRequired, "declare at least one input")
	}
	if len(d.Tables) == 0 {
		add(p+".tables", ErrRequired, "declare at least one table")
	}
	if d.InputsAtOnce < 0 {
		add(p+".inputs_at_once", ErrInvalid, "must be 0 (as many as workers) or more, got %d", d.InputsAtOnce)
	}
	for name, vals := range d.Vars {
		if len(vals) == 0 {
			add(p+".vars."+name, ErrRequired, "a var needs at least one value")
		}
	}
	for _, inID := range d.inputOrder {
		c.validateInput(p+".inputs."+inID, d.Inputs[inID], add)
	}
	c.validateFetch(p+".fetch", d.Fetch, add)
	for _, name := range d.tableOrder {
		tp := p + ".tables." + name
		t := d.Tables[name]
		if !identRE.MatchString(name) {
			add(tp, ErrInvalid, "table name %q must be lower case letters, digits and _", name)
		}
		if t == nil {
			add(tp, ErrRequired, "empty table")
			continue
		}
		if t.Input == "" {
			add(tp+".input", ErrRequired, "name the input this table reads")
		} else if _, ok := d.Inputs[t.Input]; !ok {
			add(tp+".input", ErrReference, "no input %q in %s.inputs (have %s)", t.Input, p, strings.Join(d.inputOrder, ", "))
		}
		for i, col := range t.PartitionBy {
			if col == "" {
				add(fmt.Sprintf("%s.partition_by[%d]", tp, i), ErrRequired, "empty column name")
			} else if j := slices.Index(t.PartitionBy, col); j < i {
				add(fmt.Sprintf("%s.partition_by[%d]", tp, i), ErrInvalid, "%s is partition_by[%d] already: a folder level per column", col, j)
			}
		}
		if t.Writer != nil {
			c.validateWriter(tp+".writer", c.WriterFor(t), ownWriterErrors(*t.Writer, add))
		}
		if r := t.MaxRejectRatio; r != nil && (*r < 0 || *r > 1) {
			add(tp+".max_reject_ratio", ErrInvalid, "must be between 0 and 1, got %v", *r)
		}
		for i, s := range t.Steps {
			c.validateStep(fmt.Sprintf("%s.steps[%d]", tp, i), d, s, add)
		}
	}
}

// reservedName is the error for a column named like agora's own: _file
// and _line carry each row's source to _rejects, and a column that
// starts with _ is left out of the tables (a step that makes one is an
// error when the table is built).
const reservedName = "%q is the name of agora's own column of each row's source (file and line): name it otherwise (for a JSON key, name the column otherwise and list the key in aliases)"

// reserved reports whether name is one of agora's own columns.
func reserved(name string) bool { return name == "_file" || name == "_line" }

func (c *Config) validateInput(p string, in *Input, add addFunc) {
	if in == nil {
		add(p, ErrRequired, "empty input")
		return
	}
	if in.Path == "" {
		add(p+".path", ErrRequired, "give the path relative to the data root")
	} else if filepath.IsAbs(in.Path) || strings.HasPrefix(in.Path, "~") {
		// It was joined under the data root all the same; and the
		// manifest names inputs by this path, the same on every machine.
		add(p+".path", ErrInvalid, "%q: input paths are relative to the data root (data:, or --data); put the file under it, or point the data root at its folder", in.Path)
	} else if leavesRoot(filepath.ToSlash(in.Path)) {
		// As an absolute path: the manifest would name a file outside the
		// data root, which another machine's data root does not hold.
		add(p+".path", ErrInvalid, "%q leads out of the data root (data:, or --data); put the file under it, or point the data root at its folder", in.Path)
	}
	known := in.Format == "jsonl" || in.Format == "tsv" || in.Format == "parquet"
	if !known {
		add(p+".format", ErrInvalid, "must be jsonl, tsv or parquet, got %q", in.Format)
	}
	if in.ExtraColumns != "" && in.ExtraColumns != "ignore" && in.ExtraColumns != "carry" {
		add(p+".extra_columns", ErrInvalid, "must be ignore or carry, got %q", in.ExtraColumns)
	}
	if known && in.Format != "parquet" && in.ExtraColumns != "" {
		add(p+".extra_columns", ErrInvalid, "extra_columns applies to parquet inputs only")
	}
	for i, g := range in.Skip {
		// Matched against a file's name in the folder: a bad pattern or
		// one with a folder in it never matches, without a word.
		if _, err := path.Match(g, ""); err != nil {
			add(fmt.Sprintf("%s.skip[%d]", p, i), ErrInvalid, "%q is not a file-name glob: %v", g, err)
		} else if strings.Contains(g, "/") {
			add(fmt.Sprintf("%s.skip[%d]", p, i), ErrInvalid, "%q names a folder: skip matches the names of the files in the input's folder", g)
		}
	}
	if known && in.Format != "tsv" {
		// Said at the key, which is the line to change.
		if in.FileColumn != "" {
			add(p+".file_column", ErrInvalid, "file_column applies to tsv inputs only (this one's format is %s)", in.Format)
		}
		if in.Skip != nil {
			add(p+".skip", ErrInvalid, "skip applies to tsv inputs only (this one's format is %s)", in.Format)
		}
	}
	// A key of another format is read by no decoder: said, not passed over.
	if known {
		for _, kf := range []struct {
			key     string
			formats []string
		}{
			{"compression", []string{"jsonl", "tsv"}}, {"max_line_bytes", []string{"jsonl", "tsv"}}, {"max_bytes", []string{"jsonl", "tsv"}},
			{"on_bad_line", []string{"jsonl"}}, {"unknown_keys", []string{"jsonl"}},
		} {
			key, formats := kf.key, kf.formats
			if slices.Contains(in.set, key) && !slices.Contains(formats, in.Format) {
				why := ""
				switch {
				case key == "on_bad_line" && in.Format == "tsv":
					why = "; a tsv line of the wrong field count is always rejected (rule fields)"
				case in.Format == "parquet" && key != "unknown_keys":
					why = "; a Parquet file has no lines, and its own codecs"
				case key == "unknown_keys" && in.Format == "parquet":
					why = "; see extra_columns"
				}
				add(p+"."+key, ErrInvalid, "%s applies to %s inputs only%s", key, strings.Join(formats, " and "), why)
			}
		}
		for i, col := range in.Columns {
			if len(col.Aliases) > 0 && in.Format != "jsonl" {
				add(fmt.Sprintf("%s.columns[%d].aliases", p, in.srcCol(i)), ErrInvalid, "aliases apply to jsonl inputs only: a %s column is found by its name", in.Format)
			}
		}
	}
	if in.Compression != "gzip" && in.Compression != "none" {
		add(p+".compression", ErrInvalid, "must be gzip, none or auto, got %q", in.Compression)
	}
	if in.OnBadLine != "fail" && in.OnBadLine != "reject" {
		add(p+".on_bad_line", ErrInvalid, "must be fail or reject, got %q", in.OnBadLine)
	}
	if in.UnknownKeys != "ignore" && in.UnknownKeys != "reject" {
		add(p+".unknown_keys", ErrInvalid, "must be ignore or reject, got %q", in.UnknownKeys)
	}
	if in.MaxLineBytes < 1 {
		add(p+".max_line_bytes", ErrInvalid, "must be ≥ 1")
	}
	if in.MaxBytes < 1 {
		add(p+".max_bytes", ErrInvalid, "must be ≥ 1")
	}
	if len(in.Columns) == 0 {
		add(p+".columns", ErrRequired, "declare the columns to read")
	}
	if reserved(in.FileColumn) {
		add(p+".file_column", ErrInvalid, reservedName, in.FileColumn)
	}
	if in.FileColumn != "" && slices.ContainsFunc(in.Columns, func(c Column) bool { return c.Name == in.FileColumn }) {
		add(p+".file_column", ErrInvalid, "%q is a declared column too: name the file column something else", in.FileColumn)
	}
	seen := map[string]bool{}
	// aliasOf maps each alias to the column it is declared for: an alias
	// that is another column's name, or two columns' alias, would read
	// one key into two columns or leave one null.
	aliasOf := map[string]string{}
	for _, col := range in.Columns {
		for _, a := range col.Aliases {
			if _, ok := aliasOf[a]; !ok {
				aliasOf[a] = col.Name
			}
		}
	}
	for i, col := range in.Columns {
		cp := fmt.Sprintf("%s.columns[%d]", p, in.srcCol(i))
		for j, a := range col.Aliases {
			switch {
			case a == col.Name:
				add(fmt.Sprintf("%s.aliases[%d]", cp, j), ErrInvalid, "%q is the column's own name", a)
			case slices.ContainsFunc(in.Columns, func(c Column) bool { return c.Name == a }):
				add(fmt.Sprintf("%s.aliases[%d]", cp, j), ErrInvalid, "%q is a declared column too: which of the two its key fills is not clear", a)
			case aliasOf[a] != col.Name:
				add(fmt.Sprintf("%s.aliases[%d]", cp, j), ErrInvalid, "%q is column %s's alias too", a, aliasOf[a])
			case slices.Contains(col.Aliases[:j], a):
				add(fmt.Sprintf("%s.aliases[%d]", cp, j), ErrInvalid, "%q is listed twice", a)
			}
		}
		if col.Name == "" {
			add(cp+".name", ErrRequired, "column name")
		} else if seen[col.Name] {
			add(cp+".name", ErrInvalid, "duplicate column %q", col.Name)
		} else if reserved(col.Name) {
			add(cp+".name", ErrInvalid, reservedName, col.Name)
		}
		seen[col.Name] = true
		if col.Type == "" {
			add(cp+".type", ErrRequired, "column type")
		} else if col.Type == FileType {
			if in.Format != "parquet" {
				add(cp+".type", ErrInvalid, "type file (the file's own type) applies to parquet inputs, whose files carry their types")
			}
		} else if dt, err := ParseType(col.Type); err != nil {
			add(cp+".type", ErrInvalid, "%v", err)
		} else if why := FormatReads(in.Format, dt); why != "" {
			add(cp+".type", ErrInvalid, "%s", why)
		}
		if col.Optional && in.Format != "parquet" {
			add(cp+".optional", ErrInvalid, "optional applies to parquet inputs (a missing JSONL key is null anyway; a TSV header must name the column)")
		}
	}
}

func (c *Config) validateStep(p string, d *Dataset, s Step, add addFunc) {
	n := 0
	if s.Rename != nil {
		n++
	}
	if s.SnakeCase != nil {
		n++
		if !*s.SnakeCase {
			add(p+".snake_case", ErrInvalid, "only true makes the step (it renames every column); leave the step out to keep the names")
		}
	}
	if s.Drop != nil {
		n++
	}
	if s.Unpivot != nil {
		n++
		u := s.Unpivot
		if u.Var == "" {
			add(p+".unpivot.var", ErrRequired, "name the dataset var holding the dimensions")
		} else if _, ok := d.Vars[u.Var]; !ok {
			add(p+".unpivot.var", ErrReference, "var %q is not declared in the dataset's vars", u.Var)
		}
		if !strings.Contains(u.Pattern, "{"+u.Var+"}") {
			add(p+".unpivot.pattern", ErrInvalid, "pattern %q must contain {%s}", u.Pattern, u.Var)
		}
		if len(u.Fields) == 0 {
			add(p+".unpivot.fields", ErrRequired, "list the per-dimension fields")
		}
		if !strings.Contains(u.Pattern, "{field}") && len(u.Fields) != 1 {
			add(p+".unpivot.fields", ErrInvalid, "a pattern without {field} takes exactly one field (the value column's name)")
		}
	}
	if s.Explode != nil {
		n++
		e := s.Explode
		if len(e.Columns) == 0 {
			add(p+".explode.columns", ErrRequired, "list the list columns to explode")
		}
		if len(e.As) > 0 && len(e.As) != len(e.Columns) {
			add(p+".explode.as", ErrInvalid, "as has %d names for %d columns", len(e.As), len(e.Columns))
		}
		for i, f := range e.FillNulls {
			if !slices.Contains(e.Columns, f) {
				add(fmt.Sprintf("%s.explode.fill_nulls[%d]", p, i), ErrInvalid, "%s is not one of the exploded columns", f)
			}
		}
		if len(e.Columns) > 0 && len(e.FillNulls) > 0 && !slices.ContainsFunc(e.Columns, func(c string) bool { return !slices.Contains(e.FillNulls, c) }) {
			add(p+".explode.fill_nulls", ErrInvalid, "names every exploded column; leave out at least one, whose length the filled ones take")
		}
	}
	if s.Validate != nil {
		n++
		for i, r := range s.Validate {
			c.validateRule(fmt.Sprintf("%s.validate[%d]", p, i), r, add)
		}
	}
	if s.Aggregate != nil {
		n++
		if len(s.Aggregate.By) == 0 {
			add(p+".aggregate.by", ErrRequired, "name the key columns")
		}
		if len(s.Aggregate.Columns) == 0 {
			add(p+".aggregate.columns", ErrRequired, "declare the aggregate columns")
		}
		if s.Aggregate.Grouped && s.Aggregate.Sort {
			add(p+".aggregate.grouped", ErrInvalid, "grouped emits groups as they end, in input order; sort orders them all by key: choose one")
		}
	}
	if s.Derive != nil {
		n++
		for i, dv := range s.Derive {
			dp := fmt.Sprintf("%s.derive[%d]", p, i)
			if dv.Name == "" {
				add(dp+".name", ErrRequired, "name the new column")
			} else if reserved(dv.Name) {
				add(dp+".name", ErrInvalid, reservedName, dv.Name)
			}
			if dv.Fn == "" {
				add(dp+".fn", ErrRequired, "name the derivation")
			}
			if dv.Digits != nil && *dv.Digits < -1 {
				add(dp+".digits", ErrInvalid, "must be -1 (no rounding) or 0 or more decimals, got %d", *dv.Digits)
			}
			if dv.Grouped && dv.Fn != "" && dv.Fn != "lag" && dv.Fn != "fill_down" {
				add(dp+".grouped", ErrInvalid, "grouped applies to lag and fill_down, not %s", dv.Fn)
			}
			if dv.Grouped && len(dv.By) == 0 {
				add(dp+".grouped", ErrInvalid, "grouped needs the key columns in by")
			}
		}
	}
	if n != 1 {
		add(p, ErrInvalid, "a step has exactly one of rename, snake_case, drop, unpivot, explode, validate, derive, aggregate (found %d)", n)
	}
}

func (c *Config) validateRule(p string, r Rule, add addFunc) {
	n := 0
	if r.Required != nil {
		n++
	}
	if r.Enum != nil {
		n++
		if r.Enum.Column == "" || len(r.Enum.Values) == 0 {
			add(p+".enum", ErrRequired, "enum needs a column and values")
		}
	}
	if r.Range != nil {
		n++
		if r.Range.Column == "" || (r.Range.Min == nil && r.Range.Max == nil) {
			add(p+".range", ErrRequired, "range needs a column and min or max")
		}
		if r.Range.Min != nil && r.Range.Max != nil && *r.Range.Min > *r.Range.Max {
			add(p+".range", ErrInvalid, "min %v is greater than max %v", *r.Range.Min, *r.Range.Max)
		}
		for _, b := range []struct {
			key string
			v   *float64
		}{{"min", r.Range.Min}, {"max", r.Range.Max}} {
			if b.v != nil && math.IsNaN(*b.v) {
				add(p+".range."+b.key, ErrInvalid, "NaN bounds nothing (every comparison with it is false)")
			}
		}
	}
	if r.EqualLengths != nil {
		n++
		if len(r.EqualLengths) < 2 {
			add(p+".equal_lengths", ErrInvalid, "name at least two list columns")
		}
	}
	if r.ListLength != nil {
		n++
		if r.ListLength.Column == "" || r.ListLength.Length < 0 {
			add(p+".list_length", ErrInvalid, "list_length needs a column and a length ≥ 0")
		}
	}
	if r.SumsTo != nil {
		n++
		if len(r.SumsTo.Columns) == 0 {
			add(p+".sums_to.columns", ErrRequired, "name the columns to sum")
		}
		if r.SumsTo.Tolerance < 0 {
			add(p+".sums_to.tolerance", ErrInvalid, "must be ≥ 0")
		}
	}
	if r.Unique != nil {
		n++
		if len(r.Unique) == 0 {
			add(p+".unique", ErrRequired, "name the key columns")
		}
	}
	if r.Equal != nil {
		n++
		if len(r.Equal.Columns) != 2 {
			add(p+".equal.columns", ErrInvalid, "name exactly two columns")
		}
		if r.Equal.Tolerance < 0 || math.IsNaN(r.Equal.Tolerance) {
			add(p+".equal.tolerance", ErrInvalid, "must be ≥ 0")
		}
	}
	if n != 1 {
		add(p, ErrInvalid, "a rule has exactly one of required, enum, range, equal_lengths, list_length, sums_to, unique, equal (found %d)", n)
	}
	if r.OnFail != "" && r.OnFail != "reject" && r.OnFail != "flag" {
		add(p+".on_fail", ErrInvalid, "must be reject or flag, got %q", r.OnFail)
	}
	if r.OnFail == "flag" && r.Unique != nil {
		add(p+".on_fail", ErrInvalid, "a unique rule rejects; it cannot flag")
	}
}

// FormatReads returns why an input of format cannot read a column of type
// t, or "" when it can: the decoders' own limits, which config checks at
// the column's line (once, not at every table that reads the input) and
// the TSV decoder checks again for a source built without a config.
func FormatReads(format string, t arrow.DataType) string {
	switch format {
	case "tsv":
		switch t.ID() {
		case arrow.STRING, arrow.INT64, arrow.FLOAT64, arrow.BOOL, arrow.TIMESTAMP:
			return ""
		}
		return fmt.Sprintf("a TSV column is string, int64, float64, bool or timestamp, not %s (declare it string and parse it with a derive step such as parse_json or split)", FormatType(t))
	case "jsonl":
		var why string
		var walk func(arrow.DataType)
		walk = func(t arrow.DataType) {
			switch t := t.(type) {
			case *arrow.Date32Type:
				why = "JSON lines have no date: declare a timestamp (an RFC 3339 string) or a string"
			case *arrow.MapType:
				if t.KeyType().ID() != arrow.STRING {
					why = fmt.Sprintf("a JSON object's keys are strings: declare map<string,%s>", FormatType(t.ItemType()))
				}
				walk(t.ItemType())
			case *arrow.ListType:
				walk(t.Elem())
			case *arrow.StructType:
				for _, f := range t.Fields() {
					walk(f.Type)
				}
			}
		}
		walk(t)
		return why
	}
	return ""
}
