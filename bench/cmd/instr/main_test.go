package main

import (
	"reflect"
	"testing"
)

func TestParseRefs(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want int64
		err  bool
	}{
		{"summary", "==2488== \n==2488== I   refs:      34,087,472,182\n", 34087472182, false},
		{"small count", "==7== I refs: 912\n", 912, false},
		{"no summary", "valgrind: failed to start tool 'cachegrind'\n", 0, true},
		{"two summaries", "==1== I   refs: 10\n==2== I   refs: 20\n", 0, true},
		{"program output that looks alike", "I   refs: 5 (said the program)\n", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRefs(tc.in)
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("parseRefs = %d, %v; want %d, error %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []int64
		want int64
	}{
		{"one", []int64{7}, 7},
		{"odd", []int64{9, 1, 5}, 5},
		{"even takes the lower middle", []int64{4, 1, 3, 2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]int64(nil), tc.in...)
			if got := median(in); got != tc.want {
				t.Fatalf("median(%v) = %d, want %d", tc.in, got, tc.want)
			}
			if !reflect.DeepEqual(in, tc.in) {
				t.Fatal("median reordered its argument")
			}
		})
	}
}
