package data

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/internal/flatargs"
	"github.com/ansight-go/ansight/wire"
)

// Failure codes: the official SDKs' codes, one per tool.
const (
	CodeListFailed   wire.Code = "database_list_failed"
	CodeSchemaFailed wire.Code = "database_schema_failed"
	CodeQueryFailed  wire.Code = "database_query_failed"
)

// Reasons (details.reason) that say why a data tool failed.
const (
	reasonUnknownDatabase    = "database_unknown"    // path names no registered database
	reasonInvalidArgument    = "invalid_argument"    // an argument missing or not of its type
	reasonInvalidSQL         = "invalid_sql"         // empty, too long, a NUL byte
	reasonMultipleStatements = "multiple_statements" // more than one statement
	reasonNotAQuery          = "not_a_query"         // a statement that is not SELECT, WITH, VALUES or EXPLAIN
	reasonTimeout            = "timeout"             // the query ran longer than Options.QueryTimeout
	reasonSchemaUnsupported  = "schema_unsupported"  // describe_schema of a database that is not SQLite and has no Describe
	reasonTooLarge           = "too_large"           // one row is larger than Options.MaxResultBytes
	reasonDatabase           = "database_error"      // the database refused or failed the statement (a write on a read-only connection, a syntax error)
)

// failure is a data tool's failure before it gets its tool's code.
type failure struct {
	reason string
	msg    string
}

func (f *failure) Error() string { return f.msg }

func problem(reason, format string, args ...any) error {
	return &failure{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// toolFailure turns err into the tool failure with code and details {reason, database}.
// The context's own end (the caller left) is passed through as it is.
func toolFailure(code wire.Code, database string, err error) error {
	var f *failure
	var arg *flatargs.Error
	switch {
	case errors.As(err, &f):
	case errors.As(err, &arg):
		f = &failure{reason: reasonInvalidArgument, msg: arg.Error()}
	case errors.Is(err, context.DeadlineExceeded):
		f = &failure{reason: reasonTimeout, msg: "the statement ran longer than the time this app allows, and was interrupted"}
	case errors.Is(err, context.Canceled):
		return err
	default:
		f = &failure{reason: reasonDatabase, msg: strings.TrimSpace(err.Error())}
	}
	details := map[string]string{"reason": f.reason}
	if database != "" {
		details["database"] = database
	}
	return app.ToolErrorDetails(code, f.msg, details)
}
