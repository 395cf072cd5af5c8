package sheets

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/jsonsize"
	"github.com/ordo-run/ordo/plugins/internal/safepath"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// maxSheetBytes bounds the size of a sheet the plugin loads, and
// maxSheetCells its cells: a cell costs far more memory than its bytes
// (a file of 32 MiB of commas parsed to 2.5 GB).
const (
	maxSheetBytes = 32 << 20
	maxSheetCells = 1 << 21
)

type plugin struct {
	root *safepath.Root
}

// Tools opens the root and returns the two sheets tools.
func Tools(cfg Config) ([]sdk.Tool, error) {
	root, err := safepath.Open(RootEnv, cfg.Root)
	if err != nil {
		return nil, err
	}
	root.HideOrdo(cfg.DataDir)
	if cfg.AllowHardLinks {
		root.AllowHardLinks()
	}
	p := &plugin{root: root}
	return []sdk.Tool{
		{Contract: getRangeContract, Handler: p.getRange},
		{Contract: queryContract, Handler: p.query},
	}, nil
}

// load reads a whole sheet. Rows may be ragged.
func (p *plugin) load(file string) ([][]string, error) {
	name, err := p.root.Resolve("file", file)
	if err != nil {
		return nil, err
	}
	f, _, err := p.root.OpenRegular("file", file, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSheetBytes+1))
	if err != nil {
		return nil, toolerr.FromOS("file", file, err)
	}
	if len(data) > maxSheetBytes {
		return nil, toolerr.Refuse("file", "file %q is larger than %d bytes", file, maxSheetBytes)
	}
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(data), "\uFEFF")))
	r.FieldsPerRecord = -1
	if strings.EqualFold(filepath.Ext(name), ".tsv") {
		r.Comma = '\t'
	}
	if widest(data, byte(r.Comma)) > MaxCol { // the reader holds a whole record at once
		return nil, toolerr.Refuse("file", "file %q has a row with more than %d cells", file, MaxCol).With("limit", MaxCol)
	}
	var rows [][]string
	for cells := 0; ; {
		row, err := r.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, toolerr.Refuse("file", "file %q is not valid CSV: %v", file, err)
		}
		if cells += len(row); cells > maxSheetCells {
			return nil, toolerr.Refuse("file", "file %q has more than %d cells", file, maxSheetCells).With("limit", maxSheetCells)
		}
		rows = append(rows, row)
	}
}

// widest is the most cells a record of data has: separators outside quotes
// plus one. A doubled quote inside quotes toggles twice, so it counts right;
// a stray quote makes the reader fail at it anyway.
func widest(data []byte, sep byte) int {
	most, cells, quoted := 0, 1, false
	for _, c := range data {
		switch {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == sep:
			cells++
		case c == '\n':
			most, cells = max(most, cells), 1
		}
	}
	return max(most, cells)
}

type rangeIn struct {
	File  string `json:"file"`
	Range string `json:"range"`
}

func (p *plugin) getRange(_ context.Context, call sdk.Call) (any, error) {
	var in rangeIn
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	rng := Range{Col1: 1, Row1: 1}
	if in.Range != "" {
		var err error
		if rng, err = ParseRange(in.Range); err != nil {
			return nil, asRefusal(err)
		}
	}
	rows, err := p.load(in.File)
	if err != nil {
		return nil, err
	}
	if n := answerBytes(rows, clamp(rows, rng)); n > maxAnswerBytes {
		return nil, toolerr.Refuse("range", "range %q of %q holds more than %d bytes of cells (ragged rows are padded to the widest): ask for fewer rows or columns", in.Range, in.File, maxAnswerBytes).
			With("limit", maxAnswerBytes)
	}
	cells, used := Cut(rows, rng)
	out := map[string]any{"rows": cells, "range": "", "row_count": len(cells)}
	if len(cells) > 0 {
		out["range"] = used.String()
	}
	return out, nil
}

// maxAnswerBytes bounds the cells a tool answers with (about their size as
// JSON), which may be far more than the sheet: ragged rows are padded to the
// widest, and every query record holds every selected column. A 135 KB CSV
// (a header of 18,000 columns, then 10,000 rows of one cell) answered with
// gigabytes.
const maxAnswerBytes = contracts.MaxMessageBytes

// answerBytes is the size of the cells of rows inside r as JSON (a padded
// cell is "", a comma after each), counted until it passes maxAnswerBytes.
func answerBytes(rows [][]string, r Range) int {
	n := 0
	for i := r.Row1; i <= r.Row2 && r.Col1 <= r.Col2 && n <= maxAnswerBytes; i++ {
		row := rows[i-1]
		n += 3*(r.Col2-r.Col1+1) + 2
		for _, c := range row[min(len(row), r.Col1-1):min(len(row), r.Col2)] {
			n += jsonsize.Len(c) - 2
		}
	}
	return n
}

