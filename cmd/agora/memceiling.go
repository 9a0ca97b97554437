package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// ceilingShare is the share of the memory the process may use (its
// cgroup's limit, or the machine's RAM) that the soft memory limit is
// never raised past: the limit counts only the Go runtime's memory, and
// the binary's own pages, the kernel's page tables and the like come on
// top of it.
const ceilingShare = 0.9

// unlimited is the least cgroup v1 value that means no limit (the kernel
// writes 2^63 rounded down to a page).
const unlimited = 1 << 62

// memoryCeiling returns the most the soft memory limit may be raised to,
// ceilingShare of the least of the memory limits of the process's cgroup
// and its parents (cgroup v2's memory.max, v1's memory.limit_in_bytes)
// and the machine's RAM, and what it comes from, for the log; 0 and ""
// when none of them can be read. root is where /proc and /sys are
// ("/"; tests give a folder of their own).
func memoryCeiling(root string) (ceiling int64, from string) {
	least, from := int64(0), ""
	take := func(n int64, what string) {
		if n > 0 && n < unlimited && (least == 0 || n < least) {
			least, from = n, what
		}
	}
	if n, ok := memTotal(filepath.Join(root, "proc/meminfo")); ok {
		take(n, "the machine's RAM")
	}
	if n, ok := cgroupLimit(root); ok {
		take(n, "the cgroup's memory limit")
	}
	if least == 0 {
		return 0, ""
	}
	return int64(float64(least) * ceilingShare), fmt.Sprintf("%.0f%% of %s (%s)", ceilingShare*100, from, humanBytes(least))
}

// memTotal reads MemTotal from a /proc/meminfo.
func memTotal(meminfo string) (int64, bool) {
	b, err := os.ReadFile(meminfo)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			return n << 10, err == nil
		}
	}
	return 0, false
}

// cgroupLimit returns the least memory limit of the process's cgroup and
// its parents, from /proc/self/cgroup and the cgroup file systems under
// root/sys/fs/cgroup: v2's unified hierarchy, or v1's memory controller
// (mounted at memory/). A cgroup namespace shows the container's own
// cgroup as /, and the parents above it are not there to read: its limit
// is then the one at the mount's root.
func cgroupLimit(root string) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, false
	}
	least, found := int64(0), false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// hierarchy-id:controllers:path
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		var mount, file string
		switch {
		case f[0] == "0" && f[1] == "":
			mount, file = "sys/fs/cgroup", "memory.max"
			if _, err := os.Stat(filepath.Join(root, mount, "cgroup.controllers")); err != nil {
				// A hybrid system's v2 tree holds no controllers.
				mount = "sys/fs/cgroup/unified"
			}
		case hasMemory(f[1]):
			mount, file = "sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		for dir := path.Clean("/" + f[2]); ; dir = path.Dir(dir) {
			if n, ok := readLimit(filepath.Join(root, mount, dir, file)); ok && (!found || n < least) {
				least, found = n, true
			}
			if dir == "/" {
				break
			}
		}
	}
	return least, found && least < unlimited
}

// hasMemory reports whether a v1 line's controllers include memory.
func hasMemory(controllers string) bool {
	for c := range strings.SplitSeq(controllers, ",") {
		if c == "memory" {
			return true
		}
	}
	return false
}

// readLimit reads a cgroup limit file: bytes, or "max" for none (which
// reads as unlimited).
func readLimit(p string) (int64, bool) {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return unlimited, true
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}
