package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// subcommand is one dataset generator.
type subcommand struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// subcommands is the dispatch table (add delidata, habermas, … here).
var subcommands = []subcommand{
	{"crowdrag25", "CrowdRAG-25 responses, crowd ratings, LLM ratings and grades", runCrowdRAG25},
	{"delidata", "DeliData group chats (Wason task): one TSV per group UUID", runDeliData},
	{"habermas", "Habermas Machine candidate comparisons and position ratings (parquet)", runHabermas},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	}
	for _, c := range subcommands {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		default:
			fmt.Fprintf(stderr, "agora-gen: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "agora-gen: unknown dataset %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: agora-gen DATASET --out DIR [flags]\n\ndatasets:\n")
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'agora-gen DATASET -h' for the flags of a dataset.\n")
}

// parseFlags parses a subcommand's flags, refusing positional arguments
// and a missing --out, with the usage printed in both cases.
func parseFlags(fs *flag.FlagSet, args []string, out *string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("%s: unexpected arguments %q", fs.Name(), fs.Args())
	}
	if *out == "" {
		fs.Usage()
		return fmt.Errorf("%s: --out is required", fs.Name())
	}
	return nil
}
