package mcpserver

import (
	"strings"
	"testing"
)

// FuzzParseRunURI: a URI is a run resource exactly when it rebuilds from
// the parsed id (an events URI: up to its cursor query), and the id is one
// path segment.
func FuzzParseRunURI(f *testing.F) {
	for _, s := range []string{"ordo://runs/run_1", "ordo://runs/run_1/mermaid", "ordo://runs/", "ordo://runs//mermaid",
		"ordo://runs/a/b", "ordo://catalog", "test://watched-resource", "ordo://runs/mermaid/mermaid",
		"ordo://runs/run_1/events", "ordo://runs/run_1/events?after=3", "ordo://runs/run_1/mermaid/events"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		id, mermaid, ok := parseRunURI(uri)
		if !ok {
			if id != "" || mermaid {
				t.Fatalf("%q: not a run resource but id %q mermaid %v", uri, id, mermaid)
			}
			return
		}
		if id == "" || strings.Contains(id, "/") {
			t.Fatalf("%q: bad id %q", uri, id)
		}
		back := runURIPrefix + id
		if mermaid {
			back += mermaidURISuffx
		}
		base, _, _ := strings.Cut(uri, "?")
		if back != uri && (mermaid || back+"/events" != base) {
			t.Fatalf("%q parsed as %q mermaid=%v", uri, id, mermaid)
		}
	})
}
