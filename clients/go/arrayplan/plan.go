package arrayplan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	arrayplanv1 "github.com/arrayplan/arrayplan/clients/go/proto/arrayplan/v1"
)

// PlanOption configures one Plan call.
type PlanOption func(*planConfig)

type planConfig struct {
	planID     string
	onProgress func(*arrayplanv1.PlanProgress)
	onCreated  func(*arrayplanv1.Plan)
}

// WithPlanID asks for this plan id (the plan's name is then "plans/ID"): 4-63 lowercase letters,
// digits and hyphens, starting with a letter. ALREADY_EXISTS when it is taken.
func WithPlanID(id string) PlanOption { return func(c *planConfig) { c.planID = id } }

// WithProgress calls fn with every progress event of the plan while it runs (candidates
// evaluated of those to evaluate, its queue position while it waits, its phase).
func WithProgress(fn func(*arrayplanv1.PlanProgress)) PlanOption {
	return func(c *planConfig) { c.onProgress = fn }
}

// WithCreated calls fn once the server has accepted the plan (its name and trace id are set),
// before Plan follows it.
func WithCreated(fn func(*arrayplanv1.Plan)) PlanOption {
	return func(c *planConfig) { c.onCreated = fn }
}

// Plan creates a plan for spec and follows it to the end (WatchPlan), calling the WithProgress
// callback on the way. It returns the plan in state SUCCEEDED, with its result; a plan that
// FAILED or was CANCELLED comes back with a *PlanError. Cancelling ctx (or its deadline passing)
// cancels the plan on the server, its simulations too, and Plan returns an error that wraps
// ctx.Err(). A bad spec is an *InvalidArgumentError naming each field (plan.spec.FIELD).
func (c *Client) Plan(ctx context.Context, spec *arrayplanv1.PlanSpec, opts ...PlanOption) (*arrayplanv1.Plan, error) {
	var pc planConfig
	for _, o := range opts {
		o(&pc)
	}
	created, err := c.CreatePlan(ctx, &arrayplanv1.CreatePlanRequest{Plan: &arrayplanv1.Plan{Spec: spec}, PlanId: pc.planID})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("arrayplan: creating the plan: %w", ctx.Err())
		}
		return nil, err
	}
	if pc.onCreated != nil {
		pc.onCreated(created)
	}
	plan, err := c.follow(ctx, created.GetName(), pc.onProgress)
	if err != nil {
		if ctx.Err() != nil {
			// The stream's end has cancelled it on the server already (cancel_on_disconnect); the
			// explicit cancel covers a plan whose stream had not started. Best effort, bounded.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_, _ = c.CancelPlan(cctx, &arrayplanv1.CancelPlanRequest{Name: created.GetName()})
			return nil, fmt.Errorf("arrayplan: plan %s cancelled: %w", created.GetName(), ctx.Err())
		}
		return nil, err
	}
	if plan.GetState() != arrayplanv1.Plan_STATE_SUCCEEDED {
		return plan, &PlanError{Plan: plan}
	}
	return plan, nil
}

// follow watches a plan until it is terminal; a stream broken by UNAVAILABLE (a server restart,
// another replica taking the plan over) is opened again, up to the client's retries.
func (c *Client) follow(ctx context.Context, name string, onProgress func(*arrayplanv1.PlanProgress)) (*arrayplanv1.Plan, error) {
	for attempt := 1; ; attempt++ {
		plan, err := c.watchOnce(ctx, name, onProgress)
		if err == nil {
			return plan, nil
		}
		if ctx.Err() != nil || attempt > c.cfg.maxRetries || status.Code(err) != codes.Unavailable {
			return nil, err
		}
		delay, _, _ := c.cfg.retryDelay(err, attempt)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

func (c *Client) watchOnce(ctx context.Context, name string, onProgress func(*arrayplanv1.PlanProgress)) (*arrayplanv1.Plan, error) {
	stream, err := c.WatchPlan(ctx, &arrayplanv1.WatchPlanRequest{Name: name, CancelOnDisconnect: true})
	if err != nil {
		return nil, err
	}
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil, status.Errorf(codes.Unavailable, "the watch of %s ended before the plan did", name)
		}
		if err != nil {
			return nil, err
		}
		if p := ev.GetProgress(); p != nil && onProgress != nil {
			onProgress(p)
		}
		if p := ev.GetPlan(); p != nil {
			return p, nil
		}
	}
}

// PlanFromYAML parses a plan file's text (the YAML `arrayplan plan` reads) on the server, with
// the server's own parser: units, durations, short enum names and the did-you-mean hints are the
// CLI's. It returns the PlanSpec for Plan and the parser's warnings. Problems come back as an
// *InvalidArgumentError whose violations name the file's field path and line. Workload files
// (workload.fio, workload.trace) are refused: the server does not read the caller's files.
func (c *Client) PlanFromYAML(ctx context.Context, text string) (*arrayplanv1.PlanSpec, []string, error) {
	resp, err := c.ParsePlanFile(ctx, &arrayplanv1.ParsePlanFileRequest{Text: text})
	if err != nil {
		return nil, nil, err
	}
	return resp.GetSpec(), resp.GetWarnings(), nil
}
