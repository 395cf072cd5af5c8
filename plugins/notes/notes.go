package notes

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// storeName is the store file inside the data directory, and lockName the
// lock every process using that directory takes to change it.
const (
	storeName = "notes.json"
	lockName  = "notes.lock"
)

type plugin struct {
	store *store
	now   func() time.Time
}

// Tools opens the store and returns the four notes tools.
func Tools(cfg Config) ([]sdk.Tool, error) {
	s, err := openStore(filepath.Join(cfg.DataDir, storeName), cfg.MaxBytes)
	if err != nil {
		return nil, err
	}
	p := &plugin{store: s, now: func() time.Time { return time.Now().UTC() }}
	return []sdk.Tool{
		{Contract: createPageContract, Handler: p.createPage},
		{Contract: getPageContract, Handler: p.getPage},
		{Contract: queryPagesContract, Handler: p.queryPages},
		{Contract: appendBlockContract, Handler: p.appendBlock},
	}, nil
}

// page finds a page by id or URL, refusing an unknown one by field.
func (cur *snapshot) page(field, ref string) (Page, error) {
	pg, ok := cur.Pages[pageID(ref)]
	if !ok {
		return Page{}, toolerr.Refuse(field, "%s %q: no such page", field, ref)
	}
	return pg, nil
}

type createIn struct {
	Title   string `json:"title"`
	Content string `json:"content"`
	Parent  string `json:"parent"`
}

func (p *plugin) createPage(_ context.Context, call sdk.Call) (any, error) {
	var in createIn
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	return p.store.change(call, "content", func(cur *snapshot) (Page, any, error) {
		now := p.now()
		pg := Page{ID: newID("page_"), Title: in.Title, Blocks: []Block{}, CreatedAt: now, UpdatedAt: now}
		if in.Parent != "" {
			parent, err := cur.page("parent", in.Parent)
			if err != nil {
				return Page{}, nil, err
			}
			pg.Parent = parent.ID
		}
		if in.Content != "" {
			pg.Blocks = append(pg.Blocks, Block{ID: newID("blk_"), Type: "paragraph", Text: in.Content, CreatedAt: now})
		}
		if err := fits("content", pg); err != nil {
			return Page{}, nil, err
		}
		return pg, summary(pg), nil
	})
}

type appendIn struct {
	PageID string `json:"page_id"`
	Text   string `json:"text"`
	Type   string `json:"type"`
}

func (p *plugin) appendBlock(_ context.Context, call sdk.Call) (any, error) {
	in := appendIn{Type: "paragraph"}
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	return p.store.change(call, "text", func(cur *snapshot) (Page, any, error) {
		pg, err := cur.page("page_id", in.PageID)
		if err != nil {
			return Page{}, nil, err
		}
		now := p.now()
		b := Block{ID: newID("blk_"), Type: in.Type, Text: in.Text, CreatedAt: now}
		pg.Blocks = append(slices.Clip(pg.Blocks), b) // never share the old snapshot's array
		pg.UpdatedAt = now
		if err := fits("text", pg); err != nil {
			return Page{}, nil, err
		}
		return pg, map[string]any{"block_id": b.ID, "page_id": pg.ID, "url": pg.url(), "block_count": len(pg.Blocks)}, nil
	})
}

type getIn struct {
	PageID string `json:"page_id"`
}

func (p *plugin) getPage(_ context.Context, call sdk.Call) (any, error) {
	var in getIn
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	cur, err := p.store.snap()
	if err != nil {
		return nil, err
	}
	pg, err := cur.page("page_id", in.PageID)
	if err != nil {
		return nil, err
	}
	return pg.full(), nil
}

// full is the page as notes.get_page returns it.
func (pg Page) full() map[string]any {
	out := summary(pg)
	out["content"], out["blocks"], out["updated_at"] = pg.content(), pg.Blocks, pg.UpdatedAt
	return out
}

// maxPageBytes bounds a page as notes.get_page returns it (JSON, where a
// control character or "<" takes 6 bytes): half of what a plugin may send
// the host, so a page that could be written can always be read back.
const maxPageBytes = contracts.MaxMessageBytes / 2

// fits refuses (field) a change that would make pg larger than maxPageBytes.
func fits(field string, pg Page) error {
	data, err := json.Marshal(pg.full())
	if err != nil {
		return err
	}
	if len(data) > maxPageBytes {
		return toolerr.Refuse(field, "the page would be %d bytes as notes.get_page returns it, over the limit of %d", len(data), maxPageBytes).
			With("limit", maxPageBytes)
	}
	return nil
}

type queryIn struct {
	TitleContains string `json:"title_contains"`
	Parent        string `json:"parent"`
	Limit         int    `json:"limit"`
}

func (p *plugin) queryPages(_ context.Context, call sdk.Call) (any, error) {
	in := queryIn{Limit: 50}
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	cur, err := p.store.snap()
	if err != nil {
		return nil, err
	}
	if in.Parent != "" {
		if _, err := cur.page("parent", in.Parent); err != nil {
			return nil, err
		}
	}
	var hits []Page
	needle := strings.ToLower(in.TitleContains) // once: a 16 MiB needle was lower-cased for every page
	for _, pg := range cur.Pages {
		if (in.Parent == "" || pg.Parent == pageID(in.Parent)) && strings.Contains(strings.ToLower(pg.Title), needle) {
			hits = append(hits, pg)
		}
	}
	slices.SortFunc(hits, func(a, b Page) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	records := []map[string]any{}
	for _, pg := range hits[:min(len(hits), in.Limit)] {
		r := summary(pg)
		r["updated_at"] = pg.UpdatedAt
		records = append(records, r)
	}
	return map[string]any{"records": records, "count": len(records), "truncated": len(hits) > in.Limit}, nil
}

// summary is what create_page returns and query_pages lists per page.
func summary(pg Page) map[string]any {
	out := map[string]any{"id": pg.ID, "url": pg.url(), "title": pg.Title, "created_at": pg.CreatedAt}
	if pg.Parent != "" {
		out["parent"] = pg.Parent
	}
	return out
}
