// Package webui is Ordo's web console: server-rendered pages at /ui on the
// `ordo serve --http` listener, where a person signs in with the same
// bearer token an MCP client uses and watches runs live, answers their
// interrupts, pauses, cancels, retries and forks them, follows their
// sessions (conversations) turn by turn, browses the tool catalog and,
// with the admin role, adds and removes plugins and upstream MCP servers.
//
// It owns the pages, the session cookie that stands in for the token in a
// browser, CSRF protection and the console's Content-Security-Policy. It
// owns no rules: tokens, identities and roles, run privacy, the run event
// stream and add_upstream's argument checks are mcpserver's (called, not
// copied); the decisions each interrupt accepts are agent.Decisions; runs
// are started, resumed, steered and forked, and sessions read, through the
// same engine the MCP tools drive. Everything a tool or a model produced goes through html/template
// and is escaped; the one script (static/console.js, embedded like the
// stylesheet) follows the run's event stream and validates plan JSON as it
// is typed.
package webui
