#!/bin/sh
# Runs every fuzz target of the module, one after another, for longer than CI does.
#
#   test/fuzz.sh [duration] [target-regexp]
#
# duration is per target (go test -fuzztime syntax, default 30s); target-regexp selects
# targets by name (default: all). FUZZ_PARALLEL sets the fuzzing workers per target
# (default 1, so that a shared machine keeps its other cores).
#
# A failing input is written by go test to <package>/testdata/fuzz/<Target>/ and the
# script goes on with the next target; it exits 1 if any target failed. Fix the bug, keep
# the input file (it becomes part of the seed corpus that every go test runs) and commit
# both. See docs/fuzzing.md.
set -u
duration=${1:-30s}
select=${2:-.}
parallel=${FUZZ_PARALLEL:-1}
cd "$(dirname "$0")/.." || exit 2

# Every "func FuzzXxx" in a _test.go file, as "directory target".
targets=$(grep -r --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*' . |
	sed -e 's|^\./||' -e 's|/[^/]*_test\.go:func | |' | sort -u)
if [ -z "$targets" ]; then
	echo "fuzz.sh: no fuzz targets found" >&2
	exit 2
fi
echo "$targets" | while read -r dir target; do
	echo "$target" | grep -Eq -- "$select" || continue
	echo "== ./$dir $target ($duration)"
	if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$duration" -parallel "$parallel" "./$dir"; then
		echo "!! ./$dir $target FAILED: see ./$dir/testdata/fuzz/$target/"
		echo "./$dir $target" >>"${TMPDIR:-/tmp}/ansight-fuzz-failed.$$"
	fi
done
if [ -s "${TMPDIR:-/tmp}/ansight-fuzz-failed.$$" ]; then
	echo "fuzz.sh: failed targets:"
	cat "${TMPDIR:-/tmp}/ansight-fuzz-failed.$$"
	rm -f "${TMPDIR:-/tmp}/ansight-fuzz-failed.$$"
	exit 1
fi
echo "fuzz.sh: every selected target ran for $duration without a failure"
