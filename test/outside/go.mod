// An outside module: it uses ansight-go as any other module would (through its public
// packages only; its path is not under github.com/ansight-go/ansight, so internal/ packages
// cannot be imported). The replace points at this checkout. See doc.go.
module example.com/outside

go 1.26.0

require github.com/ansight-go/ansight v0.0.0

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	golang.org/x/text v0.44.0 // indirect
)

replace github.com/ansight-go/ansight => ../..
