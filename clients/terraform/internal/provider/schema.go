package provider

import (
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The question's attributes, once for both the data source and the resource.
type attrDoc struct {
	name, kind, doc string
}

var questionDocs = []attrDoc{
	{"spec_yaml", "string", `The whole question as a plan file's text, e.g. file("plan.yaml") (the YAML ` + "`arrayplan plan`" + ` reads; parsed by the server). Either this or the attributes below.`},
	{"workload_preset", "string", "A workload preset, e.g. oracle-swingbench; the attributes below override its values."},
	{"read_fraction", "float", "Fraction of host IOs that are reads, in [0, 1]. Required unless workload_preset."},
	{"random_fraction", "float", "Fraction of host IOs that are random, in [0, 1]. Default 1."},
	{"target_iops", "float", "Host IOs per second the array must sustain."},
	{"io_size", "string", `IO size with its unit, e.g. "8 KiB" (the plan file's io_size_mix with one size).`},
	{"queue_depth", "int", "Outstanding host IOs of a closed-loop run, in [1, 65536]. Default 32."},
	{"daily_write", "string", `Host bytes written per day, with a unit, e.g. "1 TB". Default: derived from target_iops.`},
	{"growth_per_year", "float", "Growth of IO rate, write volume and capacity per year as a fraction (0.2 = 20 %/year)."},
	{"usable_capacity", "string", `Usable capacity the array must provide in year 1, with a unit, e.g. "20 TB". Required.`},
	{"latency_percentile", "float", "The percentile latency_target applies to, in (0, 100). Default 99."},
	{"latency_target", "string", `Latency the percentile must stay below, e.g. "5ms". Default: none.`},
	{"max_purchase_cost_usd", "float", "Upper bound on the purchase cost. Default: none."},
	{"drive_slots", "int", "Drive slots available (the constraint). Default: no limit."},
	{"drive_models", "list", "Catalog drive names to consider. Default: every catalog drive."},
	{"layouts", "list", "Layouts to consider: raid0, raid1, raid10, raid5, raid6, ec:K+M. Default raid10, raid5, raid6."},
	{"max_drive_count", "int", "Largest drive count searched. Default 48."},
	{"service_life_years", "int", "Years the array must serve, in [1, 15]. Default 5."},
	{"objective", "string", "What the ranking optimises: total_cost_of_ownership (default), purchase_cost, power, headroom."},
	{"seed", "int", "Seed of every random stream: the same question and seed give the same answer."},
	{"max_recommendations", "int", "Recommendations to return, in [1, 100]. Default 10."},
	{"max_data_loss_probability", "float", "Upper bound on P(data loss) over the service life, in [0, 1). Default: none (clusters and boxes)."},
	{"bay_cost_usd", "float", "What each drive bay costs with its enclosure (drives not included), in [0, 100000] USD: every drive and hot spare of a box pays one bay, a server without server_cost_usd pays bay_count bays. Default 99.17 (a bare 60-bay Backblaze Storage Pod 6.0 at 5,950 USD); 0 = bays are free."},
	{"bay_power_w", "float", "What each drive bay's enclosure draws, in [0, 1000] W. Default 5.17."},
}

var answerDocs = []attrDoc{
	{"name", "string", `The plan's name, "plans/ID".`},
	{"id", "string", "The plan's name (as name)."},
	{"trace_id", "string", "OpenTelemetry trace id of the plan's run (32 hex digits): `arrayplan trace NAME` shows its spans."},
	{"constraints_met", "bool", "Whether at least one recommendation meets every constraint (else they are the nearest misses)."},
	{"summary", "string", "A one-paragraph summary of the answer."},
	{"spec_json", "string", "The question as the server stored it (the PlanSpec in JSON, defaults applied)."},
}

var recDocs = map[string]string{
	"rank": "1 = best.", "drive_model": "Catalog name of the drive.", "drive_display_name": "Human name of the drive.",
	"drive_count": "Drives in the array (without hot spares).", "hot_spare_count": "Hot spares bought with it.",
	"layout": "Layout, e.g. raid6 or ec:8+3.", "group_width": "Drives per redundancy group.",
	"usable_capacity_bytes": "Host-visible capacity, bytes.", "predicted_iops": "Host IOPS the array sustains under the workload.",
	"purchase_cost_usd": "Purchase cost of the drives and hot spares with their bays (a cluster: its servers and drives).", "total_cost_usd": "Total cost of ownership over the service life.",
	"latency_percentile":            "The percentile of latency_at_percentile_ms (the question's, default 99).",
	"latency_at_percentile_ms":      "Latency at that percentile at the required load, ms.",
	"latency_at_percentile_low_ms":  "Low end of its 95 % interval, ms (0 when not estimated).",
	"latency_at_percentile_high_ms": "High end of its 95 % interval, ms: the latency check is judged at it.",
	"headroom_fraction":             "Relative slack of the binding constraint (negative when violated).",
	"binding_constraint":            "The constraint with the least headroom.", "meets_constraints": "Whether every constraint is met.",
	"warnings": "What the answer flags beside its checks, one sentence each.",
}

func recAttributeNames() []string {
	return []string{"rank", "drive_model", "drive_display_name", "drive_count", "hot_spare_count", "layout", "group_width",
		"usable_capacity_bytes", "predicted_iops", "purchase_cost_usd", "total_cost_usd", "latency_percentile",
		"latency_at_percentile_ms", "latency_at_percentile_low_ms", "latency_at_percentile_high_ms", "headroom_fraction",
		"binding_constraint", "meets_constraints", "warnings", "cluster"}
}

func dataSourceSchema() dschema.Schema {
	attrs := map[string]dschema.Attribute{}
	for _, a := range questionDocs {
		switch a.kind {
		case "string":
			attrs[a.name] = dschema.StringAttribute{Optional: true, Description: a.doc}
		case "float":
			attrs[a.name] = dschema.Float64Attribute{Optional: true, Description: a.doc}
		case "int":
			attrs[a.name] = dschema.Int64Attribute{Optional: true, Description: a.doc}
		case "list":
			attrs[a.name] = dschema.ListAttribute{Optional: true, ElementType: types.StringType, Description: a.doc}
		}
	}
	attrs["servers"] = dataSourceServersAttribute()
	for _, a := range answerDocs {
		switch a.kind {
		case "string":
			attrs[a.name] = dschema.StringAttribute{Computed: true, Description: a.doc}
		case "bool":
			attrs[a.name] = dschema.BoolAttribute{Computed: true, Description: a.doc}
		}
	}
	rec := map[string]dschema.Attribute{}
	for _, n := range recAttributeNames() {
		if n == "cluster" { // an object type: not comparable in the switch below
			continue
		}
		switch recAttrTypes[n] {
		case types.StringType:
			rec[n] = dschema.StringAttribute{Computed: true, Description: recDocs[n]}
		case types.Int64Type:
			rec[n] = dschema.Int64Attribute{Computed: true, Description: recDocs[n]}
		case types.Float64Type:
			rec[n] = dschema.Float64Attribute{Computed: true, Description: recDocs[n]}
		case types.BoolType:
			rec[n] = dschema.BoolAttribute{Computed: true, Description: recDocs[n]}
		default:
			rec[n] = dschema.ListAttribute{Computed: true, ElementType: types.StringType, Description: recDocs[n]}
		}
	}
	rec["cluster"] = dataSourceClusterAttribute()
	attrs["recommendations"] = dschema.ListNestedAttribute{Computed: true, Description: "Ranked recommendations, best first.",
		NestedObject: dschema.NestedAttributeObject{Attributes: rec}}
	return dschema.Schema{
		Description: "Plans an array on every read (every `tofu plan`): the ranked recommendations for a question. Use the resource arrayplan_plan for an answer that stays put until the question changes.",
		Attributes:  attrs,
	}
}

func resourceSchema() rschema.Schema {
	keep := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	attrs := map[string]rschema.Attribute{}
	for _, a := range questionDocs {
		switch a.kind {
		case "string":
			attrs[a.name] = rschema.StringAttribute{Optional: true, Description: a.doc}
		case "float":
			attrs[a.name] = rschema.Float64Attribute{Optional: true, Description: a.doc}
		case "int":
			attrs[a.name] = rschema.Int64Attribute{Optional: true, Description: a.doc}
		case "list":
			attrs[a.name] = rschema.ListAttribute{Optional: true, ElementType: types.StringType, Description: a.doc}
		}
	}
	attrs["servers"] = resourceServersAttribute()
	for _, a := range answerDocs {
		switch a.kind {
		case "string":
			attrs[a.name] = rschema.StringAttribute{Computed: true, Description: a.doc, PlanModifiers: keep}
		case "bool":
			attrs[a.name] = rschema.BoolAttribute{Computed: true, Description: a.doc,
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()}}
		}
	}
	rec := map[string]rschema.Attribute{}
	for _, n := range recAttributeNames() {
		if n == "cluster" { // an object type: not comparable in the switch below
			continue
		}
		switch recAttrTypes[n] {
		case types.StringType:
			rec[n] = rschema.StringAttribute{Computed: true, Description: recDocs[n]}
		case types.Int64Type:
			rec[n] = rschema.Int64Attribute{Computed: true, Description: recDocs[n]}
		case types.Float64Type:
			rec[n] = rschema.Float64Attribute{Computed: true, Description: recDocs[n]}
		case types.BoolType:
			rec[n] = rschema.BoolAttribute{Computed: true, Description: recDocs[n]}
		default:
			rec[n] = rschema.ListAttribute{Computed: true, ElementType: types.StringType, Description: recDocs[n]}
		}
	}
	rec["cluster"] = resourceClusterAttribute()
	attrs["recommendations"] = rschema.ListNestedAttribute{Computed: true, Description: "Ranked recommendations, best first.",
		NestedObject:  rschema.NestedAttributeObject{Attributes: rec},
		PlanModifiers: []planmodifier.List{listplanmodifier.UseStateForUnknown()}}
	return rschema.Schema{
		Description: "A stored, named plan: planned on create, re-planned only when its question changes (a reformatted plan file or the same question in other words is not a change), importable by name (plans/ID). Destroying it forgets it; the server keeps the stored plan.",
		Attributes:  attrs,
	}
}
