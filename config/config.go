package config

// Config is the whole of pipeline.yaml: run settings, writer settings and
// the datasets. It is plain data; Load fills the defaults and Validate
// checks it.
type Config struct {
	// Version is the config format version; only 1 exists.
	Version int `yaml:"version"`
	// Data is the data root that input paths are relative to. The
	// command line flag --data overrides it.
	Data string `yaml:"data"`
	// Out is the output root. The command line flag --out overrides it.
	Out string `yaml:"out"`
	// Workers is the number of goroutines per parallel stage. 1 runs the
	// same code serially. 0 means one per CPU.
	Workers int `yaml:"workers"`
	// BatchRows is the number of input rows decoded into one Arrow batch.
	// Every batch has a fixed cost (its arrays, a pass of every stage, a
	// piece for the writer to join), so very small batches are slow and
	// hold more memory than their rows: DeliData at 1x takes 20 times the
	// CPU and 2.6 times the peak RSS at 2 rows as at 1,024. Keep it in the
	// hundreds or more; batch_bytes is the knob for long rows.
	BatchRows int `yaml:"batch_rows"`
	// BatchBytes ends a batch early once it holds about this many bytes:
	// input bytes of a line-based input (JSON Lines, TSV), Arrow bytes of
	// a Parquet input. It keeps the batches in flight small where rows are
	// long (CrowdRAG-25's responses carry 29 KB of source texts a line),
	// without making short rows' batches small too. At least 4096.
	BatchBytes int `yaml:"batch_bytes"`
	// ChannelDepth is the capacity of the channels between stages (0 or
	// unset: the default).
	// Memory in flight is bounded by about
	// (stages × (ChannelDepth + Workers) + MaxInFlight) batches, each at
	// most BatchRows rows and about BatchBytes bytes.
	ChannelDepth int `yaml:"channel_depth"`
	// MemoryLimit is the soft memory limit given to the Go runtime, in
	// bytes: the collector works harder as the heap nears it, which keeps
	// resident memory near the limit instead of twice the live data. When
	// the live data does not fit (the collector and the scavenger take
	// over a quarter of the CPU agora uses in a quarter second, or over
	// 12% of it for a second), agora raises the limit by a quarter, and
	// logs it, rather than let them burn CPU, but never past 90% of the
	// memory the process may use (its cgroup's memory limit, as in a
	// container, or else the machine's RAM), where it would be killed for
	// its memory: a limit configured above that starts there, and at that
	// ceiling the collector works harder instead (both logged as
	// warnings). 0 means the default (256 MiB); -1 leaves the runtime's
	// own setting; any other value must be at least 32 MiB. The GOMEMLIMIT
	// environment variable, when set, wins.
	MemoryLimit int64 `yaml:"memory_limit"`
	// Writer holds the default Parquet writer settings.
	Writer Writer `yaml:"writer"`
	// Datasets maps a dataset id to its declaration.
	Datasets map[string]*Dataset `yaml:"datasets"`

	// order keeps the dataset ids in the order of the file.
	order []string
	// empty holds the ids of datasets given no content (`emptyds:`).
	empty []string
	// file is the name used in error messages.
	file string
	// root is the parsed document, used to find line numbers.
	root *node
}

