package sheets

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/plugins/internal/plugintest"
	"github.com/ordo-run/ordo/plugins/sdk"
)

const salesCSV = "\uFEFFregion,rep,revenue,status\n" +
	"EMEA,Jane,1200.50,won\n" +
	"APAC,\"Lee, Kim\",900,lost\n" +
	"EMEA,Joe,80,open\n" +
	"AMER,Ana,15000,won\n" +
	"EMEA,Zed\n" // ragged: missing cells

func setup(t *testing.T) (*plugintest.Tools, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	os.MkdirAll(filepath.Join(root, "q1"), 0o755)
	os.WriteFile(filepath.Join(root, "q1", "sales.csv"), []byte(salesCSV), 0o644)
	os.WriteFile(filepath.Join(root, "people.tsv"), []byte("name\tage\tname\t\nAl\t30\tx\ty\n"), 0o644)
	os.WriteFile(filepath.Join(root, "empty.csv"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "broken.csv"), []byte("a,b\n\"open,quote\n"), 0o644)
	os.WriteFile(filepath.Join(base, "secret.csv"), []byte("k\nsecret\n"), 0o644)
	os.Symlink(filepath.Join(base, "secret.csv"), filepath.Join(root, "link.csv"))
	tools, err := Tools(Config{Root: root})
	return plugintest.Server(t, tools, err), base
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestGetRange(t *testing.T) {
	s, _ := setup(t)
	for rng, want := range map[string]string{
		"A1:B2": `{"range":"A1:B2","row_count":2,"rows":[["region","rep"],["EMEA","Jane"]]}`,
		"C5:D":  `{"range":"C5:D6","row_count":2,"rows":[["15000","won"],["",""]]}`,
		"B:B":   `{"range":"B1:B6","row_count":6,"rows":[["rep"],["Jane"],["Lee, Kim"],["Joe"],["Ana"],["Zed"]]}`,
		"3:3":   `{"range":"A3:D3","row_count":1,"rows":[["APAC","Lee, Kim","900","lost"]]}`,
		"F9:G9": `{"range":"","row_count":0,"rows":[]}`,
	} {
		got := s.Call("sheets.get_range", map[string]any{"file": "q1/sales.csv", "range": rng}, "")
		if asJSON(got) != want {
			t.Errorf("get_range %s = %s\nwant %s", rng, asJSON(got), want)
		}
	}
	whole := s.Call("sheets.get_range", map[string]any{"file": "q1/sales.csv"}, "")
	if whole["range"] != "A1:D6" || whole["row_count"] != json.Number("6") {
		t.Fatalf("whole sheet = %v", whole)
	}
	s.Refused("sheets.get_range", map[string]any{"file": "q1/sales.csv", "range": "A0:B"}, "", "range")
	s.Refused("sheets.get_range", map[string]any{"file": "broken.csv"}, "", "file")
	s.Refused("sheets.get_range", map[string]any{"file": "missing.csv"}, "", "file")
}

func TestQuery(t *testing.T) {
	s, _ := setup(t)
	got := s.Call("sheets.query", map[string]any{"file": "q1/sales.csv", "where": "region = EMEA and revenue >= 100", "select": []string{"rep", "revenue"}}, "")
	if want := `{"columns":["rep","revenue"],"count":1,"records":[{"rep":"Jane","revenue":"1200.50"}],"truncated":false}`; asJSON(got) != want {
		t.Fatalf("query = %s\nwant %s", asJSON(got), want)
	}
	got = s.Call("sheets.query", map[string]any{"file": "q1/sales.csv", "where": "status = won", "limit": 1}, "")
	if want := `{"columns":["region","rep","revenue","status"],"count":1,"records":[{"region":"EMEA","rep":"Jane","revenue":"1200.50","status":"won"}],"truncated":true}`; asJSON(got) != want {
		t.Fatalf("query limit = %s", asJSON(got))
	}
	got = s.Call("sheets.query", map[string]any{"file": "q1/sales.csv", "where": "rep contains 'KIM'"}, "")
	if got["count"] != json.Number("1") {
		t.Fatalf("contains = %v", got)
	}
	got = s.Call("sheets.query", map[string]any{"file": "q1/sales.csv", "where": "status = ''"}, "")
	if asJSON(got["records"]) != `[{"region":"EMEA","rep":"Zed","revenue":"","status":""}]` {
		t.Fatalf("ragged row = %s", asJSON(got["records"]))
	}
	// TSV, duplicate and empty header names.
	got = s.Call("sheets.query", map[string]any{"file": "people.tsv", "where": "age > 9"}, "")
	if asJSON(got) != `{"columns":["name","age","name_2","D"],"count":1,"records":[{"D":"y","age":"30","name":"Al","name_2":"x"}],"truncated":false}` {
		t.Fatalf("tsv = %s", asJSON(got))
	}
	s.Refused("sheets.query", map[string]any{"file": "q1/sales.csv", "where": "owner = me"}, "", "where")
	s.Refused("sheets.query", map[string]any{"file": "q1/sales.csv", "where": "region is EMEA"}, "", "where")
	s.Refused("sheets.query", map[string]any{"file": "q1/sales.csv", "select": []string{"rep", "nope"}}, "", "select")
	s.Refused("sheets.query", map[string]any{"file": "empty.csv"}, "", "file")
}

func TestSheetsEscapesRefused(t *testing.T) {
	s, base := setup(t)
	for _, f := range []string{"../secret.csv", filepath.Join(base, "secret.csv"), "link.csv", "q1/../../secret.csv"} {
		s.Refused("sheets.get_range", map[string]any{"file": f}, "", "file")
		s.Refused("sheets.query", map[string]any{"file": f}, "", "file")
	}
}

func TestConfigFromEnv(t *testing.T) {
	data := t.TempDir()
	t.Setenv("ORDO_PLUGIN_DATA_DIR", data)
	t.Setenv(RootEnv, "")
	cfg, err := ConfigFromEnv()
	if err != nil || cfg.Root != filepath.Join(data, "root") {
		t.Fatalf("ConfigFromEnv = %+v, %v", cfg, err)
	}
	if _, err := os.Stat(cfg.Root); err != nil {
		t.Fatal(err)
	}
}

// TestNamedPipeSheet: a named pipe named like a sheet is refused at once
// instead of waiting for a writer that never comes.
func TestNamedPipeSheet(t *testing.T) {
	s, base := setup(t)
	plugintest.OnPipe(t, filepath.Join(base, "root", "pipe.csv"), func() {
		s.Refused("sheets.get_range", map[string]any{"file": "pipe.csv"}, "", "file")
	})
}

// TestRepeatedHeaderNames: a header of MaxCol equal names gets unique keys
// at once. Finding each suffix by scanning the names before it was cubic: a
// 10 KB file of 5,000 "a" columns kept sheets.query busy past its timeout,
// and the plugin spinning after it.
func TestRepeatedHeaderNames(t *testing.T) {
	if got := Header([]string{"a", " a ", "a_2", "", "a"}); strings.Join(got, ",") != "a,a_2,a_2_2,D,a_3" {
		t.Fatalf("Header = %q", got)
	}
	s, base := setup(t)
	os.WriteFile(filepath.Join(base, "root", "wide.csv"), []byte(strings.Repeat("a,", MaxCol-1)+"a\n1\n"), 0o644)
	done := make(chan map[string]any, 1)
	go func() {
		done <- s.Call("sheets.query", map[string]any{"file": "wide.csv", "select": []string{"a_18278"}}, "")
	}()
	select {
	case got := <-done:
		if asJSON(got["records"]) != `[{"a_18278":""}]` {
			t.Fatalf("query = %s", asJSON(got))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sheets.query on a header of 18,278 equal names still busy after 10s")
	}
}

// TestSheetBounds: a record wider than MaxCol (on one line, or spread over
// lines by quoted line breaks) and a sheet of more than maxSheetCells cells
// are refused. Unbounded, a 32 MiB file of commas took 2.5 GB to parse.
func TestSheetBounds(t *testing.T) {
	s, base := setup(t)
	for name, data := range map[string]string{
		"wide.csv":    strings.Repeat(",", MaxCol) + "\n",
		"quoted.csv":  strings.Repeat(strings.Repeat(",", MaxCol/2)+`"x`+"\n"+`y",`, 3) + "\n",
		"wide.tsv":    "a\n" + strings.Repeat("\t", MaxCol) + "\n",
		"tall.csv":    strings.Repeat("a\n", maxSheetCells+1),
		"ok-wide.csv": strings.Repeat(",", MaxCol-1) + "\n" + `"` + strings.Repeat(",", MaxCol) + `"` + "\n",
	} {
		os.WriteFile(filepath.Join(base, "root", name), []byte(data), 0o644)
		if name == "ok-wide.csv" {
			s.Call("sheets.get_range", map[string]any{"file": name, "range": "A1:B2"}, "")
			continue
		}
		if e := s.Refused("sheets.get_range", map[string]any{"file": name, "range": "A1"}, "", "file"); e.Details["limit"] == nil {
			t.Errorf("%s: %v (details %v), want a limit", name, e, e.Details)
		}
	}
}

// TestAnswerBounds: an answer far larger than its sheet (ragged rows padded
// to the widest, or each record holding every column) is refused before it
// is built, counting cells as JSON writes them. Unbounded, a 115 KB CSV answered sheets.query with 20 MB (on
// 300 MB of memory) and 135 KB with gigabytes.
func TestAnswerBounds(t *testing.T) {
	s, base := setup(t)
	header := make([]string, 18000)
	for i := range header {
		header[i] = "c" + strconv.Itoa(i)
	}
	data := strings.Join(header, ",") + "\n" + strings.Repeat("1\n", 400)
	os.WriteFile(filepath.Join(base, "root", "ragged.csv"), []byte(data), 0o644)
	s.Refused("sheets.query", map[string]any{"file": "ragged.csv", "limit": 100}, "", "select")
	s.Refused("sheets.get_range", map[string]any{"file": "ragged.csv"}, "", "range")
	// 3 MiB of "<" is 18 MiB in JSON.
	os.WriteFile(filepath.Join(base, "root", "lt.csv"), []byte("a\n"+strings.Repeat("<", 3<<20)+"\n"), 0o644)
	s.Refused("sheets.query", map[string]any{"file": "lt.csv"}, "", "select")
	s.Refused("sheets.get_range", map[string]any{"file": "lt.csv"}, "", "range")
	if got := s.Call("sheets.query", map[string]any{"file": "ragged.csv", "select": []string{"c0", "c1"}}, ""); got["count"] != json.Number("400") {
		t.Fatalf("query two columns: %v records", got["count"])
	}
	if got := s.Call("sheets.get_range", map[string]any{"file": "ragged.csv", "range": "A2:C"}, ""); got["range"] != "A2:C401" {
		t.Fatalf("get_range A2:C = %v", got["range"])
	}
}

// TestHardLinkedSheetRefused: a sheet whose file has other hard links
// (which may be outside the root) is refused unless AllowHardLinks.
func TestHardLinkedSheetRefused(t *testing.T) {
	s, base := setup(t)
	root := filepath.Join(base, "root")
	if err := os.Link(filepath.Join(base, "secret.csv"), filepath.Join(root, "hard.csv")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	s.Refused("sheets.get_range", map[string]any{"file": "hard.csv"}, "", "file")
	tools, err := Tools(Config{Root: root, AllowHardLinks: true})
	got := plugintest.Server(t, tools, err).Call("sheets.get_range", map[string]any{"file": "hard.csv"}, "")
	if asJSON(got["rows"]) != `[["k"],["secret"]]` {
		t.Fatalf("with hard links allowed: %v", got)
	}
}

// TestQueryValueWorkOnce: a where value is lower-cased and parsed once per
// query, not once per row (a 1 MB value over 100,000 rows was 100 GB of
// lower-casing), and a clause of more than MaxConditions is refused.
func TestQueryValueWorkOnce(t *testing.T) {
	s, base := setup(t)
	var b strings.Builder
	b.WriteString("name\n")
	for i := range 2000 {
		b.WriteString("row" + strconv.Itoa(i) + "\n")
	}
	os.WriteFile(filepath.Join(base, "root", "rows.csv"), []byte(b.String()), 0o644)
	where := "name contains '" + strings.Repeat("X", 64<<10) + "'"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := s.Call("sheets.query", map[string]any{"file": "rows.csv", "where": where}, "")
	runtime.ReadMemStats(&after)
	if got["count"] != json.Number("0") {
		t.Fatalf("query = %v", got)
	}
	// Per row it allocated 2,000 lower-cased copies of 64 KiB: 128 MiB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("query allocated %d bytes: the value was lower-cased for every row", alloc)
	}
	many := strings.TrimSuffix(strings.Repeat("name != x and ", MaxConditions+1), " and ")
	s.Refused("sheets.query", map[string]any{"file": "rows.csv", "where": many}, "", "where")
}

// TestQueryStopsWhenCancelled: a query watches its call's context while it
// tests rows: 99 conditions over 2M rows ran on after the host's timeout.
func TestQueryStopsWhenCancelled(t *testing.T) {
	_, base := setup(t)
	tools, err := Tools(Config{Root: filepath.Join(base, "root")})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools, func(t sdk.Tool) bool { return t.Contract.Tool == "sheets.query" })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = tools[i].Handler(ctx, sdk.Call{Tool: "sheets.query", Payload: map[string]any{"file": "q1/sales.csv", "where": "region = EMEA"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled query = %v, want context.Canceled", err)
	}
}

// TestOrdoDataHidden: with the root set to a directory that holds Ordo's
// data (a home directory, or the working directory the host runs in), a
// CSV in that data (a run export, a plugin's store) is refused like any
// path outside the root, as in files.
func TestOrdoDataHidden(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "ordo")
	cfg := Config{Root: home, DataDir: filepath.Join(data, "plugins", "sheets")}
	for name, content := range map[string]string{
		filepath.Join(data, "runs.csv"):         "run,secret\nr1,s\n",
		filepath.Join(cfg.DataDir, "cache.csv"): "k\nv\n",
		filepath.Join(home, "open.csv"):         "a\n1\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(data, filepath.Join(home, "link")); err != nil {
		t.Fatal(err)
	}
	tools, err := Tools(cfg)
	s := plugintest.Server(t, tools, err)
	for _, file := range []string{".local/ordo/runs.csv", ".local/ordo/plugins/sheets/cache.csv", "link/runs.csv", ".local/x/../ordo/runs.csv"} {
		s.Refused("sheets.get_range", map[string]any{"file": file, "range": "A1:B2"}, "", "file")
		s.Refused("sheets.query", map[string]any{"file": file}, "", "file")
	}
	if got := asJSON(s.Call("sheets.get_range", map[string]any{"file": "open.csv", "range": "A1:A2"}, "")); !strings.Contains(got, `"1"`) {
		t.Fatalf("open.csv: %s", got)
	}
}
