// Package writer holds benchmarks comparing two Go Parquet writers on the
// same ratings-shaped table: arrow-go's pqarrow (agora's writer, with
// agora's settings) and github.com/parquet-go/parquet-go. It has no
// non-test code; run it with
//
//	cd bench && go test -run=NONE -bench=. -benchmem ./writer
package writer