// Writer holds Parquet writer and file layout settings.
type Writer struct {
	// Compression is the page codec: zstd or snappy.
	Compression string `yaml:"compression"`
	// Encoder is what encodes the pages and footer: agora (its own column
	// encoder, internal/pqenc, whose page buffers are reused from row
	// group to row group: at Habermas 10x rows a third less CPU and no
	// raise of the memory limit, at CrowdRAG-25 10x a sixth less CPU) or
	// arrow-go (arrow-go's column writers, as before). Both write the
	// same schema, metadata, encodings and chunk statistics, and the
	// tables read back equal; the bytes differ: agora writes no
	// statistics in page headers, drops both string bounds where one is
	// past 4 KiB, and ends data pages at other points under the same
	// data_page_bytes. A schema with a type agora's encoder does not
	// write is written through arrow-go.
	Encoder string `yaml:"encoder"`
	// CompressionLevel is the zstd level (1 fastest .. 22 best; klauspost
	// maps it onto four speeds).
	CompressionLevel int `yaml:"compression_level"`
	// RowGroupRows caps the rows of one row group.
	RowGroupRows int64 `yaml:"row_group_rows"`
	// RowGroupBytes starts a new row group once this many bytes of Arrow
	// data went into the buffered one; with RowGroupRows it bounds the
	// memory of each open partition.
	RowGroupBytes int64 `yaml:"row_group_bytes"`
	// BufferBytes caps the Arrow bytes a table's writer holds: a quarter
	// of it is input batches waiting to be split by partition together,
	// the rest row groups buffered over all open partitions (past it, the
	// largest is written out). It bounds a table's memory however many
	// partitions are open.
	BufferBytes int64 `yaml:"buffer_bytes"`
	// DataPageBytes is the target size of a data page; a column's page is
	// buffered while its row group is written.
	DataPageBytes int64 `yaml:"data_page_bytes"`
	// FileRows rolls to a new file after this many rows.
	FileRows int64 `yaml:"file_rows"`
	// FileBytes rolls to a new file after about this many bytes.
	FileBytes int64 `yaml:"file_bytes"`
	// FileRowGroups rolls to a new file after this many row groups. The
	// writer keeps the metadata of every column chunk written (statistics,
	// offsets) until the file's footer is written, so this bounds that
	// memory for each open file when row groups are small: many partitions
	// sharing buffer_bytes, or rows too large for row_group_rows.
	FileRowGroups int64 `yaml:"file_row_groups"`
	// MaxPartitions is the most partitions one table may write; more is an
	// error, because it means a partition column with too many values.
	MaxPartitions int `yaml:"max_partitions"`
	// Dictionary lists columns written with dictionary encoding (for a
	// list column, its values). Columns not listed are written plain.
	// Dictionary pages never fall back to plain (the fallback makes
	// arrow-go's output non-deterministic), so list only columns whose
	// values repeat within a row group: long texts repeated row after row
	// are where it pays. Not float columns: Spark's dictionary filter
	// skips a row group of -0.0 when asked for 0.0.
	Dictionary []string `yaml:"dictionary"`
	// NoStatistics lists columns written without min/max statistics (for
	// a list column, its values). Statistics of long free texts cost CPU
	// (every value is compared) and footer bytes, and a filter on a
	// paragraph seldom skips a row group by them; keep them for ids,
	// keys, numbers and dates.
	NoStatistics []string `yaml:"no_statistics"`
	// SharedPages lists columns (for a list column, its values) whose
	// pages repeat from one partition to the next: a zstd page equal to
	// one compressed a moment before, for any file, is not compressed
	// again. It pays where every partition holds the same values in the
	// same order, as CrowdRAG-25's style partitions hold each topic's 20
	// sources, and row_group_rows lines their row groups up (a row group
	// cut early by buffer_bytes no longer lines up). Elsewhere it costs a
	// hash and a copy of every page of the column. zstd only: with snappy
	// it is a config error.
	SharedPages []string `yaml:"shared_pages"`
}

// Dataset declares one source dataset: its inputs and output tables.
type Dataset struct {
	// Title is a human name for the dataset card.
	Title string `yaml:"title"`
	// Description says what the dataset is.
	Description string `yaml:"description"`
	// License is the SPDX id of the source data's license.
	License string `yaml:"license"`
	// Citation is how to cite the source data.
	Citation string `yaml:"citation"`
	// Homepage is where the source release is published.
	Homepage string `yaml:"homepage"`
	// Vars are named lists that expand {name} placeholders in the
	// inputs' column names (one column per value), and that steps such as
	// unpivot refer to by name. Nowhere else: a rule or derive that
	// names "{name}_score" names that one column, which does not exist;
	// a YAML anchor (&list, *list) repeats a list in steps.
	Vars map[string][]string `yaml:"vars"`
	// Inputs maps an input id to the file it reads.
	Inputs map[string]*Input `yaml:"inputs"`
	// Tables maps an output table name to its declaration.
	Tables map[string]*Table `yaml:"tables"`
	// Fetch lists the official release files `agora fetch` downloads and
	// where it puts them under the data root. It does not shape the
	// output, so it is not part of the config hash.
	Fetch []*FetchFile `yaml:"fetch" json:"-"`
	// InputsAtOnce is how many of the dataset's inputs (each read once for
	// all the tables that read it) are converted at the same time: 0 (the
	// default) as many as workers, 1 one after another. Inputs converted
	// together add up their memory; together they keep the cores busy
	// when one input alone cannot (a gzipped JSON file is inflated on one
	// core), and gain nothing when it can. It does not shape the output,
	// so it is not part of the config hash.
	InputsAtOnce int `yaml:"inputs_at_once" json:"-"`

	inputOrder []string
	tableOrder []string
}

