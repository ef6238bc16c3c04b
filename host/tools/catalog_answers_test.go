package tools

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// plainCatalog decodes a catalog payload the plain way, the reference for kept answers.
func plainCatalog(t testing.TB, raw []byte) *wire.Catalog {
	t.Helper()
	var cat wire.Catalog
	if _, err := wire.UnmarshalPayload(raw, 0, &cat); err != nil {
		t.Fatal(err)
	}
	return &cat
}

// manyTools is an SDK runtime whose catalog answers are compressed; one tool's
// availability follows available.
func manyTools(t *testing.T, n int, available *atomic.Bool) *app.App {
	t.Helper()
	a := app.New(app.Options{})
	for i := range n {
		d := catalog.Definition{ID: fmt.Sprintf("many.tool_%04d", i), Name: fmt.Sprintf("Tool %d", i),
			Description: strings.Repeat("Does one thing well. ", 5), Category: []string{"a", "b"}[i%2], Policy: wire.PolicyRead}
		var opts []app.ToolOption
		if i == 3 {
			opts = append(opts, app.WithAvailability(func(context.Context) wire.Runtime {
				return wire.Runtime{Available: available.Load(), Code: "not_now"}
			}))
		}
		if err := app.Register(a, d, func(ctx context.Context, c *app.Call, in echoIn) (echoIn, error) { return in, nil }, opts...); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// A query repeated against an unchanged catalog is answered from the kept answer: the
// same catalog as decoding it in full, with the new time; a changed availability or
// another query is decoded in full.
func TestKeptCatalogAnswers(t *testing.T) {
	var available atomic.Bool
	a := manyTools(t, 400, &available)
	c, rec := serveDemo(t, a, Options{})
	ctx := t.Context()
	for _, q := range []wire.Query{{Detail: "index"}, {Detail: "definitions"}, {}, {Detail: "full", Limit: 100}} {
		var first *wire.Catalog
		for i := range 3 {
			r, err := c.roundTrip(ctx, wire.TypeQuery, q, c.defaultLimit(ctx), querySubject)
			if err != nil {
				t.Fatal(err)
			}
			if kept := r.kept != nil; kept != (i > 0) {
				t.Fatalf("%+v, query %d: kept answer used %t", q, i, kept)
			}
			if i == 0 {
				first = r.catalog
			} else if q.Detail != "definitions" && !r.catalog.EvaluatedAtUtc.After(first.EvaluatedAtUtc) {
				t.Errorf("%+v: evaluatedAtUtc %v, first %v", q, r.catalog.EvaluatedAtUtc, first.EvaluatedAtUtc)
			}
			sent := rec.lastAnswer(t)
			if want := plainCatalog(t, sent); !reflect.DeepEqual(r.catalog, want) {
				t.Fatalf("%+v, query %d:\nkept  %+v\nplain %+v", q, i, r.catalog, want)
			}
			if want, err := wire.DecodePayload(sent, 0); err != nil || !bytes.Equal(r.payloadJSON(), want) {
				t.Fatalf("%+v, query %d: payload JSON differs from the inflated answer (%v)", q, i, err)
			}
			if n := r.inflatedLen(); n == 0 {
				t.Error("no inflated length")
			}
			time.Sleep(time.Millisecond) // a new evaluatedAtUtc
		}
	}
	// The availability changes: index and full answers are new, definitions are not.
	available.Store(true)
	for _, q := range []wire.Query{{Detail: "index"}, {Detail: "definitions"}} {
		r, err := c.roundTrip(ctx, wire.TypeQuery, q, c.defaultLimit(ctx), querySubject)
		if err != nil {
			t.Fatal(err)
		}
		if kept := r.kept != nil; kept != (q.Detail == "definitions") {
			t.Errorf("%+v after an availability change: kept answer used %t", q, kept)
		}
		if want := plainCatalog(t, rec.lastAnswer(t)); !reflect.DeepEqual(r.catalog, want) {
			t.Fatalf("%+v: kept %+v, plain %+v", q, r.catalog, want)
		}
		if e := r.catalog.Tools[3]; q.Detail == "index" && e.Runtime != nil {
			t.Errorf("tool 3 still unavailable: %+v", e.Runtime)
		}
	}
	if n := len(c.answers.kept); n > maxKeptAnswers {
		t.Errorf("%d answers kept", n)
	}
	// Client.Catalog reads the runtime flags of a kept answer's JSON.
	if cat, err := c.Catalog(ctx); err != nil || len(cat.Tools) != 400 {
		t.Fatalf("catalog: %v", err)
	}
}

// lastAnswer returns the payload of the last tool.catalog the app sent.
func (r *recConn) lastAnswer(t *testing.T) []byte {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.answer == nil {
		t.Fatal("no answer recorded")
	}
	return r.answer
}

// FuzzKeptCatalogAnswers holds the kept answers against full decoding: whatever follows a
// kept head, the catalog read is the one UnmarshalPayload reads, or both fail.
func FuzzKeptCatalogAnswers(f *testing.F) {
	defs := make([]catalog.Definition, 300)
	for i := range defs {
		defs[i] = catalog.Definition{ID: fmt.Sprintf("fuzz.tool_%03d", i), Name: "Tool", Description: strings.Repeat("text ", 20),
			Category: "c", Policy: wire.PolicyRead, ArgumentsSchema: jsontext.Value(`{"type":"object"}`), ResultSchema: jsontext.Value(`{"type":"object"}`)}
	}
	set, err := catalog.NewSet(defs, catalog.GuardReadWrite)
	if err != nil {
		f.Fatal(err)
	}
	body, err := set.Answer(&wire.Query{Detail: "index"}, nil, time.Unix(1e9, 0))
	if err != nil {
		f.Fatal(err)
	}
	at := strings.LastIndex(string(body), `,"evaluatedAtUtc"`)
	tpl, err := wire.NewTemplate(body[:at], nil)
	if err != nil {
		f.Fatal(err)
	}
	first, err := tpl.AppendPayload(nil, body[at:])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body[at:])
	f.Add([]byte(`,"evaluatedAtUtc":"2026-01-01T00:00:00Z","totalCount":300,"categories":{"c":300}}`))
	f.Add([]byte(`,"totalCount":1,"totalCount":2,"categories":{"c":300}}`))
	f.Add([]byte(`,"evaluatedAtUtc":"2026-01-01T00:00:00Z","TotalCount":3,"categories":{}}`))
	f.Add([]byte(`,"evaluatedAtUtc":"2026-01-01T00:00:00Z","totalCount":300,"categories":{"c":300},"tools":[]}`))
	f.Add([]byte(`,"evaluatedAtUtc":"2026-01-01T00:00:00Z","totalCount":300,"categories":{"c":300}} `))
	f.Add([]byte(`}`))
	f.Fuzz(func(t *testing.T, tail []byte) {
		var answers catalogAnswers
		var r response
		if err := answers.decode("q", first, 0, &r); err != nil || len(answers.kept) != 1 {
			t.Fatalf("first answer: %v, %d kept", err, len(answers.kept))
		}
		raw, err := tpl.AppendPayload(nil, tail)
		if err != nil {
			t.Fatal(err)
		}
		var plain wire.Catalog
		_, perr := wire.UnmarshalPayload(raw, 0, &plain)
		r = response{}
		err = answers.decode("q", raw, 0, &r)
		if (err == nil) != (perr == nil) {
			t.Fatalf("kept: %v; plain: %v", err, perr)
		}
		if err == nil && !reflect.DeepEqual(*r.catalog, plain) {
			t.Fatalf("kept %+v\nplain %+v", r.catalog, plain)
		}
	})
}
