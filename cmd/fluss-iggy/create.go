package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"
)

const createDescription = `Prints a new config to stdout with the components of an expression: three
comma-separated lists of inputs, processors and outputs, divided by slashes:

  fluss-iggy create fluss//iggy > pipeline.yaml
  fluss-iggy create --small fluss/mapping/iggy
  fluss-iggy create generate,stdin/mapping,log/file

When the expression names the fluss input or the iggy output, their blocks are a
working starting point rather than every field with its example (which would set
contradicting fields): addresses and names as ${ENV_VAR:default} (set the variables
or edit the defaults; the fluss input reads demo.orders unless told otherwise), a
bbolt checkpoint cache for the fluss input in a file of its own (state/pipeline.db,
not the shipped example's), and topics created on demand. The config lints as
printed. Other expressions print Benthos's config with every field (--small: only
the main, non-advanced ones).`

// createCommand returns `create`, which replaces Benthos's: an expression
// naming the fluss input or the iggy output gets a config that lints and
// runs once its addresses are filled in (Benthos's own would print every
// field's example, contradicting values included); any other expression,
// --templates, or arguments this command does not know run benthos, the
// original command, with the same arguments.
func createCommand(benthos func(context.Context) error) *cli.Command {
	return &cli.Command{
		Name:            "create",
		Usage:           "Create a new fluss-iggy config (fluss-iggy create fluss//iggy > pipeline.yaml)",
		ArgsUsage:       "[INPUTS/PROCESSORS/OUTPUTS]",
		Description:     createDescription,
		SkipFlagParsing: true, // parsed by parseCreateArgs, or by Benthos's create
		Flags: []cli.Flag{ // for the help text
			&cli.BoolFlag{Name: "small", Aliases: []string{"s"}, Usage: "print only the main components (input, pipeline, output; with fluss also its cache) and omit advanced fields"},
			&cli.StringSliceFlag{Name: "env-file", Aliases: []string{"e"}, Usage: "import environment variables from a dotenv file"},
			&cli.StringSliceFlag{Name: "templates", Aliases: []string{"t"}, Usage: "EXPERIMENTAL: import fluss-iggy templates (then Benthos's create runs unchanged)"},
		},
		Action: func(cc *cli.Context) error {
			req, err := parseCreateArgs(cc.Args().Slice())
			if errors.Is(err, flag.ErrHelp) {
				cli.HelpPrinter(cc.App.Writer, cli.CommandHelpTemplate, cc.Command)
				return nil
			}
			if err != nil || req.templates || !req.names("fluss", "iggy") {
				return benthos(cc.Context)
			}
			out, err := curatedConfig(req)
			if err != nil {
				return fmt.Errorf("create: %w", err)
			}
			_, err = io.WriteString(cc.App.Writer, out)
			return err
		},
	}
}

// createRequest is a parsed `create` command line.
type createRequest struct {
	small     bool
	templates bool // --templates given: its components are Benthos's business
	inputs    []string
	procs     []string
	outputs   []string
}

// names reports whether the expression names input in its inputs or
// output in its outputs.
func (r createRequest) names(input, output string) bool {
	return slices.Contains(r.inputs, input) || slices.Contains(r.outputs, output)
}

// parseCreateArgs parses the flags of Benthos's create (--small, --env-file,
// --templates) and the expression, as Benthos does.
func parseCreateArgs(args []string) (createRequest, error) {
	var r createRequest
	fs := flag.NewFlagSet("create", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&r.small, "small", false, "")
	fs.BoolVar(&r.small, "s", false, "")
	ignore := func(string) error { return nil } // env files set variables; the output has none
	fs.Func("env-file", "", ignore)
	fs.Func("e", "", ignore)
	templates := func(string) error { r.templates = true; return nil }
	fs.Func("templates", "", templates)
	fs.Func("t", "", templates)
	if err := fs.Parse(args); err != nil {
		return r, err
	}
	parts := strings.Split(fs.Arg(0), "/")
	if len(parts) > 3 {
		return r, errors.New("more component separators than expected")
	}
	lists := []*[]string{&r.inputs, &r.procs, &r.outputs}
	for i, p := range parts {
		for _, name := range strings.Split(p, ",") {
			if name = strings.TrimSpace(name); name != "" {
				*lists[i] = append(*lists[i], name)
			}
		}
	}
	return r, nil
}

// curatedConfig renders the config of r: Benthos's rendering (every field
// of the other components with its default or example) with our blocks for
// fluss and iggy.
func curatedConfig(r createRequest) (string, error) {
	hasFluss := slices.Contains(r.inputs, "fluss")
	conf := map[string]any{
		"input":    components(r.inputs, "inputs", "stdin", "fluss", flussInput()),
		"pipeline": map[string]any{"processors": typed(r.procs)},
		"output":   components(r.outputs, "outputs", "stdout", "iggy", iggyOutput(slices.Equal(r.inputs, []string{"fluss"}))),
	}
	env := service.GlobalEnvironment()
	schema := env.FullConfigSchema(Version, DateBuilt)
	if r.small {
		schema = env.CoreConfigSchema(Version, DateBuilt)
	} else {
		conf["http"] = map[string]any{"address": httpAddress}
		if hasFluss {
			conf["cache_resources"] = []any{checkpointCache()}
		}
	}
	m := schema.NewStreamConfigMarshaller().SetHydrateExamples(true).SetOmitDeprecated(true)
	if r.small {
		m.SetFieldFilter(func(f *service.FieldView, _ any) bool { return !f.IsAdvanced() })
	}
	out, err := m.AnyToYAML(conf)
	if err != nil {
		return "", err
	}
	if r.small {
		out = "http:\n  address: " + httpAddress + "\n" + out
		if hasFluss {
			out += checkpointCacheYAML
		}
	}
	return createHeader(hasFluss, slices.Contains(r.outputs, "iggy")) + out, nil
}

