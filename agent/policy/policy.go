package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ordo-run/ordo/contracts"
)

// Config is the tenant's policy. The zero value asks before destructive,
// delete, financial and share_public actions, allows the rest, and checks
// scopes against those the run was granted.
type Config struct {
	// DenyDestructive denies (instead of confirming) destructive actions and
	// actions tagged delete, financial or share_public.
	DenyDestructive bool `json:"deny_destructive"`
	// DenyExternalSend denies actions tagged external_send.
	DenyExternalSend bool `json:"deny_external_send"`
	// DenyTools and ConfirmTools match tool names exactly or by a prefix
	// ending in "." (e.g. "chat." matches chat.post_message), ignoring case.
	DenyTools    []string `json:"deny_tools,omitempty"`
	ConfirmTools []string `json:"confirm_tools,omitempty"`
	// GrantedScopes are given to every run on top of the caller's; "*"
	// grants all (single-user local mode).
	GrantedScopes []string `json:"granted_scopes,omitempty"`
}

// confirmTags need a person unless the tenant denies them outright.
var confirmTags = []string{contracts.TagDelete, contracts.TagFinancial, contracts.TagSharePublic}

// Decide returns the verdict on one action whose tool has contract c, for a
// caller holding scopes. Deny beats confirm beats allow; the reason lists
// every rule that fired.
func Decide(cfg Config, a contracts.Action, c contracts.Contract, scopes []string) contracts.PolicyDecision {
	var deny, confirm []string
	if matchTool(cfg.DenyTools, a.Tool) {
		deny = append(deny, "tenant denies tool "+a.Tool)
	}
	if missing := MissingScopes(c.ScopesRequired, scopes, cfg.GrantedScopes); len(missing) > 0 {
		deny = append(deny, "missing scope "+strings.Join(missing, ", "))
	}
	tags := tagsOf(a, c)
	destructive := riskOf(a, c) == contracts.RiskDestructive
	var sensitive []string
	for _, t := range confirmTags {
		if slices.Contains(tags, t) {
			sensitive = append(sensitive, t)
		}
	}
	if destructive || len(sensitive) > 0 {
		r := "tool " + a.Tool
		if destructive {
			r = "destructive " + r
		}
		if len(sensitive) > 0 {
			r += " tagged " + strings.Join(sensitive, ",")
		}
		if cfg.DenyDestructive {
			deny = append(deny, "tenant denies "+r)
		} else {
			confirm = append(confirm, r)
		}
	}
	if slices.Contains(tags, contracts.TagExternalSend) {
		switch {
		case cfg.DenyExternalSend:
			deny = append(deny, "tenant denies external_send")
		case slices.Contains(tags, contracts.TagPII):
			confirm = append(confirm, "external_send with pii")
		}
	}
	if a.PolicyHints != nil && a.PolicyHints.NeedsUserConfirmation {
		confirm = append(confirm, "planner asked for confirmation")
	}
	if matchTool(cfg.ConfirmTools, a.Tool) {
		confirm = append(confirm, "tenant confirms tool "+a.Tool)
	}
	switch {
	case len(deny) > 0:
		return contracts.PolicyDecision{Decision: contracts.PolicyDeny, Reason: strings.Join(deny, "; ")}
	case len(confirm) > 0:
		return contracts.PolicyDecision{Decision: contracts.PolicyRequireConfirm, Reason: strings.Join(confirm, "; ")}
	}
	return contracts.PolicyDecision{Decision: contracts.PolicyAllow}
}

// Evaluate decides every action of p. contractOf returns an action's tool
// contract; a tool it does not know is denied (fail closed).
func Evaluate(cfg Config, p *contracts.Plan, contractOf func(tool string) (contracts.Contract, bool), scopes []string) map[string]contracts.PolicyDecision {
	out := make(map[string]contracts.PolicyDecision, len(p.Actions))
	for _, a := range p.Actions {
		c, ok := contractOf(a.Tool)
		if !ok {
			out[a.ID] = contracts.PolicyDecision{Decision: contracts.PolicyDeny, Reason: fmt.Sprintf("unknown tool %s", a.Tool)}
			continue
		}
		out[a.ID] = Decide(cfg, a, c, scopes)
	}
	return out
}

// riskOf is the higher of the contract's and the planner's risk level.
func riskOf(a contracts.Action, c contracts.Contract) contracts.Risk {
	r := c.RiskLevel
	if a.Risk != nil && rank(a.Risk.Level) > rank(r) {
		r = a.Risk.Level
	}
	return r
}

// rank orders risk levels, an unknown one as read.
func rank(r contracts.Risk) int {
	switch r {
	case contracts.RiskWrite:
		return 1
	case contracts.RiskDestructive:
		return 2
	}
	return 0
}

// tagsOf joins the contract's tags with the planner's tags and hints.
func tagsOf(a contracts.Action, c contracts.Contract) []string {
	tags := slices.Clone(c.Tags)
	if a.Risk != nil {
		tags = append(tags, a.Risk.Tags...)
	}
	if h := a.PolicyHints; h != nil {
		if h.ContainsPII {
			tags = append(tags, contracts.TagPII)
		}
		if h.ExternalSend {
			tags = append(tags, contracts.TagExternalSend)
		}
	}
	slices.Sort(tags)
	return slices.Compact(tags)
}

// MissingScopes lists the scopes of required that neither caller nor
// granted holds; "*" in either holds them all.
func MissingScopes(required, caller, granted []string) []string {
	if slices.Contains(granted, "*") || slices.Contains(caller, "*") {
		return nil
	}
	var missing []string
	for _, s := range required {
		if !slices.Contains(caller, s) && !slices.Contains(granted, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// matchTool matches a tool name against rules regardless of case: tool
// names are case-sensitive, so an upstream server that renamed its tool
// delete_repo to Delete_Repo would otherwise walk past a rule naming it.
func matchTool(patterns []string, tool string) bool {
	for _, p := range patterns {
		if strings.EqualFold(p, tool) || (strings.HasSuffix(p, ".") && len(tool) > len(p) && strings.EqualFold(tool[:len(p)], p)) {
			return true
		}
	}
	return false
}
