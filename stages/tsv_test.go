package stages

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/gzip"

	"github.com/agora-etl/agora/pipeline"
)

func decodeTSV(t *testing.T, s *TSVFolder) ([]string, []pipeline.Reject, error) {
	t.Helper()
	var rows []string
	var rejects []pipeline.Reject
	err := s.Chunks(t.Context(), func(c pipeline.Chunk) error {
		rej := &pipeline.Rejects{File: c.File}
		b, err := s.Decode(context.Background(), c, rej)
		if err != nil {
			return err
		}
		defer b.Release()
		for i := 0; i < int(b.NumRows()); i++ {
			rows = append(rows, strings.TrimPrefix(pipeline.FileOf(b, i), "chats/")+":"+itoa(pipeline.LineOf(b, i))+" "+pipeline.RowJSON(b, i))
		}
		rejects = append(rejects, rej.List()...)
		return nil
	})
	return rows, rejects, err
}

func TestTSVFolder(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	files := map[string]string{
		"b-group": "id\ttext\tscore\tignored\n1\tsays \"hi\" there\t0.5\tx\n2\t'isn''t'\t\tx\n",
		"a-group": "text\tid\tscore\r\nfirst\t7\t1.0\r\ntoo\tfew\r\nbad score\t8\tNaNx\r\n",
		// Files read one after another with the same header share its
		// layout; a file with another header gets its own.
		"c-group":     "id\ttext\tscore\tignored\n3\tc\t2\tx\n",
		"d-group":     "score\ttext\tid\n4\td\t5\n",
		"__init__.py": "",
		"empty":       "",
		".hidden":     "id\ttext\tscore\n9\tno\t1\n",
		"notes.md":    "# not data\n",
	}
	for n, c := range files {
		os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644)
	}
	s := &TSVFolder{Path: dir, Name: "chats", FileColumn: "file", Skip: []string{"*.py", "*.md"}, Mem: mem, BatchRows: 2,
		Columns: []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "text", Type: arrow.BinaryTypes.String}, {Name: "score", Type: arrow.PrimitiveTypes.Float64}}}
	rows, rejects, err := decodeTSV(t, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`a-group:2 {"file":"a-group","id":"7","score":1,"text":"first"}`,
		`b-group:2 {"file":"b-group","id":"1","score":0.5,"text":"says \"hi\" there"}`,
		`b-group:3 {"file":"b-group","id":"2","score":null,"text":"'isn''t'"}`,
		`c-group:2 {"file":"c-group","id":"3","score":2,"text":"c"}`,
		`d-group:2 {"file":"d-group","id":"5","score":4,"text":"d"}`,
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	var got []string
	for _, r := range rejects {
		got = append(got, r.File+":"+itoa(r.Line)+":"+r.Rule)
	}
	if strings.Join(got, " ") != "chats/a-group:3:fields chats/a-group:4:type" {
		t.Errorf("rejects %v", got)
	}
	notes := strings.Join(s.Notes(), "; ")
	for _, n := range []string{"__init__.py", "empty", ".hidden", "notes.md", "chats: header columns no declared column reads, passed over: ignored (first in chats/b-group)"} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes lack %s: %s", n, notes)
		}
	}
	// The folder as listed, in name order but for hidden files: the files
	// converted summed as they were read, the empty one summed without
	// reading, the ones matching Skip left unsummed.
	var sums []string
	for _, f := range s.FileSums() {
		switch {
		case !f.Summed:
			sums = append(sums, f.Name+"(unread)")
		case f.SHA256 != sha256.Sum256([]byte(files[f.Name])) || f.Bytes != int64(len(files[f.Name])):
			t.Errorf("%s: sum %x, %d bytes; want the sum of its %d bytes", f.Name, f.SHA256, f.Bytes, len(files[f.Name]))
			fallthrough
		default:
			sums = append(sums, f.Name)
		}
	}
	if got, want := strings.Join(sums, " "), "__init__.py(unread) a-group b-group c-group d-group empty notes.md(unread)"; got != want {
		t.Errorf("listed %s, want %s", got, want)
	}
}

