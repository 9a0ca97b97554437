package stages

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/pipeline"
)

// Built is a table's source and stages, ready for pipeline.Run.
type Built struct {
	// Source decodes the table's input.
	Source pipeline.Source
	// InputPath is the input file on disk.
	InputPath string
	// Stages are the table's steps in order.
	Stages []pipeline.Stage
	// CountAfter is where rows reach the table's grain (after the last
	// unpivot or explode).
	CountAfter int
	// Schema is the schema of the batches reaching the sink.
	Schema *arrow.Schema
}

// schemaStage is a stage that knows its output schema.
type schemaStage interface {
	pipeline.Stage
	Schema() *arrow.Schema
}

// BuildTable turns a table's declaration into a source and stages,
// checking every column reference against the schema flowing through the
// steps. Errors are *config.FieldError pointing at the line in
// pipeline.yaml.
func BuildTable(cfg *config.Config, dataset, table, dataRoot string, mem memory.Allocator) (*Built, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	d := cfg.Datasets[dataset]
	t := d.Tables[table]
	tp := fmt.Sprintf("datasets.%s.tables.%s", dataset, table)
	in := d.Inputs[t.Input]
	src, path, err := NewSource(cfg, in, dataRoot, mem)
	if err != nil {
		return nil, cfg.At(fmt.Sprintf("datasets.%s.inputs.%s", dataset, t.Input), err)
	}
	schema, err := src.Schema()
	if err != nil {
		return nil, cfg.At(fmt.Sprintf("datasets.%s.inputs.%s", dataset, t.Input), err)
	}
	b := &Built{Source: src, InputPath: path}
	for i, s := range t.Steps {
		sp := fmt.Sprintf("%s.steps[%d]", tp, i)
		st, out, grain, err := buildStep(mem, d, schema, s)
		if err != nil {
			if ie := (*ItemError)(nil); errors.As(err, &ie) {
				return nil, cfg.At(sp+"."+ie.Path, ie.Err)
			}
			return nil, cfg.At(sp, err)
		}
		if v, ok := st.(*Validate); ok {
			v.Within(fmt.Sprintf("steps[%d]", i))
		}
		if c := madeHidden(schema, out); c != "" {
			return nil, cfg.At(sp, fmt.Errorf("the step makes column %q, and a name that starts with _ is left out of the tables (agora's own columns are named so): name it otherwise", c))
		}
		b.Stages = append(b.Stages, st)
		schema = out
		if grain {
			b.CountAfter = i + 1
		}
	}
	if c := madeHidden(nil, schema); c != "" {
		// An input column of that name (a TSV header, a Parquet column)
		// that no step renamed or dropped.
		return nil, cfg.At(tp, fmt.Errorf("column %q starts with _, and such a column is left out of the tables (agora's own columns are named so): rename or drop it in a step", c))
	}
	for i, p := range t.PartitionBy {
		if colIndex(schema, p) < 0 {
			return nil, cfg.At(fmt.Sprintf("%s.partition_by[%d]", tp, i), fmt.Errorf("%w %q (have %s)", ErrNoColumn, p, columnList(schema)))
		}
	}
	if t.Writer != nil {
		if err := checkWriterColumns(cfg, tp, schema, t); err != nil {
			return nil, err
		}
	}
	// A description of a column the table does not write (a typo, a
	// column renamed since) would be left out of the card without a word.
	var undescribed []error
	for _, name := range slices.Sorted(maps.Keys(t.Columns)) {
		if colIndex(schema, name) < 0 || strings.HasPrefix(name, "_") {
			undescribed = append(undescribed, cfg.At(fmt.Sprintf("%s.columns.%s", tp, name), fmt.Errorf("%w %q to describe (have %s)", ErrNoColumn, name, columnList(schema))))
		}
	}
	if len(undescribed) > 0 {
		return nil, errors.Join(undescribed...)
	}
	if len(t.PartitionBy) > 0 {
		pc, err := NewPartitionCheck(mem, schema, t.PartitionBy)
		if err != nil {
			return nil, cfg.At(tp+".partition_by", err)
		}
		b.Stages = append(b.Stages, pc)
	}
	b.Schema = schema
	return b, nil
}

// madeHidden returns the first column of out, not in in (nil: none),
// whose name starts with _ but that is not one of agora's own (the row's
// file and line): the writers would leave it out without a word.
func madeHidden(in, out *arrow.Schema) string {
	for _, f := range out.Fields() {
		if !strings.HasPrefix(f.Name, "_") || f.Name == pipeline.LineColumn || f.Name == pipeline.FileColumn {
			continue
		}
		if in == nil || colIndex(in, f.Name) < 0 {
			return f.Name
		}
	}
	return ""
}

// checkWriterColumns reports a column a table's writer.dictionary,
// writer.no_statistics or writer.shared_pages names but the table does
// not write (a typo would otherwise be ignored silently). Partition
// columns are folders, not columns of the files.
func checkWriterColumns(cfg *config.Config, tp string, schema *arrow.Schema, t *config.Table) error {
	var errs []error
	lists := []struct {
		key  string
		cols []string
	}{{"dictionary", t.Writer.Dictionary}, {"no_statistics", t.Writer.NoStatistics}, {"shared_pages", t.Writer.SharedPages}}
	for _, l := range lists {
		key := l.key
		for i, c := range l.cols {
			switch {
			case slices.Contains(t.PartitionBy, c):
				errs = append(errs, cfg.At(fmt.Sprintf("%s.writer.%s[%d]", tp, key, i), fmt.Errorf("%q is a partition column: it is a folder, not a column of the files", c)))
			case colIndex(schema, c) < 0 || strings.HasPrefix(c, "_"):
				errs = append(errs, cfg.At(fmt.Sprintf("%s.writer.%s[%d]", tp, key, i), fmt.Errorf("%w %q (have %s)", ErrNoColumn, c, columnList(schema))))
			}
		}
	}
	return errors.Join(errs...)
}

