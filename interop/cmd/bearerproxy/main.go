// Command bearerproxy forwards HTTP to an MCP server, adding
// "Authorization: Bearer $ORDO_PROXY_TOKEN" to every request. The MCP
// conformance suite cannot send a token, and `ordo serve --http` refuses
// requests without one; the proxy keeps the client's Host and Origin so
// the server's DNS-rebinding protection still sees what the client sent,
// and flushes at once so SSE streams pass through unbuffered.
//
//	ORDO_PROXY_TOKEN=... bearerproxy -listen 127.0.0.1:0 -target http://127.0.0.1:7411
//
// It prints "listening on http://ADDR" once ready.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	target := flag.String("target", "", "base URL of the MCP server, e.g. http://127.0.0.1:7411")
	flag.Parse()
	if err := run(*listen, *target, os.Getenv("ORDO_PROXY_TOKEN")); err != nil {
		fmt.Fprintln(os.Stderr, "bearerproxy:", err)
		os.Exit(2)
	}
}

func run(listen, target, token string) error {
	to, err := url.Parse(target)
	if err != nil || to.Scheme == "" || to.Host == "" {
		return fmt.Errorf("-target %q: want a base URL like http://127.0.0.1:7411", target)
	}
	if token == "" {
		return fmt.Errorf("ORDO_PROXY_TOKEN is unset or empty")
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(to)
			r.Out.Host = r.In.Host // the server judges the client's Host, not ours
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(slog.NewTextHandler(os.Stderr, nil), slog.LevelError),
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}
