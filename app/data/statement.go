package data

import (
	"strings"
)

// MaxStatementBytes bounds the SQL text of one data.query.
const MaxStatementBytes = 64 << 10

// The first keywords of a statement data.query runs: queries, and EXPLAIN of anything
// (which describes a statement without running it).
var queryKeywords = map[string]bool{"SELECT": true, "WITH": true, "VALUES": true, "EXPLAIN": true}

// statement checks that sql is one statement a query tool may run and returns it without
// what follows its end (a final ';', white space, comments). It refuses several statements
// ("COMMIT; DELETE …": drivers such as modernc.org/sqlite run every statement of a text),
// and statements that do not start with SELECT, WITH, VALUES or EXPLAIN (ATTACH, PRAGMA,
// INSERT…). This is not what keeps the database unchanged — the read-only connection is (a
// WITH can lead to a DELETE, refused by the database) — but it keeps out what a read-only
// connection still runs: ATTACH of another file, PRAGMA that switch read-only off.
//
// The text is split by SQLite's lexical rules (which are standard SQL's plus [names] and
// `names`): '…' strings and "…" names with doubled quotes, -- line comments and /* */ block
// comments (an unterminated one runs to the end). A dialect with other rules can make it
// see a ';' where there is none (PostgreSQL's $$ strings, MySQL's # comments), refusing a
// statement, or miss one: MySQL's backslash escapes, and its "--" that starts a comment
// only before a space ("SELECT 1 --1; DELETE …" is two statements there). For those, the
// database's read-only mode is what holds.
func statement(sql string) (string, error) {
	if len(sql) > MaxStatementBytes {
		return "", problem(reasonInvalidSQL, "the SQL text is %d bytes, more than %d", len(sql), MaxStatementBytes)
	}
	if strings.ContainsRune(sql, 0) {
		return "", problem(reasonInvalidSQL, "the SQL text contains a NUL byte")
	}
	end, first := -1, ""
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			if j := strings.IndexByte(sql[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(sql)
			}
			continue
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			if j := strings.Index(sql[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(sql)
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		}
		if end >= 0 {
			return "", problem(reasonMultipleStatements, "Only a single read-only statement is supported: the text goes on after the ';' at byte %d.", end)
		}
		switch c {
		case ';':
			end = i
			i++
		case '\'', '"', '`':
			i = closing(sql, i, c, c)
		case '[':
			i = closing(sql, i, '[', ']')
		default:
			j := i
			for j < len(sql) && word(sql[j]) {
				j++
			}
			if j == i {
				j++ // an operator or punctuation
			}
			if first == "" {
				first = strings.ToUpper(sql[i:j])
			}
			i = j
		}
	}
	switch {
	case first == "":
		return "", problem(reasonInvalidSQL, "The argument 'sql' holds no statement.")
	case !queryKeywords[first]:
		return "", problem(reasonNotAQuery, "Only read-only queries run here (SELECT, WITH, VALUES, EXPLAIN), not %s.", first)
	}
	if end >= 0 {
		return sql[:end], nil
	}
	return sql, nil
}

// closing returns the index after the quoted token that starts at i with open and ends
// with close (a doubled close inside "…", '…' and `…` is part of it); the end of sql when
// it is not closed.
func closing(sql string, i int, open, close byte) int {
	for j := i + 1; j < len(sql); j++ {
		if sql[j] != close {
			continue
		}
		if open != '[' && j+1 < len(sql) && sql[j+1] == close {
			j++
			continue
		}
		return j + 1
	}
	return len(sql)
}

// word reports whether c can be part of a keyword or name.
func word(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
