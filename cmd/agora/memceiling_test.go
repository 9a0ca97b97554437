package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

// TestMemoryCeiling reads the ceiling from made-up /proc and /sys trees
// shaped as cgroup v2, v1 and hybrid systems show them.
func TestMemoryCeiling(t *testing.T) {
	const mib = 1 << 20
	ram := "MemTotal:       16777216 kB\nMemFree:         1000 kB\n" // 16 GiB
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
		from  string
	}{
		{"v2, the container's limit at the root", map[string]string{
			"proc/meminfo": ram, "proc/self/cgroup": "0::/\n",
			"sys/fs/cgroup/cgroup.controllers": "cpu memory", "sys/fs/cgroup/memory.max": "536870912\n",
		}, 512 * mib * 9 / 10, "90% of the cgroup's memory limit (512.0 MiB)"},
		{"v2, a parent's limit is the one that holds", map[string]string{
			"proc/meminfo": ram, "proc/self/cgroup": "0::/a/b\n",
			"sys/fs/cgroup/cgroup.controllers": "memory", "sys/fs/cgroup/memory.max": "max\n",
			"sys/fs/cgroup/a/memory.max": "1073741824\n", "sys/fs/cgroup/a/b/memory.max": "max\n",
		}, 1024 * mib * 9 / 10, "90% of the cgroup's memory limit (1.0 GiB)"},
		{"v2 without limits: the RAM", map[string]string{
			"proc/meminfo": ram, "proc/self/cgroup": "0::/\n",
			"sys/fs/cgroup/cgroup.controllers": "memory", "sys/fs/cgroup/memory.max": "max\n",
		}, 16 * 1024 * mib * 9 / 10, "90% of the machine's RAM (16.0 GiB)"},
		{"v1 memory controller", map[string]string{
			"proc/meminfo": ram, "proc/self/cgroup": "9:name=systemd:/\n4:memory:/docker/x\n0::/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":          "9223372036854771712\n",
			"sys/fs/cgroup/memory/docker/x/memory.limit_in_bytes": "268435456\n",
		}, 256 * mib * 9 / 10, "90% of the cgroup's memory limit (256.0 MiB)"},
		{"v1 without a limit (2^63 rounded to a page)", map[string]string{
			"proc/meminfo": ram, "proc/self/cgroup": "4:memory:/process_api/x\n0::/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes":               "9223372036854771712\n",
			"sys/fs/cgroup/memory/process_api/x/memory.limit_in_bytes": "9223372036854771712\n",
		}, 16 * 1024 * mib * 9 / 10, "90% of the machine's RAM (16.0 GiB)"},
		{"hybrid: v2 tree without controllers, limit in v1", map[string]string{
			"proc/meminfo": ram, "proc/self/cgroup": "4:cpu,memory:/\n0::/\n",
			"sys/fs/cgroup/unified/memory.max":           "max\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n",
		}, 1024 * mib * 9 / 10, "90% of the cgroup's memory limit (1.0 GiB)"},
		{"less RAM than the cgroup allows", map[string]string{
			"proc/meminfo": "MemTotal: 524288 kB\n", "proc/self/cgroup": "0::/\n",
			"sys/fs/cgroup/cgroup.controllers": "memory", "sys/fs/cgroup/memory.max": "1073741824\n",
		}, 512 * mib * 9 / 10, "90% of the machine's RAM (512.0 MiB)"},
		{"nothing to read", map[string]string{}, 0, ""},
		{"garbage", map[string]string{
			"proc/meminfo": "MemTotal: lots\n", "proc/self/cgroup": "0::/\n",
			"sys/fs/cgroup/cgroup.controllers": "memory", "sys/fs/cgroup/memory.max": "-5\n",
		}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, body := range tc.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, from := memoryCeiling(root)
			if got != tc.want || from != tc.from {
				t.Errorf("memoryCeiling = %d, %q; want %d, %q", got, from, tc.want, tc.from)
			}
		})
	}
}

// TestAdaptiveMemoryLimitStopsAtCeiling: with live data that never fits,
// the limit rises to the ceiling and no further, the caller is told once
// that it is there, and a configured limit above the ceiling starts at it.
func TestAdaptiveMemoryLimitStopsAtCeiling(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	const start, ceiling = 4 << 20, 6 << 20
	var raises, told atomic.Int64
	var highest atomic.Int64
	stop := adaptiveMemoryLimit(start, ceiling, 20*time.Millisecond, func(limit int64, share float64, atCeiling bool) {
		if atCeiling {
			told.Add(1)
			return
		}
		raises.Add(1)
		highest.Store(limit)
	})
	live := make([][]byte, 0, 64)
	for range 64 {
		live = append(live, make([]byte, 1<<20)) // 64 MiB live, far over the ceiling
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && told.Load() == 0 {
		for range 200 {
			sink = append(sink[:0], make([]byte, 64<<10))
		}
	}
	if got := debug.SetMemoryLimit(-1); got > ceiling {
		t.Errorf("limit %d above the ceiling %d", got, ceiling)
	}
	stop()
	if told.Load() != 1 {
		t.Errorf("told %d times that the limit is at its ceiling, want once (with %d MiB live)", told.Load(), len(live))
	}
	if raises.Load() == 0 || highest.Load() != ceiling {
		t.Errorf("%d raises, the highest to %d; want it raised to the ceiling %d", raises.Load(), highest.Load(), int64(ceiling))
	}

	stop = adaptiveMemoryLimit(8<<20, ceiling, time.Hour, nil)
	got := debug.SetMemoryLimit(-1)
	stop()
	if got != ceiling {
		t.Errorf("a configured limit above the ceiling started at %d, want %d", got, ceiling)
	}
}
