package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/contracts"
)

// Resource addresses.
const (
	uriPlanSchema   = "ordo://schemas/action-plan"
	uriCatalog      = "ordo://catalog"
	uriRunTemplate  = "ordo://runs/{id}"
	uriMermaidTmpl  = "ordo://runs/{id}/mermaid"
	runURIPrefix    = "ordo://runs/"
	mermaidURISuffx = "/mermaid"
)

func (s *Server) registerResources() {
	s.mcp.AddResource(mcp.NewResource(uriPlanSchema, "Action Plan JSON Schema",
		mcp.WithResourceDescription("The JSON Schema (draft 2020-12) of the Action Plan that plan and execute accept, for writing plans without Ordo's model."),
		mcp.WithMIMEType("application/schema+json")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: uriPlanSchema, MIMEType: "application/schema+json", Text: string(contracts.PlanSchema())}}, nil
		})
	if s.opts.Catalog != nil {
		s.mcp.AddResource(mcp.NewResource(uriCatalog, "Tool catalog",
			mcp.WithResourceDescription("Every tool Ordo can call, as contracts: risk, scopes, input and output schemas, produces_map."),
			mcp.WithMIMEType("application/json")),
			s.readCatalog)
	}
	for _, t := range []struct {
		uri, name, desc, mime string
		read                  server.ResourceTemplateHandlerFunc
	}{
		{uriRunTemplate, "Run record", "A run's full record: plan versions, policy, steps, state, decisions, result.",
			"application/json", s.readRun},
		{uriMermaidTmpl, "Run plan graph", "The run's current plan as a Mermaid flowchart.", "text/vnd.mermaid", s.readRun},
		{uriEventsTmpl, "Run events", "The run's log entries after a cursor: {run_id, events: [{seq, kind, summary, at, entry}], next, status}. Read again with after=next to follow the run; nothing is lost or repeated. limit caps a page (default 500, at most 1000).",
			"application/json", s.readEvents},
	} {
		s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(t.uri, t.name, mcp.WithTemplateDescription(t.desc), mcp.WithTemplateMIMEType(t.mime)), t.read)
	}
}

func (s *Server) readCatalog(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	tools := s.opts.Catalog.List()
	cs := make([]contracts.Contract, 0, len(tools))
	for _, t := range tools {
		if s.shows(ctx, t.Contract) {
			cs = append(cs, t.Contract)
		}
	}
	data, err := json.Marshal(map[string]any{"tools": cs, "count": len(cs)})
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "encode catalog: %w", err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(data)}}, nil
}

// readRun serves both run templates; the URI says which.
func (s *Server) readRun(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	id, mermaid, ok := parseRunURI(uri)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "resource %q names no run", uri).With("field", "uri")
	}
	run, err := s.loadRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if mermaid {
		if len(run.Plans) == 0 {
			return nil, contracts.Errorf(contracts.CodeInvalidInput, "run %s has no plan yet", id).With("run_id", id)
		}
		text := run.Plans[len(run.Plans)-1].Mermaid
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/vnd.mermaid", Text: text}}, nil
	}
	data, err := json.Marshal(run)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "encode run: %w", err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(data)}}, nil
}
