// Package flatargs reads the arguments of flattened-string tools (argumentEncoding
// flattened-string) with the official SDKs' rules, for the SDK's tool packages that declare
// their tools as the official SDKs do (app/files, app/data, app/prefs).
//
// Such a tool receives its arguments as a string map: a host may send a number or its text
// ("65536": the official download_file's nextRequest writes integers as strings), a boolean
// or "true", "1", "0". The rules: names match regardless of case (two names that differ
// only in case are refused, since which one was meant cannot be told); a blank value is an
// absent one; an integer is parsed as a 32- or 64-bit decimal and clamped to its bounds, and
// anything else is refused rather than ignored; a boolean is true or false in any case, or 1
// or 0.
package flatargs
