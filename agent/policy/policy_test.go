package policy

import (
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

func contract(risk contracts.Risk, scopes []string, tags ...string) contracts.Contract {
	return contracts.Contract{Tool: "svc.t", RiskLevel: risk, ScopesRequired: scopes, Tags: tags}
}

func TestDecide(t *testing.T) {
	act := contracts.Action{ID: "a1", Tool: "svc.t"}
	pii := act
	pii.PolicyHints = &contracts.PolicyHints{ContainsPII: true}
	lowered := act
	lowered.Risk = &contracts.ActionRisk{Level: contracts.RiskRead}
	raised := act
	raised.Risk = &contracts.ActionRisk{Tags: []string{contracts.TagFinancial}}
	upper := act
	upper.Tool = "SVC.T"
	for _, tc := range []struct {
		name   string
		cfg    Config
		a      contracts.Action
		c      contracts.Contract
		scopes []string
		want   string
		reason string
	}{
		{"read allowed", Config{}, act, contract(contracts.RiskRead, nil), nil, contracts.PolicyAllow, ""},
		{"write allowed", Config{}, act, contract(contracts.RiskWrite, []string{"w"}), []string{"w"}, contracts.PolicyAllow, ""},
		{"scope missing denied", Config{}, act, contract(contracts.RiskRead, []string{"w", "r"}), []string{"r"}, contracts.PolicyDeny, "missing scope w"},
		{"scope granted by tenant", Config{GrantedScopes: []string{"w"}}, act, contract(contracts.RiskRead, []string{"w"}), nil, contracts.PolicyAllow, ""},
		{"wildcard grant", Config{GrantedScopes: []string{"*"}}, act, contract(contracts.RiskRead, []string{"w"}), nil, contracts.PolicyAllow, ""},
		{"destructive confirms", Config{}, act, contract(contracts.RiskDestructive, nil), nil, contracts.PolicyRequireConfirm, "destructive"},
		{"destructive tenant denies", Config{DenyDestructive: true}, act, contract(contracts.RiskDestructive, nil), nil, contracts.PolicyDeny, "tenant denies"},
		{"destructive reason names the tool", Config{}, act, contract(contracts.RiskDestructive, nil), nil, contracts.PolicyRequireConfirm, "destructive tool svc.t"},
		{"sensitive reason names the tags", Config{}, act, contract(contracts.RiskDestructive, nil, contracts.TagDelete, contracts.TagPII), nil, contracts.PolicyRequireConfirm, "destructive tool svc.t tagged delete"},
		{"delete tag confirms", Config{}, act, contract(contracts.RiskWrite, nil, contracts.TagDelete), nil, contracts.PolicyRequireConfirm, "delete"},
		{"share_public tenant denies", Config{DenyDestructive: true}, act, contract(contracts.RiskWrite, nil, contracts.TagSharePublic), nil, contracts.PolicyDeny, "share_public"},
		{"external_send allowed", Config{}, act, contract(contracts.RiskWrite, nil, contracts.TagExternalSend), nil, contracts.PolicyAllow, ""},
		{"external_send with pii confirms", Config{}, pii, contract(contracts.RiskWrite, nil, contracts.TagExternalSend), nil, contracts.PolicyRequireConfirm, "pii"},
		{"external_send tenant denies", Config{DenyExternalSend: true}, act, contract(contracts.RiskWrite, nil, contracts.TagExternalSend), nil, contracts.PolicyDeny, "external_send"},
		{"planner cannot lower risk", Config{}, lowered, contract(contracts.RiskDestructive, nil), nil, contracts.PolicyRequireConfirm, "destructive"},
		{"planner can raise risk", Config{}, raised, contract(contracts.RiskRead, nil), nil, contracts.PolicyRequireConfirm, "financial"},
		{"deny tool by prefix", Config{DenyTools: []string{"svc."}}, act, contract(contracts.RiskRead, nil), nil, contracts.PolicyDeny, "tenant denies tool"},
		{"confirm tool", Config{ConfirmTools: []string{"svc.t"}}, act, contract(contracts.RiskRead, nil), nil, contracts.PolicyRequireConfirm, "tenant confirms"},
		{"deny ignores case", Config{DenyTools: []string{"svc.t"}}, upper, contract(contracts.RiskRead, nil), nil, contracts.PolicyDeny, "tenant denies tool SVC.T"},
		{"deny prefix ignores case", Config{DenyTools: []string{"svc."}}, upper, contract(contracts.RiskRead, nil), nil, contracts.PolicyDeny, "tenant denies tool"},
		{"confirm ignores case", Config{ConfirmTools: []string{"SVC.t"}}, act, contract(contracts.RiskRead, nil), nil, contracts.PolicyRequireConfirm, "tenant confirms"},
		{"prefix needs a tool after it", Config{DenyTools: []string{"svc."}}, contracts.Action{ID: "a1", Tool: "svcx.t"}, contract(contracts.RiskRead, nil), nil, contracts.PolicyAllow, ""},
		{"deny beats confirm", Config{}, act, contract(contracts.RiskDestructive, []string{"x"}), nil, contracts.PolicyDeny, "missing scope x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.cfg, tc.a, tc.c, tc.scopes)
			if got.Decision != tc.want || !strings.Contains(got.Reason, tc.reason) {
				t.Fatalf("got %+v, want %s (%q)", got, tc.want, tc.reason)
			}
		})
	}
}

func TestEvaluateDeniesUnknownTool(t *testing.T) {
	p := &contracts.Plan{Actions: []contracts.Action{{ID: "a1", Tool: "nope.x"}, {ID: "a2", Tool: "svc.t"}}}
	got := Evaluate(Config{}, p, func(name string) (contracts.Contract, bool) {
		return contract(contracts.RiskRead, nil), name == "svc.t"
	}, nil)
	if got["a1"].Decision != contracts.PolicyDeny || got["a2"].Decision != contracts.PolicyAllow {
		t.Fatalf("got %+v", got)
	}
}
