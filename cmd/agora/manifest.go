package main

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/agora-etl/agora/sinks"
)

// writeManifest writes m to w exactly as sinks.EncodeJSON would, without
// holding the whole text: a folder input's file list (25,000 entries at
// DeliData 50×, 4.8 MB of JSON) is written one entry at a time.
// encoding/json builds a value's whole text, and its indented copy,
// before writing either, which at the end of a run with many files made
// the largest transient of the run.
//
// The rest of the manifest is encoded once with each file list standing
// in as one entry whose name is a random token; the entry's text is then
// found in that skeleton and the list written in its place, each entry
// encoded alone at the skeleton's indentation.
func writeManifest(w io.Writer, m Manifest) error {
	var nonce [8]byte
	rand.Read(nonce[:])
	type list struct {
		stand []byte // the stand-in entry's text in the skeleton
		files []FileDigest
	}
	var lists []list
	inputs := slices.Clone(m.Inputs) // the caller's own stays as it is (nil too)
	for i := range inputs {
		if len(inputs[i].Files) == 0 {
			continue
		}
		name := fmt.Sprintf("agora-file-list-%x-%d", nonce, i)
		lists = append(lists, list{stand: []byte(name), files: inputs[i].Files})
		inputs[i].Files = []FileDigest{{Name: name}}
	}
	m.Inputs = inputs
	var skel bytes.Buffer
	if err := sinks.EncodeJSON(&skel, m); err != nil {
		return err
	}
	rest := skel.Bytes()
	var entry bytes.Buffer
	for _, l := range lists {
		// The stand-in entry: its opening brace starts a line, after the
		// indentation its entries are written at.
		at := bytes.Index(rest, l.stand)
		open := bytes.LastIndexByte(rest[:max(at, 0)], '{')
		nl := bytes.LastIndexByte(rest[:max(open, 0)], '\n')
		if at < 0 || open < 0 || nl < 0 {
			return errors.New("manifest: a file list's place not found")
		}
		indent := string(rest[nl+1 : open])
		entry.Reset()
		if err := encodeIndented(&entry, FileDigest{Name: string(l.stand)}, indent); err != nil {
			return err
		}
		if !bytes.HasPrefix(rest[open:], entry.Bytes()) {
			return errors.New("manifest: a file list's place not as encoded")
		}
		if _, err := w.Write(rest[:open]); err != nil {
			return err
		}
		rest = rest[open+entry.Len():]
		for k, f := range l.files {
			entry.Reset()
			if k > 0 {
				entry.WriteString(",\n" + indent)
			}
			if err := encodeIndented(&entry, f, indent); err != nil {
				return err
			}
			if _, err := w.Write(entry.Bytes()); err != nil {
				return err
			}
		}
	}
	_, err := w.Write(rest)
	return err
}

// encodeIndented appends v's JSON to b as it appears nested at indent in
// an EncodeJSON text: its first line as is, the others after indent; no
// newline at the end.
func encodeIndented(b *bytes.Buffer, v any, indent string) error {
	n := b.Len()
	if err := sinks.EncodeJSON(b, v); err != nil {
		return err
	}
	if b.Len() > n && b.Bytes()[b.Len()-1] == '\n' {
		b.Truncate(b.Len() - 1)
	}
	// EncodeJSON indents from the start of the line; nest it.
	if indent != "" {
		nested := bytes.ReplaceAll(b.Bytes()[n:], []byte("\n"), []byte("\n"+indent))
		b.Truncate(n)
		b.Write(nested)
	}
	return nil
}

// sameFile reports whether the files at a and b hold the same bytes,
// reading both a piece at a time; a file that cannot be read is not the
// same.
func sameFile(a, b string) bool {
	fa, err := os.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		aEnd := ea == io.EOF || ea == io.ErrUnexpectedEOF
		bEnd := eb == io.EOF || eb == io.ErrUnexpectedEOF
		if aEnd || bEnd {
			return aEnd && bEnd
		}
		if ea != nil || eb != nil {
			return false
		}
	}
}
