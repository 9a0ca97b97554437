// Command gendoc writes the pipeline.yaml reference into README.md,
// between the markers
//
//	<!-- config-reference:start -->
//	<!-- config-reference:end -->
//
// from the code itself: the yaml keys and Go types of the config structs
// (reflection), their doc comments (parsed from config/*.go) and the
// defaults Load applies (by loading a minimal pipeline.yaml). Run it from
// the repository root after changing a config struct:
//
//	go run ./config/gendoc
//
// `go test ./config/gendoc` fails when README.md is out of date; `go test
// ./config/gendoc -update` rewrites it.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/agora-etl/agora/config"
)

// The markers around the generated section of README.md.
const (
	StartMarker = "<!-- config-reference:start -->"
	EndMarker   = "<!-- config-reference:end -->"
)

func main() {
	readme := flag.String("readme", "README.md", "the README to update")
	src := flag.String("src", "config", "the folder holding the config package's Go files")
	flag.Parse()
	if err := updateFile(*readme, *src); err != nil {
		fmt.Fprintln(os.Stderr, "gendoc:", err)
		os.Exit(1)
	}
}

// update rewrites the generated section of readme.
func updateFile(readme, src string) error {
	doc, err := Generate(src)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	out, err := Replace(b, doc)
	if err != nil {
		return fmt.Errorf("%s: %w", readme, err)
	}
	return os.WriteFile(readme, out, 0o644)
}

// Section returns the text between the markers of a README.
func Section(readme []byte) (string, error) {
	_, rest, ok := bytes.Cut(readme, []byte(StartMarker))
	if !ok {
		return "", errors.New("no " + StartMarker + " marker")
	}
	sec, _, ok := bytes.Cut(rest, []byte(EndMarker))
	if !ok {
		return "", errors.New("no " + EndMarker + " marker")
	}
	return string(sec), nil
}

// Replace puts doc between the markers of readme.
func Replace(readme []byte, doc string) ([]byte, error) {
	head, rest, ok := bytes.Cut(readme, []byte(StartMarker))
	if !ok {
		return nil, errors.New("no " + StartMarker + " marker")
	}
	_, tail, ok := bytes.Cut(rest, []byte(EndMarker))
	if !ok {
		return nil, errors.New("no " + EndMarker + " marker")
	}
	var b bytes.Buffer
	b.Write(head)
	b.WriteString(StartMarker + "\n")
	b.WriteString(doc)
	b.WriteString(EndMarker)
	b.Write(tail)
	return b.Bytes(), nil
}

// docs maps "Type" and "Type.Field" to their doc comments.
func docs(src string) (map[string]string, error) {
	fset := token.NewFileSet()
	out := map[string]string{}
	files, err := filepath.Glob(filepath.Join(src, "*.go"))
	if err != nil {
		return nil, err
	}
	for _, p := range files {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				doc := ts.Doc
				if doc == nil {
					doc = gd.Doc
				}
				out[ts.Name.Name] = oneLine(doc.Text())
				for _, fld := range st.Fields.List {
					for _, n := range fld.Names {
						out[ts.Name.Name+"."+n.Name] = oneLine(fld.Doc.Text())
					}
				}
			}
		}
	}
	return out, nil
}

