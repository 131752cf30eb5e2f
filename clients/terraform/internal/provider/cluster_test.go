package provider_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// A small cluster question (the grammar of examples/block-ceph-rbd.yaml): 100 TB on servers of 4 x
// 22 TB disks in EC 4+2 by host. A box of at most 4 disks cannot hold it, so the cluster ranks
// first: 6 servers (a stripe of 6 shards at 1 per host), 6 x (5,000 + 4 x 450 USD) = 40,800 USD;
// usable = 24 x 22 TB x 4/6 x nearfull 0.85 = 299.2 TB (cmd: arrayplan plan --local on the same
// question as YAML gives the same figures).
const clusterQuestion = `
  read_fraction             = 0.7
  random_fraction           = 1
  target_iops               = 200
  io_size                   = "1 MiB"
  usable_capacity           = "100 TB"
  max_data_loss_probability = 0.000001
  drive_models              = ["wd-ultrastar-hc570-22tb"]
  layouts                   = ["raid6"]
  max_drive_count           = 4
  service_life_years        = 1
  objective                 = "purchase_cost"
  max_recommendations       = 3
  seed                      = 5
  servers = {
    bay_count         = 12
    drives_per_server = [4]
    min_server_count  = 3
    max_server_count  = 12
    nic_bandwidth     = "3.125 GB"
    server_cost_usd   = 5000
    pools             = [{ scheme = "ec:4+2", failure_domain = "host" }]
  }
`

func atMost(limit float64) resource.CheckResourceAttrWithFunc {
	return func(v string) error {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return err
		}
		if !(x <= limit) {
			return fmt.Errorf("%g is above %g", x, limit)
		}
		return nil
	}
}

func positive(v string) error {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return err
	}
	if !(x > 0) {
		return fmt.Errorf("%g is not positive", x)
	}
	return nil
}

func TestAccClusterQuestionReturnsTheClusterFigures(t *testing.T) {
	// fresh paths each time (a tfjsonpath.Path's At* methods may share the parent's storage)
	recAt := func(k string) tfjsonpath.Path { return tfjsonpath.New("recommendations").AtSliceIndex(0).AtMapKey(k) }
	clAt := func(k string) tfjsonpath.Path {
		return tfjsonpath.New("recommendations").AtSliceIndex(0).AtMapKey("cluster").AtMapKey(k)
	}
	const ds = "data.arrayplan_plan.store"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: providerBlock() + "data \"arrayplan_plan\" \"store\" {" + clusterQuestion + "}\n" +
				"output \"buy\" { value = \"${data.arrayplan_plan.store.recommendations[0].cluster.server_count} x ${data.arrayplan_plan.store.recommendations[0].cluster.drives_per_server} ${data.arrayplan_plan.store.recommendations[0].drive_model}\" }\n",
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("buy", knownvalue.StringExact("6 x 4 wd-ultrastar-hc570-22tb")),
				statecheck.ExpectKnownValue(ds, clAt("scheme"), knownvalue.StringExact("ec:4+2")),
				statecheck.ExpectKnownValue(ds, clAt("failure_domain"), knownvalue.StringExact("host")),
				statecheck.ExpectKnownValue(ds, clAt("shards_per_domain"), knownvalue.Int64Exact(1)),
				statecheck.ExpectKnownValue(ds, clAt("bay_count"), knownvalue.Int64Exact(12)),
				statecheck.ExpectKnownValue(ds, recAt("drive_count"), knownvalue.Int64Exact(24)),
				// every bay paid with its server: 6 x (5,000 + 4 x 450 USD, the catalog's price)
				statecheck.ExpectKnownValue(ds, recAt("purchase_cost_usd"), knownvalue.Float64Exact(40800)),
				statecheck.ExpectKnownValue(ds, clAt("server_cost_usd"), knownvalue.Float64Exact(30000)),
				statecheck.ExpectKnownValue(ds, clAt("raw_capacity_bytes"), knownvalue.Int64Exact(24*22e12)),
				// raw x k/(k+m) x nearfull 0.85 (6 hosts: no room for a failed host's data)
				statecheck.ExpectKnownValue(ds, clAt("usable_capacity_bytes"), knownvalue.Int64Exact(299_200_000_000_000)),
				statecheck.ExpectKnownValue(ds, clAt("fill_ceiling_fraction"), knownvalue.Float64Exact(0.85)),
				statecheck.ExpectKnownValue(ds, recAt("meets_constraints"), knownvalue.Bool(true)),
			},
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttrWith(ds, "recommendations.0.cluster.data_loss_probability", atMost(1e-6)),
				resource.TestCheckResourceAttrWith(ds, "recommendations.0.cluster.drive_rebuild_seconds", positive),
				resource.TestCheckResourceAttrWith(ds, "recommendations.0.cluster.host_rebuild_seconds", positive),
				// six 3.125 GB/s NICs, 1.6 MiB on the wire per 1 MiB client op (70/30 reads/writes of
				// k+m shards): 6 x 3.125e9 / (1.6 x 1,048,576) = 11,175.87 ops/s
				resource.TestCheckResourceAttrWith(ds, "recommendations.0.cluster.nic_max_iops", func(v string) error {
					x, err := strconv.ParseFloat(v, 64)
					if err != nil {
						return err
					}
					if want := 6 * 3.125e9 / (1.6 * 1048576); x < want*(1-1e-9) || x > want*(1+1e-9) {
						return fmt.Errorf("nic_max_iops %g, want %g", x, want)
					}
					return nil
				}),
			),
		}},
	})
}

