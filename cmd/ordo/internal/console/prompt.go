package console

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/ordo-run/ordo/contracts"
)

// Prompter asks a person for decisions, one line at a time. Lines are
// read by one goroutine so a prompt can be abandoned when ctx ends.
type Prompter struct {
	out   io.Writer
	by    string
	lines chan string
	err   error         // why lines closed
	echo  func(on bool) // turns the terminal's echo off for a secret; nil: not a terminal
}

// NewPrompter reads answers from in and writes questions to out. by is
// recorded as who decided.
func NewPrompter(in io.Reader, out io.Writer, by string) *Prompter {
	p := &Prompter{out: out, by: by, lines: make(chan string)}
	if f, ok := in.(*os.File); ok {
		p.echo = echoSwitch(f)
	}
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		p.err = sc.Err()
		if p.err == nil {
			p.err = io.EOF
		}
		close(p.lines)
	}()
	return p
}

// readLine returns the next line, io.EOF when input ended, or ctx's error.
func (p *Prompter) readLine(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(p.out, prompt)
	select {
	case <-ctx.Done():
		fmt.Fprintln(p.out)
		return "", ctx.Err()
	case l, ok := <-p.lines:
		if !ok {
			fmt.Fprintln(p.out)
			return "", p.err
		}
		return strings.TrimSpace(l), nil
	}
}

// readSecret is readLine with the terminal's echo off.
func (p *Prompter) readSecret(ctx context.Context, prompt string) (string, error) {
	if p.echo == nil {
		return p.readLine(ctx, prompt)
	}
	p.echo(false)
	defer p.echo(true)
	line, err := p.readLine(ctx, prompt)
	fmt.Fprintln(p.out) // the Enter that ended the line was not echoed either
	return line, err
}

// Decide asks for the decision run's interrupt needs. It returns io.EOF
// when input ends first: the run then stays interrupted.
func (p *Prompter) Decide(ctx context.Context, run *contracts.Run) (contracts.Decision, error) {
	in := run.Interrupt
	if in == nil {
		return contracts.Decision{}, contracts.Errorf(contracts.CodeRunNotInterrupted, "run %s waits for no decision", run.ID)
	}
	switch in.Kind {
	case contracts.InterruptPlanApproval:
		return p.planApproval(ctx, "approve the plan?")
	case contracts.InterruptContractChanged:
		ContractChanges(p.out, "  ", in.Changes)
		return p.planApproval(ctx, "run the plan with the new contracts?")
	case contracts.InterruptStepApproval:
		return p.stepApproval(ctx, in)
	case contracts.InterruptClarify:
		fmt.Fprintln(p.out, "answer each question (/proceed plans without answers, /reject stops the run):")
		return p.answers(ctx, in.Questions, in.Suggestions, nil, true)
	case contracts.InterruptInputRequired:
		fmt.Fprintf(p.out, "%s %s needs values (JSON, or plain text for a string; /reject stops the run):\n", in.ActionID, in.Tool)
		return p.answers(ctx, in.Fields, in.Suggestions, in.Secret, false)
	case contracts.InterruptBudgetExceeded:
		return p.budget(ctx, in.Budget)
	case contracts.InterruptStepFailed:
		return p.stepFailed(ctx, in)
	case contracts.InterruptVerifyQuestion:
		return p.verifyQuestion(ctx, in)
	case contracts.InterruptPaused:
		return p.paused(ctx)
	}
	return contracts.Decision{}, contracts.Errorf(contracts.CodeInvalidDecision, "unknown interrupt %q", in.Kind)
}

// budget asks whether to raise a spent budget for this run (a new limit
// above what was used) or to stop the run.
func (p *Prompter) budget(ctx context.Context, b *contracts.BudgetStop) (contracts.Decision, error) {
	if b != nil {
		fmt.Fprintf(p.out, "  budget %s: %g used of %g, before the %s\n", b.Budget, b.Used, b.Limit, b.Before)
	}
	return p.ask(ctx, "raise it for this run? [a]pprove LIMIT  [r]eject [NOTE] > ", "  answer a LIMIT or r",
		func(verb, arg string) (contracts.Decision, error) {
			switch verb {
			case "a", "approve", "y", "yes":
				limit, err := strconv.ParseFloat(arg, 64)
				if err != nil {
					return contracts.Decision{}, fmt.Errorf("%q is not a number: give the new limit after a", arg)
				}
				d := p.decision(contracts.DecisionApprove, "")
				d.Answers = map[string]any{"limit": limit}
				return d, nil
			case "r", "reject", "n", "no":
				return p.decision(contracts.DecisionReject, arg), nil
			}
			return contracts.Decision{}, errUnknownAnswer
		})
}

// ContractChanges prints, one line each after indent, the tools whose
// contract changed (a contract_changed interrupt): what changed, the old
// and new contract hashes, and the new description.
func ContractChanges(w io.Writer, indent string, changes []contracts.ContractChange) {
	for _, c := range changes {
		fmt.Fprintf(w, "%s%s (for %s) changed: %s; contract %.12s -> %.12s\n", indent, c.Tool, strings.Join(c.Actions, ", "),
			strings.Join(c.Fields, ", "), c.Old.Hash, c.New.Hash)
		if c.Description != "" {
			fmt.Fprintf(w, "%s  now described as: %s\n", indent, Clip(c.Description, 300))
		}
	}
}

