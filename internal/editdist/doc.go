// Package editdist is the one edit distance of the module: how far a typed name is from a
// known one, for the suggestions of the CLI ("did you mean call?"), of the flow reader (an
// unknown key) and for the nearest candidates of a UI selector.
package editdist
