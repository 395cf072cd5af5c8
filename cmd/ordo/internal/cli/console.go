package cli

import (
	"bytes"
	"net/http"

	"gopkg.in/yaml.v3"

	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/mcpserver"
)

// httpHandler is what serve --http serves: srv and the web console at
// /ui, which shows admins the configuration as `config show` prints it.
func httpHandler(a *app.App, srv *mcpserver.Server, cfg *config.Config) (http.Handler, error) {
	var shown bytes.Buffer
	enc := yaml.NewEncoder(&shown)
	enc.SetIndent(2)
	if err := enc.Encode(hideSecrets(cfg)); err != nil {
		return nil, err
	}
	return a.HTTPHandler(srv, shown.Bytes(), version())
}
