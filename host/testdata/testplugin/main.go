// Command testplugin serves testtools.Tools as a plugin for the host tests.
package main

import (
	"github.com/ordo-run/ordo/host/internal/testtools"
	"github.com/ordo-run/ordo/plugins/sdk"
)

func main() { sdk.Serve(testtools.Tools()...) }
