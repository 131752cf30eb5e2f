package provider_test

// Acceptance tests: terraform-plugin-testing drives a real OpenTofu binary (bin/tofu, built by
// `make test-setup` from OpenTofu's module source) against the provider, which calls a real
// arrayplan server started by TestMain (arrayplantest: .venv/bin/arrayplan serve on 127.0.0.1).

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/arrayplan/arrayplan/clients/go/arrayplantest"
	"github.com/arrayplan/arrayplan/clients/terraform/internal/provider"
)

var server *arrayplantest.Server

func repoRoot() string {
	if r := os.Getenv("ARRAYPLAN_REPO"); r != "" {
		return r
	}
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", "..", "..", ".."))
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tofu := filepath.Join(repoRoot(), "bin", "tofu")
	if _, err := os.Stat(tofu); err != nil {
		fmt.Fprintf(os.Stderr, "%s not found: `make test-setup` builds OpenTofu\n", tofu)
		return 1
	}
	// terraform-plugin-testing with OpenTofu: its binary, and the provider address it reports.
	os.Setenv("TF_ACC", "1")
	os.Setenv("TF_ACC_TERRAFORM_PATH", tofu)
	os.Setenv("TF_ACC_PROVIDER_NAMESPACE", "arrayplan")
	os.Setenv("TF_ACC_PROVIDER_HOST", "registry.opentofu.org")
	dir, err := os.MkdirTemp("", "arrayplan-tf-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	server, err = arrayplantest.Start(arrayplantest.Options{Repo: repoRoot(), DataDir: dir, Args: []string{"--executor", "local"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the arrayplan server:", err)
		return 1
	}
	defer server.Stop()
	return m.Run()
}

var factories = map[string]func() (tfprotov6.ProviderServer, error){
	"arrayplan": providerserver.NewProtocol6WithError(provider.New("test")()),
}

func providerBlock() string {
	return fmt.Sprintf("terraform {\n  required_providers {\n    arrayplan = { source = \"arrayplan/arrayplan\" }\n  }\n}\n"+
		"provider \"arrayplan\" {\n  address   = %q\n  plaintext = true\n}\n", server.Address)
}

// The Go client's small plan (clients/go/arrayplan/client_test.go): RAID 10 of Intel DC S3700
// 400 GB holding 1 TB at the 80 % fill target needs 8 drives (4 pairs = 1.6 TB usable).
const hclQuestion = `
  read_fraction      = 0.7
  target_iops        = 2000
  io_size            = "8 KiB"
  usable_capacity    = "1 TB"
  latency_percentile = 99
  latency_target     = "5ms"
  drive_models       = ["intel-dc-s3700-400gb"]
  layouts            = ["raid10"]
  max_drive_count    = 8
  service_life_years = 1
  seed               = 3
`

const yamlQuestion = `workload: {read_fraction: 0.7, target_iops: 2000, io_size_mix: [[8 KiB, 1]]}
constraints: {usable_capacity_bytes: 1 TB, latency_percentile: 99, latency_target: 5ms}
candidate_space: {drive_models: [intel-dc-s3700-400gb], layouts: [raid10], max_drive_count: 8}
service_life_years: 1
seed: 3
`

