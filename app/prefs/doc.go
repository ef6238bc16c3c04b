// Package prefs lets a host read and change a Go app's preferences with the official SDKs'
// prefs tools, over stores the app chooses:
//
//	prefs.list_keys   read      the keys of a store (a prefix, at most maxResults)
//	prefs.get_value   read      one value, as text, with its type
//	prefs.set_value   write     one value, from text and a type
//	prefs.remove_key  critical  one key removed
//
//	st, err := prefs.OpenFile(filepath.Join(dir, "settings.json"))
//	err = prefs.Register(a, prefs.Options{Stores: map[string]prefs.Store{"settings": st}})
//
// A store is anything that implements Store; OpenFile gives one kept in a JSON file (an
// object of strings, booleans, numbers and string arrays, rewritten atomically on each
// change), the Go counterpart of Android's SharedPreferences and Apple's UserDefaults.
//
// The tools follow the official .NET SDK (Ansight.Tools.Preferences): flattened-string
// arguments, values as text with a valueType of string, boolean, integer, number or
// string_array (an array as JSON text; "unsupported" for what a store holds of another
// type), the official codes (prefs_list_failed, prefs_get_failed, prefs_set_failed,
// prefs_remove_failed) and its restrictions: Options.AllowKeys and AllowKeyPrefixes limit
// the keys any tool sees or touches, a request names a store with store (Options.Default
// without). As in the official SDKs a value is trimmed and cannot be empty. Stores are the
// app's: a store name the app did not register is refused.
package prefs
