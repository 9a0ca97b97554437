package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agora-etl/agora/bench/inputs"
)

// dataset describes how each engine converts one of agora's datasets.
type dataset struct {
	// sql is the DuckDB script under bench/sql.
	sql string
}

// datasets are the datasets of pipeline.yaml the bench knows.
var datasets = map[string]dataset{
	"crowdrag25": {sql: "crowdrag25.sql"},
	"delidata":   {sql: "delidata.sql"},
	"habermas":   {sql: "habermas.sql"},
}

// engineOrder is the order engines run in within one repetition.
// agora-same is agora restricted to the tables the DuckDB script writes
// (a pruned copy of pipeline.yaml), for datasets where the other engines
// do not write every table.
var engineOrder = []string{"agora", "agora-same", "duckdb", "polars", "pyarrow"}

func knownEngine(e string) bool {
	for _, k := range engineOrder {
		if k == e {
			return true
		}
	}
	return false
}

// measurement is one run of one engine on one input.
type measurement struct {
	Wall float64 `json:"wall_s"`
	// CPU is user plus system seconds: on a shared machine it varies less
	// than the wall time, which waits for other users' work.
	CPU     float64          `json:"cpu_s"`
	MaxRSS  int64            `json:"max_rss_kb"`
	Rows    map[string]int64 `json:"rows"`
	Skipped []string         `json:"tables_missing,omitempty"`
}

// child runs cmd, timing it and reading its CPU seconds and peak RSS
// (Linux: KB).
func child(cmd *exec.Cmd) (wall, cpu float64, maxRSS int64, out []byte, err error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start).Seconds()
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxRSS = int64(ru.Maxrss)
		}
		cpu = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		return wall, cpu, maxRSS, nil, fmt.Errorf("%s: %w\n%s", filepath.Base(cmd.Path), err, msg)
	}
	return wall, cpu, maxRSS, stdout.Bytes(), nil
}

// childEnv is the environment with every engine held to the same threads.
func childEnv(threads int) []string {
	n := strconv.Itoa(threads)
	env := os.Environ()
	return append(env,
		"GOMAXPROCS="+n,
		"POLARS_MAX_THREADS="+n,
		"OMP_NUM_THREADS="+n,
		"ARROW_NUM_THREADS="+n,
		"ARROW_IO_THREADS="+n,
		"RAYON_NUM_THREADS="+n,
	)
}

// runEngine converts input set in (inputs under data) into out with one
// engine and returns the measurement with the rows written per table;
// config is agora's pipeline.yaml (pruned for agora-same, or to one table);
// table, when not empty, is the one table of the DuckDB script to run.
func runEngine(o options, engine string, in inputs.Set, data, out, config, table string) (measurement, error) {
	if err := os.RemoveAll(out); err != nil {
		return measurement{}, fmt.Errorf("clear %s: %w", out, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return measurement{}, fmt.Errorf("output folder: %w", err)
	}
	var cmd *exec.Cmd
	switch engine {
	case "agora", "agora-same":
		cmd = exec.Command(filepath.Join(o.repo, "bin", "agora"), "run",
			"--config", config, "--data", data, "--only", in.Dataset,
			"--out", out, "--mode", "overwrite", "--force")
	case "duckdb":
		self, err := os.Executable()
		if err != nil {
			return measurement{}, fmt.Errorf("find own binary: %w", err)
		}
		cmd = exec.Command(self, duckdbChild,
			"--sql", filepath.Join(o.repo, "bench", "sql", datasets[in.Dataset].sql),
			"--data", data, "--out", out, "--threads", strconv.Itoa(o.threads), "--table", table)
	case "polars", "pyarrow":
		cmd = exec.Command(o.python, filepath.Join(o.repo, "bench", "py", engine+"_convert.py"),
			"--dataset", in.Dataset, "--data", data, "--out", out, "--threads", strconv.Itoa(o.threads))
	default:
		return measurement{}, fmt.Errorf("unknown engine %q", engine)
	}
	cmd.Env = childEnv(o.threads)
	wall, cpu, rss, stdout, err := child(cmd)
	if err != nil {
		return measurement{}, err
	}
	m := measurement{Wall: wall, CPU: cpu, MaxRSS: rss}
	if engine == "agora" || engine == "agora-same" {
		m.Rows, err = manifestRows(filepath.Join(out, in.Dataset, "manifest.json"))
	} else {
		m.Rows, m.Skipped, err = childRows(stdout)
	}
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w", engine, err)
	}
	return m, nil
}

// manifestRows reads rows written per table from agora's manifest.json.
func manifestRows(path string) (map[string]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	var m struct {
		Tables []struct {
			Name        string `json:"name"`
			RowsWritten int64  `json:"rows_written"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	rows := map[string]int64{}
	for _, t := range m.Tables {
		rows[t.Name] = t.RowsWritten
	}
	return rows, nil
}

// childReport is the last stdout line of the DuckDB and Python children.
type childReport struct {
	Tables  map[string]int64 `json:"tables"`
	Missing []string         `json:"missing"`
}

// childRows reads a child's report: the last line of its stdout is JSON.
func childRows(stdout []byte) (map[string]int64, []string, error) {
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	last := lines[len(lines)-1]
	var r childReport
	if err := json.Unmarshal([]byte(last), &r); err != nil {
		return nil, nil, fmt.Errorf("child report %q: %w", last, err)
	}
	return r.Tables, r.Missing, nil
}
