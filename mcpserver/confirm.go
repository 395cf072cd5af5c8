package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
)

// The admin tools that make Ordo start a program or connect somewhere
// (add_plugin, add_upstream) ask the person first when they are called
// over stdio. The stdio client is whatever steers the local assistant, and
// an assistant that a web page or a file prompt-injected must not be able
// to start programs on its own; over HTTP the admin role comes from a
// token an operator handed to someone. The question travels as an MCP
// elicitation (a multi round-trip request, which mcp-go bridges to
// elicitation/create for older clients) and is remembered like the
// gateway's confirmations (gateway.go); a client that cannot elicit is
// refused, because nobody could confirm.

// confirmTTL bounds how long an unanswered question is remembered.
const confirmTTL = 10 * time.Minute

// confirmation is what the person is shown and the arguments the tool
// then runs with: exactly what was shown (add_plugin pins the checksum of
// the executable the person saw).
type confirmation struct {
	prompt string
	args   json.RawMessage
}

// confirmer describes a call to the person, after checking its arguments
// so nobody is asked about a call that would fail anyway.
type confirmer func(args json.RawMessage) (confirmation, error)

// onStdio reports whether the request came over stdio (ServeStdio puts
// the progress writer in every request's context).
func onStdio(ctx context.Context) bool { return ctx.Value(stdioProgressKey{}) != nil }

// confirmed returns the arguments to run d with once the person approved
// the call, or the elicitation to send first. A retry must carry the
// state of a question this server asked, for the same user and the very
// same arguments, and is honoured once.
func (s *Server) confirmed(ctx context.Context, req mcp.CallToolRequest, d *toolDef, args json.RawMessage) (*mcp.CallToolResult, json.RawMessage, error) {
	user := identityFrom(ctx).User
	if st := req.Params.RequestState; st != "" {
		token, ok := strings.CutPrefix(st, stateConfirm)
		var p pendingConfirm
		if ok {
			p, ok = d.pending.take(token, user)
		}
		if !ok || p.tool != d.name || p.digest != argsDigest(args) {
			return nil, nil, contracts.Errorf(contracts.CodeInvalidInput, "%s: the confirmation this answers is unknown, expired or was asked about other arguments; call again", d.name).
				With("field", "requestState").With("tool", d.name)
		}
		answer := server.ElicitationResponse(req.Params.InputResponses, inputAnswer)
		form := map[string]any{}
		if answer != nil {
			form, _ = answer.Content.(map[string]any)
		}
		if answer == nil || answer.Action != mcp.ElicitationResponseActionAccept || form["decision"] != string(contracts.DecisionApprove) {
			why := "rejected"
			if answer == nil {
				why = "not answered"
			} else if answer.Action != mcp.ElicitationResponseActionAccept {
				why = string(answer.Action)
			}
			s.log.Info("admin call not confirmed", "tool", d.name, "user", user, "answer", why)
			return nil, nil, contracts.Errorf(contracts.CodeRejected, "%s was not run: the person's confirmation was %s; nothing was changed", d.name, why).
				With("tool", d.name)
		}
		s.log.Info("admin call confirmed", "tool", d.name, "user", user)
		return nil, p.runArgs, nil
	}
	if clientCaps(ctx).Elicitation == nil {
		return nil, nil, contracts.Errorf(contracts.CodeApprovalRequired,
			"%s over stdio asks the person first, and this client cannot ask (it did not declare elicitation): use a client that supports elicitation, or run `ordo plugins add` in a terminal", d.name).
			With("tool", d.name)
	}
	c, err := d.confirm(args)
	if err != nil {
		return nil, nil, err
	}
	token := d.pending.add(pendingConfirm{user: user, tool: d.name, digest: argsDigest(args), runArgs: c.args})
	return server.NewInputRequestBuilder(stateConfirm+token).Elicit(inputAnswer, mcp.ElicitationParams{
		Message: c.prompt,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{"type": "string", "title": "Decision", "enum": []string{"approve", "reject"},
					"description": "approve only if you asked your assistant for exactly this"},
			},
			"required": []string{"decision"},
		},
	}).ToolResult(), nil, nil
}

// confirmAddPlugin shows the executable, its checksum, arguments and
// environment. Without a sha256 argument the file's current digest is
// shown and pinned, so the binary that starts is the one the person saw.
func (s *Server) confirmAddPlugin(raw json.RawMessage) (confirmation, error) {
	var spec host.PluginSpec
	if err := decodeArgs(raw, &spec); err != nil {
		return confirmation{}, err
	}
	sum := spec.SHA256
	origin := "as given by the caller; the binary must match it"
	if sum == "" {
		var err error
		if sum, err = host.PluginSHA256(spec.Path); err != nil {
			return confirmation{}, contracts.Errorf(contracts.CodeInvalidInput, "add_plugin: argument path: %w", err).With("field", "path")
		}
		spec.SHA256 = sum
		origin = "of the file now; only this exact binary will start"
	}
	pinned, err := json.Marshal(spec)
	if err != nil {
		return confirmation{}, contracts.Errorf(contracts.CodeInternal, "add_plugin: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "An MCP client asks Ordo to start a plugin program and add its tools.\n\nName: %s\nExecutable: %s\nSHA-256: %s (%s)\n", spec.Name, spec.Path, sum, origin)
	writeJSONLine(&b, "Arguments", spec.Args)
	writeJSONLine(&b, "Environment", spec.Env)
	b.WriteString("\nApprove only if you asked for exactly this.")
	return confirmation{prompt: b.String(), args: pinned}, nil
}

// confirmAddUpstream shows the program and arguments that will run (as
// the argv, no shell) or the URL Ordo will connect to (as host.ShownURL
// shows it: a key in it is not the person's to see), with everything
// that changes what its tools may do (environment, risk overrides).
func (s *Server) confirmAddUpstream(raw json.RawMessage) (confirmation, error) {
	var a addUpstreamArgs
	if err := decodeArgs(raw, &a); err != nil {
		return confirmation{}, err
	}
	spec, err := a.spec(s.opts.LookupEnv)
	if err != nil {
		return confirmation{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "An MCP client asks Ordo to connect an upstream MCP server and add its tools as %s.*.\n\nName: %s\n", spec.Name, spec.Name)
	if spec.URL != "" {
		fmt.Fprintf(&b, "URL: %s\n", host.ShownURL(spec.URL)) // keys in it shown HIDDEN
		if a.URLSecretEnv != "" {
			fmt.Fprintf(&b, "URL secret (%s): from the server's variable %s\n", host.URLSecretPlaceholder, a.URLSecretEnv)
		}
		if a.BearerTokenEnv != "" {
			fmt.Fprintf(&b, "Bearer token: from the server's variable %s\n", a.BearerTokenEnv)
		}
	} else {
		writeJSONLine(&b, "Program and arguments (run without a shell)", spec.Command)
		writeJSONLine(&b, "Environment", spec.Env)
	}
	writeJSONLine(&b, "Tool overrides", spec.Overrides)
	b.WriteString("\nApprove only if you asked for exactly this.")
	return confirmation{prompt: b.String(), args: raw}, nil
}

// writeJSONLine adds "label: JSON" for a non-empty value: JSON shows
// every argument exactly, spaces and quotes included.
func writeJSONLine(b *strings.Builder, label string, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return
	}
	if data := strings.TrimSpace(buf.String()); data != "null" && data != "{}" && data != "[]" {
		fmt.Fprintf(b, "%s: %s\n", label, data)
	}
}
