package sheets

import (
	"fmt"
	"strings"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
)

// Limits of A1 notation (those of common spreadsheets).
const (
	MaxCol = 18278   // ZZZ
	MaxRow = 1048576 // 2^20
)

// Range is a rectangle of cells, 1-based and inclusive. Col2 or Row2 of 0
// means "to the last column/row that has data".
type Range struct {
	Col1, Row1, Col2, Row2 int
}

// ParseRange reads A1 notation: a cell ("B3"), a rectangle ("A1:C10"),
// whole columns ("A:C"), whole rows ("2:5"), or open-ended ("A2:C", "B2:5"
// wants rows 2-5 from column B on). "$" marks and a "Sheet!" prefix are
// ignored (a CSV file has one sheet); letters may be lower case; reversed
// corners are swapped. Errors are CodeInvalidInput naming field "range".
func ParseRange(s string) (Range, error) {
	bad := func(format string, args ...any) (Range, error) {
		return Range{}, contracts.Errorf(contracts.CodeInvalidInput, "range %q: "+format, append([]any{s}, args...)...).
			With("field", "range").With("range", toolerr.Shown(s))
	}
	body := s
	if i := strings.LastIndexByte(body, '!'); i >= 0 {
		body = body[i+1:]
	}
	body = strings.ReplaceAll(strings.TrimSpace(body), "$", "")
	first, second, pair := strings.Cut(body, ":")
	c1, r1, err := parseRef(first)
	if err != nil {
		return bad("%v", err)
	}
	if !pair {
		if c1 == 0 || r1 == 0 {
			return bad("a single reference must be a cell like B3")
		}
		return Range{c1, r1, c1, r1}, nil
	}
	c2, r2, err := parseRef(second)
	if err != nil {
		return bad("%v", err)
	}
	if c1 == 0 && c2 != 0 {
		return bad("the start has no column but the end has one")
	}
	if r1 == 0 && r2 != 0 {
		return bad("the start has no row but the end has one")
	}
	r := Range{Col1: max(c1, 1), Row1: max(r1, 1), Col2: c2, Row2: r2}
	if r.Col2 != 0 && r.Col2 < r.Col1 {
		r.Col1, r.Col2 = r.Col2, r.Col1
	}
	if r.Row2 != 0 && r.Row2 < r.Row1 {
		r.Row1, r.Row2 = r.Row2, r.Row1
	}
	return r, nil
}

// parseRef reads letters then digits, either part optional but not both; a
// missing part is 0.
func parseRef(ref string) (col, row int, err error) {
	i := 0
	for ; i < len(ref) && isLetter(ref[i]); i++ {
		if i == 3 {
			return 0, 0, fmt.Errorf("column %q has more than 3 letters", ref[:i+1])
		}
		col = col*26 + int(ref[i]|0x20-'a') + 1
	}
	digits := ref[i:]
	if i == 0 && digits == "" {
		return 0, 0, fmt.Errorf("empty reference")
	}
	for j := 0; j < len(digits); j++ {
		if digits[j] < '0' || digits[j] > '9' {
			return 0, 0, fmt.Errorf("%q is not a cell reference (letters then digits)", ref)
		}
		if row = row*10 + int(digits[j]-'0'); row > MaxRow {
			return 0, 0, fmt.Errorf("row %s is beyond %d", digits, MaxRow)
		}
	}
	if digits != "" && row == 0 {
		return 0, 0, fmt.Errorf("row 0 does not exist (rows start at 1)")
	}
	return col, row, nil
}

func isLetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

// String is the range in canonical A1 notation; an open end shows as a
// missing column or row ("A2:C").
func (r Range) String() string {
	end := ""
	if r.Col2 != 0 {
		end = ColumnName(r.Col2)
	}
	if r.Row2 != 0 {
		end += fmt.Sprint(r.Row2)
	}
	return ColumnName(r.Col1) + fmt.Sprint(r.Row1) + ":" + end
}

// ColumnName is the letters of 1-based column n (1 -> A, 27 -> AA).
func ColumnName(n int) string {
	var b []byte
	for ; n > 0; n = (n - 1) / 26 {
		b = append([]byte{byte('A' + (n-1)%26)}, b...)
	}
	return string(b)
}
