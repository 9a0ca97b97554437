package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"go.yaml.in/yaml/v3"
)

// sqlTables lists the tables a bench/sql script writes, in order.
func sqlTables(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read SQL: %w", err)
	}
	var out []string
	for _, m := range tableMarker.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out, nil
}

// subsetConfig writes a copy of pipeline.yaml to dst in which dataset ds
// keeps only the given tables, and returns the dataset's full table list.
// Anchors and aliases are kept as they are; a kept table that aliases a
// removed one would fail to load, which pipeline.yaml does not do today.
func subsetConfig(src, dst, ds string, keep []string) ([]string, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	tables := mapValue(mapValue(mapValue(docRoot(&doc), "datasets"), ds), "tables")
	if tables == nil || tables.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: no datasets.%s.tables mapping", src, ds)
	}
	want := map[string]bool{}
	for _, t := range keep {
		want[t] = true
	}
	var all []string
	var kept []*yaml.Node
	for i := 0; i+1 < len(tables.Content); i += 2 {
		name := tables.Content[i].Value
		all = append(all, name)
		if want[name] {
			kept = append(kept, tables.Content[i], tables.Content[i+1])
			delete(want, name)
		}
	}
	if len(want) > 0 {
		var missing []string
		for t := range want {
			missing = append(missing, t)
		}
		sort.Strings(missing)
		return nil, fmt.Errorf("%s: dataset %s has no table %v", src, ds, missing)
	}
	tables.Content = kept
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, fmt.Errorf("config folder: %w", err)
	}
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		return nil, fmt.Errorf("write config: %w", err)
	}
	return all, nil
}

func docRoot(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return doc.Content[0]
	}
	return doc
}

// mapValue is the value of key in a mapping node, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
