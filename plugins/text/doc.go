// Package text is the bundled "text" plugin: deterministic glue a plan
// needs between tools — text.template fills {{key}} placeholders from
// values (state the plan bound), text.extract_json_field picks a value out
// of JSON text with an RFC 9535 JSONPath, and text.join joins a list — so
// plans need no LLM call to reshape one tool's output into another's input.
// The tools have no state and no side effects.
package text