// Input declares one input file and how to decode it.
type Input struct {
	// Path is relative to the data root: a file, or for tsv a folder of
	// files read in name order.
	Path string `yaml:"path"`
	// Format is the decoder: jsonl (optionally gzipped), tsv or parquet.
	Format string `yaml:"format"`
	// FileColumn (tsv) adds a column holding each row's file name.
	FileColumn string `yaml:"file_column"`
	// Skip (tsv) lists file-name globs in the folder that are not data;
	// they, empty files and hidden files are passed over with a note.
	Skip []string `yaml:"skip"`
	// ExtraColumns (parquet) is ignore (the default) or carry: what to do
	// with the file's columns the config does not declare. Carried
	// columns keep their names and values in types every reader takes,
	// as declared ones do: large texts and lists become plain ones,
	// dictionaries their values, unsigned and narrow integers int32 or
	// int64 (a uint64 past int64 stops the run at its row), timestamps
	// microseconds UTC, the null type string. One of a type no reader is
	// promised (times of day, durations, intervals) is left out with a
	// note: declare it to read it.
	ExtraColumns string `yaml:"extra_columns"`
	// Compression (jsonl, tsv) is gzip, none, or auto (by the .gz
	// suffix: of the input's path, and for a tsv folder of each file's
	// name).
	Compression string `yaml:"compression"`
	// MaxLineBytes (jsonl, tsv) is the longest line accepted.
	MaxLineBytes int64 `yaml:"max_line_bytes"`
	// MaxBytes (jsonl, tsv) caps the decompressed size read from a file.
	MaxBytes int64 `yaml:"max_bytes"`
	// OnBadLine (jsonl) is fail (stop with file:line) or reject (send the
	// line to _rejects and go on). A tsv line of the wrong field count is
	// always rejected (rule fields).
	OnBadLine string `yaml:"on_bad_line"`
	// UnknownKeys (jsonl) is ignore or reject: what to do with a key the
	// columns do not declare.
	UnknownKeys string `yaml:"unknown_keys"`
	// Columns are the fields to read, in output order. A name may contain
	// {var} placeholders that expand over a dataset var.
	Columns []Column `yaml:"columns"`

	// set lists the keys pipeline.yaml gives (before defaults), for the
	// keys of one format given to another.
	set []string
	// colSrc is, for each column after {var} expansion, its place in
	// pipeline.yaml's list, for errors to name (see srcCol).
	colSrc []int
	// autoGzip says compression was auto (given or by default), which a
	// tsv folder judges file by file.
	autoGzip bool
}

// AutoCompression reports whether the input's compression is auto: for a
// tsv folder, each file whose name ends in .gz is read through gzip.
func (in *Input) AutoCompression() bool { return in.autoGzip }

// FileType is the Column type that takes a parquet column's type from
// the file.
const FileType = "file"

