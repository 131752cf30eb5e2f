// Package provider is the arrayplan OpenTofu/Terraform provider: a data source and a resource
// `arrayplan_plan` that ask an arrayplan server "which drives, how many, in which layout" and
// return its ranked recommendations, through the Go client (clients/go).
package provider

import (
	"context"
	"os"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/arrayplan/arrayplan/clients/go/arrayplan"
)

// DefaultAddress is the server a configuration without address (and without $ARRAYPLAN_SERVER)
// calls: `make run` / `arrayplan serve` on this machine.
const DefaultAddress = "127.0.0.1:50051"

// DefaultPlanTimeout bounds one plan (create and follow to the end).
const DefaultPlanTimeout = 30 * time.Minute

// New returns the provider (version is the release, "dev" for a local build, "test" in tests).
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &arrayplanProvider{version: version} }
}

type arrayplanProvider struct{ version string }

type providerModel struct {
	Address            types.String `tfsdk:"address"`
	Token              types.String `tfsdk:"token"`
	Plaintext          types.Bool   `tfsdk:"plaintext"`
	TokenOverPlaintext types.Bool   `tfsdk:"token_over_plaintext"`
	CAFile             types.String `tfsdk:"ca_file"`
	ClientCertFile     types.String `tfsdk:"client_cert_file"`
	ClientKeyFile      types.String `tfsdk:"client_key_file"`
	Timeout            types.String `tfsdk:"timeout"`
	PlanTimeout        types.String `tfsdk:"plan_timeout"`
}

// clientData is what the provider hands its data source and resource.
type clientData struct {
	client      *arrayplan.Client
	planTimeout time.Duration
}

func (p *arrayplanProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "arrayplan"
	resp.Version = p.version
}

func (p *arrayplanProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Plans storage arrays with an arrayplan server: which drives, how many, in which layout.",
		Attributes: map[string]schema.Attribute{
			"address": schema.StringAttribute{Optional: true,
				Description: "The server, host:port. Default $ARRAYPLAN_SERVER, else " + DefaultAddress + "."},
			"token": schema.StringAttribute{Optional: true, Sensitive: true,
				Description: "Bearer token (a server started with --auth-token-file). Default $ARRAYPLAN_TOKEN. Refused over plaintext unless token_over_plaintext."},
			"plaintext": schema.BoolAttribute{Optional: true,
				Description: "Connect without TLS (a server without --tls-cert, e.g. on 127.0.0.1). Default false: TLS with the system's roots or ca_file."},
			"token_over_plaintext": schema.BoolAttribute{Optional: true,
				Description: "Allow the token over a plaintext connection (a server on the loopback interface only). Default false."},
			"ca_file": schema.StringAttribute{Optional: true,
				Description: "PEM CA certificate(s) that signed the server's certificate, instead of the system's roots. Default $ARRAYPLAN_TLS_CA."},
			"client_cert_file": schema.StringAttribute{Optional: true,
				Description: "PEM client certificate for mutual TLS (a server with --tls-client-ca); with client_key_file."},
			"client_key_file": schema.StringAttribute{Optional: true,
				Description: "PEM private key of client_cert_file."},
			"timeout": schema.StringAttribute{Optional: true,
				Description: "Deadline of one call (Go duration, e.g. 30s); default 30s. Calls refused with RESOURCE_EXHAUSTED or UNAVAILABLE are retried after the server's delay within it."},
			"plan_timeout": schema.StringAttribute{Optional: true,
				Description: "How long one plan may run, from its creation to its answer (Go duration); default 30m. When it passes, the plan is cancelled on the server."},
		},
	}
}

func envOr(v types.String, env string) string {
	if !v.IsNull() && !v.IsUnknown() {
		return v.ValueString()
	}
	return os.Getenv(env)
}

func (p *arrayplanProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	address := envOr(m.Address, "ARRAYPLAN_SERVER")
	if address == "" {
		address = DefaultAddress
	}
	opts := []arrayplan.Option{}
	plaintext := m.Plaintext.ValueBool()
	if plaintext {
		opts = append(opts, arrayplan.WithPlaintext())
	}
	if token := envOr(m.Token, "ARRAYPLAN_TOKEN"); token != "" {
		if plaintext && !m.TokenOverPlaintext.ValueBool() {
			resp.Diagnostics.AddAttributeError(path.Root("token"), "Token over plaintext",
				"A bearer token would travel unencrypted (plaintext = true): use TLS, or set token_over_plaintext = true for a server on the loopback interface.")
			return
		}
		opts = append(opts, arrayplan.WithToken(token))
		if m.TokenOverPlaintext.ValueBool() {
			opts = append(opts, arrayplan.WithTokenOverPlaintext())
		}
	}
	files := map[string]string{"ca_file": envOr(m.CAFile, "ARRAYPLAN_TLS_CA"), "client_cert_file": m.ClientCertFile.ValueString(),
		"client_key_file": m.ClientKeyFile.ValueString()}
	for attr, f := range files {
		if f == "" {
			continue
		}
		if plaintext {
			resp.Diagnostics.AddAttributeError(path.Root(attr), "TLS file with plaintext", attr+" is set but plaintext = true: drop one of them.")
			return
		}
		if _, err := os.ReadFile(f); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root(attr), "Unreadable file", err.Error())
			return
		}
	}
	if files["ca_file"] != "" {
		opts = append(opts, arrayplan.WithTLSCACert(files["ca_file"]))
	}
	if (files["client_cert_file"] == "") != (files["client_key_file"] == "") {
		missing := "client_key_file"
		if files["client_cert_file"] == "" {
			missing = "client_cert_file"
		}
		resp.Diagnostics.AddAttributeError(path.Root(missing), "Incomplete client certificate",
			"Mutual TLS needs both client_cert_file and client_key_file.")
		return
	}
	if files["client_cert_file"] != "" {
		opts = append(opts, arrayplan.WithTLSClientCert(files["client_cert_file"], files["client_key_file"]))
	}
	if d, ok := duration(resp, m.Timeout, "timeout", arrayplan.DefaultTimeout); ok {
		opts = append(opts, arrayplan.WithTimeout(d))
	} else {
		return
	}
	planTimeout, ok := duration(resp, m.PlanTimeout, "plan_timeout", DefaultPlanTimeout)
	if !ok {
		return
	}
	c, err := arrayplan.NewClient(address, opts...)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("address"), "Cannot make an arrayplan client", err.Error())
		return
	}
	data := &clientData{client: c, planTimeout: planTimeout}
	resp.DataSourceData = data
	resp.ResourceData = data
}

func duration(resp *provider.ConfigureResponse, v types.String, attr string, def time.Duration) (time.Duration, bool) {
	if v.IsNull() || v.IsUnknown() || v.ValueString() == "" {
		return def, true
	}
	d, err := time.ParseDuration(v.ValueString())
	if err != nil || d <= 0 {
		resp.Diagnostics.AddAttributeError(path.Root(attr), "Invalid duration",
			attr+" must be a positive Go duration such as 30s, 5m or 1h, got "+v.String())
		return 0, false
	}
	return d, true
}

func (p *arrayplanProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{newPlanResource}
}

func (p *arrayplanProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{newPlanDataSource}
}
