package console

import (
	"context"
	"fmt"

	"github.com/ordo-run/ordo/contracts"
)

// stepFailed asks what to do with an action that still failed after its
// retries: retry it (with an edited payload), skip it, re-plan, or abort.
func (p *Prompter) stepFailed(ctx context.Context, in *contracts.Interrupt) (contracts.Decision, error) {
	if in.Error != nil {
		fmt.Fprintf(p.out, "  error %d: %s\n", in.Error.Code, in.Error.Message)
	}
	if len(in.Payload) > 0 {
		fmt.Fprintf(p.out, "  payload: %s\n", in.Payload)
	}
	return p.ask(ctx, fmt.Sprintf("%s (%s) failed: [t]ry again [JSON|@FILE]  [s]kip  re[p]lan  [a]bort [NOTE] > ", in.ActionID, in.Tool), `  answer t, t {"field": ...} or t @FILE, s, p or a`,
		func(verb, arg string) (contracts.Decision, error) {
			switch verb {
			case "t", "try", "retry":
				d := p.decision(contracts.DecisionRetry, "")
				if arg != "" {
					payload, err := readJSON(arg)
					if err != nil {
						return contracts.Decision{}, err
					}
					d.Payload, d.Note = payload, "payload edited"
				}
				return d, nil
			case "s", "skip":
				return p.decision(contracts.DecisionSkip, arg), nil
			case "p", "replan":
				return p.decision(contracts.DecisionReplan, arg), nil
			case "a", "abort":
				return p.decision(contracts.DecisionAbort, arg), nil
			}
			return contracts.Decision{}, errUnknownAnswer
		})
}

// paused asks how a paused run goes on: continue, edit the remaining plan
// (actions already finished in it are kept), or abort (cancel it).
func (p *Prompter) paused(ctx context.Context) (contracts.Decision, error) {
	return p.ask(ctx, "paused: [c]ontinue  [e]dit FILE  [a]bort [NOTE] > ", "  answer c, e FILE (the remaining plan in JSON) or a",
		func(verb, arg string) (contracts.Decision, error) {
			switch verb {
			case "c", "continue":
				return p.decision(contracts.DecisionContinue, arg), nil
			case "a", "abort":
				return p.decision(contracts.DecisionAbort, arg), nil
			case "e", "edit":
				return p.planEdit(arg)
			}
			return contracts.Decision{}, errUnknownAnswer
		})
}
