package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
)

type planDataSource struct{ cd *clientData }

func newPlanDataSource() datasource.DataSource { return &planDataSource{} }

func (d *planDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_plan"
}

func (d *planDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = dataSourceSchema()
}

func (d *planDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if cd, ok := req.ProviderData.(*clientData); ok {
		d.cd = cd
	}
}

// Read plans the question to the end: a new plan on every read.
func (d *planDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m planModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if d.cd == nil {
		resp.Diagnostics.AddError("Provider not configured", "the arrayplan provider has no client (its configuration failed)")
		return
	}
	spec, diags := m.spec(ctx, d.cd.client)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	plan, diags := runPlan(ctx, d.cd, spec, !set(m.SpecYAML))
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(m.setAnswer(ctx, plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
