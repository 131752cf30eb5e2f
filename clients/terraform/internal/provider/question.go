package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/arrayplan/arrayplan/clients/go/arrayplan"
	arrayplanv1 "github.com/arrayplan/arrayplan/clients/go/proto/arrayplan/v1"
)

// planModel is the data source's and the resource's state: the question (spec_yaml, or the HCL
// attributes) and the answer.
type planModel struct {
	SpecYAML           types.String  `tfsdk:"spec_yaml"`
	WorkloadPreset     types.String  `tfsdk:"workload_preset"`
	ReadFraction       types.Float64 `tfsdk:"read_fraction"`
	RandomFraction     types.Float64 `tfsdk:"random_fraction"`
	TargetIOPS         types.Float64 `tfsdk:"target_iops"`
	IOSize             types.String  `tfsdk:"io_size"`
	QueueDepth         types.Int64   `tfsdk:"queue_depth"`
	DailyWrite         types.String  `tfsdk:"daily_write"`
	GrowthPerYear      types.Float64 `tfsdk:"growth_per_year"`
	UsableCapacity     types.String  `tfsdk:"usable_capacity"`
	LatencyPercentile  types.Float64 `tfsdk:"latency_percentile"`
	LatencyTarget      types.String  `tfsdk:"latency_target"`
	MaxPurchaseCostUSD types.Float64 `tfsdk:"max_purchase_cost_usd"`
	DriveSlots         types.Int64   `tfsdk:"drive_slots"`
	DriveModels        types.List    `tfsdk:"drive_models"`
	Layouts            types.List    `tfsdk:"layouts"`
	MaxDriveCount      types.Int64   `tfsdk:"max_drive_count"`
	ServiceLifeYears   types.Int64   `tfsdk:"service_life_years"`
	Objective          types.String  `tfsdk:"objective"`
	Seed               types.Int64   `tfsdk:"seed"`
	MaxRecommendations types.Int64   `tfsdk:"max_recommendations"`
	MaxDataLossProb    types.Float64 `tfsdk:"max_data_loss_probability"`
	BayCostUSD         types.Float64 `tfsdk:"bay_cost_usd"`
	BayPowerW          types.Float64 `tfsdk:"bay_power_w"`
	Servers            types.Object  `tfsdk:"servers"`

	ID              types.String `tfsdk:"id"`
	Name            types.String `tfsdk:"name"`
	TraceID         types.String `tfsdk:"trace_id"`
	ConstraintsMet  types.Bool   `tfsdk:"constraints_met"`
	Summary         types.String `tfsdk:"summary"`
	SpecJSON        types.String `tfsdk:"spec_json"`
	Recommendations types.List   `tfsdk:"recommendations"`
}

// questionField maps an HCL attribute to its plan-file path: the attributes become a plan file
// the server parses (ParsePlanFile), so sizes, durations and enums follow the CLI's one grammar,
// and a violation the server names by its path is reported on the attribute.
type questionField struct {
	attr, file string
	get        func(*planModel) attr.Value
}

var questionFields = []questionField{
	{"workload_preset", "workload.preset", func(m *planModel) attr.Value { return m.WorkloadPreset }},
	{"read_fraction", "workload.read_fraction", func(m *planModel) attr.Value { return m.ReadFraction }},
	{"random_fraction", "workload.random_fraction", func(m *planModel) attr.Value { return m.RandomFraction }},
	{"target_iops", "workload.target_iops", func(m *planModel) attr.Value { return m.TargetIOPS }},
	{"io_size", "workload.io_size_mix", func(m *planModel) attr.Value { return m.IOSize }},
	{"queue_depth", "workload.queue_depth", func(m *planModel) attr.Value { return m.QueueDepth }},
	{"daily_write", "workload.daily_write_bytes", func(m *planModel) attr.Value { return m.DailyWrite }},
	{"growth_per_year", "workload.growth_fraction_per_year", func(m *planModel) attr.Value { return m.GrowthPerYear }},
	{"usable_capacity", "constraints.usable_capacity_bytes", func(m *planModel) attr.Value { return m.UsableCapacity }},
	{"latency_percentile", "constraints.latency_percentile", func(m *planModel) attr.Value { return m.LatencyPercentile }},
	{"latency_target", "constraints.latency_target", func(m *planModel) attr.Value { return m.LatencyTarget }},
	{"max_purchase_cost_usd", "constraints.max_purchase_cost_usd", func(m *planModel) attr.Value { return m.MaxPurchaseCostUSD }},
	{"drive_slots", "constraints.max_drive_count", func(m *planModel) attr.Value { return m.DriveSlots }},
	{"drive_models", "candidate_space.drive_models", func(m *planModel) attr.Value { return m.DriveModels }},
	{"layouts", "candidate_space.layouts", func(m *planModel) attr.Value { return m.Layouts }},
	{"max_drive_count", "candidate_space.max_drive_count", func(m *planModel) attr.Value { return m.MaxDriveCount }},
	{"service_life_years", "service_life_years", func(m *planModel) attr.Value { return m.ServiceLifeYears }},
	{"objective", "objective", func(m *planModel) attr.Value { return m.Objective }},
	{"seed", "seed", func(m *planModel) attr.Value { return m.Seed }},
	{"max_recommendations", "max_recommendations", func(m *planModel) attr.Value { return m.MaxRecommendations }},
	{"max_data_loss_probability", "constraints.max_data_loss_probability", func(m *planModel) attr.Value { return m.MaxDataLossProb }},
	{"bay_cost_usd", "candidate_space.bay_cost_usd", func(m *planModel) attr.Value { return m.BayCostUSD }},
	{"bay_power_w", "candidate_space.bay_power_w", func(m *planModel) attr.Value { return m.BayPowerW }},
	{"servers", "candidate_space.servers", func(m *planModel) attr.Value { return m.Servers }},
}

