// Package redact removes credentials from HTTP request metadata: the values of sensitive
// headers and query parameters, URL user information, and name=value secrets in free
// text. The SDK applies it before a request record leaves the app, and the host again
// before it stores one (see docs/recordings.md): the rules are the official SDKs' and
// host's, so that a record is redacted alike whoever wrote it.
package redact
