// Package policy decides, in code and from configuration, whether each
// action of a plan may run: allow, require_confirm or deny.
//
// It is separate from the engine so its rules can be read and tested in one
// place; the LLM never has a say in it. Risk is taken from the tool's
// contract, and the planner's hints may only raise it, never lower it.
package policy
