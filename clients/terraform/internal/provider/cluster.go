package provider

// Arrays that span servers (docs/clusters.md): the question's `servers` block (the plan file's
// candidate_space.servers, ServerCandidateSpace) and each recommendation's `cluster` figures
// (ClusterFigures; null for a single box).

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	arrayplanv1 "github.com/arrayplan/arrayplan/clients/go/proto/arrayplan/v1"
)

// serverDocs are the servers block's attributes: HCL name, kind, plan-file name, description.
var serverDocs = []struct{ name, kind, file, doc string }{
	{"min_server_count", "int", "min_server_count", "Fewest servers considered, in [1, 1000]. Default 1."},
	{"max_server_count", "int", "max_server_count", "Most servers considered, in [min_server_count, 1000]. Default 64."},
	{"bay_count", "int", "bay_count", "Drive bays per server, in [1, 1000]. Default 12."},
	{"drives_per_server", "intlist", "drives_per_server", "Drives per server to try, each in [1, bay_count]. Default: 1 .. bay_count."},
	{"nic_bandwidth", "string", "nic_bytes_per_s", `Each server's NIC bandwidth per second, each direction, with a unit, e.g. "12.5 GB" (100 GbE). Default 3.125 GB (25 GbE).`},
	{"nic_hop_latency", "string", "nic_hop_latency", `One network hop (switch and the receiving stack), e.g. "50us", in [0, 1s]. Default 50us.`},
	{"server_cost_usd", "float", "server_cost_usd", "Price of one server without its drives, in [0, 1e7]; every bay is paid for with its server. Default: bay_count x bay_cost_usd."},
	{"server_power_w", "float", "server_power_w", "Power of one server without its drives, in [0, 1e5] W. Default: bay_count x bay_power_w."},
	{"rack_count", "int", "rack_count", "Racks the servers are spread over evenly (must divide the server count). Default 0: no racks."},
	{"host_annual_loss_rate", "float", "host_annual_loss_rate", "Whole hosts lost per host-year, in [0, 100]. Default 0.01."},
	{"recovery_fraction", "float", "recovery_fraction", "Share of each drive's and NIC's bandwidth a rebuild may use (the recovery throttle), in (0, 1]. Default 0.5."},
	{"metadata_overhead_fraction", "float", "metadata_overhead_fraction", "Share of raw capacity taken by metadata, in [0, 1). Default 0."},
	{"ec_encode_bytes_per_s", "float", "ec_encode_bytes_per_s", "Bytes per second a primary's CPU encodes for an EC write, in [0, 1e13]; 0 = free. Default 4.2e9 (one core)."},
}

var poolDocs = []struct{ name, kind, doc string }{
	{"scheme", "string", `"rep:R" (replicated, size R), "ec:K+M" or "minio" (MinIO's erasure sets and default parity). Required.`},
	{"failure_domain", "string", `"host" (default), "rack" or "drive". Ignored for minio.`},
	{"min_size", "int", "Ceph's min_size; 0 = the default (k + 1 for EC, size - 1 for replication). Ignored for minio."},
}

const serversDoc = "Arrays that span servers (docs/clusters.md): when set, cluster candidates (servers x drives per server x drive model x pool) are ranked with the single boxes in the same recommendations. The plan file's candidate_space.servers."

func dataSourceServersAttribute() dschema.Attribute {
	attrs := map[string]dschema.Attribute{}
	for _, a := range serverDocs {
		switch a.kind {
		case "int":
			attrs[a.name] = dschema.Int64Attribute{Optional: true, Description: a.doc}
		case "float":
			attrs[a.name] = dschema.Float64Attribute{Optional: true, Description: a.doc}
		case "string":
			attrs[a.name] = dschema.StringAttribute{Optional: true, Description: a.doc}
		case "intlist":
			attrs[a.name] = dschema.ListAttribute{Optional: true, ElementType: types.Int64Type, Description: a.doc}
		}
	}
	pool := map[string]dschema.Attribute{}
	for _, a := range poolDocs {
		if a.kind == "int" {
			pool[a.name] = dschema.Int64Attribute{Optional: true, Description: a.doc}
		} else {
			pool[a.name] = dschema.StringAttribute{Optional: a.name != "scheme", Required: a.name == "scheme", Description: a.doc}
		}
	}
	attrs["pools"] = dschema.ListNestedAttribute{Optional: true, NestedObject: dschema.NestedAttributeObject{Attributes: pool},
		Description: "Pools to place. Default: replicated size 3, EC 4+2 and EC 8+3, one shard per host."}
	return dschema.SingleNestedAttribute{Optional: true, Attributes: attrs, Description: serversDoc}
}

