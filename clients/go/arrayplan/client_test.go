package arrayplan_test

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arrayplan/arrayplan/clients/go/arrayplan"
	"github.com/arrayplan/arrayplan/clients/go/arrayplantest"
	arrayplanv1 "github.com/arrayplan/arrayplan/clients/go/proto/arrayplan/v1"
)

func newClient(t *testing.T, opts ...arrayplan.Option) *arrayplan.Client {
	t.Helper()
	c, err := arrayplan.NewClient(server.Address, append([]arrayplan.Option{arrayplan.WithPlaintext()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// smallSpec: 8 KiB at 70 % reads and 2,000 IOPS, 1 TB usable, p99 under 5 ms, one year, over one
// drive (Intel DC S3700 400 GB) in RAID 10 with at most 8 drives: a few candidates, simulated in
// seconds (the services tests' small plans, tests/conftest.py).
func smallSpec() *arrayplanv1.PlanSpec {
	return &arrayplanv1.PlanSpec{
		Workload: &arrayplanv1.Workload{ReadFraction: proto.Float64(0.7), TargetIops: proto.Float64(2000),
			IoSizeMix: []*arrayplanv1.IoSizeShare{{IoBytes: 8192, Weight: 1}}},
		Constraints: &arrayplanv1.Constraints{UsableCapacityBytes: 1_000_000_000_000, LatencyPercentile: 99,
			LatencyTarget: durationpb.New(5 * time.Millisecond)},
		CandidateSpace:   &arrayplanv1.CandidateSpace{DriveModels: []string{"intel-dc-s3700-400gb"}, Layouts: []string{"raid10"}, MaxDriveCount: 8},
		ServiceLifeYears: 1, Seed: 3,
	}
}

// bigSpec: the services tests' OLTP plan over every catalog drive: minutes of simulation, for
// the cancel test (it never gets near the end).
func bigSpec() *arrayplanv1.PlanSpec {
	s := smallSpec()
	s.Workload.TargetIops = proto.Float64(20000)
	s.Constraints.UsableCapacityBytes = 4_000_000_000_000
	s.CandidateSpace = &arrayplanv1.CandidateSpace{Layouts: []string{"raid10", "raid6"}, MaxDriveCount: 24}
	s.ServiceLifeYears = 3
	return s
}

func TestPlanRunsToTheEndWithProgress(t *testing.T) {
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var mu sync.Mutex
	var events []*arrayplanv1.PlanProgress
	var created *arrayplanv1.Plan
	plan, err := c.Plan(ctx, smallSpec(),
		arrayplan.WithCreated(func(p *arrayplanv1.Plan) { created = p }),
		arrayplan.WithProgress(func(p *arrayplanv1.PlanProgress) { mu.Lock(); events = append(events, p); mu.Unlock() }))
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if plan.GetState() != arrayplanv1.Plan_STATE_SUCCEEDED || plan.GetName() != created.GetName() {
		t.Fatalf("plan %s state %s, created as %s", plan.GetName(), plan.GetState(), created.GetName())
	}
	recs := plan.GetResult().GetRecommendations()
	if len(recs) == 0 {
		t.Fatalf("no recommendations: %s", plan.GetResult().GetSummary())
	}
	best := recs[0]
	// RAID 10 of 400 GB drives holding 1 TB at the default 80 % fill target needs >= 1.25 TB
	// usable: at least 8 drives (4 mirrored pairs = 1.6 TB), and the space stops at 8.
	if best.GetDriveModel() != "intel-dc-s3700-400gb" || best.GetLayout() != "raid10" || best.GetDriveCount() != 8 {
		t.Errorf("best = %s x%d %s, want intel-dc-s3700-400gb x8 raid10", best.GetDriveModel(), best.GetDriveCount(), best.GetLayout())
	}
	if best.GetUsableCapacityBytes() < 1_250_000_000_000 {
		t.Errorf("usable %d B < 1.25 TB", best.GetUsableCapacityBytes())
	}
	if len(events) == 0 {
		t.Error("no progress event")
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(plan.GetTraceId()) {
		t.Errorf("trace id %q", plan.GetTraceId())
	}
}

func TestCancellingTheContextCancelsThePlanOnTheServer(t *testing.T) {
	c := newClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	var name string
	plan, err := c.Plan(ctx, bigSpec(),
		arrayplan.WithCreated(func(p *arrayplanv1.Plan) {
			name = p.GetName()
			time.AfterFunc(time.Second, cancel) // while its candidates are simulated
		}))
	cancel()
	if plan != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Plan after cancel = %v, %v; want nil and context.Canceled", plan, err)
	}
	// The server has cancelled it (the watch's cancel_on_disconnect, and the client's CancelPlan).
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := c.GetPlan(context.Background(), &arrayplanv1.GetPlanRequest{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetState() == arrayplanv1.Plan_STATE_CANCELLED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("plan %s is %s 30 s after the cancel", name, got.GetState())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const planFile = `# the small plan of TestPlanRunsToTheEndWithProgress, as a file
workload:
  read_fraction: 0.7
  target_iops: 2000
  io_size_mix: [[8 KiB, 1]]
constraints:
  usable_capacity_bytes: 1 TB
  latency_percentile: 99
  latency_target: 5ms
candidate_space: {drive_models: [intel-dc-s3700-400gb], layouts: [raid10], max_drive_count: 8}
service_life_years: 1
seed: 3
objective: purchase_cost
`

func TestPlanFromYAMLUsesTheServersGrammar(t *testing.T) {
	c := newClient(t)
	spec, warnings, err := c.PlanFromYAML(context.Background(), planFile)
	if err != nil {
		t.Fatal(err)
	}
	want := smallSpec()
	want.Objective = arrayplanv1.Objective_OBJECTIVE_PURCHASE_COST
	if !proto.Equal(spec, want) {
		t.Errorf("parsed spec\n%v\nwant\n%v", spec, want)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %v", warnings)
	}
}

func TestPlanFileErrorsNameTheFieldAndLine(t *testing.T) {
	c := newClient(t)
	bad := strings.Replace(planFile, "  read_fraction: 0.7", "  read_fracton: 0.7", 1)
	bad = strings.Replace(bad, "latency_target: 5ms", "latency_target: 5", 1)
	_, _, err := c.PlanFromYAML(context.Background(), bad)
	var inv *arrayplan.InvalidArgumentError
	if !errors.As(err, &inv) {
		t.Fatalf("err = %v (%T), want *InvalidArgumentError", err, err)
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("status.Code = %s", status.Code(err))
	}
	v, ok := inv.Field("workload.read_fracton")
	if !ok || v.Line != 3 || !strings.Contains(v.Description, "did you mean 'read_fraction'") {
		t.Errorf("workload.read_fracton violation = %+v (all: %v)", v, inv.Violations)
	}
	v, ok = inv.Field("constraints.latency_target")
	if !ok || v.Line != 9 {
		t.Errorf("constraints.latency_target violation = %+v (all: %v)", v, inv.Violations)
	}
	// A workload file names a path on the caller's machine: refused, the field named.
	_, _, err = c.PlanFromYAML(context.Background(), "workload: {fio: /etc/passwd}\nconstraints: {usable_capacity_bytes: 1 TB}\n")
	if !errors.As(err, &inv) || len(inv.Violations) != 1 || inv.Violations[0].Field != "workload.fio" || inv.Violations[0].Line != 1 {
		t.Errorf("fio plan file: %v", err)
	}
	// A bad spec sent to CreatePlan: the same typed error, with the request's field path.
	spec := smallSpec()
	spec.Workload.ReadFraction = proto.Float64(1.5)
	_, err = c.Plan(context.Background(), spec)
	if !errors.As(err, &inv) {
		t.Fatalf("Plan with read_fraction 1.5: %v", err)
	}
	if _, ok := inv.Field("plan.spec.workload.read_fraction"); !ok {
		t.Errorf("violations %v do not name plan.spec.workload.read_fraction", inv.Violations)
	}
}

var heavyRunning = regexp.MustCompile(`heavy call RunConsistencyTest \(caller '[^']*'\) running in worker process \d+`)

func TestResourceExhaustedIsRetriedAfterTheServersDelay(t *testing.T) {
	// The test server admits one heavy call per caller (serverArgs): a day-long consistency test
	// holds the slot, so the next heavy call is refused with RESOURCE_EXHAUSTED and a 1 s RetryInfo.
	holder := newClient(t, arrayplan.WithMaxRetries(0))
	hctx, release := context.WithCancel(context.Background())
	defer release()
	held := make(chan error, 1)
	go func() {
		_, err := holder.RunConsistencyTest(hctx, &arrayplanv1.RunConsistencyTestRequest{DriveModel: "intel-dc-s3700-400gb",
			Duration: durationpb.New(24 * time.Hour), Seed: 2})
		held <- err
	}()
	waitForLog(t, server, heavyRunning, 60*time.Second)

	var events []arrayplan.RetryEvent
	c := newClient(t, arrayplan.WithTimeout(2*time.Minute), arrayplan.WithRetryObserver(func(e arrayplan.RetryEvent) {
		events = append(events, e)
		release() // the holder leaves: its slot is free once its worker is stopped
	}))
	start := time.Now()
	resp, err := c.RunConsistencyTest(context.Background(), &arrayplanv1.RunConsistencyTestRequest{
		DriveModel: "intel-dc-s3700-400gb", Duration: durationpb.New(60 * time.Second), Seed: 4})
	if err != nil {
		t.Fatalf("RunConsistencyTest after retries: %v (retries %+v)", err, events)
	}
	if len(events) == 0 {
		t.Fatal("the call was not refused once: the holder did not hold the slot")
	}
	first := events[0]
	if status.Code(first.Err) != codes.ResourceExhausted || !first.FromServer || first.Delay != time.Second {
		t.Errorf("first retry = %+v; want RESOURCE_EXHAUSTED after the server's 1 s", first)
	}
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Errorf("answered after %s, before the server's 1 s delay", elapsed)
	}
	if len(resp.GetIopsPerSecond()) == 0 {
		t.Errorf("no IOPS samples in %v", resp)
	}
	if err := <-held; status.Code(err) != codes.Canceled {
		t.Errorf("holder ended with %v, want CANCELED", err)
	}
}

func TestTLSWithAToken(t *testing.T) {
	dir := t.TempDir()
	const alice = "alice-token-0123456789abcdef"
	p, err := arrayplantest.NewSecured(dir, "alice", alice)
	if err != nil {
		t.Fatal(err)
	}
	s, err := startServer(filepath.Join(dir, "data"), p.Creds, append([]string{"--executor", "local"}, p.ServerArgs()...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	ctx := context.Background()
	tlsOpts := []arrayplan.Option{arrayplan.WithTLSCACert(p.CA), arrayplan.WithTLSClientCert(p.ClientCert, p.ClientKey)}

	c, err := arrayplan.NewClient(s.Address, append(tlsOpts, arrayplan.WithToken(alice))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.GetDrive(ctx, &arrayplanv1.GetDriveRequest{Name: "intel-dc-s3700-400gb"})
	if err != nil || d.GetName() != "intel-dc-s3700-400gb" {
		t.Fatalf("GetDrive over mutual TLS with a token: %v, %v", d, err)
	}
	plan, err := c.Plan(ctx, smallSpec())
	if err != nil || plan.GetCreator() != "alice" {
		t.Fatalf("Plan over TLS: creator %q, %v", plan.GetCreator(), err)
	}

	// Without the token: UNAUTHENTICATED (not retried).
	anon, err := arrayplan.NewClient(s.Address, tlsOpts...)
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, err := anon.GetDrive(ctx, &arrayplanv1.GetDriveRequest{Name: "intel-dc-s3700-400gb"}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("without a token: %v, want UNAUTHENTICATED", err)
	}
	// Without trusting the test CA (system roots): the handshake fails.
	sys, err := arrayplan.NewClient(s.Address, arrayplan.WithToken(alice), arrayplan.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if _, err := sys.GetDrive(ctx, &arrayplanv1.GetDriveRequest{Name: "intel-dc-s3700-400gb"}); status.Code(err) != codes.Unavailable ||
		!strings.Contains(err.Error(), "certificate") {
		t.Errorf("system roots against a private CA: %v, want UNAVAILABLE naming the certificate", err)
	}
	// A token over plaintext is refused before anything is sent, unless opted in.
	if _, err := arrayplan.NewClient(s.Address, arrayplan.WithPlaintext(), arrayplan.WithToken(alice)); err == nil ||
		!strings.Contains(err.Error(), "plaintext") {
		t.Errorf("token over plaintext: %v, want a refusal", err)
	}
	if c, err := arrayplan.NewClient(server.Address, arrayplan.WithPlaintext(), arrayplan.WithToken(alice), arrayplan.WithTokenOverPlaintext()); err != nil {
		t.Errorf("token over plaintext, opted in: %v", err)
	} else {
		c.Close()
	}
}

func TestTheServersTraceHoldsTheCallersTraceID(t *testing.T) {
	exporter := tracetest.NewInMemoryExporter()
	tp := trace.NewTracerProvider(trace.WithSyncer(exporter))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	c := newClient(t, arrayplan.WithTracerProvider(tp))

	ctx, span := tp.Tracer("arrayplan-go-test").Start(context.Background(), "provision storage")
	plan, err := c.Plan(ctx, smallSpec())
	span.End()
	if err != nil {
		t.Fatal(err)
	}
	traceID := span.SpanContext().TraceID().String()
	if plan.GetTraceId() != traceID {
		t.Fatalf("plan trace id %s, caller's %s", plan.GetTraceId(), traceID)
	}
	tr, err := c.GetPlanTrace(context.Background(), &arrayplanv1.GetPlanTraceRequest{Name: plan.GetName()})
	if err != nil {
		t.Fatal(err)
	}
	if tr.GetTraceId() != traceID || len(tr.GetSpans()) == 0 {
		t.Fatalf("server trace %s with %d spans, want %s", tr.GetTraceId(), len(tr.GetSpans()), traceID)
	}
	// The client's own otelgrpc spans are in the same trace, children of the caller's span ...
	var createSpan string
	for _, s := range exporter.GetSpans() {
		if s.Name == "arrayplan.v1.PlannerService/CreatePlan" {
			if createSpan != "" {
				t.Error("two client CreatePlan spans")
			}
			createSpan = s.SpanContext.SpanID().String()
			if s.SpanContext.TraceID().String() != traceID || s.Parent.SpanID() != span.SpanContext().SpanID() {
				t.Errorf("client span %s in trace %s, parent %s", s.Name, s.SpanContext.TraceID(), s.Parent.SpanID())
			}
		}
	}
	// ... and the server's stored spans hang under the client's CreatePlan span: every stored span
	// whose parent is not itself stored has that span as its parent.
	stored := map[string]bool{}
	for _, s := range tr.GetSpans() {
		stored[s.GetSpanId()] = true
	}
	var roots int
	for _, s := range tr.GetSpans() {
		if !stored[s.GetParentSpanId()] {
			roots++
			if s.GetParentSpanId() != createSpan {
				t.Errorf("server span %s (%s) has parent %q, not the client's CreatePlan span %s", s.GetName(), s.GetProcess(), s.GetParentSpanId(), createSpan)
			}
		}
	}
	if roots == 0 {
		t.Error("no server span joins the client's span")
	}
}