func TestAccDataSourceFeedsDriveCountAndModel(t *testing.T) {
	planName := regexp.MustCompile(`^plans/[a-z0-9-]+$`)
	traceID := regexp.MustCompile(`^[0-9a-f]{32}$`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: providerBlock() + "data \"arrayplan_plan\" \"db\" {" + hclQuestion + "}\n" +
				"output \"buy\" { value = \"${data.arrayplan_plan.db.recommendations[0].drive_count} x ${data.arrayplan_plan.db.recommendations[0].drive_model}\" }\n",
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("buy", knownvalue.StringExact("8 x intel-dc-s3700-400gb")),
				statecheck.ExpectKnownValue("data.arrayplan_plan.db", tfjsonpath.New("recommendations").AtSliceIndex(0).AtMapKey("layout"), knownvalue.StringExact("raid10")),
				// The planner's RAID 10 group is the striped mirror set: all 8 drives.
				statecheck.ExpectKnownValue("data.arrayplan_plan.db", tfjsonpath.New("recommendations").AtSliceIndex(0).AtMapKey("group_width"), knownvalue.Int64Exact(8)),
				statecheck.ExpectKnownValue("data.arrayplan_plan.db", tfjsonpath.New("recommendations").AtSliceIndex(0).AtMapKey("latency_percentile"), knownvalue.Float64Exact(99)),
				statecheck.ExpectKnownValue("data.arrayplan_plan.db", tfjsonpath.New("name"), knownvalue.StringRegexp(planName)),
				statecheck.ExpectKnownValue("data.arrayplan_plan.db", tfjsonpath.New("trace_id"), knownvalue.StringRegexp(traceID)),
			},
		}, {
			// The same question as a plan file: the same answer.
			Config: providerBlock() + "data \"arrayplan_plan\" \"db\" {\n  spec_yaml = <<-EOT\n" + indent(yamlQuestion) + "  EOT\n}\n" +
				"output \"buy\" { value = \"${data.arrayplan_plan.db.recommendations[0].drive_count} x ${data.arrayplan_plan.db.recommendations[0].drive_model}\" }\n",
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("buy", knownvalue.StringExact("8 x intel-dc-s3700-400gb")),
			},
		}},
	})
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestAccErrorsNameTheAttribute(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			// A value the server refuses: reported on the HCL attribute, with the allowed range.
			Config:      providerBlock() + "data \"arrayplan_plan\" \"db\" {" + strings.Replace(hclQuestion, "= 0.7", "= 1.5", 1) + "}\n",
			ExpectError: regexp.MustCompile(`(?s)read_fraction\s+= 1.5.*read_fraction: must be in \[0, 1\], got 1.5`),
		}, {
			// A unit the grammar does not know.
			Config:      providerBlock() + "data \"arrayplan_plan\" \"db\" {" + strings.Replace(hclQuestion, `"1 TB"`, `"1 TX"`, 1) + "}\n",
			ExpectError: regexp.MustCompile(`(?s)usable_capacity\s+= "1 TX".*usable_capacity: `),
		}, {
			// A plan file's mistake: on spec_yaml, with the file's line and field.
			Config: providerBlock() + "data \"arrayplan_plan\" \"db\" {\n  spec_yaml = <<-EOT\n" +
				indent(strings.Replace(yamlQuestion, "read_fraction", "read_fracton", 1)) + "  EOT\n}\n",
			ExpectError: regexp.MustCompile(`(?s)spec_yaml.*line 1: workload.read_fracton: unknown field; did you mean\s+'read_fraction'`),
		}, {
			// A provider setting: on its attribute.
			Config:      strings.Replace(providerBlock(), "plaintext = true", "plaintext = true\n  timeout = \"soon\"", 1) + "data \"arrayplan_plan\" \"db\" {" + hclQuestion + "}\n",
			ExpectError: regexp.MustCompile(`(?s)timeout must be a positive Go duration`),
		}},
	})
}

