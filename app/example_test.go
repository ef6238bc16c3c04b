package app_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

type greetArgs struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type greeting struct {
	Text string `json:"text"`
}

// printer is an app.MessageWriter that prints what the app sends.
type printer struct{}

func (printer) Write(ctx context.Context, typ transport.MessageType, data []byte) error {
	fmt.Println(string(data))
	return nil
}

// A typed tool: the arguments and result schemas are inferred from greetArgs and
// greeting. The requests are answered with Handle; Serve does the same on a connection.
func Example() {
	a := app.New(app.Options{
		Clock: func() time.Time { return time.Date(2026, 8, 25, 0, 0, 0, 0, time.UTC) },
	})
	err := app.Register(a, catalog.Definition{
		ID:          "demo.greet",
		Name:        "Greet",
		Description: "Greets someone by name.",
		Category:    "demo",
		Policy:      wire.PolicyRead,
	}, func(ctx context.Context, c *app.Call, in greetArgs) (greeting, error) {
		return greeting{Text: "Hello, " + in.Name + "!"}, nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	for _, msg := range []string{
		`{"type":"tool.query","id":"q1","payload":{"detail":"definitions"}}`,
		`{"type":"tool.call","id":"c1","sessionId":"s1","payload":{"toolId":"demo.greet","arguments":{"name":"Ada"}}}`,
		`{"type":"tool.call","id":"c2","payload":{"toolId":"demo.greet","arguments":{"name":42}}}`,
	} {
		if _, err := a.Handle(ctx, []byte(msg), printer{}); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// {"type":"tool.catalog","id":"q1.response","replyTo":"q1","sentAt":"2026-08-25T00:00:00Z","capability":"tool.exec","payload":{"schema":"ansight.tool-catalog.v3","revision":"sha256:0e5d0f347c58b48d1ad974eb54ba600b5cd813c6503dbc8a6577ce9888f39baa","tools":[{"id":"demo.greet","name":"Greet","description":"Greets someone by name.","category":"demo","policy":"read","argumentsSchema":{"type":"object","properties":{"name":{"type":"string","description":"who to greet"}},"required":["name"]},"resultSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"definitionRevision":"sha256:4ae96da82c8656e423f7cc791feb680258ecb8ac0e23ffc6cd95d4987d6eb827"}],"count":1,"detail":"definitions"}}
	// {"type":"tool.result","id":"c1.response","replyTo":"c1","sessionId":"s1","sentAt":"2026-08-25T00:00:00Z","capability":"tool.exec","payload":{"toolId":"demo.greet","success":true,"result":{"text":"Hello, Ada!"}}}
	// {"type":"tool.error","id":"c2.response","replyTo":"c2","sentAt":"2026-08-25T00:00:00Z","capability":"tool.exec","payload":{"code":"tool_arguments_schema_invalid","message":"Arguments of tool 'demo.greet' do not match its schema.","retryable":false,"details":{"errors":[{"path":"$.name","code":"type_mismatch","message":"expected string, got number"}]}}}
}
