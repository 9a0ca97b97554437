package config

import "strings"

// Defaults applied to fields left unset (zero) in pipeline.yaml.
const (
	// DefaultData is the data root: the shipped samples.
	DefaultData = "testdata"
	// DefaultOut is the output root.
	DefaultOut = "out"
	// DefaultBatchRows keeps batches small enough that several in flight
	// stay well under 100 MB even for ~40 KB rows.
	DefaultBatchRows = 1024
	// DefaultBatchBytes is where a batch of long rows ends before
	// BatchRows. 1 MiB took CrowdRAG-25's peak RSS at 10× from 490 to
	// 395 MB at the same CPU (2 MiB before; 512 KiB saved more memory but
	// cost 6% more CPU in per-batch work).
	DefaultBatchBytes = 1 << 20
	// DefaultChannelDepth is the capacity of each inter-stage channel.
	DefaultChannelDepth = 2
	// DefaultMemoryLimit is the Go runtime's soft memory limit, chosen to
	// keep a run under 300 MB resident where its live data allows: 270 MiB
	// is 283 MB, and the heap, the runtime's own memory and agora's pools
	// all count against it. Where the live data is near the limit or above
	// it (Habermas at 10× rows or with ten-times-longer texts, 190–250 MB
	// live with the bench's four tables, up to 340 MB with all five), the
	// watcher raises it within about a second, and memory then follows the
	// live data. Against the 416 MiB it replaced, taking turns: CrowdRAG-25
	// at 10× 283 against 356 MB for 0–2% more CPU (three series), at 50×
	// 283 against 426 MB for 9% more (page faults, as the scavenger hands
	// back pages the next batches fault in again), Habermas at 1× 278
	// against 367 MB for 0–4%, at 10× rows about the same memory and CPU.
	DefaultMemoryLimit = 270 << 20
	// DefaultMaxLineBytes accepts lines far longer than any real one
	// (CrowdRAG-25 responses reach 43 KB).
	DefaultMaxLineBytes = 256 << 20
	// DefaultMaxBytes caps the decompressed size of one input (64 GiB),
	// which stops a gzip bomb without limiting real files.
	DefaultMaxBytes = 64 << 30
)

// DefaultWriter is the writer used where pipeline.yaml says nothing:
// zstd level 1 (the writer's CPU is mostly zstd; level 1 costs 20% less
// for 5-10% more bytes), row groups of 64 Ki rows or 16 MiB of Arrow data
// (each open partition buffers one), at most 16 MiB buffered over a table's
// partitions, files of at most 1 Mi rows or 512 MB.
//
// The 16 MiB buffer is a measured choice: a dataset writes its tables at
// once (six for CrowdRAG-25), and 48 MiB each kept 150 MB of row groups
// live, which pushed the heap to the memory limit and made the collector
// work; 16 MiB took peak RSS at 50× from 664 to 536 MB (flat with 10×)
// and 8-13% off the CPU there, for row groups a third to half the size on
// tables with many partitions.
var DefaultWriter = Writer{
	Compression:      "zstd",
	Encoder:          "agora",
	CompressionLevel: 1,
	RowGroupRows:     64 << 10,
	RowGroupBytes:    16 << 20,
	DataPageBytes:    1 << 20,
	BufferBytes:      16 << 20,
	FileRows:         1 << 20,
	FileBytes:        512 << 20,
	FileRowGroups:    64,
	MaxPartitions:    256,
}

func (c *Config) applyDefaults() {
	if c.Data == "" {
		c.Data = DefaultData
	}
	if c.Out == "" {
		c.Out = DefaultOut
	}
	if c.BatchRows == 0 {
		c.BatchRows = DefaultBatchRows
	}
	if c.BatchBytes == 0 {
		c.BatchBytes = DefaultBatchBytes
	}
	if c.ChannelDepth == 0 {
		c.ChannelDepth = DefaultChannelDepth
	}
	if c.MemoryLimit == 0 {
		c.MemoryLimit = DefaultMemoryLimit
	}
	c.Writer = mergeWriter(DefaultWriter, c.Writer)
	for _, d := range c.Datasets {
		if d == nil {
			continue
		}
		for _, in := range d.Inputs {
			if in == nil {
				continue
			}
			if in.Compression == "" {
				in.Compression = "auto"
			}
			if in.Compression == "auto" {
				in.autoGzip = true
				in.Compression = "none"
				if strings.HasSuffix(in.Path, ".gz") {
					in.Compression = "gzip"
				}
			}
			if in.MaxLineBytes == 0 {
				in.MaxLineBytes = DefaultMaxLineBytes
			}
			if in.MaxBytes == 0 {
				in.MaxBytes = DefaultMaxBytes
			}
			if in.OnBadLine == "" {
				in.OnBadLine = "fail"
			}
			if in.UnknownKeys == "" {
				in.UnknownKeys = "ignore"
			}
		}
	}
}

// mergeWriter returns base with every non-zero field of over applied.
func mergeWriter(base, over Writer) Writer {
	if over.Compression != "" {
		base.Compression = over.Compression
	}
	if over.Encoder != "" {
		base.Encoder = over.Encoder
	}
	if over.CompressionLevel != 0 {
		base.CompressionLevel = over.CompressionLevel
	}
	if over.RowGroupRows != 0 {
		base.RowGroupRows = over.RowGroupRows
	}
	if over.RowGroupBytes != 0 {
		base.RowGroupBytes = over.RowGroupBytes
	}
	if over.BufferBytes != 0 {
		base.BufferBytes = over.BufferBytes
	}
	if over.DataPageBytes != 0 {
		base.DataPageBytes = over.DataPageBytes
	}
	if over.FileRows != 0 {
		base.FileRows = over.FileRows
	}
	if over.FileBytes != 0 {
		base.FileBytes = over.FileBytes
	}
	if over.FileRowGroups != 0 {
		base.FileRowGroups = over.FileRowGroups
	}
	if over.MaxPartitions != 0 {
		base.MaxPartitions = over.MaxPartitions
	}
	if over.Dictionary != nil {
		base.Dictionary = append(append([]string(nil), base.Dictionary...), over.Dictionary...)
	}
	if over.NoStatistics != nil {
		base.NoStatistics = append(append([]string(nil), base.NoStatistics...), over.NoStatistics...)
	}
	if over.SharedPages != nil {
		base.SharedPages = append(append([]string(nil), base.SharedPages...), over.SharedPages...)
	}
	return base
}

// WriterFor returns the effective writer settings of a table: the
// config's writer with the table's overrides applied.
func (c *Config) WriterFor(t *Table) Writer {
	if t.Writer == nil {
		return c.Writer
	}
	return mergeWriter(c.Writer, *t.Writer)
}
