package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/sinks"
)

// configHash fingerprints what shapes one dataset's output bytes: the
// dataset's declaration, the writer settings and the batch sizes.
func configHash(cfg *config.Config, id string) string {
	b, _ := json.Marshal(struct {
		Dataset    *config.Dataset
		Writer     config.Writer
		BatchRows  int
		BatchBytes int
	}{cfg.Datasets[id], cfg.Writer, cfg.BatchRows, cfg.BatchBytes})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// frictionlessType maps agora's type grammar to Table Schema types.
func frictionlessType(t string) string {
	switch {
	case t == "string":
		return "string"
	case t == "int64" || t == "int32":
		return "integer"
	case t == "float64" || t == "float32" || strings.HasPrefix(t, "decimal"):
		return "number"
	case t == "bool":
		return "boolean"
	case t == "timestamp":
		return "datetime"
	case t == "date":
		return "date"
	case strings.HasPrefix(t, "list<"):
		return "array"
	}
	return "object"
}

// dataPackage builds datapackage.json (Frictionless Data Package v2): one
// resource per table, its files, and its Table Schema: the columns in the
// files. Partition columns are not in the files but in their folders'
// names, so they are described under "partitioning" (Hive), not among the
// fields a reader checks against the files. A one-file resource has the
// file's sha256 as its hash; a resource of several files has none (each
// file's is in manifest.json).
func dataPackage(id string, d *config.Dataset, tables []*TableResult) map[string]any {
	var resources []any
	for _, t := range tables {
		var paths, sums []string
		var bytes int64
		for _, f := range t.Files {
			if strings.HasPrefix(f.Path, "_rejects/") {
				continue
			}
			paths = append(paths, f.Path)
			sums = append(sums, f.SHA256)
			bytes += f.Bytes
		}
		var fields, parts []any
		for _, c := range t.Schema {
			f := map[string]any{"name": c.Name, "type": frictionlessType(c.Type), "parquetType": c.Type}
			if desc := t.Columns[c.Name]; desc != "" {
				f["description"] = desc
			}
			if c.Partition {
				parts = append(parts, f)
				continue
			}
			fields = append(fields, f)
		}
		r := map[string]any{
			"name":        t.Name,
			"path":        paths,
			"format":      "parquet",
			"mediatype":   "application/vnd.apache.parquet",
			"bytes":       bytes,
			"description": t.Description,
			"schema":      map[string]any{"fields": fields},
			"rows":        t.Written,
		}
		if len(sums) == 1 {
			r["hash"] = "sha256:" + sums[0]
		}
		if len(t.PartitionBy) > 0 {
			r["partitioning"] = map[string]any{"scheme": "hive", "columns": t.PartitionBy, "fields": parts}
		}
		resources = append(resources, r)
	}
	pkg := map[string]any{
		"$schema":     "https://datapackage.org/profiles/2.0/datapackage.json",
		"name":        id,
		"title":       d.Title,
		"description": d.Description,
		"resources":   resources,
	}
	if d.License != "" {
		pkg["licenses"] = []any{map[string]any{"name": d.License}}
	}
	if d.Homepage != "" {
		pkg["sources"] = []any{map[string]any{"title": d.Title, "path": d.Homepage}}
	}
	if d.Citation != "" {
		pkg["citation"] = d.Citation
	}
	return pkg
}

// datasetCard renders the release's README.md: what each table and
// column means, row counts, the source's license and citation, and how to
// read it.
func datasetCard(id string, d *config.Dataset, tables []*TableResult) string {
	var b strings.Builder
	title := d.Title
	if title == "" {
		title = id
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	if d.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", d.Description)
	}
	fmt.Fprintf(&b, "Converted by agora %s. Files are Hive-partitioned Parquet; `manifest.json` lists every file with its rows and sha256, `datapackage.json` describes the tables as a Frictionless Data Package.\n\n", Version)
	if d.License != "" || d.Citation != "" || d.Homepage != "" {
		b.WriteString("## Source\n\n")
		if d.Homepage != "" {
			fmt.Fprintf(&b, "- Source: %s\n", d.Homepage)
		}
		if d.License != "" {
			fmt.Fprintf(&b, "- License of the data: %s (this release is a derived work under the same terms)\n", d.License)
		}
		if d.Citation != "" {
			fmt.Fprintf(&b, "- Cite: %s\n", d.Citation)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Tables\n\n| table | rows | rejected | partitioned by |\n|---|---:|---:|---|\n")
	for _, t := range tables {
		fmt.Fprintf(&b, "| `%s` | %d | %d | %s |\n", t.Name, t.Written, t.Rejected, strings.Join(quoteAll(t.PartitionBy), ", "))
	}
	b.WriteString("\n")
	for _, t := range tables {
		fmt.Fprintf(&b, "### %s\n\n", t.Name)
		if t.Description != "" {
			fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(t.Description))
		}
		b.WriteString("| column | type | meaning |\n|---|---|---|\n")
		for _, c := range t.Schema {
			typ := c.Type
			if c.Partition {
				typ += " (partition)"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.Name, mdCell(typ), mdCell(t.Columns[c.Name]))
		}
		b.WriteString("\n")
		for _, ck := range t.Checks {
			at := ""
			if ck.Check != "" {
				at = " (`" + ck.Check + "`)"
			}
			fmt.Fprintf(&b, "Check `%s` on `%s`%s failed on %d rows, which were kept (examples in manifest.json).\n\n", ck.Rule, ck.Column, at, ck.Failures)
		}
	}
	if len(tables) > 0 {
		t := tables[0]
		glob := fmt.Sprintf("%s/%s/**/*.parquet", id, t.Name)
		b.WriteString("## Reading it\n\nFrom the output folder, the one holding this release's folder (glob `**/*.parquet`; markers such as `_SUCCESS` never end in `.parquet`):\n\n")
		fmt.Fprintf(&b, "DuckDB:\n\n```sql\nSET TimeZone = 'UTC';\nSELECT * FROM read_parquet('%s', hive_partitioning = true) LIMIT 10;\n```\n\n", glob)
		fmt.Fprintf(&b, "Spark:\n\n```python\ndf = spark.read.parquet(\"%s/%s\")\n```\n\n", id, t.Name)
		fmt.Fprintf(&b, "pandas:\n\n```python\nimport pandas as pd\ndf = pd.read_parquet(\"%s/%s\")\n```\n", id, t.Name)
	}
	return b.String()
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = "`" + x + "`"
	}
	sort.Strings(out)
	return out
}

// sameRelease returns the manifest of the published release of the
// dataset when it was made by the same agora version (and commit) and
// library versions from the same config:
// when the inputs' checksums can still make the run unnecessary.
func sameRelease(out, id string, man Manifest) (Manifest, bool) {
	old, err := readManifest(out, id)
	if err != nil || !sinks.Published(out, id) || old.Agora != man.Agora || old.ConfigSHA256 != man.ConfigSHA256 || !maps.Equal(old.Libraries, man.Libraries) {
		return Manifest{}, false
	}
	if !intact(filepath.Join(out, id), old) {
		return Manifest{}, false
	}
	return old, true
}

// intact reports whether every file the manifest lists is in dir at its
// size, and the dataset card and data package beside it: a release a
// person or a disk has since cut into (a table's folder removed) is made
// again rather than found unchanged.
func intact(dir string, m Manifest) bool {
	for _, f := range []string{"README.md", "datapackage.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	for _, t := range m.Tables {
		for _, f := range t.Files {
			fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path)))
			if err != nil || fi.Size() != f.Bytes {
				return false
			}
		}
	}
	return true
}

// unchanged reports whether the release whose manifest is old was made
// from the same inputs as man.
func unchanged(old, man Manifest) bool {
	if len(old.Inputs) != len(man.Inputs) {
		return false
	}
	for i := range old.Inputs {
		if old.Inputs[i].SHA256 != man.Inputs[i].SHA256 || old.Inputs[i].Path != man.Inputs[i].Path {
			return false
		}
	}
	return true
}
