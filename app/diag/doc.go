// Package diag gives a Go service or CLI diagnostics tools in one line, so that an agent
// (through the MCP bridge, for one) can look inside it while it runs:
//
//	diag.Register(a, diag.Options{Telemetry: tel})
//
// The tools and their policies:
//
//   - diag.runtime (read): Go version, platform, CPUs, GOMAXPROCS, process id, uptime,
//     the binary's build information (module versions, VCS revision, build settings);
//   - diag.metrics (read): a runtime/metrics snapshot (every metric, or those under a
//     prefix); histograms are summarised by count and quantiles;
//   - diag.goroutines (read): the goroutine dump, with stacks, bounded to 4 MiB;
//   - diag.heap_profile (read): takes a pprof heap profile and keeps it;
//   - diag.cpu_profile (write): a pprof CPU profile over 1 to 30 seconds (5 by default;
//     the schema states the bounds, so a call out of them is refused, not clamped), kept;
//   - diag.log_tail (read, with Options.Telemetry): the last lines logged through the
//     telemetry slog handler.
//
// # Profiles are artifacts
//
// Register also registers the artifact provider "diag" with app/files's artifacts.query and
// artifacts.request (adding it to the app's own providers, if any): it lists the profiles
// the two profile tools kept (the last MaxKeptProfiles, at most MaxKeptBytes) and makes a
// heap profile ("heap") and the goroutine dump ("goroutines") when they are requested. A
// profile tool's result is not the file but a pointer to it (files.ArtifactRef: provider,
// artifact id, file hints and the ready artifacts.request call): the official host
// receives the ASFT transfers of artifacts.request and of two other tools only, and drops
// those of any other tool (see app.Call.SendArtifact). So the bytes reach both hosts, and
// an agent can take a profile first and fetch it when it wants to.
//
// Why these policies: reading the runtime's state costs little and changes nothing, so a
// read grant suffices. A heap profile is a copy of what the runtime already samples. A CPU
// profile is different: it holds the process-wide profiler (one at a time), adds sampling
// overhead to every goroutine and keeps the call running for its whole duration, so it
// needs a write grant, is bounded to 30 seconds and refuses to start while another runs.
// Dumps and profiles show code paths and allocation sites, not memory contents.
package diag