// Column declares one input column.
type Column struct {
	// Name is the key in the input. It may not be _file or _line
	// (agora's own columns of each row's source); any other name that
	// starts with _ must be renamed or dropped by a step, since the
	// writers leave such columns out (a JSON key can also be read
	// through Aliases).
	Name string `yaml:"name"`
	// Type is a type expression such as string, int64, float64, bool,
	// list<string> or list<struct<text:string,citations:list<string>>>.
	// A Parquet column of another type is converted where no value is
	// lost (int32 to int64, ISO strings to timestamps, a list of one
	// repeated value to that value, a value to a list of one); a value
	// that does not convert stops the run, naming its row. For a
	// parquet column, file takes the type from the file (made one every
	// reader takes, as extra_columns: carry does), for a column whose
	// shape the release does not publish; steps that need a known type
	// refuse it where the file's does not fit.
	Type string `yaml:"type"`
	// Aliases (jsonl) are other keys accepted for the same column, for
	// releases that renamed a field. A line that gives two of the keys
	// with one value (equal as JSON: 1 and 1.0, objects in any key
	// order), or a null and a value, is read; with two values it is
	// rejected (rule duplicate_key). A tsv or parquet column is found by its name; a
	// rename step renames.
	Aliases []string `yaml:"aliases"`
	// Description documents the input column in pipeline.yaml; the
	// dataset card and datapackage.json take a table's columns'
	// descriptions from the table's columns.
	Description string `yaml:"description"`
	// Optional (Parquet inputs) lets the file lack the column: it is read
	// as nulls and the run's summary notes it. For release files whose
	// exact columns are not published.
	Optional bool `yaml:"optional"`
}

// Table declares one output table.
type Table struct {
	// Input names the dataset input this table reads.
	Input string `yaml:"input"`
	// Description documents the table for the dataset card.
	Description string `yaml:"description"`
	// Steps transform the decoded rows, in order.
	Steps []Step `yaml:"steps"`
	// PartitionBy lists the Hive partition columns.
	PartitionBy []string `yaml:"partition_by"`
	// Columns documents output columns for the dataset card (name →
	// meaning).
	Columns map[string]string `yaml:"columns"`
	// Writer overrides writer settings for this table: a value it sets
	// replaces the top-level writer's, and its lists (dictionary,
	// no_statistics, shared_pages) are added to the top-level writer's.
	Writer *Writer `yaml:"writer"`
	// MaxRejectRatio is the share of rows in that may be rejected before
	// the run exits with code 3 (the release is still published). Unset
	// means any share is accepted. Rows in are the rows written plus the
	// rows rejected: after an explode, its elements; after an aggregate,
	// its groups plus the rows rejected before it (the manifest's
	// input_rows has the input's own count).
	MaxRejectRatio *float64 `yaml:"max_reject_ratio"`
}

// Step is one transformation. Exactly one field is set.
type Step struct {
	// Rename renames columns (old → new).
	Rename map[string]string `yaml:"rename"`
	// SnakeCase renames every column to snake_case (dots become _).
	SnakeCase *bool `yaml:"snake_case"`
	// Drop removes columns.
	Drop []string `yaml:"drop"`
	// Unpivot turns a {var}_{field} column family into rows.
	Unpivot *Unpivot `yaml:"unpivot"`
	// Explode turns aligned lists (or a list of structs) into child rows.
	Explode *Explode `yaml:"explode"`
	// Validate applies rules; rows that break one go to _rejects.
	Validate []Rule `yaml:"validate"`
	// Derive adds computed columns.
	Derive []Derivation `yaml:"derive"`
	// Aggregate turns rows into one row per key.
	Aggregate *Aggregate `yaml:"aggregate"`
}

// Aggregate groups rows by key columns, in the order keys first appear,
// and computes one row per group. It keeps the state of at most 8,192
// groups in memory; the rows of further groups wait in partition files
// in $TMPDIR, aggregated one partition at a time at the end. With
// grouped, for input that holds each group's rows together, it emits
// groups as they end instead and holds at most 4,096 and one batch's.
type Aggregate struct {
	// By lists the key columns.
	By []string `yaml:"by"`
	// Columns are the aggregates, each computed by a named function.
	Columns []AggColumn `yaml:"columns"`
	// Sort orders the groups by their keys (numbers numerically);
	// otherwise groups come in the order their keys first appear.
	Sort bool `yaml:"sort"`
	// Grouped declares that the input holds each group's rows together,
	// one group after another (DeliData: one file per group). Groups are
	// then emitted as they end, so memory holds at most 4,096 groups and
	// those of one batch, however many there are. A key that comes back
	// after its group ended fails the run, naming the file and line.
	// Not with sort.
	Grouped bool `yaml:"grouped"`
}