// TestTSVFileSums checks that a single-file input lists no file sums (its
// run hashes it whole), and that a folder's sums are those of its last
// read, not added to an earlier read's.
func TestTSVFileSums(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "g1"), []byte("id\n1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "g2"), []byte("id\n2\n"), 0o644)
	cols := []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}}
	one := &TSVFolder{Path: filepath.Join(dir, "g1"), Name: "g1", Mem: mem, BatchRows: 10, Columns: cols}
	if _, _, err := decodeTSV(t, one); err != nil {
		t.Fatal(err)
	}
	if got := one.FileSums(); len(got) != 0 {
		t.Errorf("a single file lists sums: %+v", got)
	}
	folder := &TSVFolder{Path: dir, Name: "chats", Mem: mem, BatchRows: 10, Columns: cols}
	for range 2 {
		if _, _, err := decodeTSV(t, folder); err != nil {
			t.Fatal(err)
		}
	}
	if got := folder.FileSums(); len(got) != 2 || got[0].Name != "g1" || got[1].Name != "g2" || got[1].SHA256 != sha256.Sum256([]byte("id\n2\n")) || !got[1].Summed {
		t.Errorf("sums after two reads: %+v", got)
	}
	// A folder given by a bare name that holds a file of the same name is
	// still read as a folder.
	t.Chdir(dir)
	os.Mkdir("g", 0o755)
	os.WriteFile(filepath.Join("g", "g"), []byte("id\n3\n"), 0o644)
	same := &TSVFolder{Path: "g", Name: "chats", Mem: mem, BatchRows: 10, Columns: cols}
	rows, _, err := decodeTSV(t, same)
	if err != nil || len(rows) != 1 || len(same.FileSums()) != 1 {
		t.Errorf("folder g holding g: rows %v, sums %+v, err %v", rows, same.FileSums(), err)
	}
}

func TestTSVFolderErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "g"), []byte("id\tother\n1\t2\n"), 0o644)
	s := &TSVFolder{Path: dir, Name: "chats", Columns: []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "text", Type: arrow.BinaryTypes.String}}}
	if _, _, err := decodeTSV(t, s); err == nil || !strings.Contains(err.Error(), "chats/g:1: bad header: no column text") {
		t.Errorf("err = %v", err)
	}
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "__init__.py"), nil, 0o644)
	s = &TSVFolder{Path: empty, Name: "chats", Skip: []string{"*.py"}, Columns: []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}}}
	if _, _, err := decodeTSV(t, s); err == nil || !strings.Contains(err.Error(), "no data files") {
		t.Errorf("err = %v", err)
	}
	dup := t.TempDir()
	os.WriteFile(filepath.Join(dup, "g"), []byte("id\ttext\tid\n1\tx\t2\n"), 0o644)
	s = &TSVFolder{Path: dup, Name: "chats", Columns: []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}}}
	if _, _, err := decodeTSV(t, s); err == nil || !strings.Contains(err.Error(), "chats/g:1: bad header: column id comes twice") {
		t.Errorf("a header naming a column twice: err = %v", err)
	}
	odd := t.TempDir()
	os.WriteFile(filepath.Join(odd, "g\xff1"), []byte("id\n1\n"), 0o644)
	s = &TSVFolder{Path: odd, Name: "chats", Columns: []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}}}
	if _, _, err := decodeTSV(t, s); err == nil || !strings.Contains(err.Error(), `chats/g\xff1: the file name is not valid UTF-8`) {
		t.Errorf("a file name that is not UTF-8: err = %v", err)
	}
	// One that is not read (hidden, skipped, empty) does not matter.
	passed := t.TempDir()
	os.WriteFile(filepath.Join(passed, "g1"), []byte("id\n1\n"), 0o644)
	os.WriteFile(filepath.Join(passed, ".h\xff"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(passed, "n\xff.md"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(passed, "e\xff"), nil, 0o644)
	s = &TSVFolder{Path: passed, Name: "chats", Skip: []string{"*.md"}, Columns: []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}}}
	if rows, _, err := decodeTSV(t, s); err != nil || len(rows) != 1 {
		t.Errorf("names not UTF-8 of files passed over: rows %v, err %v", rows, err)
	}
}