func resourceServersAttribute() rschema.Attribute {
	attrs := map[string]rschema.Attribute{}
	for _, a := range serverDocs {
		switch a.kind {
		case "int":
			attrs[a.name] = rschema.Int64Attribute{Optional: true, Description: a.doc}
		case "float":
			attrs[a.name] = rschema.Float64Attribute{Optional: true, Description: a.doc}
		case "string":
			attrs[a.name] = rschema.StringAttribute{Optional: true, Description: a.doc}
		case "intlist":
			attrs[a.name] = rschema.ListAttribute{Optional: true, ElementType: types.Int64Type, Description: a.doc}
		}
	}
	pool := map[string]rschema.Attribute{}
	for _, a := range poolDocs {
		if a.kind == "int" {
			pool[a.name] = rschema.Int64Attribute{Optional: true, Description: a.doc}
		} else {
			pool[a.name] = rschema.StringAttribute{Optional: a.name != "scheme", Required: a.name == "scheme", Description: a.doc}
		}
	}
	attrs["pools"] = rschema.ListNestedAttribute{Optional: true, NestedObject: rschema.NestedAttributeObject{Attributes: pool},
		Description: "Pools to place. Default: replicated size 3, EC 4+2 and EC 8+3, one shard per host."}
	return rschema.SingleNestedAttribute{Optional: true, Attributes: attrs, Description: serversDoc}
}

// serverFileName is the plan file's name of a servers attribute (nic_bandwidth -> nic_bytes_per_s).
func serverFileName(hcl string) string {
	for _, a := range serverDocs {
		if a.name == hcl {
			return a.file
		}
	}
	return hcl
}

// serverAttrName is the HCL name of a plan-file servers field (nic_bytes_per_s -> nic_bandwidth).
func serverAttrName(file string) string {
	for _, a := range serverDocs {
		if a.file == file {
			return a.name
		}
	}
	return file
}

// hasUnknown says whether any part of v (nested objects and lists included) is unknown.
func hasUnknown(v attr.Value) bool {
	if v == nil || v.IsNull() {
		return false
	}
	if v.IsUnknown() {
		return true
	}
	switch v := v.(type) {
	case basetypes.ObjectValue:
		for _, x := range v.Attributes() {
			if hasUnknown(x) {
				return true
			}
		}
	case basetypes.ListValue:
		for _, x := range v.Elements() {
			if hasUnknown(x) {
				return true
			}
		}
	}
	return false
}

// serversDocument is the servers block as the plan file's candidate_space.servers mapping: the
// attributes set, under their plan-file names.
func serversDocument(v types.Object) map[string]any {
	out := map[string]any{}
	for name, x := range v.Attributes() {
		if x.IsNull() {
			continue
		}
		if name == "pools" {
			pools := []map[string]any{}
			for _, p := range x.(types.List).Elements() {
				pool := map[string]any{}
				for pn, pv := range p.(types.Object).Attributes() {
					if !pv.IsNull() {
						pool[pn] = scalar(pv)
					}
				}
				pools = append(pools, pool)
			}
			out["pools"] = pools
			continue
		}
		out[serverFileName(name)] = scalar(x)
	}
	return out
}