func TestAccClusterErrorsNameTheNestedAttribute(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			// A failure domain the server does not know: on servers.pools[0].failure_domain.
			Config:      providerBlock() + "data \"arrayplan_plan\" \"store\" {" + strings.Replace(clusterQuestion, `"host"`, `"hots"`, 1) + "}\n",
			ExpectError: regexp.MustCompile(`(?s)servers\.pools\[0\]\.failure_domain: .*did you mean\s+'host'`),
		}, {
			// More drives than bays: on servers.drives_per_server[0], with the range.
			Config:      providerBlock() + "data \"arrayplan_plan\" \"store\" {" + strings.Replace(clusterQuestion, "[4]", "[20]", 1) + "}\n",
			ExpectError: regexp.MustCompile(`(?s)servers\.drives_per_server\[0\]: .*in \[1, bay_count`),
		}, {
			// A bay cost out of range: on bay_cost_usd.
			Config:      providerBlock() + "data \"arrayplan_plan\" \"store\" {" + clusterQuestion + "  bay_cost_usd = -1\n}\n",
			ExpectError: regexp.MustCompile(`(?s)bay_cost_usd: must be in \[0, 100000`),
		}},
	})
}

func TestAccClusterResourceKeepsItsAnswer(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: providerBlock() + "resource \"arrayplan_plan\" \"store\" {" + clusterQuestion + "}\n",
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("arrayplan_plan.store", tfjsonpath.New("recommendations").AtSliceIndex(0).AtMapKey("cluster").AtMapKey("server_count"), knownvalue.Int64Exact(6)),
			},
		}, {
			// The same question: no new plan.
			Config:           providerBlock() + "resource \"arrayplan_plan\" \"store\" {" + clusterQuestion + "}\n",
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		}},
	})
}

// examples/terraform-cluster/main.tf as it stands, on the test server (its terraform and provider
// blocks replaced by the test's): the object-store question's answer, the one
// `arrayplan plan --local examples/object-store-minio.yaml` gives (docs/clusters.md): 7 servers x
// 16 wd-ultrastar-hc570-22tb in MinIO EC:4 sets of 14, 113,400 USD.
func TestAccClusterExampleConfiguration(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "examples", "terraform-cluster", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	body := string(raw)
	start := strings.Index(body, "resource \"arrayplan_plan\"")
	if start < 0 {
		t.Fatal("examples/terraform-cluster/main.tf: no arrayplan_plan resource")
	}
	const res = "arrayplan_plan.object_store"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: providerBlock() + body[start:],
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValueAtPath("servers", tfjsonpath.New("server_count"), knownvalue.Int64Exact(7)),
				statecheck.ExpectKnownOutputValueAtPath("servers", tfjsonpath.New("drives_per_server"), knownvalue.Int64Exact(16)),
				statecheck.ExpectKnownOutputValueAtPath("servers", tfjsonpath.New("drive_model"), knownvalue.StringExact("wd-ultrastar-hc570-22tb")),
				statecheck.ExpectKnownOutputValueAtPath("servers", tfjsonpath.New("pool"), knownvalue.StringExact("minio EC:4 sets of 14")),
				statecheck.ExpectKnownOutputValueAtPath("servers", tfjsonpath.New("purchase_usd"), knownvalue.Float64Exact(113400)),
				statecheck.ExpectKnownValue(res, tfjsonpath.New("recommendations").AtSliceIndex(0).AtMapKey("meets_constraints"), knownvalue.Bool(true)),
			},
		}},
	})
}