func oneLine(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

// minimal is the smallest valid pipeline.yaml; loading it applies every
// default.
const minimal = `version: 1
datasets:
  d:
    inputs:
      a: {path: a, format: jsonl, columns: [{name: x, type: string}]}
    tables:
      t: {input: a}
`

// defaults are the values Load fills in, by type and yaml key.
func defaults() (map[string]string, error) {
	cfg, err := config.Load("minimal.yaml", []byte(minimal))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	add := func(typ string, v reflect.Value, skip ...string) {
		t := v.Type()
		for i := range t.NumField() {
			key := yamlKey(t.Field(i))
			if key == "" || slices.Contains(skip, key) || !t.Field(i).IsExported() {
				continue
			}
			if s := scalar(v.Field(i)); s != "" {
				out[typ+"."+key] = s
			}
		}
	}
	add("Config", reflect.ValueOf(*cfg), "version")
	add("Writer", reflect.ValueOf(cfg.Writer))
	add("Input", reflect.ValueOf(*cfg.Datasets["d"].Inputs["a"]), "path", "format")
	// The compression default depends on the path.
	out["Input.compression"] = "auto (gzip when the path ends in .gz)"
	// Defaults that Load leaves unset and the stages apply.
	out["Config.workers"] = "0 (one per CPU)"
	out["Input.extra_columns"] = "ignore"
	out["Unpivot.into"] = "the var's name"
	out["Rule.on_fail"] = "reject"
	return out, nil
}

func scalar(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Int, reflect.Int64:
		if v.Int() != 0 {
			return fmt.Sprint(v.Int())
		}
	case reflect.Float64:
		if v.Float() != 0 {
			return fmt.Sprint(v.Float())
		}
	}
	return ""
}

func yamlKey(f reflect.StructField) string {
	tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
	if tag == "-" {
		return ""
	}
	return tag
}

// typeName describes a field's type in pipeline.yaml's terms.
func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.Struct:
		return fmt.Sprintf("[%s](#%s)", t.Name(), anchor(t.Name()))
	case reflect.Slice:
		return "list of " + typeName(t.Elem())
	case reflect.Map:
		return "map of name → " + typeName(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "bool"
	}
	return t.String()
}

func anchor(name string) string { return "config-" + strings.ToLower(name) }

// Generate renders the reference: one table per config struct, in the
// order they are reached from the top level, each with the yaml path
// where it first appears.
func Generate(src string) (string, error) {
	doc, err := docs(src)
	if err != nil {
		return "", err
	}
	def, err := defaults()
	if err != nil {
		return "", err
	}
	type item struct {
		t    reflect.Type
		path string
	}
	seen := map[string]bool{}
	queue := []item{{reflect.TypeOf(config.Config{}), ""}}
	var b strings.Builder
	b.WriteString("\n<!-- Generated by `go run ./config/gendoc` from the structs, doc comments and defaults in config/; do not edit by hand. -->\n")
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		name := it.t.Name()
		if seen[name] {
			continue
		}
		seen[name] = true
		where := "the top level of pipeline.yaml"
		if it.path != "" {
			where = "`" + it.path + "`"
		}
		fmt.Fprintf(&b, "\n#### <a id=\"%s\"></a>%s — %s\n\n", anchor(name), name, where)
		if d := doc[name]; d != "" {
			fmt.Fprintf(&b, "%s\n\n", d)
		}
		b.WriteString("| key | type | default | meaning |\n|---|---|---|---|\n")
		for i := range it.t.NumField() {
			f := it.t.Field(i)
			key := yamlKey(f)
			if key == "" || !f.IsExported() {
				continue
			}
			dv := def[name+"."+key]
			if dv != "" {
				dv = "`" + dv + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", key, typeName(f.Type), dv, doc[name+"."+f.Name])
			// Queue the structs this field holds.
			et, sub := f.Type, key
			for et.Kind() == reflect.Pointer || et.Kind() == reflect.Slice || et.Kind() == reflect.Map {
				switch et.Kind() {
				case reflect.Slice:
					sub += "[]"
				case reflect.Map:
					sub += ".<" + strings.TrimSuffix(singular(key), "s") + ">"
				}
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				p := sub
				if it.path != "" {
					p = it.path + "." + sub
				}
				queue = append(queue, item{et, p})
			}
		}
	}
	b.WriteString("\n")
	return b.String(), nil
}

// singular names a map's key after the map: datasets → dataset id.
func singular(key string) string {
	switch key {
	case "datasets":
		return "id"
	case "inputs":
		return "input"
	case "tables":
		return "table"
	case "vars":
		return "name"
	}
	return "key"
}