// TestTSVHeaderErrorExcerpt: a header that is not one (a data file of
// one long line, a file whose lines end in CR alone) is quoted in the
// error in a short excerpt, with a hint at CR line endings, where the
// error held the whole line (20 MB of stderr for a 20 MB line).
func TestTSVHeaderErrorExcerpt(t *testing.T) {
	cols := []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "text", Type: arrow.BinaryTypes.String}}
	tests := []struct {
		name    string
		data    string
		want    []string
		notWant []string
	}{
		{"one long line", strings.Repeat("x", 1<<20), []string{`header has 1 fields: "` + strings.Repeat("x", 60) + `…"`}, []string{strings.Repeat("x", 61), "carriage"}},
		{"many fields", strings.Repeat("f\t", 99) + "f\n1\n", []string{"header has 100 fields:", "… 80 more"}, nil},
		{"lines ending in CR", "id\ttext\r1\tx\r2\ty\r", []string{"no column text", "carriage returns"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "g"), []byte(tc.data), 0o644)
			_, _, err := decodeTSV(t, &TSVFolder{Path: dir, Name: "chats", Columns: cols})
			if err == nil || !strings.Contains(err.Error(), "chats/g:1: bad header") {
				t.Fatalf("err = %v", err)
			}
			if len(err.Error()) > 2000 {
				t.Errorf("error of %d bytes", len(err.Error()))
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %.200q says %.80q", err, w)
				}
			}
		})
	}
}

// TestTSVNumbers: floats as Python and spreadsheets write them (inf,
// nan and Infinity included) are read; Go's own syntax (1_000, hex
// floats) is not a number in a data file.
func TestTSVNumbers(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "g"), []byte("id\tf\na\t1e-05\nb\t-inf\nc\tnan\nd\tInfinity\ne\t1_000\nf\t0x1p4\ng\t.5\n"), 0o644)
	s := &TSVFolder{Path: dir, Name: "chats", Mem: mem, Columns: []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "f", Type: arrow.PrimitiveTypes.Float64}}}
	rows, rejects, err := decodeTSV(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Errorf("rows %q", rows)
	}
	var got []string
	for _, r := range rejects {
		got = append(got, itoa(r.Line)+":"+r.Rule)
	}
	if strings.Join(got, " ") != "6:type 7:type" {
		t.Errorf("rejects %v, want lines 6 and 7 (1_000 and 0x1p4)", got)
	}
}