// clamp closes r's open ends at the data's edge.
func clamp(rows [][]string, r Range) Range {
	width := 0
	for _, row := range rows {
		width = max(width, len(row))
	}
	if r.Col2 == 0 || r.Col2 > width {
		r.Col2 = width
	}
	if r.Row2 == 0 || r.Row2 > len(rows) {
		r.Row2 = len(rows)
	}
	return r
}

// Cut returns the cells of rows inside r, padding ragged rows with "", and
// the concrete range it covered (open ends closed at the data's edge).
func Cut(rows [][]string, r Range) ([][]string, Range) {
	r = clamp(rows, r)
	cells := [][]string{}
	if r.Col1 > r.Col2 || r.Row1 > r.Row2 {
		return cells, r
	}
	for _, row := range rows[r.Row1-1 : r.Row2] {
		out := make([]string, r.Col2-r.Col1+1)
		if r.Col1 <= len(row) {
			copy(out, row[r.Col1-1:min(len(row), r.Col2)])
		}
		cells = append(cells, out)
	}
	return cells, r
}

type queryIn struct {
	File   string   `json:"file"`
	Where  string   `json:"where"`
	Select []string `json:"select"`
	Limit  int      `json:"limit"`
}

func (p *plugin) query(ctx context.Context, call sdk.Call) (any, error) {
	in := queryIn{Limit: 1000}
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	conds, err := ParseWhere(in.Where)
	if err != nil {
		return nil, asRefusal(err)
	}
	rows, err := p.load(in.File)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, toolerr.Refuse("file", "file %q is empty: query needs a header row", in.File)
	}
	header := Header(rows[0])
	index := make(map[string]int, len(header))
	for i, h := range header {
		index[h] = i
	}
	tests := make([]cellTest, len(conds))
	for i, c := range conds {
		col, ok := index[c.Column]
		if !ok {
			return nil, toolerr.Refuse("where", "where: no column %q (columns: %s)", c.Column, strings.Join(header, ", ")).With("column", toolerr.Shown(c.Column))
		}
		tests[i] = cellTest{col: col, match: c.Matcher()}
	}
	columns := header
	if len(in.Select) > 0 {
		columns = in.Select
	}
	selCols := make([]int, len(columns))
	for i, name := range columns {
		col, ok := index[name]
		if !ok {
			return nil, toolerr.Refuse("select", "select[%d]: no column %q (columns: %s)", i, name, strings.Join(header, ", ")).With("column", toolerr.Shown(name))
		}
		selCols[i] = col
	}
	records := []map[string]string{}
	truncated := false
	size := 0
	for i, row := range rows[1:] {
		if i%1024 == 0 { // 20 conditions over 2M rows take seconds: stop when the call ends
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if !matchAll(tests, row) {
			continue
		}
		if len(records) == in.Limit {
			truncated = true
			break
		}
		for i, col := range selCols {
			size += jsonsize.Len(columns[i]) + jsonsize.Len(cell(row, col)) + 2
		}
		if size > maxAnswerBytes {
			return nil, toolerr.Refuse("select", "the records would hold more than %d bytes: select fewer columns or lower the limit", maxAnswerBytes).
				With("limit", maxAnswerBytes)
		}
		rec := make(map[string]string, len(columns))
		for i, col := range selCols {
			rec[columns[i]] = cell(row, col)
		}
		records = append(records, rec)
	}
	return map[string]any{"records": records, "columns": columns, "count": len(records), "truncated": truncated}, nil
}

// cellTest is one condition of a where clause, bound to its column.
type cellTest struct {
	col   int
	match func(cell string) bool
}

func matchAll(tests []cellTest, row []string) bool {
	for _, t := range tests {
		if !t.match(cell(row, t.col)) {
			return false
		}
	}
	return true
}

func cell(row []string, col int) string {
	if col < len(row) {
		return row[col]
	}
	return ""
}

// Header makes record keys from a header row: surrounding spaces trimmed,
// an empty name becomes the column's letters, and a repeated name gets a
// suffix (_2, _3, ...) so no column is lost.
func Header(row []string) []string {
	out := make([]string, len(row))
	used := make(map[string]bool, len(row))
	next := map[string]int{} // the suffix a repeated name tries first: the ones below are taken
	for i, h := range row {
		h = strings.TrimSpace(h)
		if h == "" {
			h = ColumnName(i + 1)
		}
		for n, base := max(2, next[h]), h; used[h]; n++ {
			h, next[base] = base+"_"+strconv.Itoa(n), n+1
		}
		used[h], out[i] = true, h
	}
	return out
}

// asRefusal turns a parser's CodeInvalidInput error into the non-retryable
// tool error every other refusal is, keeping its details.
func asRefusal(err error) error {
	e := contracts.AsError(err)
	return toolerr.Refuse(fmt.Sprint(e.Details["field"]), "%s", e.Message).WithDetails(e.Details)
}
