package arrayplan_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/arrayplan/arrayplan/clients/go/arrayplan"
	arrayplanv1 "github.com/arrayplan/arrayplan/clients/go/proto/arrayplan/v1"
)

// A plan file sent as it is: the server parses it with the CLI's grammar, then plans it.
func Example() {
	ctx := context.Background()
	c, err := arrayplan.NewClient(os.Getenv("ARRAYPLAN_SERVER"), arrayplan.WithPlaintext())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	spec, _, err := c.PlanFromYAML(ctx, `
workload: {read_fraction: 0.7, target_iops: 2000, io_size_mix: [[8 KiB, 1]]}
constraints: {usable_capacity_bytes: 1 TB, latency_percentile: 99, latency_target: 5ms}
candidate_space: {drive_models: [intel-dc-s3700-400gb], layouts: [raid10], max_drive_count: 8}
service_life_years: 1
`)
	if err != nil {
		log.Fatal(err)
	}
	plan, err := c.Plan(ctx, spec, arrayplan.WithProgress(func(p *arrayplanv1.PlanProgress) {
		log.Printf("%d of %d candidates simulated", p.GetCandidatesEvaluated(), p.GetCandidatesToEvaluate())
	}))
	if err != nil {
		log.Fatal(err)
	}
	best := plan.GetResult().GetRecommendations()[0]
	fmt.Printf("%d x %s in %s\n", best.GetDriveCount(), best.GetDriveModel(), best.GetLayout())
	// Output: 8 x intel-dc-s3700-400gb in raid10
}

// A plan file's mistakes come back with their field and line.
func ExampleClient_PlanFromYAML_errors() {
	c, err := arrayplan.NewClient(os.Getenv("ARRAYPLAN_SERVER"), arrayplan.WithPlaintext())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	_, _, err = c.PlanFromYAML(context.Background(), "workload:\n  read_fracton: 0.7\nconstraints: {usable_capacity_bytes: 1 TB}\n")
	var invalid *arrayplan.InvalidArgumentError
	if errors.As(err, &invalid) {
		for _, v := range invalid.Violations {
			fmt.Printf("line %d: %s\n", v.Line, v.Field)
		}
	}
	// Output: line 2: workload.read_fracton
}

// TLS with a private CA, a client certificate (mutual TLS) and a bearer token.
func ExampleNewClient_tls() {
	c, err := arrayplan.NewClient("planner.example.internal:50051",
		arrayplan.WithTLSCACert("/etc/arrayplan/ca.pem"),
		arrayplan.WithTLSClientCert("/etc/arrayplan/client.pem", "/etc/arrayplan/client.key"),
		arrayplan.WithToken(os.Getenv("ARRAYPLAN_TOKEN")),
		arrayplan.WithTimeout(10*time.Second),
		arrayplan.WithMaxRetries(3))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}
