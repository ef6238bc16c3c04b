// Package fleet federates hosts over NATS: a device lab. Each host joins a fleet
// ([Join]) and announces its sessions; a [Client] is a hostapi.Backend over the whole
// fleet, so the CLI, the MCP bridge and the player drive any session of any host as they
// drive a local one.
//
// # Subjects
//
// Everything a fleet sends is under ansight.<fleet>, so fleets share a NATS server without
// seeing each other, and permissions name them exactly:
//
//	ansight.<fleet>.presence.<host>            host → all: presence (heartbeats, changes, leaving)
//	ansight.<fleet>.discover                   client → every host: presence and sessions, at once
//	ansight.<fleet>.host.<host>.sessions       the host's session list (conditional on a revision)
//	ansight.<fleet>.host.<host>.tools          a session's catalog (filtered)
//	ansight.<fleet>.host.<host>.tool           one tool's definition
//	ansight.<fleet>.host.<host>.call.<class>   a call of a tool of policy <class>: read, write, critical
//	ansight.<fleet>.host.<host>.batch.<class>  a batch whose highest policy is <class>
//	ansight.<fleet>.host.<host>.blob           a chunk of an artifact or a large answer
//	ansight.<fleet>.host.<host>.cancel         withdraw a request (its requester gave up)
//	ansight.<fleet>.host.<host>.ping           is the name taken? (asked by a host joining)
//
// Requests carry a reply subject (the requester's inbox). A host answers with interim
// messages — alive every Presence.AliveMS while it works, transfer progress — then one
// final message: the result, an error, or a blob reference when the result is larger than
// a message. Blobs (artifact files, large answers) are pulled in chunks of a message's
// size, a few at a time: the requester sets the pace, so nothing overruns a slow consumer
// or NATS's max_payload (1 MiB by default). See docs/fleet.md for the reasons of this
// choice over JetStream's object store.
//
// # Liveness
//
// A host announces its presence every heartbeat (DefaultHeartbeat, 5 s) and soon after its
// sessions change; a host silent for three heartbeats (15 s) is dropped from listings, and
// one that leaves says so. After NATS reconnects, a host announces itself at once. A
// request whose host stays silent for three alive intervals plus two seconds (5 s by
// default) fails with wire.CodeHostUnavailable, and a request to a host nobody serves fails at
// once: a caller never waits for a dead host beyond that, whatever the call's timeout.
//
// # Security
//
//   - Each host serves only its own sessions, through its own control API in process, so
//     its grant rules apply to every fleet call exactly as to a local call: the fleet never
//     widens a grant. Pairing (invites, grants) is never served over the fleet.
//   - The policy class of a call is in its subject, and the host refuses a call whose tool
//     has a higher policy than the class (against the catalog it holds for the session,
//     the one its grant check uses). A NATS user allowed to publish to …call.read and
//     …batch.read alone calls read tools alone; NATS refuses its other calls before any
//     host sees them, and the client reports them as denied at once.
//   - Hosts are trusted by the fleet: a user that may subscribe to ansight.<fleet>.host.>
//     could answer for a host. Give that right to hosts only, and answers' inboxes per user
//     (InboxPrefix) so that users cannot read each other's answers; docs/fleet.md has an
//     example server configuration, tested by this package.
//   - Credentials are never logged, nor are tool arguments: a host logs the operation, the
//     session and the tool ids of a request, at debug level.
package fleet
