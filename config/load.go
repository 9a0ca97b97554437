package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// node is the parsed YAML document, kept to map field paths to lines.
type node = yaml.Node

// LoadFile reads and validates a pipeline file. Errors name the file and
// line: "pipeline.yaml:14: datasets.x.tables.y.steps[2]: ...".
func LoadFile(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Load(path, data)
}

// Load parses and validates a pipeline document. name is used in error
// messages. Unknown keys are errors; every problem found is reported at
// once, joined, each as a *FieldError.
func Load(name string, data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(name, data, err)
	}
	if len(doc.Content) == 0 {
		return nil, &FieldError{File: name, Line: 1, Err: fmt.Errorf("%w: empty document", ErrRequired)}
	}
	if err := nullItems(name, &doc); err != nil {
		return nil, err
	}
	cfg := &Config{file: name, root: &doc}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return nil, cfg.typeErrors(te)
		}
		return nil, syntaxError(name, data, err)
	}
	cfg.recordOrder()
	cfg.applyDefaults()
	if err := errors.Join(cfg.expand(), cfg.Validate()); err != nil {
		return nil, err
	}
	return cfg, nil
}

var lineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

func syntaxError(name string, data []byte, err error) error {
	msg := err.Error()
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &FieldError{File: name, Line: line, Err: fmt.Errorf("%w: %s", ErrSyntax, m[2])}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := 0
	if m := anchorRE.FindStringSubmatch(msg); m != nil {
		// yaml names no line for an alias of no anchor: the first line
		// using it is the one to fix.
		line = aliasLine(data, m[1])
	}
	return &FieldError{File: name, Line: line, Err: fmt.Errorf("%w: %s", ErrSyntax, msg)}
}

var anchorRE = regexp.MustCompile(`^unknown anchor '(.+)' referenced$`)

// aliasLine returns the first line of data holding the alias *name (not
// followed by another name character), or 0.
func aliasLine(data []byte, name string) int {
	re := regexp.MustCompile(`\*` + regexp.QuoteMeta(name) + `($|[\s,\]}])`)
	for i, l := range strings.Split(string(data), "\n") {
		if c := strings.Index(l, " #"); c >= 0 {
			l = l[:c] // a comment (a # in a quoted text is rare enough)
		}
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if re.MatchString(l) {
			return i + 1
		}
	}
	return 0
}

var unknownRE = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)

// typeErrors turns yaml's decode errors into FieldErrors with the path of
// the offending key and, for an unknown key, the nearest valid one.
func (c *Config) typeErrors(te *yaml.TypeError) error {
	var errs []error
	for _, e := range te.Errors {
		if m := unknownRE.FindStringSubmatch(e); m != nil {
			line, _ := strconv.Atoi(m[1])
			key := m[2]
			path := c.pathOfKey(line, key)
			hint := ""
			if strings.HasSuffix(m[3], ".When") && (key == "values" || key == "value") {
				// enum's word for the list; when's is in.
				hint = ` (did you mean "in"? when: {column, in: [values]})`
			} else if s := nearest(key, keysOf(m[3])); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", s)
			} else if strings.HasSuffix(m[3], "Rule") && slices.Contains(keysOf("config.Rule"), key) {
				// when: or on_fail: inside enum: {...} instead of beside it.
				hint = fmt.Sprintf(" (%s belongs to the rule: put it beside the rule's key, in the same list item)", key)
			}
			errs = append(errs, &FieldError{File: c.file, Line: line, Path: path, Err: fmt.Errorf("%w %q%s", ErrUnknownKey, key, hint)})
			continue
		}
		if m := lineRE.FindStringSubmatch(e); m != nil {
			line, _ := strconv.Atoi(m[1])
			value := ""
			if v := valueRE.FindStringSubmatch(m[2]); v != nil {
				value = v[1]
			}
			errs = append(errs, &FieldError{File: c.file, Line: line, Path: c.pathAtLine(line, value), Err: fmt.Errorf("%w: %s", ErrType, m[2])})
			continue
		}
		errs = append(errs, &FieldError{File: c.file, Err: fmt.Errorf("%w: %s", ErrType, e)})
	}
	return errors.Join(errs...)
}

