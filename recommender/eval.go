package recommender

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/recommender/embed"
	"github.com/ordo-run/ordo/recommender/embed/semantic"
)

// EvalOptions configure Eval.
type EvalOptions struct {
	Embedder embed.Embedder // nil: the offline default
	// Semantic is the meaning embedder (Options.Semantic); nil means the
	// built-in static vectors, as `ordo` uses by default
	// (recommender.embedder: semantic), unless Lexical is set.
	Semantic embed.Embedder
	Lexical  bool    // no meaning list: recommender.embedder lexical
	Ranking  Ranking // zero: DefaultRanking()
	// Parts > 1 evaluates only the queries whose hash falls in Part (0-based)
	// of Parts buckets: tune on one part, check on another.
	Parts, Part int
}

// Metrics are retrieval figures over a set of queries.
type Metrics struct {
	Queries int     `json:"queries"`
	R1      float64 `json:"r_at_1"` // some correct tool ranked first
	R5      float64 `json:"r_at_5"` // some correct tool in the top 5
	MRR10   float64 `json:"mrr_at_10"`
	Full5   float64 `json:"full_at_5"`  // every correct tool in the top 5
	Full10  float64 `json:"full_at_10"` // every correct tool in the top 10
}

// Report is the result of Eval.
type Report struct {
	Tools     int     `json:"tools"`
	All       Metrics `json:"all"`
	Single    Metrics `json:"single_tool"`
	Multi     Metrics `json:"multi_tool"`
	BuildMS   float64 `json:"index_build_ms"`
	P50MS     float64 `json:"query_p50_ms"`
	P95MS     float64 `json:"query_p95_ms"`
	Embedder  string  `json:"embedder"`
	Semantic  string  `json:"semantic,omitempty"`
	Unknown   int     `json:"queries_naming_unknown_tools"`
	ToolsPath string  `json:"tools_path"`
	QueryPath string  `json:"queries_path"`
}

// ToolRecord is one line of a tools file: {"name","description","parameters"}.
type ToolRecord struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// QueryRecord is one line of a queries file: {"query","tools"}.
type QueryRecord struct {
	Query string   `json:"query"`
	Tools []string `json:"tools"`
}

