// Command arrayplan-bench measures the Go client's unary call latency (GetDrive) against a server,
// for `make bench` (services/arrayplan_services/bench/clients.py puts it beside the Python
// client's). It prints one JSON object: {"calls": N, "p50_ms": ..., "p90_ms": ..., "p99_ms": ...}.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"sort"
	"time"

	"github.com/arrayplan/arrayplan/clients/go/arrayplan"
	arrayplanv1 "github.com/arrayplan/arrayplan/clients/go/proto/arrayplan/v1"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "server host:port (plaintext)")
	calls := flag.Int("calls", 2000, "timed calls")
	warmup := flag.Int("warmup", 200, "untimed calls first (connection, caches)")
	drive := flag.String("drive", "intel-dc-s3700-400gb", "the drive GetDrive asks for")
	flag.Parse()
	c, err := arrayplan.NewClient(*addr, arrayplan.WithPlaintext())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	req := &arrayplanv1.GetDriveRequest{Name: *drive}
	for i := 0; i < *warmup; i++ {
		if _, err := c.GetDrive(ctx, req); err != nil {
			log.Fatal(err)
		}
	}
	lat := make([]float64, *calls)
	for i := range lat {
		t := time.Now()
		if _, err := c.GetDrive(ctx, req); err != nil {
			log.Fatal(err)
		}
		lat[i] = float64(time.Since(t)) / float64(time.Millisecond)
	}
	sort.Float64s(lat)
	q := func(p float64) float64 { return lat[int(p*float64(len(lat)-1))] }
	out, _ := json.Marshal(map[string]any{"calls": *calls, "p50_ms": q(0.5), "p90_ms": q(0.9), "p99_ms": q(0.99)})
	fmt.Fprintln(os.Stdout, string(out))
}