// keysOf lists the yaml keys of a config struct type given yaml's name
// for it ("config.Step").
func keysOf(typeName string) []string {
	name := strings.TrimPrefix(strings.TrimPrefix(typeName, "*"), "config.")
	t, ok := structTypes()[name]
	if !ok {
		return nil
	}
	return yamlKeys(t)
}

func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		keys = append(keys, strings.Split(tag, ",")[0])
	}
	return keys
}

// structTypes maps the name of every struct type reachable from Config to
// its type.
func structTypes() map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		if _, seen := out[t.Name()]; seen {
			return
		}
		out[t.Name()] = t
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				walk(t.Field(i).Type)
			}
		}
	}
	walk(reflect.TypeOf(Config{}))
	return out
}

// nearest returns the candidate closest to s by edit distance, if it is
// close enough to be a plausible typo.
func nearest(s string, candidates []string) string {
	best, bestD := "", len(s)/2+2
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// recordOrder notes the file order of the maps whose order matters, and
// the keys each derive item names.
func (c *Config) recordOrder() {
	top := c.root.Content[0]
	ds := mapValue(top, "datasets")
	for _, id := range mapKeys(ds) {
		d := c.Datasets[id]
		if d == nil {
			c.empty = append(c.empty, id) // validate says so
			continue
		}
		c.order = append(c.order, id)
		dn := mapValue(ds, id)
		d.inputOrder = mapKeys(mapValue(dn, "inputs"))
		for _, iid := range d.inputOrder {
			if in := d.Inputs[iid]; in != nil {
				in.set = mapKeys(mapValue(mapValue(dn, "inputs"), iid))
			}
		}
		d.tableOrder = mapKeys(mapValue(dn, "tables"))
		tn := mapValue(dn, "tables")
		for _, name := range d.tableOrder {
			t := d.Tables[name]
			if t == nil {
				continue
			}
			steps := deref(mapValue(mapValue(tn, name), "steps"))
			for i := range t.Steps {
				if steps == nil || steps.Kind != yaml.SequenceNode || i >= len(steps.Content) {
					break
				}
				items := deref(mapValue(steps.Content[i], "derive"))
				for j := range t.Steps[i].Derive {
					if items == nil || items.Kind != yaml.SequenceNode || j >= len(items.Content) {
						break
					}
					t.Steps[i].Derive[j].keys = mapKeys(items.Content[j])
				}
			}
		}
	}
}

// deref follows YAML aliases (*name) to the node they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// mapValue returns the value of key in a mapping, following aliases and,
// where the mapping itself lacks the key, its merges (<<: *a or
// <<: [*a, *b], the first that has it), as YAML does.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case key:
			return n.Content[i+1]
		case "<<":
			merged = append(merged, mergeSources(n.Content[i+1])...)
		}
	}
	for _, m := range merged {
		if v := mapValue(m, key); v != nil {
			return v
		}
	}
	return nil
}

// mergeSources returns the mappings a merge key's value names: one
// mapping, or a list of them.
func mergeSources(v *yaml.Node) []*yaml.Node {
	if v = deref(v); v != nil && v.Kind == yaml.SequenceNode {
		return v.Content
	}
	return []*yaml.Node{v}
}

// mapKeys lists a mapping's keys in file order, following aliases and
// the keys a merge (<<) brings in.
func mapKeys(n *yaml.Node) []string {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var keys []string
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if k == "<<" {
			for _, m := range mergeSources(n.Content[i+1]) {
				for _, mk := range mapKeys(m) {
					if !seen[mk] {
						seen[mk] = true
						keys = append(keys, mk)
					}
				}
			}
			continue
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// lineOf returns the line of the deepest node along a dotted path such as
// "datasets.x.tables.y.steps[2].unpivot".
func (c *Config) lineOf(path string) int {
	if c.root == nil || len(c.root.Content) == 0 {
		return 0
	}
	n := c.root.Content[0]
	line := n.Line
	for _, seg := range splitPath(path) {
		var next *yaml.Node
		if idx, err := strconv.Atoi(seg); err == nil && n.Kind == yaml.SequenceNode {
			if idx < len(n.Content) {
				// An item has no key: its own line, a mapping's too (the
				// line of its dash), not the list's first item's.
				next = n.Content[idx]
				line = max(line, next.Line)
			}
		} else if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == seg {
					line = n.Content[i].Line
					next = n.Content[i+1]
					break
				}
			}
		}
		if next == nil {
			break
		}
		n = next
		if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
			line = max(line, n.Line)
		}
	}
	return line
}

