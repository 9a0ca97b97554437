package inputs

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		want []Set
	}{
		{"every dataset", "crowdrag25:10,50; delidata:0.5; habermas:1,1w10",
			[]Set{{"crowdrag25", "10", ""}, {"crowdrag25", "50", ""}, {"delidata", "0.5", ""}, {"habermas", "1", ""}, {"habermas", "1", "10"}}},
		{"empty parts skipped", ";habermas:2;", []Set{{"habermas", "2", ""}}},
		{"nothing", "", nil},
		{"no scale", "crowdrag25", nil},
		{"unknown dataset", "nope:1", nil},
		{"zero scale", "delidata:0", nil},
		{"scale not a number", "delidata:x", nil},
		{"width for another dataset", "crowdrag25:1w2", nil},
		{"zero width", "habermas:1w0", nil},
		{"width not a number", "habermas:1wx", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.spec)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("Parse(%q) = %v, want an error", tc.spec, got)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse(%q) = %v, %v; want %v", tc.spec, got, err, tc.want)
			}
		})
	}
}

func TestLabel(t *testing.T) {
	for _, tc := range []struct {
		set  Set
		want string
	}{
		{Set{"habermas", "1", "10"}, "1w10"},
		{Set{"crowdrag25", "0.2", ""}, "0.2"},
	} {
		if got := tc.set.Label(); got != tc.want {
			t.Errorf("%v.Label() = %q, want %q", tc.set, got, tc.want)
		}
	}
}