func scalar(v attr.Value) any {
	switch v := v.(type) {
	case types.String:
		return v.ValueString()
	case types.Int64:
		return v.ValueInt64()
	case types.Float64:
		return v.ValueFloat64()
	case types.List:
		items := []any{}
		for _, e := range v.Elements() {
			items = append(items, scalar(e))
		}
		return items
	}
	return nil
}

var fieldStep = regexp.MustCompile(`^([a-z_]+)(?:\[(\d+)\])?$`)

// serversPath is the HCL path of a violation the server names under candidate_space.servers
// (e.g. "pools[1].failure_domain" -> servers.pools[1].failure_domain).
func serversPath(rest string) (path.Path, string) {
	p := path.Root("servers")
	hcl := "servers"
	for i, step := range strings.Split(strings.TrimPrefix(rest, "."), ".") {
		m := fieldStep.FindStringSubmatch(step)
		if m == nil {
			break
		}
		name := m[1]
		if i == 0 {
			name = serverAttrName(name)
		}
		p = p.AtName(name)
		hcl += "." + name
		if m[2] != "" {
			n, _ := strconv.Atoi(m[2])
			p = p.AtListIndex(n)
			hcl += "[" + m[2] + "]"
		}
	}
	return p, hcl
}

// The cluster figures of a recommendation (ClusterFigures): null for a single box.
var clusterDocs = []struct{ name, kind, doc string }{
	{"server_count", "int", "Servers in the cluster."},
	{"drives_per_server", "int", "Drives in each server."},
	{"bay_count", "int", "Drive bays in each server (every bay is paid for)."},
	{"scheme", "string", `The pool, e.g. "rep:3", "ec:8+3", "minio EC:4 sets of 14".`},
	{"failure_domain", "string", "Failure domain of the placement: host, rack or drive."},
	{"shards_per_domain", "int", "Shards of one stripe in one failure domain."},
	{"stripe_set_count", "int", "Distinct stripe sets (placement groups, MinIO erasure sets)."},
	{"drive_rebuild_seconds", "float", "Time to re-protect a failed drive's data (detection included), seconds."},
	{"drive_rebuild_limit", "string", "What limits the drive rebuild: drives, NICs, recovery throttle, ..."},
	{"host_rebuild_seconds", "float", "Time to re-protect a failed host's data, seconds."},
	{"host_rebuild_limit", "string", "What limits the host rebuild."},
	{"data_loss_probability", "float", "Probability of data loss over the service life with drive and whole-host failures."},
	{"raw_capacity_bytes", "int", "Raw capacity of every drive, bytes."},
	{"usable_capacity_bytes", "int", "Usable capacity at the fill ceiling (Ceph's full ratios, room for a failed host's data), bytes."},
	{"fill_ceiling_fraction", "float", "The fill ceiling applied, in (0, 1]."},
	{"fill_ceiling_limit", "string", "Which limit set it: nearfull, or backfillfull after a failed domain."},
	{"server_cost_usd", "float", "The servers' share of the purchase cost (the drives are the rest)."},
	{"nic_utilization", "float", "Busier NIC direction's utilization per host at the required rate."},
	{"nic_max_iops", "float", "Client operations per second at which the busier NIC direction saturates."},
	{"shard_iops_per_drive", "float", "Shard IOs per second each drive serves at the required rate."},
	{"notes", "list", "Placement notes and what the cluster's latency is based on, one sentence each."},
}

var clusterAttrTypes = func() map[string]attr.Type {
	out := map[string]attr.Type{}
	for _, a := range clusterDocs {
		out[a.name] = map[string]attr.Type{"int": types.Int64Type, "float": types.Float64Type, "string": types.StringType,
			"list": types.ListType{ElemType: types.StringType}}[a.kind]
	}
	return out
}()

const clusterDoc = "The cluster figures when the recommendation spans servers (the servers block); null for a single box."