func set(v attr.Value) bool { return v != nil && !v.IsNull() && !v.IsUnknown() }

// known is false while any part of the question is unknown (it depends on a resource not yet
// created): the answer is then unknown too.
func (m *planModel) known() bool {
	if m.SpecYAML.IsUnknown() {
		return false
	}
	for _, f := range questionFields {
		if hasUnknown(f.get(m)) {
			return false
		}
	}
	return true
}

// setAttrs are the question attributes the configuration sets (spec_yaml or the HCL ones).
func (m *planModel) setAttrs() path.Paths {
	if set(m.SpecYAML) {
		return path.Paths{path.Root("spec_yaml")}
	}
	var out path.Paths
	for _, f := range questionFields {
		if set(f.get(m)) {
			out = append(out, path.Root(f.attr))
		}
	}
	return out
}

// planFile is the HCL attributes as a plan file (JSON, which YAML reads).
func (m *planModel) planFile(ctx context.Context) (string, diag.Diagnostics) {
	var diags diag.Diagnostics
	doc := map[string]any{}
	put := func(dotted string, v any) {
		parts := strings.Split(dotted, ".")
		node := doc
		for _, p := range parts[:len(parts)-1] {
			child, ok := node[p].(map[string]any)
			if !ok {
				child = map[string]any{}
				node[p] = child
			}
			node = child
		}
		node[parts[len(parts)-1]] = v
	}
	for _, f := range questionFields {
		v := f.get(m)
		if !set(v) {
			continue
		}
		switch v := v.(type) {
		case types.String:
			if f.attr == "io_size" {
				put(f.file, [][]any{{v.ValueString(), 1}})
			} else {
				put(f.file, v.ValueString())
			}
		case types.Float64:
			put(f.file, v.ValueFloat64())
		case types.Int64:
			put(f.file, v.ValueInt64())
		case types.List:
			var items []string
			diags.Append(v.ElementsAs(ctx, &items, false)...)
			put(f.file, items)
		case types.Object:
			put(f.file, serversDocument(v))
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		diags.AddError("Cannot encode the question", err.Error())
	}
	return string(b), diags
}

// spec is the question as the PlanSpec CreatePlan takes, parsed by the server.
func (m *planModel) spec(ctx context.Context, c *arrayplan.Client) (*arrayplanv1.PlanSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	hcl := len(m.setAttrs()) > 0 && !set(m.SpecYAML)
	if set(m.SpecYAML) {
		for _, f := range questionFields {
			if set(f.get(m)) {
				diags.AddAttributeError(path.Root(f.attr), "Conflicting question",
					"spec_yaml holds the whole question: set either spec_yaml or the question's attributes ("+f.attr+" here), not both.")
				return nil, diags
			}
		}
	}
	text := m.SpecYAML.ValueString()
	if hcl {
		var d diag.Diagnostics
		text, d = m.planFile(ctx)
		if diags.Append(d...); diags.HasError() {
			return nil, diags
		}
	} else if !set(m.SpecYAML) {
		diags.AddAttributeError(path.Root("spec_yaml"), "Missing question",
			`Set spec_yaml (e.g. spec_yaml = file("plan.yaml")) or the question's attributes (read_fraction, usable_capacity, ...).`)
		return nil, diags
	}
	spec, _, err := c.PlanFromYAML(ctx, text)
	if err != nil {
		diags.Append(errorDiags(err, hcl, "")...)
		return nil, diags
	}
	return spec, diags
}

// errorDiags reports err; an INVALID_ARGUMENT's violations on the attribute they name: with HCL
// attributes, the attribute of the field; with spec_yaml, spec_yaml with the file's line and field.
func errorDiags(err error, hcl bool, summary string) diag.Diagnostics {
	var diags diag.Diagnostics
	var inv *arrayplan.InvalidArgumentError
	if !errors.As(err, &inv) {
		if summary == "" {
			summary = "arrayplan call failed"
		}
		diags.AddError(summary, err.Error())
		return diags
	}
	for _, v := range inv.Violations {
		field := strings.TrimPrefix(v.Field, "plan.spec.")
		where := path.Root("spec_yaml")
		detail := field + ": " + v.Description
		if v.Line > 0 {
			detail = fmt.Sprintf("line %d: %s", v.Line, detail)
		}
		if hcl {
			where = path.Empty()
			for _, f := range questionFields {
				if field == f.file || strings.HasPrefix(field, f.file+".") || strings.HasPrefix(field, f.file+"[") {
					where = path.Root(f.attr)
					detail = f.attr + ": " + v.Description + " (the plan's " + field + ")"
					if f.attr == "servers" && field != f.file {
						var name string
						where, name = serversPath(strings.TrimPrefix(field, f.file))
						detail = name + ": " + v.Description + " (the plan's " + field + ")"
					}
				}
			}
		}
		if where.Equal(path.Empty()) {
			diags.AddError("Invalid plan question", detail)
		} else {
			diags.AddAttributeError(where, "Invalid plan question", detail)
		}
	}
	return diags
}

// recModel is one recommendation in the state.
type recModel struct {
	Rank                  int64        `tfsdk:"rank"`
	DriveModel            string       `tfsdk:"drive_model"`
	DriveDisplayName      string       `tfsdk:"drive_display_name"`
	DriveCount            int64        `tfsdk:"drive_count"`
	HotSpareCount         int64        `tfsdk:"hot_spare_count"`
	Layout                string       `tfsdk:"layout"`
	GroupWidth            int64        `tfsdk:"group_width"`
	UsableCapacityBytes   int64        `tfsdk:"usable_capacity_bytes"`
	PredictedIOPS         float64      `tfsdk:"predicted_iops"`
	PurchaseCostUSD       float64      `tfsdk:"purchase_cost_usd"`
	TotalCostUSD          float64      `tfsdk:"total_cost_usd"`
	LatencyPercentile     float64      `tfsdk:"latency_percentile"`
	LatencyAtPercentileMs float64      `tfsdk:"latency_at_percentile_ms"`
	LatencyLowMs          float64      `tfsdk:"latency_at_percentile_low_ms"`
	LatencyHighMs         float64      `tfsdk:"latency_at_percentile_high_ms"`
	HeadroomFraction      float64      `tfsdk:"headroom_fraction"`
	BindingConstraint     string       `tfsdk:"binding_constraint"`
	MeetsConstraints      bool         `tfsdk:"meets_constraints"`
	Warnings              []string     `tfsdk:"warnings"`
	Cluster               types.Object `tfsdk:"cluster"`
}

var recAttrTypes = map[string]attr.Type{
	"rank": types.Int64Type, "drive_model": types.StringType, "drive_display_name": types.StringType,
	"drive_count": types.Int64Type, "hot_spare_count": types.Int64Type, "layout": types.StringType,
	"group_width": types.Int64Type, "usable_capacity_bytes": types.Int64Type, "predicted_iops": types.Float64Type,
	"purchase_cost_usd": types.Float64Type, "total_cost_usd": types.Float64Type, "latency_percentile": types.Float64Type,
	"latency_at_percentile_ms": types.Float64Type, "latency_at_percentile_low_ms": types.Float64Type,
	"latency_at_percentile_high_ms": types.Float64Type, "headroom_fraction": types.Float64Type,
	"binding_constraint": types.StringType, "meets_constraints": types.BoolType, "warnings": types.ListType{ElemType: types.StringType},
	"cluster": types.ObjectType{AttrTypes: clusterAttrTypes},
}

func ms(d interface{ AsDuration() time.Duration }, valid bool) float64 {
	if !valid {
		return 0
	}
	return float64(d.AsDuration()) / float64(time.Millisecond)
}

// setAnswer fills the answer attributes from a finished plan.
func (m *planModel) setAnswer(ctx context.Context, plan *arrayplanv1.Plan) diag.Diagnostics {
	var diags diag.Diagnostics
	m.ID = types.StringValue(plan.GetName())
	m.Name = types.StringValue(plan.GetName())
	m.TraceID = types.StringValue(plan.GetTraceId())
	m.ConstraintsMet = types.BoolValue(plan.GetResult().GetConstraintsMet())
	m.Summary = types.StringValue(plan.GetResult().GetSummary())
	b, err := protojson.Marshal(plan.GetSpec())
	if err != nil {
		diags.AddError("Cannot encode the plan's spec", err.Error())
	}
	m.SpecJSON = types.StringValue(string(b))
	pct := plan.GetSpec().GetConstraints().GetLatencyPercentile()
	if pct == 0 {
		pct = 99 // the API's default (Constraints.latency_percentile)
	}
	recs := []recModel{}
	for _, r := range plan.GetResult().GetRecommendations() {
		warnings := r.GetWarnings()
		if warnings == nil {
			warnings = []string{}
		}
		cluster, d := clusterValue(ctx, r)
		diags.Append(d...)
		recs = append(recs, recModel{
			Rank: int64(r.GetRank()), DriveModel: r.GetDriveModel(), DriveDisplayName: r.GetDriveDisplayName(),
			DriveCount: int64(r.GetDriveCount()), HotSpareCount: int64(r.GetHotSpareCount()), Layout: r.GetLayout(),
			GroupWidth: int64(r.GetGroupWidth()), UsableCapacityBytes: r.GetUsableCapacityBytes(), PredictedIOPS: r.GetPredictedIops(),
			PurchaseCostUSD: r.GetPurchaseCostUsd(), TotalCostUSD: r.GetTotalCostUsd(), LatencyPercentile: pct,
			LatencyAtPercentileMs: ms(r.GetLatencyAtPercentile(), r.GetLatencyAtPercentile() != nil),
			LatencyLowMs:          ms(r.GetLatencyAtPercentileLow(), r.GetLatencyAtPercentileLow() != nil),
			LatencyHighMs:         ms(r.GetLatencyAtPercentileHigh(), r.GetLatencyAtPercentileHigh() != nil),
			HeadroomFraction:      r.GetHeadroomFraction(), BindingConstraint: r.GetBindingConstraint(),
			MeetsConstraints: r.GetMeetsConstraints(), Warnings: warnings, Cluster: cluster,
		})
	}
	if !plan.GetResult().GetConstraintsMet() {
		diags.AddWarning("No recommendation meets every constraint",
			plan.GetName()+": the recommendations are the nearest misses (constraints_met is false). "+plan.GetResult().GetSummary())
	}
	list, d := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: recAttrTypes}, recs)
	diags.Append(d...)
	m.Recommendations = list
	return diags
}