// AggColumn is one aggregate column.
type AggColumn struct {
	// Name is the new column.
	Name string `yaml:"name"`
	// Fn is count, count_non_null, first, last, min, max, sum, union or
	// schulze.
	Fn string `yaml:"fn"`
	// Args are the input columns.
	Args []string `yaml:"args"`
	// When restricts the rows aggregated.
	When *When `yaml:"when"`
	// Exclude lists values union leaves out.
	Exclude []string `yaml:"exclude"`
}

// When selects rows by a column's value.
type When struct {
	// Column is the column whose value selects the rows.
	Column string `yaml:"column"`
	// In lists the values selected.
	In []string `yaml:"in"`
}

// Unpivot declares a wide-to-long transformation.
type Unpivot struct {
	// Var names the dataset var whose values are the dimensions.
	Var string `yaml:"var"`
	// Pattern builds an input column name from {<var>} and {field}, for
	// example "{dimension}_{field}" or "{dimension}".
	Pattern string `yaml:"pattern"`
	// Fields are the per-dimension fields; with a pattern lacking {field}
	// give one field, the name of the value column.
	Fields []string `yaml:"fields"`
	// Into is the name of the new column holding the dimension; default
	// is the var name.
	Into string `yaml:"into"`
	// Keep lists the columns repeated on every output row; default all
	// columns not in the family.
	Keep []string `yaml:"keep"`
}

// Explode declares a list-to-rows transformation.
type Explode struct {
	// Columns are aligned list columns exploded together. A row whose
	// lists differ in length is rejected.
	Columns []string `yaml:"columns"`
	// As names the element columns (default: the list column names).
	As []string `yaml:"as"`
	// Index names a new 0-based position column (optional).
	Index string `yaml:"index"`
	// Keep lists the columns repeated on every child row; default all
	// other columns.
	Keep []string `yaml:"keep"`
	// Prefix is put before struct field names when a list of structs is
	// exploded into columns.
	Prefix string `yaml:"prefix"`
	// FillNulls names columns, of Columns, that may be null (or empty)
	// where the others are not: such a row is kept, with null elements in their
	// place, instead of being rejected (a participant who ranked the
	// candidates but left no ratings). At least one column must be left
	// out of it: those give the row's length.
	FillNulls []string `yaml:"fill_nulls"`
}

// Rule is one validation rule. Exactly one kind field is set.
type Rule struct {
	// Required columns must not be null.
	Required []string `yaml:"required"`
	// Enum checks that a string (or each string of a list) is one of Values.
	Enum *EnumRule `yaml:"enum"`
	// Range checks that a number (or each number of a list) lies in [Min, Max].
	Range *RangeRule `yaml:"range"`
	// EqualLengths checks that list columns have equal lengths.
	EqualLengths []string `yaml:"equal_lengths"`
	// ListLength checks that a list column has exactly N elements.
	ListLength *ListLengthRule `yaml:"list_length"`
	// SumsTo checks that the columns (null counts as 0) sum to Value within Tolerance.
	SumsTo *SumRule `yaml:"sums_to"`
	// Unique checks that the key columns are unique over the table; later
	// duplicates are rejected. Rows with a null key column are not
	// checked (nulls are distinct, as in SQL). A 96-bit hash of each key
	// is kept with its first line: the newest 196,608 keys in memory, the
	// rest in sorted run files in $TMPDIR with 2 bytes a key in memory.
	Unique []string `yaml:"unique"`
	// Equal checks that two columns are equal (numbers within Tolerance).
	Equal *EqualRule `yaml:"equal"`
	// When restricts the rule to some rows.
	When *When `yaml:"when"`
	// OnFail is reject (the default: the row goes to _rejects) or flag
	// (the row is kept and the failure counted in the summary and the
	// manifest, by the rule's place, steps[i].validate[j]; a row another
	// rule of the step rejects is not counted).
	OnFail string `yaml:"on_fail"`
}