// TestTSVTimestamps: a TSV column declared timestamp takes RFC 3339 cells
// with their zone, as JSON lines do, into microseconds UTC (an empty cell
// is null); a cell without a zone or outside the years 1 to 9999 rejects
// its row. TSV columns could not be timestamps before, and no derive
// parsed one.
func TestTSVTimestamps(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "g"), []byte("id\tts\na\t2024-01-02T03:04:05.5+01:00\nb\t\nc\t2024-01-02 03:04:05\nd\t2024-01-02T03:04:05.123456789Z\ne\t0000-01-01T00:00:00Z\n"), 0o644)
	s := &TSVFolder{Path: dir, Name: "chats", Mem: mem, Columns: []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}}}}
	rows, rejects, err := decodeTSV(t, s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"a","ts":"2024-01-02T02:04:05.5Z"} {"id":"b","ts":null} {"id":"d","ts":"2024-01-02T03:04:05.123456Z"}`
	if got := strings.Join(rows, " "); !strings.Contains(got, `"id":"a"`) || len(rows) != 3 {
		t.Errorf("rows %q", rows)
	} else {
		for _, w := range strings.Split(want, " ") {
			if !strings.Contains(got, w) {
				t.Errorf("rows %q lack %s", got, w)
			}
		}
	}
	var got []string
	for _, r := range rejects {
		got = append(got, itoa(r.Line)+":"+r.Rule)
		if !strings.Contains(r.Reason, "not an RFC 3339 timestamp") {
			t.Errorf("reason %q", r.Reason)
		}
	}
	if strings.Join(got, " ") != "4:type 6:type" {
		t.Errorf("rejects %v, want lines 4 (no zone) and 6 (year 0)", got)
	}
}

// TestTSVFolderPassesFIFO: a FIFO in the folder is passed over with a
// note, not opened (an open would wait for a writer forever).
func TestTSVFolderPassesFIFO(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "g1"), []byte("id\n1\n"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "g2"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	s := &TSVFolder{Path: dir, Name: "chats", Columns: []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}}}
	rows, _, err := decodeTSV(t, s)
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %v, err %v", rows, err)
	}
	_, skipped, _, _, err := s.list()
	if err != nil || len(skipped) != 1 || skipped[0] != "g2 (not a regular file)" {
		t.Errorf("skipped %q, err %v", skipped, err)
	}
}

func TestSQLUnquote(t *testing.T) {
	for in, want := range map[string]string{
		`'that the rule isn''t true'`: `that the rule isn't true`,
		`'''hello'''`:                 `'hello'`,
		`plain`:                       `plain`,
		`'unbalanced`:                 `'unbalanced`,
		`'a'b'`:                       `'a'b'`, // a lone quote inside: not SQL quoting
		`''`:                          ``,
		`'`:                           `'`,
		`'’ and “quotes”'`:            `’ and “quotes”`,
	} {
		if got := SQLUnquote(in); got != want {
			t.Errorf("SQLUnquote(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSQLUnquote(f *testing.F) {
	for _, s := range []string{"'isn''t'", "x", "''", "'''", "'a'b'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u := SQLUnquote(s)
		if u == s {
			return
		}
		// Quoting the result again gives the input back.
		if again := "'" + strings.ReplaceAll(u, "'", "''") + "'"; again != s {
			t.Fatalf("SQLUnquote(%q) = %q, which quotes back to %q", s, u, again)
		}
	})
}

func TestPyRoundAndWason(t *testing.T) {
	for _, tt := range []struct {
		x    float64
		want float64
	}{{0.5625, 0.562}, {0.6875, 0.688}, {0.0625, 0.062}, {2.6755, 2.675}, {0.1 + 0.2, 0.3}, {0.8125, 0.812}, {1, 1}} {
		if got := pyRound(tt.x, 3); got != tt.want {
			t.Errorf("pyRound(%v) = %v, want %v (Python's round)", tt.x, got, tt.want)
		}
	}
	if got := strings.Join(WasonCorrect([]string{"A", "2", "7", "K", "E", "4", "9"}), ","); got != "A,7,E,9" {
		t.Errorf("WasonCorrect = %s", got)
	}
	cards := []string{"U", "3", "2", "H"}
	for _, tt := range []struct {
		sel  []string
		want float64
	}{{[]string{"U", "3"}, 1}, {nil, 0.5}, {[]string{"2", "H"}, 0}, {[]string{"U"}, 0.75}, {[]string{"N", "/", "A"}, 0.5}} {
		if got := WasonScore(cards, tt.sel); got != tt.want {
			t.Errorf("WasonScore(%v) = %v, want %v", tt.sel, got, tt.want)
		}
	}
}

// TestTSVFolderBatchBytes checks that a batch of long lines ends at
// BatchBytes of input before BatchRows, within a file and across the
// small files packed together, with every row kept in order.
func TestTSVFolderBatchBytes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	long := strings.Repeat("x", 1000)
	var want []string
	for f, lines := range []int{10, 1, 1, 7} {
		var b strings.Builder
		b.WriteString("id\ttext\n")
		for i := range lines {
			id := itoa(int64(100*f + i))
			b.WriteString(id + "\t" + long + "\n")
			want = append(want, id)
		}
		os.WriteFile(filepath.Join(dir, string(rune('a'+f))), []byte(b.String()), 0o644)
	}
	const batchBytes = 4 << 10 // four lines and the one that crosses
	s := &TSVFolder{Path: dir, Name: "chats", Mem: mem, BatchRows: 1024, BatchBytes: batchBytes,
		Columns: []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "text", Type: arrow.BinaryTypes.String}}}
	var got []string
	var sizes []int
	err := s.Chunks(t.Context(), func(c pipeline.Chunk) error {
		sizes = append(sizes, c.Rows)
		if len(c.Data) > batchBytes+len(long)+16 {
			t.Errorf("a chunk of %d rows holds %d bytes, want about %d at most", c.Rows, len(c.Data), batchBytes)
		}
		b, err := s.Decode(t.Context(), c, &pipeline.Rejects{File: c.File})
		if err != nil {
			return err
		}
		defer b.Release()
		ids := b.Column(0).(*array.String)
		for i := 0; i < ids.Len(); i++ {
			got = append(got, ids.Value(i))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ids %v, want %v", got, want)
	}
	if len(sizes) < 4 {
		t.Errorf("19 lines of 1 KB came in %d chunks %v, want batches of about 4 KiB", len(sizes), sizes)
	}
}

// TestTSVByteOrderMark checks that a byte order mark before the header
// (as Windows editors and spreadsheets write) is not part of the first
// column's name, and that a file with one shares the layout of a file
// without.
func TestTSVByteOrderMark(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("\xef\xbb\xbfid\ttext\n1\tone\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b"), []byte("id\ttext\n2\ttwo\n"), 0o644)
	// A file that is only a byte order mark is empty, as one of no bytes
	// is: passed over with a note, not a bad header.
	os.WriteFile(filepath.Join(dir, "c"), []byte("\xef\xbb\xbf"), 0o644)
	s := &TSVFolder{Path: dir, Name: "chats", Mem: mem, Columns: []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "text", Type: arrow.BinaryTypes.String}}}
	rows, rejects, err := decodeTSV(t, s)
	if err != nil || len(rejects) != 0 {
		t.Fatalf("err %v, rejects %v", err, rejects)
	}
	want := []string{`a:2 {"id":"1","text":"one"}`, `b:2 {"id":"2","text":"two"}`}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	if notes := strings.Join(s.Notes(), "; "); !strings.Contains(notes, "passed over chats/c (empty but for a byte order mark") {
		t.Errorf("notes %q", notes)
	}
	// A blank first line before a header is a bad header, not an empty
	// file, however small the batches.
	blank := t.TempDir()
	os.WriteFile(filepath.Join(blank, "g"), []byte("\nid\ttext\n1\tx\n2\ty\n"), 0o644)
	s = &TSVFolder{Path: blank, Name: "chats", Mem: mem, BatchRows: 1, Columns: []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}, {Name: "text", Type: arrow.BinaryTypes.String}}}
	if rows, _, err := decodeTSV(t, s); err == nil || !strings.Contains(err.Error(), "chats/g:1: bad header") {
		t.Errorf("a blank line before the header: rows %v, err %v", rows, err)
	}
}

