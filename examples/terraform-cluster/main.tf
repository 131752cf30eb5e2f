# Size an object store that spans servers (the question of examples/object-store-minio.yaml, in HCL
# attributes) and feed the answer into what buys the servers. With a server from `make run`
# (plaintext on 127.0.0.1:50051) and the provider installed as docs/terraform.md says:
#   tofu apply          (dev_overrides: no `tofu init` for this provider)
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
}

# 1 PB of objects growing 10 % a year for 5 years, 1 MiB operations, 70 % reads, 500 a second,
# p99 <= 500 ms, P(data loss) <= 1e-6 over the life. Servers of 16 bays at 9,000 USD with 100 GbE;
# MinIO's erasure sets against Ceph EC 8+3 with one shard per host. Single boxes of up to 96
# drives compete in the same ranking.
resource "arrayplan_plan" "object_store" {
  read_fraction             = 0.7
  random_fraction           = 1
  target_iops               = 500
  io_size                   = "1 MiB"
  queue_depth               = 32
  usable_capacity           = "1 PB"
  growth_per_year           = 0.1
  service_life_years        = 5
  latency_target            = "500ms"
  latency_percentile        = 99
  max_data_loss_probability = 0.000001
  drive_models              = ["wd-ultrastar-hc560-20tb", "wd-ultrastar-hc570-22tb", "wd-ultrastar-hc670-26tb"]
  layouts                   = ["ec:8+3", "raid6"]
  max_drive_count           = 96
  objective                 = "total_cost_of_ownership"
  max_recommendations       = 5
  seed                      = 11
  servers = {
    bay_count         = 16
    drives_per_server = [8, 12, 16]
    max_server_count  = 32
    nic_bandwidth     = "12.5 GB"
    nic_hop_latency   = "50us"
    server_cost_usd   = 9000
    server_power_w    = 250
    host_annual_loss_rate = 0.01
    pools = [
      { scheme = "minio" },
      { scheme = "ec:8+3", failure_domain = "host" },
    ]
  }
}

locals {
  best = arrayplan_plan.object_store.recommendations[0]
}

# What a server resource would take: how many servers, how many drives each, which drive, and
# what the answer rests on (the cluster figures are null when a single box wins).
output "servers" {
  value = {
    server_count      = local.best.cluster == null ? 1 : local.best.cluster.server_count
    drives_per_server = local.best.cluster == null ? local.best.drive_count : local.best.cluster.drives_per_server
    drive_model       = local.best.drive_model
    pool              = local.best.layout
    usable_tb         = local.best.usable_capacity_bytes / 1e12
    p99_latency_ms    = local.best.latency_at_percentile_ms
    purchase_usd      = local.best.purchase_cost_usd
    data_loss_5y      = local.best.cluster == null ? null : local.best.cluster.data_loss_probability
    host_rebuild_h    = local.best.cluster == null ? null : format("%.1f", local.best.cluster.host_rebuild_seconds / 3600)
    nic_utilization   = local.best.cluster == null ? null : local.best.cluster.nic_utilization
    trace_id          = arrayplan_plan.object_store.trace_id
  }
}

# `tofu apply` against `make run` prints (seed 11): 7 servers x 16 wd-ultrastar-hc570-22tb, pool
# "minio EC:4 sets of 14", 1,496 TB usable, p99 143 ms, 113,400 USD, P(loss in 5 y) 4.2e-7, a
# server re-healed in 86 h: the answer of `arrayplan plan --local examples/object-store-minio.yaml`.