// ReadTools parses a tools JSONL stream into contracts (risk "read", the
// parameters as input schema). A bad line is a coded error naming it.
func ReadTools(rd io.Reader) ([]contracts.Contract, error) {
	var out []contracts.Contract
	seen := map[string]bool{}
	err := readJSONL(rd, func(line int, raw []byte) error {
		var t ToolRecord
		if err := json.Unmarshal(raw, &t); err != nil {
			return contracts.Errorf(contracts.CodeInvalidJSON, "tools line %d: %w", line, err).With("line", line)
		}
		if strings.TrimSpace(t.Name) == "" {
			return contracts.Errorf(contracts.CodeInvalidInput, "tools line %d has no name", line).With("line", line).With("field", "name")
		}
		if seen[t.Name] {
			return contracts.Errorf(contracts.CodeInvalidInput, "tools line %d repeats tool %q", line, t.Name).With("line", line).With("field", "name")
		}
		seen[t.Name] = true
		schema := t.Parameters
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{}`)
		}
		out = append(out, contracts.Contract{Tool: t.Name, Description: t.Description,
			RiskLevel: contracts.RiskRead, InputSchema: schema, OutputSchema: json.RawMessage(`{}`)})
		return nil
	})
	return out, err
}

// ReadQueries parses a queries JSONL stream.
func ReadQueries(rd io.Reader) ([]QueryRecord, error) {
	var out []QueryRecord
	err := readJSONL(rd, func(line int, raw []byte) error {
		var q QueryRecord
		if err := json.Unmarshal(raw, &q); err != nil {
			return contracts.Errorf(contracts.CodeInvalidJSON, "queries line %d: %w", line, err).With("line", line)
		}
		if strings.TrimSpace(q.Query) == "" {
			return contracts.Errorf(contracts.CodeInvalidInput, "queries line %d has no query", line).With("line", line).With("field", "query")
		}
		if len(q.Tools) == 0 {
			return contracts.Errorf(contracts.CodeInvalidInput, "queries line %d lists no tools", line).With("line", line).With("field", "tools")
		}
		out = append(out, q)
		return nil
	})
	return out, err
}

func readJSONL(rd io.Reader, each func(line int, raw []byte) error) error {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for line := 1; sc.Scan(); line++ {
		raw := sc.Bytes()
		if len(strings.TrimSpace(string(raw))) == 0 {
			continue
		}
		if err := each(line, raw); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return contracts.Errorf(contracts.CodeInvalidInput, "read JSONL: %w", err)
	}
	return nil
}

func readFile[T any](path string, parse func(io.Reader) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "open %s: %w", path, err).With("path", path)
	}
	defer f.Close()
	out, err := parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// Eval indexes the tools file in memory, runs every query of the queries
// file (or one part of them) and measures the ranking.
func Eval(ctx context.Context, toolsPath, queriesPath string, opts EvalOptions) (*Report, error) {
	if opts.Parts > 1 && (opts.Part < 0 || opts.Part >= opts.Parts) {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "part %d outside 0..%d", opts.Part, opts.Parts-1).With("field", "part")
	}
	tools, err := readFile(toolsPath, ReadTools)
	if err != nil {
		return nil, err
	}
	queries, err := readFile(queriesPath, ReadQueries)
	if err != nil {
		return nil, err
	}
	if opts.Semantic == nil && !opts.Lexical {
		s, err := semantic.NewStatic()
		if err != nil {
			return nil, contracts.Errorf(contracts.CodeInternal, "semantic embedder: %w", err)
		}
		opts.Semantic = s
	} else if opts.Lexical {
		opts.Semantic = nil
	}
	r, err := New(Options{Embedder: opts.Embedder, Semantic: opts.Semantic, Ranking: opts.Ranking})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := r.Upsert(ctx, tools...); err != nil {
		return nil, err
	}
	rep := &Report{Tools: len(tools), BuildMS: ms(time.Since(start)), Embedder: r.Stats().Identity,
		Semantic:  r.Stats().Semantic,
		ToolsPath: toolsPath, QueryPath: queriesPath}
	var all, single, multi tally
	var lat []time.Duration
	for _, q := range queries {
		if opts.Parts > 1 && partOf(q.Query, opts.Parts) != opts.Part {
			continue
		}
		for _, t := range q.Tools {
			if _, ok := r.tools[t]; !ok {
				rep.Unknown++
				break
			}
		}
		t0 := time.Now()
		got, err := r.Recommend(ctx, q.Query, 10)
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", q.Query, err)
		}
		lat = append(lat, time.Since(t0))
		all.add(got, q.Tools)
		if len(q.Tools) > 1 {
			multi.add(got, q.Tools)
		} else {
			single.add(got, q.Tools)
		}
	}
	rep.All, rep.Single, rep.Multi = all.metrics(), single.metrics(), multi.metrics()
	slices.Sort(lat)
	rep.P50MS, rep.P95MS = ms(percentile(lat, 0.50)), ms(percentile(lat, 0.95))
	return rep, nil
}

func partOf(s string, parts int) int {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32() % uint32(parts))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(p*float64(len(sorted)-1))]
}

// tally accumulates per-query outcomes.
type tally struct {
	n                          int
	r1, r5, mrr, full5, full10 float64
}

func (t *tally) add(got, want []string) {
	t.n++
	first := -1
	for i, g := range got {
		if slices.Contains(want, g) {
			first = i
			break
		}
	}
	if first == 0 {
		t.r1++
	}
	if first >= 0 && first < 5 {
		t.r5++
	}
	if first >= 0 && first < 10 {
		t.mrr += 1 / float64(first+1)
	}
	if all(want, got, 5) {
		t.full5++
	}
	if all(want, got, 10) {
		t.full10++
	}
}

func all(want, got []string, k int) bool {
	top := got[:min(k, len(got))]
	for _, w := range want {
		if !slices.Contains(top, w) {
			return false
		}
	}
	return true
}

func (t tally) metrics() Metrics {
	if t.n == 0 {
		return Metrics{}
	}
	n := float64(t.n)
	return Metrics{Queries: t.n, R1: t.r1 / n, R5: t.r5 / n, MRR10: t.mrr / n, Full5: t.full5 / n, Full10: t.full10 / n}
}

// WriteText prints the report as an aligned table.
func (rep *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "queries\tn\tR@1\tR@5\tMRR@10\tFull@5\tFull@10\t\n")
	rows := []struct {
		name string
		m    Metrics
	}{{"all", rep.All}, {"single-tool", rep.Single}, {"multi-tool", rep.Multi}}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", r.name, r.m.Queries, r.m.R1, r.m.R5, r.m.MRR10, r.m.Full5, r.m.Full10)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "tools %d, index build %.1f ms, query p50 %.3f ms, p95 %.3f ms, embedder %s\n",
		rep.Tools, rep.BuildMS, rep.P50MS, rep.P95MS, rep.Embedder)
	if err == nil && rep.Semantic != "" {
		_, err = fmt.Fprintf(w, "semantic %s\n", rep.Semantic)
	}
	if err == nil && rep.Unknown > 0 {
		_, err = fmt.Fprintf(w, "warning: %d queries name tools missing from the tools file\n", rep.Unknown)
	}
	return err
}

// WriteJSON prints the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