func (p *Prompter) planApproval(ctx context.Context, question string) (contracts.Decision, error) {
	return p.ask(ctx, question+" [a]pprove  [e]dit FILE  [r]eject [NOTE] > ", "  answer a, e FILE (an edited plan in JSON) or r",
		func(verb, arg string) (contracts.Decision, error) {
			switch verb {
			case "a", "approve", "y", "yes":
				return p.decision(contracts.DecisionApprove, ""), nil
			case "r", "reject", "n", "no":
				return p.decision(contracts.DecisionReject, arg), nil
			case "e", "edit":
				return p.planEdit(arg)
			}
			return contracts.Decision{}, errUnknownAnswer
		})
}

func (p *Prompter) stepApproval(ctx context.Context, in *contracts.Interrupt) (contracts.Decision, error) {
	if len(in.Payload) > 0 {
		fmt.Fprintf(p.out, "  payload: %s\n", in.Payload)
	}
	return p.ask(ctx, fmt.Sprintf("run %s (%s)? [a]pprove  [e]dit JSON|@FILE  [s]kip  [r]eject [NOTE] > ", in.ActionID, in.Tool), `  answer a, e {"field": ...} or e @FILE, s or r`,
		func(verb, arg string) (contracts.Decision, error) {
			switch verb {
			case "a", "approve", "y", "yes":
				return p.decision(contracts.DecisionApprove, ""), nil
			case "s", "skip":
				return p.decision(contracts.DecisionSkip, arg), nil
			case "r", "reject", "n", "no":
				return p.decision(contracts.DecisionReject, arg), nil
			case "e", "edit":
				payload, err := readJSON(arg)
				if err != nil {
					return contracts.Decision{}, err
				}
				d := p.decision(contracts.DecisionEdit, "payload edited")
				d.Payload = payload
				return d, nil
			}
			return contracts.Decision{}, errUnknownAnswer
		})
}

// answers asks each question in turn; a value that parses as JSON is kept
// as JSON, anything else as text. "/reject" rejects instead, and where
// proceed is offered (clarify) "/proceed" plans without answers.
func (p *Prompter) answers(ctx context.Context, questions []string, suggestions map[string]string, secret []string, proceed bool) (contracts.Decision, error) {
	d := p.decision(contracts.DecisionAnswer, "")
	d.Answers = map[string]any{}
	for _, q := range questions {
		prompt := "  " + q
		if s, ok := suggestions[q]; ok {
			prompt += " [" + s + "]"
		}
		var line string
		var err error
		if slices.Contains(secret, q) {
			line, err = p.readSecret(ctx, prompt+" (secret, not shown) > ")
		} else {
			line, err = p.readLine(ctx, prompt+" > ")
		}
		if err != nil {
			return contracts.Decision{}, err
		}
		if line == "/reject" {
			return p.decision(contracts.DecisionReject, "rejected while answering"), nil
		}
		if line == "/proceed" && proceed {
			return p.decision(contracts.DecisionProceedAnyway, "proceeded without answers"), nil
		}
		if line == "" && suggestions[q] != "" {
			line = suggestions[q]
		}
		var v any
		if json.Unmarshal([]byte(line), &v) != nil {
			v = line
		}
		d.Answers[q] = v
	}
	return d, nil
}

// errUnknownAnswer is a menu's refusal of an answer it does not offer.
var errUnknownAnswer = errors.New("unknown answer")

// ask asks prompt until choose, given an answer's verb (lower case) and
// the rest, makes a decision of it. An answer it refuses is said (the
// error's text; an unknown answer, hint) and the question asked again.
func (p *Prompter) ask(ctx context.Context, prompt, hint string, choose func(verb, arg string) (contracts.Decision, error)) (contracts.Decision, error) {
	for {
		line, err := p.readLine(ctx, prompt)
		if err != nil {
			return contracts.Decision{}, err
		}
		d, err := choose(split(line))
		switch {
		case err == nil:
			return d, nil
		case errors.Is(err, errUnknownAnswer):
			fmt.Fprintln(p.out, hint)
		default:
			fmt.Fprintf(p.out, "  %v\n", err)
		}
	}
}

func (p *Prompter) decision(kind contracts.DecisionKind, note string) contracts.Decision {
	return contracts.Decision{Kind: kind, By: p.by, Note: note}
}

func split(line string) (verb, arg string) {
	verb, arg, _ = strings.Cut(line, " ")
	return strings.ToLower(verb), strings.TrimSpace(arg)
}

// planEdit is the edit decision carrying the plan in the file at path, or
// why the file does not hold a plan.
func (p *Prompter) planEdit(path string) (contracts.Decision, error) {
	plan, err := readPlan(path)
	if err != nil {
		return contracts.Decision{}, err
	}
	d := p.decision(contracts.DecisionEdit, "edited from "+path)
	d.Plan = plan
	return d, nil
}

// readPlan reads an edited plan from a file.
func readPlan(path string) (*contracts.Plan, error) {
	if path == "" {
		return nil, fmt.Errorf("edit needs the file holding the edited plan")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return contracts.ParsePlan(data)
}

// readJSON takes inline JSON or @FILE.
func readJSON(arg string) (json.RawMessage, error) {
	data := []byte(arg)
	if name, ok := strings.CutPrefix(arg, "@"); ok {
		var err error
		if data, err = os.ReadFile(name); err != nil {
			return nil, err
		}
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("the edited payload is not valid JSON")
	}
	return json.RawMessage(data), nil
}
