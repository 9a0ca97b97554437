package stages

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agora-etl/agora/config"
)

func TestArgKeys(t *testing.T) {
	tests := []struct {
		name, args string
		want       []string
	}{
		{name: "args only", args: "[string column]"},
		{name: "empty", args: ""},
		{name: "one key", args: "[list column], min", want: []string{"min"}},
		{name: "keys with values", args: "[string column], value: separator, values: [left out]", want: []string{"value", "values"}},
		{name: "commas inside the args", args: "[map<string,list<string>> selections, list<string> cards], digits", want: []string{"digits"}},
		{name: "commas inside a key's value", args: "[column], by: [key a, key b], grouped", want: []string{"by", "grouped"}},
		{name: "unclosed args", args: "[column, value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := argKeys(tt.args); !slices.Equal(got, tt.want) {
				t.Errorf("argKeys(%q) = %q, want %q", tt.args, got, tt.want)
			}
		})
	}
}

// Every key a registered derivation's args text names is one setKeys can
// report (a misspelt key in an args text would make the key unusable).
// That a function reads no key its args text leaves out is checked by
// reading the Register calls, not here.
func TestRegisteredArgsNameKnownKeys(t *testing.T) {
	known := setKeys(everyKeySet(t))
	for _, d := range Derivations() {
		for _, k := range argKeys(d.Args) {
			if !slices.Contains(known, k) {
				t.Errorf("%s: args %q name %q, which is not a key of config.Derivation that setKeys reports (%s)", d.Name, d.Args, k, strings.Join(known, ", "))
			}
		}
	}
}

// setKeys reports every field of config.Derivation other than the ones
// every derivation takes, so a field added there is not accepted
// silently on derivations that ignore it.
func TestSetKeysCoversDerivation(t *testing.T) {
	got := setKeys(everyKeySet(t))
	var want []string
	typ := reflect.TypeOf(config.Derivation{})
	for i := range typ.NumField() {
		if !typ.Field(i).IsExported() {
			continue
		}
		tag := strings.Split(typ.Field(i).Tag.Get("yaml"), ",")[0]
		switch tag {
		case "name", "fn", "args", "replace", "when":
			continue
		}
		want = append(want, tag)
	}
	if !slices.Equal(got, want) {
		t.Errorf("setKeys of a derivation with every field set = %q, want %q", got, want)
	}
	if k := setKeys(config.Derivation{Name: "x", Fn: "upper", Args: []string{"s"}, Replace: true, When: &config.When{}}); k != nil {
		t.Errorf("setKeys with only the common keys = %q, want none", k)
	}
}

// everyKeySet returns a Derivation whose every field holds a value other
// than its zero.
func everyKeySet(t *testing.T) config.Derivation {
	t.Helper()
	var d config.Derivation
	v := reflect.ValueOf(&d).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int:
			f.SetInt(1)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("config.Derivation.%s is a %s: teach everyKeySet and setKeys about it", v.Type().Field(i).Name, f.Kind())
		}
	}
	return d
}