// components is the input (or output) section of names: one component, a
// broker of several, or def when there are none. The one named ours is
// given block; the others only their type, which Benthos fills with every
// field.
func components(names []string, brokerField, def, ours string, block any) any {
	one := func(name string) any {
		if name == ours {
			return block
		}
		return map[string]any{"type": name}
	}
	switch len(names) {
	case 0:
		return one(def)
	case 1:
		return one(names[0])
	}
	list := make([]any, len(names))
	for i, n := range names {
		list[i] = one(n)
	}
	return map[string]any{"broker": map[string]any{brokerField: list}}
}

// typed returns [{type: name}...] for processors.
func typed(names []string) []any {
	out := make([]any, 0, len(names))
	for _, n := range names {
		out = append(out, map[string]any{"type": n})
	}
	return out
}

// httpAddress is the address of the HTTP server (metrics, /ping, /ready),
// set through the variable the shipped configs use: a second pipeline on
// the same host needs another one.
const httpAddress = "${FLUSS_IGGY_HTTP_ADDRESS:0.0.0.0:4195}"

// flussInput is the fluss block: the table to read (by default demo.orders,
// the table of the README's quick start and config/fluss_to_iggy.yaml) and
// where to keep the positions (the cache of checkpointCache).
func flussInput() map[string]any {
	return map[string]any{"fluss": map[string]any{
		"bootstrap_servers": []any{"${FLUSS_BOOTSTRAP:127.0.0.1:9123}"},
		"database":          "${FLUSS_DATABASE:demo}",
		"table":             "${FLUSS_TABLE:orders}",
		"start_offset":      "earliest",
		"checkpoint_cache":  "checkpoints",
	}}
}

// iggyOutput is the iggy block; behind the fluss input alone each table
// goes to the topic of its name, with the fluss_ metadata as headers.
func iggyOutput(afterFluss bool) map[string]any {
	o := map[string]any{
		"address":       "${IGGY_TCP_ADDRESS:127.0.0.1:8090}",
		"username":      "${IGGY_USERNAME:iggy}",
		"password":      "${IGGY_PASSWORD:iggy}",
		"stream":        "${IGGY_STREAM:fluss}",
		"topic":         "${IGGY_TOPIC:events}",
		"create_stream": true,
		"create_topic":  true,
	}
	if afterFluss {
		o["topic"] = "${! @fluss_table }"
		o["headers"] = map[string]any{"include_prefixes": []any{"fluss_"}}
	}
	return map[string]any{"iggy": o}
}

// stateFile is the bbolt file of a created pipeline's positions: a file of
// its own, not config/resources/bbolt.yaml's checkpoints.db, so that the
// created pipeline does not find the positions the shipped example
// committed for the same table (under the same default checkpoint_key) and
// start at the end of the table.
const stateFile = "${FLUSS_IGGY_STATE_DIR:./state}/pipeline.db"

// checkpointCache is the cache resource of the fluss input's positions,
// as config/resources/bbolt.yaml has it but in stateFile.
func checkpointCache() map[string]any {
	return map[string]any{
		"label": "checkpoints",
		"bbolt": map[string]any{
			"path":   stateFile,
			"bucket": "fluss_checkpoints",
			"sync":   true,
		},
	}
}

// checkpointCacheYAML is checkpointCache for --small, whose schema has no
// resources.
const checkpointCacheYAML = `cache_resources:
  - label: checkpoints
    bbolt:
      path: ` + stateFile + `
      bucket: fluss_checkpoints
      sync: true
`

// createHeader is the comment that says what to fill in and what next.
func createHeader(fluss, iggy bool) string {
	var vars []string
	if fluss {
		vars = append(vars, "FLUSS_BOOTSTRAP", "FLUSS_DATABASE", "FLUSS_TABLE")
	}
	if iggy {
		vars = append(vars, "IGGY_TCP_ADDRESS", "IGGY_USERNAME", "IGGY_PASSWORD", "IGGY_STREAM")
		if !fluss {
			vars = append(vars, "IGGY_TOPIC")
		}
	}
	var b strings.Builder
	b.WriteString("# Fill in the addresses and names: set the environment variables\n")
	b.WriteString("#   " + strings.Join(vars, " ") + "\n")
	b.WriteString("# or edit the defaults after the ':' in ${NAME:default}. Then:\n")
	b.WriteString("#   fluss-iggy lint pipeline.yaml && fluss-iggy run pipeline.yaml\n")
	b.WriteString("# Metrics, /ping and /ready are served at FLUSS_IGGY_HTTP_ADDRESS (default\n")
	b.WriteString("# 0.0.0.0:4195): give each pipeline on a host its own.\n")
	if fluss {
		b.WriteString("# The input follows the table until stopped (Ctrl-C); the next run goes on from\n")
		b.WriteString("# the per-bucket positions kept in the bbolt file of cache_resources\n")
		b.WriteString("# ($FLUSS_IGGY_STATE_DIR/pipeline.db, default ./state). How far behind it is:\n")
		b.WriteString("#   fluss-iggy fluss checkpoints -r pipeline.yaml --cache checkpoints DB.TABLE\n")
	}
	b.WriteString("# Every field of fluss and iggy: docs/components/fluss_input.md, docs/components/iggy_output.md.\n")
	return b.String()
}
