// Command terraform-provider-arrayplan is the arrayplan OpenTofu/Terraform provider
// (docs/index.md beside it; the repository's docs/terraform.md).
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/arrayplan/arrayplan/clients/terraform/internal/provider"
)

// version is set by the release build (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers such as delve")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.opentofu.org/arrayplan/arrayplan",
		Debug:   *debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
