# Size an array with arrayplan and feed the answer into what buys and describes the servers.
# With a server from `make run` (plaintext on 127.0.0.1:50051) and the provider installed as
# docs/terraform.md says:  tofu init && tofu apply
terraform {
  required_providers {
    arrayplan = {
      source = "arrayplan/arrayplan"
    }
  }
}

provider "arrayplan" {
  address   = "127.0.0.1:50051"
  plaintext = true
  # With TLS and a token instead:
  #   ca_file = "/etc/arrayplan/ca.pem"     # token from $ARRAYPLAN_TOKEN
}

# A stored plan: planned once, re-planned only when plan.yaml asks something else.
resource "arrayplan_plan" "db" {
  spec_yaml = file("${path.module}/plan.yaml")
}

# The same kind of question in HCL attributes, planned again on every `tofu plan`.
data "arrayplan_plan" "scratch" {
  read_fraction   = 0.5
  target_iops     = 1000
  io_size         = "64 KiB"
  usable_capacity = "2 TB"
  drive_models    = ["intel-dc-s3700-400gb"]
  layouts         = ["raid10", "raid6"]
  max_drive_count = 16
}

locals {
  best = arrayplan_plan.db.recommendations[0]
}

# What a server resource would take: count and model of the drives, and where the answer came from.
output "drives" {
  value = {
    drive_model     = local.best.drive_model
    drive_count     = local.best.drive_count + local.best.hot_spare_count
    layout          = local.best.layout
    group_width     = local.best.group_width
    usable_tb       = local.best.usable_capacity_bytes / 1e12
    p99_latency_ms  = local.best.latency_at_percentile_ms
    purchase_usd    = local.best.purchase_cost_usd
    plan            = arrayplan_plan.db.name
    trace_id        = arrayplan_plan.db.trace_id
  }
}

output "scratch_best" {
  value = "${data.arrayplan_plan.scratch.recommendations[0].drive_count} x ${data.arrayplan_plan.scratch.recommendations[0].drive_model} in ${data.arrayplan_plan.scratch.recommendations[0].layout}"
}