func TestAccResourceReplansOnlyWhenTheQuestionChanges(t *testing.T) {
	sameName := statecheck.CompareValue(compare.ValuesSame())
	newName := statecheck.CompareValue(compare.ValuesDiffer())
	yamlConfig := func(q string) string {
		return providerBlock() + "resource \"arrayplan_plan\" \"db\" {\n  spec_yaml = <<-EOT\n" + indent(q) + "  EOT\n}\n"
	}
	hclConfig := func(q string) string { return providerBlock() + "resource \"arrayplan_plan\" \"db\" {" + q + "}\n" }
	var name string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			Config: yamlConfig(yamlQuestion),
			ConfigStateChecks: []statecheck.StateCheck{
				sameName.AddStateValue("arrayplan_plan.db", tfjsonpath.New("name")),
				newName.AddStateValue("arrayplan_plan.db", tfjsonpath.New("name")),
				statecheck.ExpectKnownValue("arrayplan_plan.db", tfjsonpath.New("recommendations").AtSliceIndex(0).AtMapKey("drive_count"), knownvalue.Int64Exact(8)),
			},
			Check: func(s *terraform.State) error {
				name = s.RootModule().Resources["arrayplan_plan.db"].Primary.Attributes["name"]
				return nil
			},
		}, {
			// Reformatted, with a comment: the same question, no new plan (an in-place update).
			Config: yamlConfig("# the database array\n" + strings.ReplaceAll(yamlQuestion, ": ", ":  ")),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("arrayplan_plan.db", plancheck.ResourceActionUpdate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{sameName.AddStateValue("arrayplan_plan.db", tfjsonpath.New("name"))},
		}, {
			// The same question as HCL attributes: still no new plan.
			Config: hclConfig(hclQuestion),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("arrayplan_plan.db", plancheck.ResourceActionUpdate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{sameName.AddStateValue("arrayplan_plan.db", tfjsonpath.New("name"))},
		}, {
			// Nothing changed: an empty plan.
			Config:           hclConfig(hclQuestion),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		}, {
			// Import by name: the stored plan's answer.
			Config:                               hclConfig(hclQuestion),
			ResourceName:                         "arrayplan_plan.db",
			ImportState:                          true,
			ImportStateIdFunc:                    func(*terraform.State) (string, error) { return name, nil },
			ImportStateVerify:                    true,
			ImportStateVerifyIdentifierAttribute: "name",
			ImportStateVerifyIgnore: []string{"spec_yaml", "read_fraction", "target_iops", "io_size", "usable_capacity",
				"latency_percentile", "latency_target", "drive_models", "layouts", "max_drive_count", "service_life_years", "seed"},
		}, {
			// A changed question: a new plan (replace).
			Config: hclConfig(strings.Replace(hclQuestion, "2000", "3000", 1)),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction("arrayplan_plan.db", plancheck.ResourceActionReplace),
			}},
			ConfigStateChecks: []statecheck.StateCheck{newName.AddStateValue("arrayplan_plan.db", tfjsonpath.New("name"))},
		}},
	})
}

func TestAccTLSAndTokenFromTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	const alice = "alice-token-0123456789abcdef"
	p, err := arrayplantest.NewSecured(dir, "alice", alice)
	if err != nil {
		t.Fatal(err)
	}
	s, err := arrayplantest.Start(arrayplantest.Options{Repo: repoRoot(), DataDir: filepath.Join(dir, "data"), Creds: p.Creds,
		Args: append([]string{"--executor", "local"}, p.ServerArgs()...)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	t.Setenv("ARRAYPLAN_TOKEN", alice)
	head := "terraform {\n  required_providers {\n    arrayplan = { source = \"arrayplan/arrayplan\" }\n  }\n}\n"
	tlsProvider := fmt.Sprintf("provider \"arrayplan\" {\n  address = %q\n  ca_file = %q\n  client_cert_file = %q\n  client_key_file = %q\n}\n",
		s.Address, p.CA, p.ClientCert, p.ClientKey)
	ds := "data \"arrayplan_plan\" \"db\" {" + hclQuestion + "}\n"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{{
			// The token over plaintext: refused, on the token attribute's setting.
			Config:      head + fmt.Sprintf("provider \"arrayplan\" {\n  address = %q\n  plaintext = true\n}\n", s.Address) + ds,
			ExpectError: regexp.MustCompile(`(?s)Token over plaintext.*token_over_plaintext = true`),
		}, {
			// An unreadable CA file: on ca_file.
			Config:      head + strings.Replace(tlsProvider, p.CA, filepath.Join(dir, "missing.pem"), 1) + ds,
			ExpectError: regexp.MustCompile(`(?s)Unreadable file.*ca_file = .*missing.pem`),
		}, {
			// Mutual TLS with the test CA, the token from $ARRAYPLAN_TOKEN (last: the test's
			// closing destroy runs with this configuration).
			Config: head + tlsProvider + ds,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.arrayplan_plan.db", tfjsonpath.New("recommendations").AtSliceIndex(0).AtMapKey("drive_count"), knownvalue.Int64Exact(8)),
			},
		}},
	})
}
