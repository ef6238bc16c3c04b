package recording

// OfficialLines gives the external tests (e2e, load) the telemetry messages of
// testdata/official-telemetry.jsonl.
var OfficialLines = officialLines
