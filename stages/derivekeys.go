package stages

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agora-etl/agora/config"
)

// keysApply returns an error naming the keys set on d that its
// derivation does not read, so that a key put on the wrong derivation
// (by on upper, digits on majority) stops the run instead of being
// ignored. What a derivation reads is what its registered args text
// names after the argument list: "[string column], value: separator,
// values: [left out]" reads value and values. name, fn, args, replace
// and when apply to every derivation.
func keysApply(d config.Derivation, args string) error {
	takes := argKeys(args)
	var wrong []string
	for _, k := range setKeys(d) {
		if !slices.Contains(takes, k) {
			wrong = append(wrong, k)
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	verb := "does"
	if len(wrong) > 1 {
		verb = "do"
	}
	reads := "only its args"
	if len(takes) > 0 {
		reads = "args, " + strings.Join(takes, ", ")
	}
	return fmt.Errorf("%s %s not apply to %s (it reads %s)", strings.Join(wrong, " and "), verb, d.Fn, reads)
}

// setKeys lists the keys of d besides name, fn, args, replace and when:
// those its config item names (config.Derivation.Keys), or, for a
// Derivation not loaded from a file, those that hold a value other than
// their zero, in config.Derivation's order.
func setKeys(d config.Derivation) []string {
	var out []string
	if keys := d.Keys(); keys != nil {
		for _, k := range keys {
			switch k {
			case "name", "fn", "args", "replace", "when":
			default:
				out = append(out, k)
			}
		}
		return out
	}
	add := func(set bool, key string) {
		if set {
			out = append(out, key)
		}
	}
	add(d.Value != "", "value")
	add(d.Min != 0, "min")
	add(d.Values != nil, "values")
	add(d.Index != 0, "index")
	add(d.Type != "", "type")
	add(d.By != nil, "by")
	add(d.Grouped, "grouped")
	add(d.Digits != nil, "digits")
	return out
}

// argKeys returns the keys a registered args text names after its
// bracketed argument list: each comma-separated item's leading word
// ("value: separator" gives value). Commas inside brackets or angle
// brackets belong to their item, so the argument list is an item of its
// own, one that starts with no word.
func argKeys(args string) []string {
	var keys []string
	depth, start := 0, 0
	item := func(s string) {
		s = strings.TrimSpace(s)
		n := 0
		for n < len(s) && (s[n] >= 'a' && s[n] <= 'z' || s[n] == '_') {
			n++
		}
		if n > 0 {
			keys = append(keys, s[:n])
		}
	}
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case '[', '<':
			depth++
		case ']', '>':
			depth--
		case ',':
			if depth == 0 {
				item(args[start:i])
				start = i + 1
			}
		}
	}
	item(args[start:])
	return keys
}

// hasKey reports whether d sets key (see setKeys): a key set to its zero
// (value: "") is told from one left out when d was loaded from a file.
func hasKey(d config.Derivation, key string) bool {
	return slices.Contains(setKeys(d), key)
}
