package recording

import (
	"io"
	"os"
)

// spool is a private temporary file an export writes to and reads back: what must wait
// for an entry written before it — the records behind the manifest, the files behind the
// records, a document's items behind its head — waits on disk, not in memory, so that an
// export's memory does not grow with the recording.
type spool struct {
	f *os.File
	n int64
}

func newSpool() (*spool, error) {
	f, err := os.CreateTemp("", "ansight-export-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // unnamed from the start: it goes with the last close, even on a crash
	return &spool{f: f}, nil
}

// Write appends p.
func (s *spool) Write(p []byte) (int, error) {
	n, err := s.f.WriteAt(p, s.n)
	s.n += int64(n)
	return n, err
}

// section reads back n bytes written at off.
func (s *spool) section(off, n int64) io.Reader { return io.NewSectionReader(s.f, off, n) }

// all reads back everything written.
func (s *spool) all() io.Reader { return s.section(0, s.n) }

func (s *spool) close() { s.f.Close() }