func dataSourceClusterAttribute() dschema.Attribute {
	attrs := map[string]dschema.Attribute{}
	for _, a := range clusterDocs {
		switch a.kind {
		case "int":
			attrs[a.name] = dschema.Int64Attribute{Computed: true, Description: a.doc}
		case "float":
			attrs[a.name] = dschema.Float64Attribute{Computed: true, Description: a.doc}
		case "string":
			attrs[a.name] = dschema.StringAttribute{Computed: true, Description: a.doc}
		case "list":
			attrs[a.name] = dschema.ListAttribute{Computed: true, ElementType: types.StringType, Description: a.doc}
		}
	}
	return dschema.SingleNestedAttribute{Computed: true, Attributes: attrs, Description: clusterDoc}
}

func resourceClusterAttribute() rschema.Attribute {
	attrs := map[string]rschema.Attribute{}
	for _, a := range clusterDocs {
		switch a.kind {
		case "int":
			attrs[a.name] = rschema.Int64Attribute{Computed: true, Description: a.doc}
		case "float":
			attrs[a.name] = rschema.Float64Attribute{Computed: true, Description: a.doc}
		case "string":
			attrs[a.name] = rschema.StringAttribute{Computed: true, Description: a.doc}
		case "list":
			attrs[a.name] = rschema.ListAttribute{Computed: true, ElementType: types.StringType, Description: a.doc}
		}
	}
	return rschema.SingleNestedAttribute{Computed: true, Attributes: attrs, Description: clusterDoc}
}

func seconds(d interface{ AsDuration() time.Duration }, valid bool) float64 {
	if !valid {
		return 0
	}
	return d.AsDuration().Seconds()
}

// clusterValue is a recommendation's cluster figures, or null for a single box.
func clusterValue(ctx context.Context, r *arrayplanv1.Recommendation) (types.Object, diag.Diagnostics) {
	c := r.GetCluster()
	if c == nil {
		return types.ObjectNull(clusterAttrTypes), nil
	}
	notes := c.GetNotes()
	if notes == nil {
		notes = []string{}
	}
	noteList, diags := types.ListValueFrom(ctx, types.StringType, notes)
	obj, d := types.ObjectValue(clusterAttrTypes, map[string]attr.Value{
		"server_count":          types.Int64Value(int64(c.GetServerCount())),
		"drives_per_server":     types.Int64Value(int64(c.GetDrivesPerServer())),
		"bay_count":             types.Int64Value(int64(c.GetBayCount())),
		"scheme":                types.StringValue(c.GetScheme()),
		"failure_domain":        types.StringValue(c.GetFailureDomain()),
		"shards_per_domain":     types.Int64Value(int64(c.GetShardsPerDomain())),
		"stripe_set_count":      types.Int64Value(int64(c.GetStripeSetCount())),
		"drive_rebuild_seconds": types.Float64Value(seconds(c.GetDriveRebuildDuration(), c.GetDriveRebuildDuration() != nil)),
		"drive_rebuild_limit":   types.StringValue(c.GetDriveRebuildLimit()),
		"host_rebuild_seconds":  types.Float64Value(seconds(c.GetHostRebuildDuration(), c.GetHostRebuildDuration() != nil)),
		"host_rebuild_limit":    types.StringValue(c.GetHostRebuildLimit()),
		"data_loss_probability": types.Float64Value(c.GetDataLossProbability()),
		"raw_capacity_bytes":    types.Int64Value(c.GetRawCapacityBytes()),
		"usable_capacity_bytes": types.Int64Value(c.GetUsableCapacityBytes()),
		"fill_ceiling_fraction": types.Float64Value(c.GetFillCeilingFraction()),
		"fill_ceiling_limit":    types.StringValue(c.GetFillCeilingLimit()),
		"server_cost_usd":       types.Float64Value(c.GetServerCostUsd()),
		"nic_utilization":       types.Float64Value(c.GetNicUtilization()),
		"nic_max_iops":          types.Float64Value(c.GetNicMaxIops()),
		"shard_iops_per_drive":  types.Float64Value(c.GetShardIopsPerDrive()),
		"notes":                 noteList,
	})
	diags.Append(d...)
	return obj, diags
}