// Source is a pipeline.Source that knows the schema of its batches.
type Source interface {
	pipeline.Source
	Schema() (*arrow.Schema, error)
}

// NewSource builds the decoder for an input; the path is resolved against
// the data root.
func NewSource(cfg *config.Config, in *config.Input, dataRoot string, mem memory.Allocator) (Source, string, error) {
	path := filepath.Join(dataRoot, filepath.FromSlash(in.Path))
	if in.Format == "parquet" {
		cols := make([]ParquetColumn, len(in.Columns))
		for i, c := range in.Columns {
			if c.Type == config.FileType {
				cols[i] = ParquetColumn{Name: c.Name, AsFile: true, Optional: c.Optional}
				continue
			}
			t, err := config.ParseType(c.Type)
			if err != nil {
				return nil, "", err
			}
			cols[i] = ParquetColumn{Name: c.Name, Type: t, Optional: c.Optional}
		}
		return &ParquetFile{Path: path, Name: in.Path, Columns: cols, CarryExtra: in.ExtraColumns == "carry", BatchRows: cfg.BatchRows, BatchBytes: cfg.BatchBytes, Mem: mem}, path, nil
	}
	if in.Format == "tsv" {
		cols := make([]TSVColumn, len(in.Columns))
		for i, c := range in.Columns {
			t, err := config.ParseType(c.Type)
			if err != nil {
				return nil, "", err
			}
			cols[i] = TSVColumn{Name: c.Name, Type: t}
		}
		return &TSVFolder{
			Path: path, Name: in.Path, Columns: cols, FileColumn: in.FileColumn, Skip: in.Skip,
			Gzip: in.Compression == "gzip", GzipBySuffix: in.AutoCompression(),
			BatchRows: cfg.BatchRows, BatchBytes: cfg.BatchBytes, MaxLineBytes: in.MaxLineBytes, MaxBytes: in.MaxBytes, Mem: mem,
		}, path, nil
	}
	cols := make([]JSONColumn, len(in.Columns))
	for i, c := range in.Columns {
		t, err := config.ParseType(c.Type)
		if err != nil {
			return nil, "", err
		}
		cols[i] = JSONColumn{Name: c.Name, Keys: append([]string{c.Name}, c.Aliases...), Type: t}
	}
	return &JSONLines{
		Path:              path,
		Name:              in.Path,
		Gzip:              in.Compression == "gzip",
		Columns:           cols,
		BatchRows:         cfg.BatchRows,
		BatchBytes:        cfg.BatchBytes,
		MaxLineBytes:      in.MaxLineBytes,
		MaxBytes:          in.MaxBytes,
		RejectBadLines:    in.OnBadLine == "reject",
		RejectUnknownKeys: in.UnknownKeys == "reject",
		Mem:               mem,
	}, path, nil
}

func buildStep(mem memory.Allocator, d *config.Dataset, in *arrow.Schema, s config.Step) (pipeline.Stage, *arrow.Schema, bool, error) {
	var st schemaStage
	var err error
	grain := false
	switch {
	case s.Rename != nil:
		st, err = NewRename(in, s.Rename)
	case s.SnakeCase != nil:
		st, err = NewSnakeCase(in)
	case s.Drop != nil:
		st, err = NewDrop(in, s.Drop)
	case s.Unpivot != nil:
		u := s.Unpivot
		st, err = NewUnpivot(mem, in, u.Var, u.Pattern, d.Vars[u.Var], u.Fields, u.Into, u.Keep)
		grain = true
	case s.Explode != nil:
		e := s.Explode
		var ex *Explode
		ex, err = NewExplode(mem, in, e.Columns, e.As, e.Index, e.Keep, e.Prefix)
		if err == nil {
			err = ex.FillNulls(e.FillNulls)
		}
		st = ex
		grain = true
	case s.Validate != nil:
		v, verr := NewValidate(mem, in, s.Validate)
		if verr != nil {
			return nil, nil, false, verr
		}
		return v, in, false, nil
	case s.Derive != nil:
		st, err = NewDerive(mem, in, s.Derive)
	case s.Aggregate != nil:
		st, err = NewAggregate(mem, in, s.Aggregate)
		grain = true
	default:
		return nil, nil, false, errors.New("empty step")
	}
	if err != nil {
		return nil, nil, false, err
	}
	return st, st.Schema(), grain, nil
}

// ItemError is an error in one item of a step's list (a derivation, a
// rule). Path locates the item within the step, as "derive[2]" or
// "derive[2].when", so that a config error can name the item's line
// rather than the step's; Err says what is wrong with it.
type ItemError struct {
	Path string
	Err  error
}

// Error returns the item's path and the wrapped error's text.
func (e *ItemError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *ItemError) Unwrap() error { return e.Err }
