// Package inputs names the generated input sets the bench commands run on
// ("crowdrag25:10,50;habermas:1w10") and writes them with agora-gen,
// once, under a work folder both commands share.
package inputs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Datasets are the datasets agora-gen generates.
var Datasets = []string{"crowdrag25", "delidata", "habermas"}

// Set is one dataset at one generator scale; Width, for habermas, is
// agora-gen's --text-width (written "1w10": scale 1, texts 10 times as
// long), which grows the file the way the release differs from the sample.
type Set struct {
	Dataset string
	Scale   string
	Width   string
}

// Label is the set's scale as written in a spec.
func (s Set) Label() string {
	if s.Width != "" {
		return s.Scale + "w" + s.Width
	}
	return s.Scale
}

// Parse reads "crowdrag25:10,50;delidata:10;habermas:1,1w10".
func Parse(spec string) ([]Set, error) {
	var out []Set
	for _, part := range strings.Split(spec, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		ds, scales, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("--sets: %q is not DATASET:SCALE[,SCALE...]", part)
		}
		ds = strings.TrimSpace(ds)
		if !slices.Contains(Datasets, ds) {
			return nil, fmt.Errorf("--sets: unknown dataset %q (want %s)", ds, strings.Join(Datasets, ", "))
		}
		for _, s := range strings.Split(scales, ",") {
			s = strings.TrimSpace(s)
			in := Set{Dataset: ds, Scale: s}
			rows, width, wide := strings.Cut(s, "w")
			if f, err := strconv.ParseFloat(rows, 64); err != nil || !(f > 0) {
				return nil, fmt.Errorf("--sets: %s: scale %q is not a positive number (or ROWSwWIDTH for habermas)", ds, s)
			}
			if wide {
				if ds != "habermas" {
					return nil, fmt.Errorf("--sets: %s: only habermas takes a text width (%q)", ds, s)
				}
				if k, err := strconv.Atoi(width); err != nil || k < 1 {
					return nil, fmt.Errorf("--sets: %s: text width %q is not a positive integer", ds, width)
				}
				in.Scale, in.Width = rows, width
			}
			out = append(out, in)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--sets: no input set")
	}
	return out, nil
}

// Generate writes the set with the agora-gen binary gen under WORK/data
// once (a .complete file marks it written) and returns the data root to
// pass to agora run --data. agora-gen's output goes to w.
func Generate(work, gen string, in Set, w io.Writer) (string, error) {
	root := filepath.Join(work, "data", in.Dataset+"-x"+in.Label())
	done := filepath.Join(root, ".complete")
	if _, err := os.Stat(done); err == nil {
		return root, nil
	}
	if err := os.RemoveAll(root); err != nil {
		return "", fmt.Errorf("clear %s: %w", root, err)
	}
	args := []string{in.Dataset, "--out", filepath.Join(root, in.Dataset), "--scale", in.Scale}
	if in.Width != "" {
		args = append(args, "--text-width", in.Width)
	}
	cmd := exec.Command(gen, args...)
	cmd.Stdout = w
	cmd.Stderr = w
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("agora-gen %s: %w", strings.Join(args, " "), err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		return "", fmt.Errorf("mark inputs complete: %w", err)
	}
	return root, nil
}
