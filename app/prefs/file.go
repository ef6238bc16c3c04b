package prefs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// Bounds of a FileStore.
const (
	MaxFileBytes = 1 << 20 // the file, read or written
	MaxKeyBytes  = 1024    // one key
)

// FileStore is a Store kept in a JSON file: one object whose members are the preferences —
// strings, booleans, numbers (an integer is written without a fraction, a number always
// with one, "2.0", so that each reads back as its type) and arrays of strings; any other
// member is kept and reported as unsupported. Every change rewrites the file atomically (a
// temporary file renamed over it, 0600). Safe for concurrent use within the process.
type FileStore struct {
	path string
	mu   sync.Mutex
}

// OpenFile returns the store kept in the file at path, which is created on the first change
// when it does not exist. An existing file must be a JSON object within MaxFileBytes.
func OpenFile(path string) (*FileStore, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	s := &FileStore{path: abs}
	if _, err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// Path is the store's file.
func (s *FileStore) Path() string { return s.path }

// load reads the file's members (none when it does not exist).
func (s *FileStore) load() (map[string]jsontext.Value, error) {
	b, err := os.ReadFile(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return map[string]jsontext.Value{}, nil
	case err != nil:
		return nil, fmt.Errorf("prefs: %w", err)
	case len(b) > MaxFileBytes:
		return nil, fmt.Errorf("prefs: %s is %d bytes, more than %d", s.path, len(b), MaxFileBytes)
	}
	members := map[string]jsontext.Value{}
	if err := wire.Unmarshal(b, &members); err != nil {
		return nil, fmt.Errorf("prefs: %s is not a JSON object: %w", s.path, err)
	}
	return members, nil
}

// save writes the members, sorted by key, beside the file and renames it over it.
func (s *FileStore) save(members map[string]jsontext.Value) error {
	var b bytes.Buffer
	b.WriteString("{")
	for i, k := range slices.Sorted(maps.Keys(members)) {
		if i > 0 {
			b.WriteString(",")
		}
		key, _ := jsontext.AppendQuote(nil, k)
		b.WriteString("\n  ")
		b.Write(key)
		b.WriteString(": ")
		b.Write(members[k])
	}
	b.WriteString("\n}\n")
	if b.Len() > MaxFileBytes {
		return fmt.Errorf("prefs: the store would be %d bytes, more than %d", b.Len(), MaxFileBytes)
	}
	var random [8]byte
	_, _ = rand.Read(random[:])
	tmp := s.path + ".tmp-" + hex.EncodeToString(random[:])
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("prefs: %w", err)
	}
	if err := os.Rename(tmp, s.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("prefs: %w", err)
	}
	return nil
}

// Keys returns the store's keys.
func (s *FileStore) Keys(context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load()
	if err != nil {
		return nil, err
	}
	return slices.Collect(maps.Keys(m)), nil
}

// Get returns the value of key and whether it exists.
func (s *FileStore) Get(_ context.Context, key string) (Value, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load()
	if err != nil {
		return Value{}, false, err
	}
	raw, ok := m[key]
	if !ok {
		return Value{}, false, nil
	}
	return decode(raw), true, nil
}

// Set writes the value of key.
func (s *FileStore) Set(_ context.Context, key string, v Value) error {
	if len(key) > MaxKeyBytes {
		return fmt.Errorf("prefs: the key is %d bytes, more than %d", len(key), MaxKeyBytes)
	}
	raw, err := encode(v)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load()
	if err != nil {
		return err
	}
	m[key] = raw
	return s.save(m)
}

// Remove removes key and reports whether it was there.
func (s *FileStore) Remove(_ context.Context, key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load()
	if err != nil {
		return false, err
	}
	if _, ok := m[key]; !ok {
		return false, nil
	}
	delete(m, key)
	return true, s.save(m)
}

// encode writes a value as its JSON member.
func encode(v Value) (jsontext.Value, error) {
	switch v.Type {
	case String:
		return wire.Marshal(v.String)
	case Boolean:
		return wire.Marshal(v.Bool)
	case Integer:
		return jsontext.Value(strconv.FormatInt(v.Int, 10)), nil
	case Number:
		if math.IsInf(v.Number, 0) || math.IsNaN(v.Number) {
			return nil, fmt.Errorf("prefs: %v is not a number JSON can hold", v.Number)
		}
		s := strconv.FormatFloat(v.Number, 'g', -1, 64)
		if !bytes.ContainsAny([]byte(s), ".eE") {
			s += ".0"
		}
		return jsontext.Value(s), nil
	case StringArray:
		return wire.Marshal(nonNil(v.Strings))
	}
	return nil, fmt.Errorf("prefs: a value of type %q cannot be written", v.Type)
}

// decode reads a JSON member as a value (Unsupported for objects, nulls and arrays that
// are not all strings).
func decode(raw jsontext.Value) Value {
	switch raw.Kind() {
	case '"':
		var s string
		_ = wire.Unmarshal(raw, &s)
		return Value{Type: String, String: s}
	case 't', 'f':
		return Value{Type: Boolean, Bool: raw.Kind() == 't'}
	case '0':
		if !bytes.ContainsAny(raw, ".eE") {
			if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				return Value{Type: Integer, Int: n}
			}
		}
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			return Value{Type: Number, Number: f}
		}
	case '[':
		var ss []string
		if wire.Unmarshal(raw, &ss) == nil {
			return Value{Type: StringArray, Strings: ss}
		}
	}
	return Value{Type: Unsupported, String: string(raw)}
}
