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
	// keep a run under 300 MB resident where its live data allows: 256 MiB
	// is 268 MB, and the heap, the runtime's own memory and agora's pools
	// all count against it; the binary's own pages (about 30 MB) come on
	// top. Where the live data is near the limit or above it, the watcher
	// raises it within about a second, and memory then follows the live
	// data. It was 270 MiB until agora wrote its own Parquet pages
	// (internal/pqenc); with them the heap fills to the limit at Habermas
	// 10× rows and 1w10 and CrowdRAG-25 50× without a raise, and 270 MiB
	// peaked at 282-289 MiB, 296-303 MB. At 256 MiB, taking turns (3
	// runs each): Habermas 10× rows 271-274 MiB against 285-289 for 4%
	// more CPU, CrowdRAG-25 at 10× 261-266 against 269-279 at the same
	// CPU. 250 MiB gave 260-269 MiB for 8-11% more CPU at Habermas 10×
	// rows and 1w10. Before the 270 MiB it was 416 MiB.
	DefaultMemoryLimit = 256 << 20
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