// TestTSVGzip: with compression auto, a folder's files whose names end in
// .gz are read through gzip and the others as they are; with gzip, every
// file; the sums are of the files as stored. A .tsv.gz read as text
// stopped with "bad header: not UTF-8".
func TestTSVGzip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("id\n1\n"))
	zw.Close()
	os.WriteFile(filepath.Join(dir, "g1.tsv.gz"), gz.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "g2.tsv"), []byte("id\n2\n"), 0o644)
	cols := []TSVColumn{{Name: "id", Type: arrow.BinaryTypes.String}}
	auto := &TSVFolder{Path: dir, Name: "chats", Mem: mem, BatchRows: 10, Columns: cols, GzipBySuffix: true}
	rows, _, err := decodeTSV(t, auto)
	if err != nil || strings.Join(rows, " ") != `g1.tsv.gz:2 {"id":"1"} g2.tsv:2 {"id":"2"}` {
		t.Errorf("auto: rows %v, err %v", rows, err)
	}
	if got := auto.FileSums(); len(got) != 2 || got[0].SHA256 != sha256.Sum256(gz.Bytes()) || got[0].Bytes != int64(gz.Len()) {
		t.Errorf("the sum of the .gz is not of its stored bytes: %+v", got)
	}
	all := &TSVFolder{Path: dir, Name: "chats", Mem: mem, BatchRows: 10, Columns: cols, Gzip: true}
	if _, _, err := decodeTSV(t, all); err == nil || !strings.Contains(err.Error(), "chats/g2.tsv") || !strings.Contains(err.Error(), "not a gzip file") {
		t.Errorf("gzip on a plain file: err = %v", err)
	}
}
