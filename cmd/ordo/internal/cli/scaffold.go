package cli

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
	"golang.org/x/mod/modfile"

	"github.com/ordo-run/ordo/contracts"
)

// ordoModule is the module the SDK lives in. It is not on the module
// proxy, so a plugin module replaces it with a checkout.
const ordoModule = "github.com/ordo-run/ordo"

// scaffoldFiles are the plugin module's files as templates: FILE.tmpl
// becomes FILE.
//
//go:embed scaffold/*.tmpl
var scaffoldFiles embed.FS

var scaffold = template.Must(template.New("").
	Funcs(template.FuncMap{"quote": modfile.AutoQuote}).
	Option("missingkey=error").
	ParseFS(scaffoldFiles, "scaffold/*.tmpl"))

// scaffoldData is what the templates are rendered with.
type scaffoldData struct {
	Name      string // the plugin's name: its tools are Name.*
	OrdoSrc   string // the Ordo checkout the SDK comes from, absolute
	GoVersion string // the checkout's go directive
}

func newPluginsNewCmd(g *globals) *cobra.Command {
	var src string
	cmd := &cobra.Command{
		Use:   "new NAME [DIR] [--ordo-src DIR]",
		Short: "Write a plugin module that builds: one tool, its test, go.mod and a Makefile",
		Long: `Write a Go module for the plugin NAME into DIR (default ./NAME; it must be new or empty):
main.go with one tool, NAME.hello, its test, a Makefile that builds ordo-plugin-NAME and
its checksum, and a go.mod that takes the SDK from an Ordo source checkout (the module
github.com/ordo-run/ordo is not on the module proxy). The checkout is --ordo-src, else the
first one above the current directory, else above the ordo executable.

Then, in DIR: 'go mod tidy' once, 'make', and 'ordo plugins add ./ordo-plugin-NAME'.`,
		Example: `  ordo plugins new shout
  ordo plugins new shout ~/src/ordo-plugin-shout --ordo-src ~/src/ordo`,
		Args: args(1, 2),
		RunE: func(_ *cobra.Command, a []string) error {
			name, dir := a[0], a[0]
			if len(a) == 2 {
				dir = a[1]
			}
			cfg, _, err := g.load()
			if err != nil {
				return err
			}
			if err := claimable(cfg, name); err != nil {
				return err
			}
			// The name is also the tools' service, which starts with a letter.
			if name[0] < 'a' || name[0] > 'z' {
				return contracts.Errorf(contracts.CodeInvalidInput, "plugin name %q: its tools are %s.*, and a service name starts with a letter", name, name).With("field", "name")
			}
			if dir, err = filepath.Abs(dir); err != nil {
				return err
			}
			if err := newOrEmpty(dir); err != nil {
				return err
			}
			data := scaffoldData{Name: name}
			if data.OrdoSrc, data.GoVersion, err = ordoSource(src); err != nil {
				return err
			}
			files, err := renderScaffold(data)
			if err != nil {
				return err
			}
			if err := writeDir(dir, files); err != nil {
				return contracts.Errorf(contracts.CodeInvalidInput, "write %s: %w", dir, err).With("field", "dir")
			}
			_, err = fmt.Fprintf(g.io.Out, `wrote the plugin %s in %s (SDK from %s)
next:
  cd %s
  go mod tidy
  make                                   # ordo-plugin-%[1]s and ordo-plugin-%[1]s.sha256
  ordo plugins add ./ordo-plugin-%[1]s
`, name, dir, data.OrdoSrc, dir)
			return err
		},
	}
	cmd.Flags().StringVar(&src, "ordo-src", "", "the Ordo source checkout the SDK comes from (default: found above the current directory or the ordo executable)")
	return cmd
}

// ordoSource is the Ordo checkout the plugin builds against and its go
// directive: flag if set, else the first checkout above the working
// directory, else above the ordo executable (a binary built in a
// checkout's ./bin finds it).
func ordoSource(flag string) (dir, goVersion string, err error) {
	if flag != "" {
		dir, err := filepath.Abs(flag)
		if err != nil {
			return "", "", err
		}
		if v, ok := ordoCheckout(dir); ok {
			return dir, v, nil
		}
		return "", "", contracts.Errorf(contracts.CodeInvalidInput, "--ordo-src %s: not an Ordo checkout (no go.mod of module %s there)", dir, ordoModule).With("flag", "--ordo-src")
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		starts = append(starts, filepath.Dir(exe))
	}
	for _, d := range starts {
		for {
			if v, ok := ordoCheckout(d); ok {
				return d, v, nil
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	return "", "", contracts.Errorf(contracts.CodeInvalidInput,
		"no Ordo checkout found above %s: pass --ordo-src DIR, a clone of the Ordo repository (the SDK is not on the module proxy)",
		strings.Join(starts, " or ")).With("flag", "--ordo-src")
}

// ordoCheckout reports whether dir holds Ordo's go.mod, and its go directive.
func ordoCheckout(dir string) (goVersion string, ok bool) {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", false
	}
	f, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil || f.Module == nil || f.Module.Mod.Path != ordoModule || f.Go == nil {
		return "", false
	}
	return f.Go.Version, true
}

// newOrEmpty refuses a directory that holds anything: the scaffold never
// overwrites a file.
func newOrEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return contracts.Errorf(contracts.CodeInvalidInput, "%s: %v", dir, err).With("field", "dir")
	case len(entries) > 0:
		return contracts.Errorf(contracts.CodeInvalidInput, "%s is not empty; give a new or empty directory", dir).With("field", "dir")
	}
	return nil
}

// renderScaffold is the module's files by name: the templates rendered
// with d, and the checkout's go.sum, so `go mod tidy` finds every checksum
// the SDK's modules need without asking the checksum database.
func renderScaffold(d scaffoldData) (map[string][]byte, error) {
	sum, err := os.ReadFile(filepath.Join(d.OrdoSrc, "go.sum"))
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "the Ordo checkout %s: %w", d.OrdoSrc, err).With("flag", "--ordo-src")
	}
	files := map[string][]byte{"go.sum": sum}
	for _, t := range scaffold.Templates() {
		var b bytes.Buffer
		if err := t.Execute(&b, d); err != nil {
			return nil, err
		}
		files[strings.TrimSuffix(t.Name(), ".tmpl")] = b.Bytes()
	}
	return files, nil
}

// writeDir creates dir holding files all at once: they are written into a
// hidden sibling that is then renamed to dir (which may exist, empty), so
// a failure leaves nothing behind.
func writeDir(dir string, files map[string][]byte) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // gone after the rename
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
