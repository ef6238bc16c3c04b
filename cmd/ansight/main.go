// Command ansight runs the Ansight host, drives connected apps' tools from a terminal or a
// script, serves them to MCP clients and runs the demo. See `ansight --help`.
package main

import (
	"os"

	"github.com/ansight-go/ansight/cmd/ansight/internal/childproc"
	"github.com/ansight-go/ansight/cmd/ansight/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func main() {
	childproc.Main() // the app fleets of 'ansight bench --load' and '--enroll-flood'
	os.Exit(cli.Process(cli.Env{
		Args:    os.Args[1:],
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Version: version,
	}))
}
