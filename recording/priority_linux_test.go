package recording

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestWriterThreadNicer checks that an open recorder's writer runs on a thread of its
// own, writerNice nicer than the process.
func TestWriterThreadNicer(t *testing.T) {
	r, err := Open(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := min(threadNice(t, syscall.Gettid())+writerNice, 19)
	if err := r.Flush(t.Context()); err != nil { // the writer has run
		t.Fatal(err)
	}
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	for _, task := range tasks {
		tid, err := strconv.Atoi(filepath.Base(task))
		if err != nil {
			continue
		}
		n := threadNice(t, tid)
		if n == want {
			return
		}
		seen = append(seen, n)
	}
	t.Fatalf("no thread at nice %d; threads' nice values: %v", want, seen)
}

// threadNice reads a thread's nice value (the 19th field of its stat).
func threadNice(t *testing.T, tid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // after the command's name
	n, err := strconv.Atoi(fields[16])                            // field 19 of the whole line
	if err != nil {
		t.Fatal(err)
	}
	return n
}
