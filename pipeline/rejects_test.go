package pipeline_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agora-etl/agora/pipeline"
)

func TestRejectsKeepValidText(t *testing.T) {
	long := strings.Repeat("a", pipeline.MaxRejectRowBytes-1) + "é" // é straddles the cut
	tests := []struct {
		name      string
		in        pipeline.Reject
		row, file string
	}{
		{"valid text is kept", pipeline.Reject{Row: `{"a": "é"}`, File: "in.jsonl"}, `{"a": "é"}`, "in.jsonl"},
		{"invalid bytes show as \\xNN", pipeline.Reject{Row: "{\"id\": \"r2\xff\xfe\"}", File: "g\xff1"}, `{"id": "r2\xff\xfe"}`, `g\xff1`},
		{"a cut row does not end inside a character", pipeline.Reject{Row: long}, strings.Repeat("a", pipeline.MaxRejectRowBytes-1), ""},
		// Escaped first, then cut: the cap holds (a row of 0x80 bytes grew
		// to four times it, or was cut to nothing).
		{"a row of bytes that are not UTF-8 is escaped, then cut", pipeline.Reject{Row: strings.Repeat("\x80", pipeline.MaxRejectRowBytes)}, strings.Repeat(`\x80`, pipeline.MaxRejectRowBytes/4), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r pipeline.Rejects
			r.Add(tt.in)
			got := r.List()[0]
			if got.Row != tt.row || got.File != tt.file {
				t.Errorf("row %q file %q, want %q and %q", got.Row, got.File, tt.row, tt.file)
			}
			for _, s := range []string{got.Rule, got.Column, got.Reason, got.File, got.Row} {
				if !utf8.ValidString(s) {
					t.Errorf("%q is not valid UTF-8", s)
				}
			}
		})
	}
}

func TestOneFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"none seen", nil, ""},
		{"one file", []string{"a", "a", "a"}, "a"},
		{"two files", []string{"a", "a", "b"}, ""},
		{"back to the first", []string{"a", "b", "a"}, ""},
		{"a batch naming none", []string{"a", ""}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o pipeline.OneFile
			for _, f := range tc.files {
				o.See(f)
			}
			if got := o.File(); got != tc.want {
				t.Errorf("File() = %q, want %q", got, tc.want)
			}
		})
	}
}
