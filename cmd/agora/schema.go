package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/spf13/cobra"

	"github.com/agora-etl/agora/config"
	"github.com/agora-etl/agora/stages"
)

// TableSchema is one output table's schema as `agora schema` prints it.
type TableSchema struct {
	// Dataset is the dataset id.
	Dataset string `json:"dataset"`
	// Table is the table name.
	Table string `json:"table"`
	// Description is the table's description from pipeline.yaml.
	Description string `json:"description,omitempty"`
	// PartitionBy lists the partition columns.
	PartitionBy []string `json:"partition_by,omitempty"`
	// Columns are the file columns, then the partition columns.
	Columns []SchemaColumn `json:"columns"`
	// SchemaHash is the hash manifest.json records for the table.
	SchemaHash string `json:"schema_sha256"`
}

// SchemaColumn is one output column: name, type in pipeline.yaml's
// grammar, whether it is a partition folder, and its documented meaning.
type SchemaColumn struct {
	// Name is the column name.
	Name string `json:"name"`
	// Type is the type in pipeline.yaml's grammar.
	Type string `json:"type"`
	// Partition marks a key=value folder, not stored in the files.
	Partition bool `json:"partition,omitempty"`
	// Description is the column's meaning from the table's columns:.
	Description string `json:"description,omitempty"`
}

func newSchemaCmd(stdout io.Writer) *cobra.Command {
	var configPath, data, format string
	cmd := &cobra.Command{
		Use:   "schema [DATASET[.TABLE]]",
		Short: "Print the output schema of every table, derived from pipeline.yaml without reading data",
		Long: `schema prints each output table's columns and types as the run would write
them. The schema comes from the same stage graph the run builds: every
decoder declares its output from pipeline.yaml's input columns and every step
derives its output schema from its input schema, so no input is read. The
exceptions are Parquet inputs whose columns the file itself types: with
extra_columns: carry, or a column of type: file. Their footers are read
(under --data). --format json gives each table's schema_sha256 too, the one
manifest.json records.`,
		Example: `  agora schema
  agora schema crowdrag25
  agora schema crowdrag25.ratings --format markdown
  agora schema --format json | jq '.[].table'`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "markdown" && format != "json" {
				return usageError{fmt.Errorf("--format must be text, markdown or json, got %q", format)}
			}
			cfg, err := loadConfig(configPath)
			if err != nil {
				return err
			}
			if data == "" {
				data = cfg.Data
			}
			sel := ""
			if len(args) == 1 {
				sel = args[0]
			}
			tables, err := tableSchemas(cfg, sel, data)
			if err != nil {
				return err
			}
			switch format {
			case "json":
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(tables)
			case "markdown":
				printSchemaMarkdown(stdout, tables)
			default:
				printSchemaText(stdout, tables)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&configPath, "config", "c", "pipeline.yaml", "pipeline file")
	f.StringVar(&data, "data", "", "data root, read only for the footers of Parquet inputs with extra_columns: carry or a type: file column (default: pipeline.yaml's data)")
	f.StringVar(&format, "format", "text", "text, markdown or json")
	return cmd
}

// tableSchemas builds the selected tables ("", "dataset" or
// "dataset.table") and returns their output schemas.
func tableSchemas(cfg *config.Config, sel, data string) ([]TableSchema, error) {
	ds, tbl, dotted := strings.Cut(sel, ".")
	ids := cfg.DatasetIDs()
	if dotted && (ds == "" || tbl == "") {
		return nil, usageError{fmt.Errorf("%q: name a table as dataset.table (have %s)", sel, strings.Join(ids, ", "))}
	}
	if ds != "" {
		if _, ok := cfg.Datasets[ds]; !ok {
			return nil, usageError{fmt.Errorf("no dataset %q in %s (have %s)", ds, cfg.File(), strings.Join(ids, ", "))}
		}
		ids = []string{ds}
	}
	var out []TableSchema
	for _, id := range ids {
		d := cfg.Datasets[id]
		names := d.TableNames()
		if tbl != "" {
			if _, ok := d.Tables[tbl]; !ok {
				return nil, usageError{fmt.Errorf("no table %q in dataset %s (have %s)", tbl, id, strings.Join(names, ", "))}
			}
			names = []string{tbl}
		}
		for _, name := range names {
			t := d.Tables[name]
			b, err := stages.BuildTable(cfg, id, name, data, memory.DefaultAllocator)
			if err != nil {
				return nil, err
			}
			cols, hash := describeSchema(b.Schema, t.PartitionBy)
			ts := TableSchema{Dataset: id, Table: name, Description: strings.TrimSpace(t.Description), PartitionBy: t.PartitionBy, SchemaHash: hash}
			for _, c := range cols {
				ts.Columns = append(ts.Columns, SchemaColumn{Name: c.Name, Type: c.Type, Partition: c.Partition, Description: strings.TrimSpace(t.Columns[c.Name])})
			}
			out = append(out, ts)
		}
	}
	return out, nil
}

func printSchemaText(w io.Writer, tables []TableSchema) {
	for i, t := range tables {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s.%s", t.Dataset, t.Table)
		if len(t.PartitionBy) > 0 {
			fmt.Fprintf(w, " (partitioned by %s)", strings.Join(t.PartitionBy, ", "))
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  column\ttype\tdescription")
		for _, c := range t.Columns {
			desc := cell(c.Description, 60)
			if c.Partition {
				desc = strings.TrimSpace("[partition folder] " + desc)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Name, c.Type, desc)
		}
		tw.Flush()
	}
}

// mdCell makes text fit one cell of a markdown table: its pipes
// escaped, its lines (a YAML block scalar's) joined by spaces.
func mdCell(s string) string {
	return strings.TrimSpace(strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ").Replace(s))
}

func printSchemaMarkdown(w io.Writer, tables []TableSchema) {
	for i, t := range tables {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "### %s.%s\n\n", t.Dataset, t.Table)
		if t.Description != "" {
			fmt.Fprintf(w, "%s\n\n", mdCell(t.Description))
		}
		if len(t.PartitionBy) > 0 {
			fmt.Fprintf(w, "Partitioned by `%s`.\n\n", strings.Join(t.PartitionBy, "`, `"))
		}
		fmt.Fprintln(w, "| column | type | description |")
		fmt.Fprintln(w, "|---|---|---|")
		for _, c := range t.Columns {
			desc := mdCell(c.Description)
			if c.Partition {
				desc = strings.TrimSpace("partition folder. " + desc)
			}
			fmt.Fprintf(w, "| `%s` | `%s` | %s |\n", c.Name, mdCell(c.Type), desc)
		}
	}
}
