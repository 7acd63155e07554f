package report

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Redaction is one value the archive does not carry.
type Redaction struct {
	// Object is "Kind namespace/name"; Field the path of the value in it.
	Object string `json:"object"`
	Field  string `json:"field"`
}

// lastApplied is kubectl's copy of the whole object as applied: it repeats every env
// value, so it is dropped whole.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// sensitive tells whether a name (an env variable, a map key) looks like it holds a
// password, token or key.
func sensitive(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"password", "passwd", "pwd", "secret", "token", "credential", "apikey", "api_key", "private"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return strings.HasSuffix(n, "key") || strings.HasSuffix(n, "keys")
}

// sensitiveKey is sensitive for the key of a map whose string value is the data itself:
// keys that name or point at a secret (secretName, passwordFile, a secretKeyRef's key,
// a toleration's key) are not secrets.
func sensitiveKey(k string) bool {
	l := strings.ToLower(k)
	if l == "key" {
		return false
	}
	for _, s := range []string{"name", "ref", "file", "path", "dir"} {
		if strings.HasSuffix(l, s) {
			return false
		}
	}
	return sensitive(k)
}

// redactor replaces secret-looking values of decoded JSON objects and remembers them,
// so that the same values are also masked in free text (logs, events, nodetool output).
type redactor struct {
	done   []Redaction
	values map[string]bool
}

const mask = "REDACTED"

// object redacts v (a decoded JSON object) in place.
func (r *redactor) object(obj string, v any) {
	if m, ok := v.(map[string]any); ok {
		if md, ok := m["metadata"].(map[string]any); ok {
			delete(md, "managedFields") // noise, no data
			if ann, ok := md["annotations"].(map[string]any); ok {
				if _, ok := ann[lastApplied]; ok {
					ann[lastApplied] = mask
					r.done = append(r.done, Redaction{Object: obj, Field: "metadata.annotations[" + lastApplied + "]"})
				}
			}
		}
	}
	r.walk(obj, "", v)
}

func (r *redactor) keep(value string) {
	if r.values == nil {
		r.values = map[string]bool{}
	}
	if len(value) >= 4 { // shorter ones would mask innocent text everywhere
		r.values[value] = true
	}
}

func (r *redactor) walk(obj, path string, v any) {
	switch x := v.(type) {
	case map[string]any:
		// An env-style pair: {name: CASSANDRA_PASSWORD, value: hunter2}.
		if name, ok := x["name"].(string); ok {
			if val, ok := x["value"].(string); ok && sensitive(name) && val != mask {
				r.keep(val)
				x["value"] = mask
				r.done = append(r.done, Redaction{Object: obj, Field: path + ".value"})
			}
		}
		keys := slices.Sorted(maps.Keys(x))
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if s, ok := x[k].(string); ok && k != "value" && sensitiveKey(k) && s != "" && s != mask {
				r.keep(s)
				x[k] = mask
				r.done = append(r.done, Redaction{Object: obj, Field: p})
				continue
			}
			r.walk(obj, p, x[k])
		}
	case []any:
		for i, e := range x {
			p := fmt.Sprintf("%s[%d]", path, i)
			if m, ok := e.(map[string]any); ok {
				if name, ok := m["name"].(string); ok && name != "" {
					p = fmt.Sprintf("%s[%s]", path, name)
				}
			}
			r.walk(obj, p, e)
		}
	}
}

// text masks in s every value redacted so far and the extra known secrets.
func (r *redactor) text(s string) string {
	vals := make([]string, 0, len(r.values))
	for v := range r.values {
		vals = append(vals, v)
	}
	// Longest first, so that a value containing another is masked whole.
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		s = strings.ReplaceAll(s, v, mask)
	}
	return s
}
