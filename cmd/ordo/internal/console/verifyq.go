package console

import (
	"context"
	"errors"
	"fmt"

	"github.com/ordo-run/ordo/contracts"
)

// verifyQuestion asks the critic's question about a step's result: answer
// it (the step is tried again with the answer), keep the result, or reject.
func (p *Prompter) verifyQuestion(ctx context.Context, in *contracts.Interrupt) (contracts.Decision, error) {
	fmt.Fprintf(p.out, "  %s (%s) returned: %s\n", in.ActionID, in.Tool, in.Payload)
	q := "what should change?"
	if len(in.Questions) > 0 {
		q = in.Questions[0]
	}
	fmt.Fprintf(p.out, "  the critic asks: %s\n", q)
	return p.ask(ctx, "[a]nswer TEXT  [k]eep the result  [r]eject [NOTE] > ", "  answer a TEXT, k or r",
		func(verb, arg string) (contracts.Decision, error) {
			switch verb {
			case "a", "answer":
				if arg == "" {
					return contracts.Decision{}, errors.New("give the answer after a")
				}
				d := p.decision(contracts.DecisionAnswer, "")
				d.Answers = map[string]any{q: arg}
				return d, nil
			case "k", "keep", "approve", "y", "yes":
				return p.decision(contracts.DecisionApprove, "result kept"), nil
			case "r", "reject", "n", "no":
				return p.decision(contracts.DecisionReject, arg), nil
			}
			return contracts.Decision{}, errUnknownAnswer
		})
}
