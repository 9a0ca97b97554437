// Package sinks writes tables as Hive-partitioned Parquet
// (table/col=value/part-00000.parquet) in the Spark-safe layout: 3-level
// lists, data page v1, zstd or snappy, signed types only, timestamps as
// microseconds UTC, created_by set explicitly, partition columns kept out
// of the files. Files are written under hidden temporary names, synced,
// and renamed into place when complete, so a reader globbing
// **/*.parquet never sees a partial file. Rows rejected by validation go
// to _rejects/<table>/ with the rule, the reason and where they came from.
//
// Release stages a whole dataset in a hidden folder beside its target
// and swaps it in when every table is written, with manifest.json.
//
// All pqarrow use is kept in this package.
package sinks
