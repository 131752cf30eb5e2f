package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	arrayplanv1 "github.com/arrayplan/arrayplan/clients/go/proto/arrayplan/v1"
)

type planResource struct{ cd *clientData }

func newPlanResource() resource.Resource { return &planResource{} }

var (
	_ resource.ResourceWithConfigure   = (*planResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*planResource)(nil)
	_ resource.ResourceWithImportState = (*planResource)(nil)
)

func (r *planResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_plan"
}

func (r *planResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = resourceSchema()
}

func (r *planResource) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	if cd, ok := req.ProviderData.(*clientData); ok {
		r.cd = cd
	}
}

// ModifyPlan re-plans (replaces) only when the question changes: the configuration's question,
// parsed by the server, against the stored plan's. A reformatted plan file, or spec_yaml turned
// into the same attributes, is an in-place update that keeps the answer.
func (r *planResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || r.cd == nil {
		return // create or destroy
	}
	var planned, state planModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &planned)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !planned.known() {
		resp.RequiresReplace = append(resp.RequiresReplace, planned.setAttrs()...)
		return
	}
	spec, diags := planned.spec(ctx, r.cd.client)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	if !sameQuestion(spec, state.SpecJSON.ValueString()) {
		changed := planned.setAttrs()
		if len(changed) == 0 {
			changed = path.Paths{path.Root("spec_yaml")}
		}
		resp.RequiresReplace = append(resp.RequiresReplace, changed...)
	}
}

func (r *planResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if r.cd == nil {
		resp.Diagnostics.AddError("Provider not configured", "the arrayplan provider has no client (its configuration failed)")
		return
	}
	var m planModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	spec, diags := m.spec(ctx, r.cd.client)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	plan, diags := runPlan(ctx, r.cd, spec, !set(m.SpecYAML))
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(m.setAnswer(ctx, plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Read refreshes the answer from the stored plan; a plan the server no longer has is gone.
func (r *planResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.cd == nil {
		resp.Diagnostics.AddError("Provider not configured", "the arrayplan provider has no client (its configuration failed)")
		return
	}
	var m planModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan, err := r.cd.client.GetPlan(ctx, &arrayplanv1.GetPlanRequest{Name: m.Name.ValueString()})
	if status.Code(err) == codes.NotFound {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(errorDiags(err, false, "Reading the plan failed")...)
		return
	}
	if plan.GetState() != arrayplanv1.Plan_STATE_SUCCEEDED {
		resp.Diagnostics.AddError("The stored plan has no answer",
			plan.GetName()+" is "+strings.TrimPrefix(plan.GetState().String(), "STATE_")+": "+plan.GetErrorMessage())
		return
	}
	resp.Diagnostics.Append(m.setAnswer(ctx, plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Update keeps the stored answer: ModifyPlan has replaced the resource if the question changed.
func (r *planResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var planned, state planModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &planned)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	planned.ID, planned.Name, planned.TraceID = state.ID, state.Name, state.TraceID
	planned.ConstraintsMet, planned.Summary, planned.SpecJSON, planned.Recommendations =
		state.ConstraintsMet, state.Summary, state.SpecJSON, state.Recommendations
	resp.Diagnostics.Append(resp.State.Set(ctx, &planned)...)
}

// Delete forgets the plan: the API has no delete, the server keeps it (ListPlans shows it).
func (r *planResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// ImportState takes a plan by name: plans/ID or ID.
func (r *planResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	name := req.ID
	if !strings.HasPrefix(name, "plans/") {
		name = "plans/" + name
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), name)...)
}