// splitPath splits "a.b[2].c" into a, b, 2, c.
func splitPath(path string) []string {
	path = strings.ReplaceAll(path, "[", ".")
	path = strings.ReplaceAll(path, "]", "")
	var out []string
	for _, s := range strings.Split(path, ".") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// pathOfKey finds the path of the mapping key at line with the given name.
func (c *Config) pathOfKey(line int, key string) string {
	var found string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if found != "" || n == nil {
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				p := joinPath(path, k.Value)
				if k.Line == line && k.Value == key {
					found = p
					return
				}
				walk(n.Content[i+1], p)
			}
		case yaml.SequenceNode:
			for i, e := range n.Content {
				walk(e, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	if len(c.root.Content) > 0 {
		walk(c.root.Content[0], "")
	}
	return found
}

// pathAtLine finds the path of the first node at a line.
func (c *Config) pathAtLine(line int, value string) string {
	var found string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if found != "" || n == nil {
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := joinPath(path, n.Content[i].Value)
				k, v := n.Content[i], n.Content[i+1]
				if k.Line == line || v.Line == line && v.Kind == yaml.ScalarNode {
					// A flow mapping holds several keys on the line:
					// the one whose value the error quotes, if any.
					if value == "" || v.Kind == yaml.ScalarNode && quotes(value, v.Value) || !lineHasValue(n, line, value) {
						found = p
						return
					}
				}
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, e := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				if e.Line == line && e.Kind == yaml.ScalarNode {
					found = p
					return
				}
				walk(e, p)
			}
		}
	}
	if len(c.root.Content) > 0 {
		walk(c.root.Content[0], "")
	}
	return found
}

// lineHasValue reports whether mapping n holds, on line, a scalar value
// equal to value.
func lineHasValue(n *yaml.Node, line int, value string) bool {
	for i := 1; i < len(n.Content); i += 2 {
		if v := n.Content[i]; v.Line == line && v.Kind == yaml.ScalarNode && quotes(value, v.Value) {
			return true
		}
	}
	return false
}

// quotes reports whether yaml's quote of a value in an error is value:
// the same text, or, for a value longer than 10 bytes, its first 7 and
// "..." (yaml shortens it so).
func quotes(quote, value string) bool {
	if p, ok := strings.CutSuffix(quote, "..."); ok && len(value) > 10 {
		return strings.HasPrefix(value, p)
	}
	return quote == value
}

// valueRE finds the value yaml quotes in a type error ("cannot unmarshal
// !!str `tags` into []string").
var valueRE = regexp.MustCompile("cannot unmarshal !!\\w+ `([^`]*)`")

func joinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// nullItems returns an error for each list item of doc that is null: a
// dash with nothing after it, ~ or null. The YAML decoder leaves such an
// item out of the list it fills, so a step, rule or column written as a
// bare "-" (a line left half-deleted) would vanish without a word, and
// the items after it would change places.
func nullItems(name string, doc *yaml.Node) error {
	var errs []error
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], joinPath(path, n.Content[i].Value))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				if c.Kind == yaml.ScalarNode && c.Tag == "!!null" {
					hint := ""
					if c.Value != "" && c.Value != "~" {
						// null, Null, NULL: a text in a SQL dump's sense.
						hint = fmt.Sprintf(` (for the text %s, quote it: "%s")`, c.Value, c.Value)
					}
					errs = append(errs, &FieldError{File: name, Line: c.Line, Path: p,
						Err: fmt.Errorf("%w: an empty list item (a dash with nothing after it, ~ or null): remove it or give it its value%s", ErrInvalid, hint)})
					continue
				}
				walk(c, p)
			}
		}
		// An alias is walked where its anchor is.
	}
	walk(doc, "")
	return errors.Join(errs...)
}
