package wire

import (
	"reflect"
	"testing"
	"time"
)

// canonicalSeeds are envelopes in the canonical form (the host's call, the app's answer)
// and near misses of it.
var canonicalSeeds = []struct {
	msg   string
	taken bool // read in the canonical form
}{
	{`{"type":"tool.call","id":"1a21edac0cb0593e0000000000000003","sessionId":"com-ansight-bench-001","sentAt":"2026-12-02T16:45:06.887616364Z","capability":"tool.exec","payload":{"toolId":"app.get_state","arguments":{}}}`, true},
	{`{"type":"tool.result","id":"1a21edac0cb0593e0000000000000003.response","replyTo":"1a21edac0cb0593e0000000000000003","sessionId":"com-ansight-bench-001","sentAt":"2026-12-02T16:45:06.887641381Z","capability":"tool.exec","payload":{"toolId":"app.get_state","success":true,"result":{"screen":"list","darkMode":false,"search":"","noteCount":3,"status":"Not signed in · sign in to sync"}}}`, true},
	{smallCall, true},
	{`{"type":"tool.call","id":"c","payload":{"toolId":"a","arguments":{"x":[1,{"y":null}]},"callId":"k"}}`, true},
	{`{"type":"tool.call","id":" ","payload":{"toolId":"a"}}`, true},
	{`{"type":"tool.call","id":"c","replyTo":null,"sessionId":null,"sentAt":null,"capability":null,"payload":{"toolId":"a","arguments":null}}`, true},
	{`{"type":"tool.call","id":"c","payload":{"toolId":"a","arguments":{"a":1,"a":2}}}`, false},
	{`{"type":"tool.call","id":"c","payload":{"toolId":"a","arguments": {}}}`, false},
	{`{"type":"tool.call","id":"c","payload":{"toolId":"a","after":{}}}`, false},
	{`{"type":"tool.call","id":"c","sentAt":"2026-02-30T00:00:00Z","payload":{"toolId":"a"}}`, false},
	{`{"type":"tool.call","id":"tool.call","capability":"other","payload":{"toolId":"a"}} `, false},
	{`{"type":"tool.result","id":"r","replyTo":"c","payload":{"toolId":"a","success":false,"message":"no","result":[1,2]}}`, true},
	{`{"type":"tool.result","id":"r","replyTo":"c","payload":{"toolId":"a","success":true,"result":{"$ansightEncoding":"x"}}}`, true},
	{`{"type":"tool.result","id":"r","replyTo":"c","payload":{"toolId":"a","success":1}}`, false},
	{`{"type":"tool.query","id":"q","payload":{}}`, false},
}

// FuzzCanonicalEnvelope holds the canonical reading of an envelope (canonicalEnvelope)
// against the general strict scan: for every way the decoders ask for the payload, both
// give the same envelope, payload, answer and error.
func FuzzCanonicalEnvelope(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s.msg))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		type out struct {
			Env     Envelope
			Decoded bool
			Err     string
			Call    Call
			Result  Result
			Lean    leanStrings
		}
		read := func(withCall, withResult, lean, canonical bool) out {
			var o out
			var call *Call
			var result *Result
			var l *leanStrings
			if withCall {
				call = &o.Call
			}
			if withResult {
				result = &o.Result
			}
			if lean {
				l = &o.Lean
			}
			var err error
			o.Env, o.Decoded, err = decodeEnvelope(data, call, result, l, canonical)
			if err != nil {
				o.Err = err.Error()
			}
			return o
		}
		for _, m := range [][3]bool{{true, false, false}, {false, true, false}, {false, true, true}, {true, true, false}} {
			got, want := read(m[0], m[1], m[2], true), read(m[0], m[1], m[2], false)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q %v:\ncanonical %+v\ngeneral   %+v", data, m, got, want)
			}
		}
	})
}

// TestCanonicalTaken checks that the canonical reading takes what the host and the app
// write (it would be a slower path to the same answer otherwise, which the fuzz target
// cannot tell), and gives up on what is not in the form.
func TestCanonicalTaken(t *testing.T) {
	for _, seed := range canonicalSeeds {
		s := getScanner([]byte(seed.msg))
		s.fuseCall, s.fuseResult = true, true
		took := s.canonicalEnvelope()
		s.put()
		if took != seed.taken {
			t.Errorf("%s: canonical %v, want %v", seed.msg, took, seed.taken)
		}
	}
}

// FuzzAppendTimestamp holds appendTimestamp, the envelope's sentAt writer, to the bytes of
// time.RFC3339Nano, at any time in any zone, twice in a row (the second time from the kept
// second).
func FuzzAppendTimestamp(f *testing.F) {
	for _, t := range []time.Time{
		time.Date(2026, 12, 2, 16, 45, 6, 887616364, time.UTC), time.Date(2026, 12, 2, 16, 45, 6, 0, time.UTC),
		time.Date(2026, 12, 2, 16, 45, 6, 500000000, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 10, time.UTC),
	} {
		f.Add(t.Unix(), int64(t.Nanosecond()), 0)
	}
	f.Add(int64(1764693906), int64(887616364), 7200)
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int) {
		tm := time.Unix(sec, nsec).In(time.FixedZone("", offset%(24*3600)))
		want := tm.UTC().AppendFormat([]byte("x"), time.RFC3339Nano)
		for range 2 {
			if got := appendTimestamp([]byte("x"), tm); string(got) != string(want) {
				t.Fatalf("%v: appendTimestamp %s, AppendFormat %s", tm, got, want)
			}
		}
	})
}

// BenchmarkCanonicalEnvelope reads the small call's two envelopes as the app and the host
// do (DecodeEnvelopeInto with a call, DecodeResponseInto), in the canonical form and with
// the general strict scan alone (the baseline).
func BenchmarkCanonicalEnvelope(b *testing.B) {
	req, ans := []byte(canonicalSeeds[0].msg), []byte(canonicalSeeds[1].msg)
	for _, canonical := range []bool{false, true} {
		b.Run(map[bool]string{false: "general", true: "canonical"}[canonical], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var c Call
				var r Result
				var l leanStrings
				if _, _, err := decodeEnvelope(req, &c, nil, nil, canonical); err != nil {
					b.Fatal(err)
				}
				if _, _, err := decodeEnvelope(ans, nil, &r, &l, canonical); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
