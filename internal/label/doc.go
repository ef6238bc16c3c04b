// Package label holds the one rule for a session's label (what `ansight session rename`
// sets and archives carry): the host API applies it to what a user types, the recorder to
// what an archive brings in. A label is shown in terminals, the player and agents' session
// lists, so it is one line of visible text, short enough to list.
package label