// EqualRule compares two columns; null equals only null.
type EqualRule struct {
	// Columns are the two columns compared.
	Columns []string `yaml:"columns"`
	// Tolerance is the largest difference of two numbers still equal.
	Tolerance float64 `yaml:"tolerance"`
}

// EnumRule allows a fixed set of string values.
type EnumRule struct {
	// Column is the string or list-of-strings column checked.
	Column string `yaml:"column"`
	// Values are the values allowed.
	Values []string `yaml:"values"`
	// IgnoreCase compares without case.
	IgnoreCase bool `yaml:"ignore_case"`
}

// RangeRule bounds a numeric column.
type RangeRule struct {
	// Column is the numeric (or list of numbers) column checked.
	Column string `yaml:"column"`
	// Min is the smallest value allowed; unset means no lower bound.
	Min *float64 `yaml:"min"`
	// Max is the largest value allowed; unset means no upper bound.
	Max *float64 `yaml:"max"`
}

// ListLengthRule fixes the length of a list column.
type ListLengthRule struct {
	// Column is the list column checked.
	Column string `yaml:"column"`
	// Length is the number of elements required.
	Length int `yaml:"length"`
}

// SumRule checks that numeric columns sum to a value.
type SumRule struct {
	// Columns are the numeric columns summed (null counts as 0).
	Columns []string `yaml:"columns"`
	// Value is the sum required.
	Value float64 `yaml:"value"`
	// Tolerance is the largest difference from Value accepted.
	Tolerance float64 `yaml:"tolerance"`
}

// Derivation adds one column computed by a named function from the
// derive registry.
type Derivation struct {
	// Name is the new column.
	Name string `yaml:"name"`
	// Fn is the registered derivation, e.g. count_equal, majority,
	// pair_key, n_words, list_length, lower.
	Fn string `yaml:"fn"`
	// Args are the input columns.
	Args []string `yaml:"args"`
	// Value is a constant argument some functions take (count_equal's value).
	Value string `yaml:"value"`
	// Min is an integer argument (majority's threshold).
	Min int `yaml:"min"`
	// Replace lets the derivation overwrite an existing column of the same
	// name (used for case normalisation in place); with when, only the
	// rows when selects.
	Replace bool `yaml:"replace"`
	// Values is a list argument (nullif's values; split's elements to
	// leave out).
	Values []string `yaml:"values"`
	// Index is a position argument (split_part's part).
	Index int `yaml:"index"`
	// Type is a type expression argument (parse_json's result type).
	Type string `yaml:"type"`
	// By lists key columns for derivations over other rows of a key (lag,
	// fill_down, lead; occurrence keys by its args).
	By []string `yaml:"by"`
	// Grouped (lag and fill_down) declares that the input holds each
	// key's rows together: the value carried for a key is let go once
	// another key's rows start, so memory does not grow with the keys. A
	// key whose rows come again after another key's fails the run.
	Grouped bool `yaml:"grouped"`
	// Digits rounds a numeric result to this many decimals, the way
	// Python's round does: 0 or more. Left out, or -1: no rounding (so
	// a mean of tenths may print as -0.14999999999999997).
	Digits *int `yaml:"digits"`
	// When restricts the derivation to some rows; it is null elsewhere,
	// or, with replace, the column keeps its value there (which needs the
	// derivation to make the column's type).
	When *When `yaml:"when"`

	// keys are the keys the item names in the file (Load sets them).
	keys []string
}

// Keys returns the keys the derivation's item names in the config file,
// in file order (a merged map's included), so that a key set to its
// zero (min: 0) is told from one left out; nil for a Derivation that
// was not loaded from a file.
func (d Derivation) Keys() []string { return d.keys }

// DatasetIDs returns the dataset ids in file order.
func (c *Config) DatasetIDs() []string { return c.order }

// File returns the file name the config was loaded from.
func (c *Config) File() string { return c.file }

// InputIDs returns the input ids in file order.
func (d *Dataset) InputIDs() []string { return d.inputOrder }

// TableNames returns the table names in file order.
func (d *Dataset) TableNames() []string { return d.tableOrder }
