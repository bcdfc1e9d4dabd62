package main

import "github.com/urfave/cli/v2"

// appHelp is the text of `fluss-iggy --help`, `-h` and `help`: what this
// distribution is and examples that work with it, then the commands (ours
// and Benthos's) and global options as urfave/cli lists them. Benthos sets
// the app's own usage line and description (a generic stream processor,
// with an example of components this build lacks) and offers no option to
// change them, so the template does not print them.
const appHelp = `NAME:
   {{.Name}} - move Apache Fluss tables into Apache Iggy, and Iggy topics into Fluss (a Benthos v4.60.0 distribution)

USAGE:
   {{.HelpName}} [global options] command [command options] [arguments...]

DESCRIPTION:
   A pipeline reads a Fluss table's log (log tables, primary-key changelogs) with the
   fluss input, reshapes rows with Bloblang, writes them to Iggy with the iggy output and
   commits per-bucket offsets to a cache resource (bbolt, redis) once Iggy acknowledged
   them. The other way round, the iggy input reads a topic as a consumer group and the
   fluss output appends, upserts or deletes rows of a Fluss table. Every Benthos pure and
   io component is included as well.

   Start here:

     {{.HelpName}} create fluss//iggy > pipeline.yaml   a pipeline to fill in (addresses, names)
     {{.HelpName}} lint pipeline.yaml                   check it
     {{.HelpName}} run pipeline.yaml                    run it

     {{.HelpName}} run -r config/resources/bbolt.yaml config/fluss_to_iggy.yaml
                                        the shipped example (from the repository, or
                                        /etc/fluss-iggy/ in the container image)
     {{.HelpName}} run config/iggy_to_fluss.yaml       the other direction: an Iggy topic into a
                                        Fluss table (offsets stored on the Iggy server)

   Look at Fluss from the terminal, at how far behind a pipeline is, and at what it
   delivered to Iggy:

     {{.HelpName}} fluss tables --bootstrap 127.0.0.1:9123
     {{.HelpName}} fluss scan --bootstrap 127.0.0.1:9123 demo.orders --columns id,amount
     {{.HelpName}} fluss checkpoints -r config/resources/bbolt.yaml --cache checkpoints demo.orders
     {{.HelpName}} iggy peek --address 127.0.0.1:8090 --stream fluss --topic orders --from latest-5

   More: '{{.HelpName}} help COMMAND', '{{.HelpName}} list inputs', and the component
   reference in docs/components/ (fluss, iggy, bbolt, redis, prometheus).
{{- if .VisibleCommands}}

COMMANDS:{{template "visibleCommandCategoryTemplate" .}}{{end}}{{if .VisibleFlags}}

GLOBAL OPTIONS:{{template "visibleFlagTemplate" .}}{{end}}
`

// installHelp makes urfave/cli print appHelp for the application's help
// (Benthos builds the app inside service.RunCLIToCode; the template is
// package state of urfave/cli).
func installHelp() {
	cli.AppHelpTemplate = appHelp
}