// sameQuestion says whether spec asks what the stored plan (its spec_json) asked. The server
// writes the defaults it applied into the stored spec (endurance margin, array-loss bound, fill
// target): those the new spec leaves unset are not compared.
func sameQuestion(spec *arrayplanv1.PlanSpec, storedJSON string) bool {
	stored := &arrayplanv1.PlanSpec{}
	if storedJSON == "" || protojson.Unmarshal([]byte(storedJSON), stored) != nil {
		return false
	}
	if c := stored.GetConstraints(); c != nil {
		sc := spec.GetConstraints()
		if sc == nil || sc.EnduranceMarginFraction == nil {
			c.EnduranceMarginFraction = nil
		}
		if sc == nil || sc.MaxArrayLossProbability == nil {
			c.MaxArrayLossProbability = nil
		}
		if sc == nil || sc.MaxFillFraction == nil {
			c.MaxFillFraction = nil
		}
	}
	return proto.Equal(spec, stored)
}

// runPlan plans spec to the end within the provider's plan_timeout.
func runPlan(ctx context.Context, cd *clientData, spec *arrayplanv1.PlanSpec, hcl bool) (*arrayplanv1.Plan, diag.Diagnostics) {
	ctx, cancel := context.WithTimeout(ctx, cd.planTimeout)
	defer cancel()
	plan, err := cd.client.Plan(ctx, spec)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			var diags diag.Diagnostics
			diags.AddError("Plan timed out", fmt.Sprintf("the plan ran longer than the provider's plan_timeout (%s) and was cancelled on the server: %v", cd.planTimeout, err))
			return nil, diags
		}
		return nil, errorDiags(err, hcl, "Plan failed")
	}
	return plan, nil
}
