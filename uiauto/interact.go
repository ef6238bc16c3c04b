package uiauto

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/jsonscan"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// InteractionSchema names every line app interact writes.
const InteractionSchema = "ansight.app-interaction/v1"

// Bounds of app interact's requests (the official CLI's).
const (
	maxInteractionLine  = 65536 // characters of one request line
	maxInteractionDepth = 16    // JSON nesting of a request
	maxInteractionID    = 128
	maxInteractionValue = 16384
	maxTargetField      = 1024
	maxBatchCommands    = 32
	maxInteractionNodes = 200 // nodes a reply's ui lists

	// DefaultCommandTimeoutMs bounds each command, its capture included (app interact
	// --timeout-ms, the official default).
	DefaultCommandTimeoutMs = 15000
)

// Interaction error codes (the official CLI's).
const (
	InteractInvalidRequest = "invalid_request"
	InteractTimeout        = "timeout"
	InteractCommandFailed  = "command_failed"
	InteractSessionClosed  = "session_closed"
	InteractHostError      = "host_error"
	InteractBatchStopped   = "batch_stopped"
)

// InteractionRequest is one line of app interact's input.
type InteractionRequest struct {
	ID              string               `json:"id"`
	Command         string               `json:"command"`
	X               *float64             `json:"x,omitzero"`
	Y               *float64             `json:"y,omitzero"`
	EndX            *float64             `json:"endX,omitzero"`
	EndY            *float64             `json:"endY,omitzero"`
	Scale           *float64             `json:"scale,omitzero"`
	Value           *string              `json:"value,omitzero"`
	DurationMs      *int                 `json:"durationMs,omitzero"`
	TaskID          *string              `json:"taskId,omitzero"`
	Input           jsontext.Value       `json:"input,omitzero"`
	Commands        []InteractionRequest `json:"commands,omitzero"`
	Target          *InteractionTarget   `json:"target,omitzero"`
	ReplaceExisting *bool                `json:"replaceExisting,omitzero"`
}

// InteractionTarget names a node by automation id or exact text, narrowed by role and
// ancestor.
type InteractionTarget struct {
	AutomationID         *string `json:"automationId,omitzero"`
	Text                 *string `json:"text,omitzero"`
	Role                 *string `json:"role,omitzero"`
	AncestorAutomationID *string `json:"ancestorAutomationId,omitzero"`
}

// InteractionReply is one line of app interact's output.
type InteractionReply struct {
	Schema         string             `json:"schema"`
	ID             *string            `json:"id,omitzero"`
	Command        string             `json:"command"`
	SessionID      string             `json:"sessionId"`
	Succeeded      bool               `json:"succeeded"`
	InputSucceeded *bool              `json:"inputSucceeded,omitzero"`
	Error          string             `json:"error,omitzero"`
	Message        string             `json:"message"`
	Screenshot     *InteractionShot   `json:"screenshot,omitzero"`
	Timing         InteractionTiming  `json:"timing"`
	UI             *InteractionUI     `json:"ui,omitzero"`
	Results        []InteractionReply `json:"results,omitzero"`
	SkippedIDs     []string           `json:"skippedIds,omitzero"`
}

// InteractionShot is the screenshot taken after a command.
type InteractionShot struct {
	FrameID       string    `json:"frameId"`
	ArtifactPath  string    `json:"artifactPath"`
	CapturedAtUtc time.Time `json:"capturedAtUtc"`
	Width         int       `json:"width"`
	Height        int       `json:"height"`
}

// InteractionTiming is how long a command took, in milliseconds.
type InteractionTiming struct {
	InputMs   float64 `json:"inputMs"`
	CaptureMs float64 `json:"captureMs"`
	TotalMs   float64 `json:"totalMs"`
}

// InteractionUI is the screen after a command: its meaningful shown nodes.
type InteractionUI struct {
	Status        string              `json:"status"`
	Source        string              `json:"source,omitzero"`
	SnapshotID    string              `json:"snapshotId,omitzero"`
	CapturedAtUtc *time.Time          `json:"capturedAtUtc,omitzero"`
	Nodes         []InteractionUINode `json:"nodes"`
	Truncated     bool                `json:"truncated"`
	Message       string              `json:"message,omitzero"`
}

// InteractionUINode is a node of a reply's ui.
type InteractionUINode struct {
	AutomationID          string   `json:"automationId,omitzero"`
	Text                  string   `json:"text,omitzero"`
	Role                  string   `json:"role"`
	Value                 string   `json:"value,omitzero"`
	Enabled               bool     `json:"enabled"`
	Actions               []string `json:"actions"`
	AncestorAutomationIDs []string `json:"ancestorAutomationIds"`
}

// InteractOptions configures an interaction.
type InteractOptions struct {
	// SessionID is the session every reply names.
	SessionID string
	// Call calls the app's tools (the captures of the replies).
	Call CallFunc
	// Run runs a command's UI operation; nil runs it here over Call. A host API client
	// passes its Backend.UI, so that the host resolves the selector.
	Run func(ctx context.Context, req Request) (*Outcome, error)
	// TimeoutMs bounds each command, its capture included (100..60000; 15000).
	TimeoutMs int
	// Screenshot, when set, takes a screenshot after every command; nil, replies carry the
	// tree only.
	Screenshot func(ctx context.Context) (*InteractionShot, error)
	// Repository is the official CLI's task repository; tasks are not supported here, and
	// without it task commands are refused as invalid.
	Repository string
}

// Interact runs app interact's JSON Lines duplex: a ready line with the screen, then one
// reply per request line of in, until an exit command or the end of in (the app and the
// host keep running). A request that cannot be read is answered invalid_request and the
// interaction goes on. It returns an error only when writing fails, ctx ends, or the host
// fails (after a session_closed or host_error line).
func Interact(ctx context.Context, in io.Reader, out io.Writer, opts InteractOptions) error {
	if opts.TimeoutMs == 0 {
		opts.TimeoutMs = DefaultCommandTimeoutMs
	}
	if opts.Run == nil {
		opts.Run = func(ctx context.Context, req Request) (*Outcome, error) { return Run(ctx, opts.Call, req) }
	}
	it := &interaction{opts: opts, out: out}
	ready := it.command(ctx, InteractionRequest{Command: OpSnapshot})
	ready.Command, ready.ID = "ready", nil
	if err := it.write(ready); err != nil {
		return err
	}
	if it.fatal != nil {
		return it.fatal
	}
	lines := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(lines)
		if errors.Is(err, io.EOF) && len(line) == 0 && !tooLong {
			return nil // detached: the app and the host keep running
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(bytes.TrimSpace(line)) == 0 && !tooLong {
			if errors.Is(err, io.EOF) {
				return nil
			}
			continue
		}
		var reply InteractionReply
		req, perr := parseInteraction(line, tooLong, opts.Repository != "")
		switch {
		case perr != nil:
			reply = it.errorReply(req.idPtr(), cmpOrString(req.Command, "invalid"), InteractInvalidRequest, perr.Error())
		case req.Command == "exit":
			reply = InteractionReply{Schema: InteractionSchema, ID: req.idPtr(), Command: "exit", SessionID: opts.SessionID,
				Succeeded: true, Message: "Detached. The app and host remain running."}
		case req.Command == "batch":
			reply = it.batch(ctx, req)
		default:
			reply = it.command(ctx, *req)
		}
		if err := it.write(reply); err != nil {
			return err
		}
		if it.fatal != nil {
			return it.fatal
		}
		if req.Command == "exit" && perr == nil {
			return nil
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// readLine reads one line (without its newline); tooLong reports a line longer than the
// bound, whose rest has been skipped.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, isPrefix, err := r.ReadLine()
		if len(line)+len(chunk) > maxInteractionLine*utf8.UTFMax {
			tooLong = true
		} else {
			line = append(line, chunk...)
		}
		if err != nil || !isPrefix {
			if utf8.RuneCount(line) > maxInteractionLine {
				tooLong = true
			}
			return line, tooLong, err
		}
	}
}

func (r *InteractionRequest) idPtr() *string {
	if r == nil || r.ID == "" {
		return nil
	}
	id := r.ID
	return &id
}

// parseInteraction reads and validates one request line strictly: unknown or case-variant
// members, duplicate names and nesting deeper than 16 are refused.
func parseInteraction(line []byte, tooLong, repository bool) (*InteractionRequest, error) {
	req := &InteractionRequest{}
	if tooLong {
		return req, fmt.Errorf("a request line holds at most %d characters", maxInteractionLine)
	}
	if jsonscan.Nesting(line) > maxInteractionDepth {
		return req, fmt.Errorf("a request nests at most %d levels", maxInteractionDepth)
	}
	if err := json.Unmarshal(line, req, json.RejectUnknownMembers(true)); err != nil {
		var top struct {
			ID      string `json:"id"`
			Command string `json:"command"`
		}
		_ = json.Unmarshal(line, &top) // for the reply's id and command, when readable
		return &InteractionRequest{ID: top.ID, Command: top.Command}, fmt.Errorf("not a valid request: %s", decodeProblem(err))
	}
	if err := req.validate(); err != nil {
		return req, err
	}
	if !repository && (req.Command == "task" || req.Command == "tasks" || slicesContainsTask(req.Commands)) {
		return req, errors.New("task commands require --repository <root> when opening the interactive connection")
	}
	return req, nil
}

// decodeProblem says in JSON's words what the strict decoder refused in a request line:
// the member, where it is, and what was wrong, with no Go type names.
func decodeProblem(err error) string {
	var se *json.SemanticError
	if errors.As(err, &se) {
		where := string(se.JSONPointer)
		switch {
		case errors.Is(se.Err, json.ErrUnknownName):
			return fmt.Sprintf("unknown member %q at %s", se.JSONPointer.LastToken(), cmpOrString(where, "/"))
		case se.JSONKind != 0 && se.GoType != nil:
			return fmt.Sprintf("%s must be %s, not %s", cmpOrString(where, "the request"), jsonKindOf(se.GoType), kindName(se.JSONKind))
		}
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		if errors.Is(syn.Err, jsontext.ErrDuplicateName) {
			return fmt.Sprintf("duplicate member %q", syn.JSONPointer.LastToken())
		}
		return fmt.Sprintf("invalid JSON at offset %d: %v", syn.ByteOffset, syn.Err)
	}
	return err.Error()
}

// jsonKindOf names the JSON a Go type of a request reads.
func jsonKindOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another kind of value"
}

// kindName names a JSON kind.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return k.String()
}

func slicesContainsTask(cs []InteractionRequest) bool {
	for _, c := range cs {
		if c.Command == "task" || c.Command == "tasks" {
			return true
		}
	}
	return false
}

// validate checks a request as the official CLI does.
func (r *InteractionRequest) validate() error {
	bad := errors.New
	if strings.TrimSpace(r.ID) == "" || utf8.RuneCountInString(r.ID) > maxInteractionID {
		return bad("id must be a non-empty string of at most 128 characters")
	}
	switch r.Command {
	case "snapshot", "tap", "swipe", "pinch", "type", "back", "tasks", "task", "batch", "exit":
	default:
		return bad("command must be snapshot, tap, swipe, pinch, type, back, tasks, task, batch, or exit")
	}
	coordinate := func(v *float64, name string) error {
		if v == nil || *v != *v || *v < 0 || *v > 1 {
			return fmt.Errorf("%s must be a finite normalized coordinate between 0 and 1", name)
		}
		return nil
	}
	if r.Target != nil {
		if r.Command != "tap" && r.Command != "type" {
			return bad("target is only valid for tap and type")
		}
		t := r.Target
		if blank(t.AutomationID) && blank(t.Text) {
			return bad("target requires automationId or exact text; role and ancestorAutomationId narrow the match")
		}
		for _, v := range []*string{t.AutomationID, t.Text, t.Role, t.AncestorAutomationID} {
			if v != nil && (strings.TrimSpace(*v) == "" || utf8.RuneCountInString(*v) > maxTargetField) {
				return bad("target fields must be non-empty strings of at most 1024 characters")
			}
		}
		if r.X != nil || r.Y != nil {
			return bad("use either target or coordinates, not both")
		}
	}
	if r.Command == "swipe" || r.Command == "pinch" || r.Command == "tap" && r.Target == nil {
		if err := coordinate(r.X, "x"); err != nil {
			return err
		}
		if err := coordinate(r.Y, "y"); err != nil {
			return err
		}
	} else if r.X != nil || r.Y != nil {
		return bad("x/y are only valid for tap, swipe and pinch")
	}
	if r.Command == "swipe" {
		if err := coordinate(r.EndX, "endX"); err != nil {
			return err
		}
		if err := coordinate(r.EndY, "endY"); err != nil {
			return err
		}
	} else if r.EndX != nil || r.EndY != nil {
		return bad("endX/endY are only valid for swipe")
	}
	if r.Command == "pinch" {
		if r.Scale == nil || *r.Scale != *r.Scale || *r.Scale < 0.1 || *r.Scale > 4 {
			return bad("pinch requires scale between 0.1 and 4")
		}
	} else if r.Scale != nil {
		return bad("scale is only valid for pinch")
	}
	if r.Command == "type" {
		if r.Value == nil || utf8.RuneCountInString(*r.Value) > maxInteractionValue {
			return bad("type requires value (at most 16384 characters)")
		}
	} else if r.Value != nil {
		return bad("value is only valid for type")
	}
	if r.ReplaceExisting != nil && (r.Command != "type" || r.Target == nil) {
		return bad("replaceExisting is only valid for type with a semantic target")
	}
	if r.DurationMs != nil && (r.Command != "swipe" && r.Command != "pinch" || *r.DurationMs < 50 || *r.DurationMs > 2000) {
		return bad("durationMs is only valid for swipe/pinch and must be between 50 and 2000")
	}
	if r.Command == "task" {
		if blank(r.TaskID) || utf8.RuneCountInString(*r.TaskID) > 256 {
			return bad("task requires taskId (at most 256 characters)")
		}
	} else if r.TaskID != nil || r.Input != nil {
		return bad("taskId/input are only valid for task")
	}
	if r.Command == "batch" {
		if len(r.Commands) < 1 || len(r.Commands) > maxBatchCommands {
			return bad("batch requires between 1 and 32 commands")
		}
		ids := map[string]bool{r.ID: true}
		for i := range r.Commands {
			c := &r.Commands[i]
			if c.Command == "batch" || c.Command == "exit" {
				return bad("batch commands cannot be nested batches or exit")
			}
			if err := c.validate(); err != nil {
				return err
			}
			if ids[c.ID] {
				return bad("batch and child ids must be unique within the batch")
			}
			ids[c.ID] = true
		}
	} else if r.Commands != nil {
		return bad("commands is only valid for batch")
	}
	return nil
}

func blank(s *string) bool { return s == nil || strings.TrimSpace(*s) == "" }

// interaction is one app interact run.
type interaction struct {
	opts  InteractOptions
	out   io.Writer
	fatal error // the host failed: the interaction ends after its line
}

func (it *interaction) write(r InteractionReply) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = it.out.Write(append(b, '\n'))
	return err
}

func (it *interaction) errorReply(id *string, command, code, msg string) InteractionReply {
	return InteractionReply{Schema: InteractionSchema, ID: id, Command: command, SessionID: it.opts.SessionID, Error: code, Message: msg}
}

// batch runs a batch's commands in order, stopping at the first failure.
func (it *interaction) batch(ctx context.Context, req *InteractionRequest) InteractionReply {
	start := time.Now()
	reply := InteractionReply{Schema: InteractionSchema, ID: req.idPtr(), Command: "batch", SessionID: it.opts.SessionID, Succeeded: true,
		Message: "Batch completed in order.", Results: []InteractionReply{}}
	for i := range req.Commands {
		r := it.command(ctx, req.Commands[i])
		reply.Results = append(reply.Results, r)
		reply.Timing.InputMs += r.Timing.InputMs
		reply.Timing.CaptureMs += r.Timing.CaptureMs
		reply.Screenshot, reply.UI = r.Screenshot, r.UI
		if !r.Succeeded || it.fatal != nil {
			reply.Succeeded, reply.Error = false, InteractBatchStopped
			reply.Message = "Batch stopped at the first failure. Completed actions were not rolled back or replayed."
			for _, c := range req.Commands[i+1:] {
				reply.SkippedIDs = append(reply.SkippedIDs, c.ID)
			}
			break
		}
	}
	reply.Timing.TotalMs = ms(time.Since(start))
	return reply
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// command runs one command and captures the screen after it.
func (it *interaction) command(ctx context.Context, req InteractionRequest) InteractionReply {
	start := time.Now()
	reply := InteractionReply{Schema: InteractionSchema, ID: req.idPtr(), Command: req.Command, SessionID: it.opts.SessionID}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(it.opts.TimeoutMs)*time.Millisecond)
	defer cancel()
	fail := func(err error) InteractionReply {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return it.errorReply(reply.ID, req.Command, InteractTimeout, "The command or automatic capture timed out; it may have completed. Do not blindly retry.")
		case wire.CodeOf(err) == wire.CodeSessionClosed || wire.CodeOf(err) == wire.CodeSessionNotFound:
			it.fatal = err
			return it.errorReply(reply.ID, req.Command, InteractSessionClosed, err.Error())
		}
		it.fatal = err
		return it.errorReply(reply.ID, req.Command, InteractHostError, err.Error())
	}
	if req.Command == "task" || req.Command == "tasks" {
		r := it.errorReply(reply.ID, req.Command, InteractCommandFailed, "repository tasks are not supported by this CLI (ansight test runs flows instead)")
		r.Timing.TotalMs = ms(time.Since(start))
		return r
	}
	if req.Command != "snapshot" {
		inputStart := time.Now()
		out, err := it.opts.Run(ctx, it.operation(req))
		reply.Timing.InputMs = ms(time.Since(inputStart))
		if err != nil {
			if wire.CodeOf(err) == wire.CodeBadRequest {
				return it.errorReply(reply.ID, req.Command, InteractInvalidRequest, err.Error())
			}
			return fail(err)
		}
		ok := out.Succeeded
		reply.InputSucceeded, reply.Succeeded, reply.Message = &ok, ok, out.Message
		if !ok {
			reply.Error = InteractCommandFailed
		}
	} else {
		reply.Succeeded = true
	}
	captureStart := time.Now()
	ui, err := it.ui(ctx)
	if err != nil {
		return fail(err)
	}
	reply.UI = ui
	if req.Command == "snapshot" {
		reply.Message = ui.Message
		if ui.Status != "ok" {
			reply.Succeeded, reply.Error = false, InteractCommandFailed
		} else {
			reply.Message = fmt.Sprintf("%d nodes on screen", len(ui.Nodes))
		}
	}
	if it.opts.Screenshot != nil {
		if reply.Screenshot, err = it.opts.Screenshot(ctx); err != nil {
			return fail(err)
		}
	}
	reply.Timing.CaptureMs = ms(time.Since(captureStart))
	reply.Timing.TotalMs = ms(time.Since(start))
	return reply
}

// operation is the UI operation of a command.
func (it *interaction) operation(req InteractionRequest) Request {
	zero := 0 // one attempt: app interact acts on what the last reply showed
	r := Request{Operation: req.Command, TimeoutMs: &zero}
	if t := req.Target; t != nil {
		s := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		r.Selector = uitree.Selector{AutomationID: s(t.AutomationID), Text: s(t.Text), Role: s(t.Role), Ancestor: s(t.AncestorAutomationID)}
	}
	switch req.Command {
	case OpTap:
		if req.Target == nil {
			r.X, r.Y = req.X, req.Y
		}
	case OpType:
		r.Value = req.Value
		r.Append = req.ReplaceExisting != nil && !*req.ReplaceExisting
		r.Focused = req.Target == nil
	case OpSwipe:
		r.StartX, r.StartY, r.EndX, r.EndY = req.X, req.Y, req.EndX, req.EndY
		if req.DurationMs != nil {
			r.DurationMs = *req.DurationMs
		}
	case OpPinch:
		r.CenterX, r.CenterY, r.Scale = req.X, req.Y, *req.Scale
		if req.DurationMs != nil {
			r.DurationMs = *req.DurationMs
		}
	}
	return r
}

// ui captures the screen for a reply. The app's own failure is a ui with status failed; a
// host failure is an error.
func (it *interaction) ui(ctx context.Context) (*InteractionUI, error) {
	raw, err := it.opts.Call(ctx, VisualTreeToolID, captureArgs)
	if err != nil {
		var we *wire.Error
		if errors.As(err, &we) {
			return &InteractionUI{Status: "failed", Nodes: []InteractionUINode{}, Message: we.Message}, nil
		}
		return nil, err
	}
	t, err := uitree.Parse(raw)
	if err != nil {
		return &InteractionUI{Status: "failed", Nodes: []InteractionUINode{}, Message: err.Error()}, nil
	}
	ui := &InteractionUI{Status: "ok", Source: t.Source, SnapshotID: t.SnapshotID, Nodes: []InteractionUINode{}, Truncated: t.Truncated}
	if !t.CapturedAt.IsZero() {
		at := t.CapturedAt
		ui.CapturedAtUtc = &at
	}
	for _, n := range t.Nodes() {
		if !n.Shown() || !meaningful(n) {
			continue
		}
		if len(ui.Nodes) == maxInteractionNodes {
			ui.Truncated = true
			break
		}
		v := View(t, n)
		if v.AncestorAutomationIDs == nil {
			v.AncestorAutomationIDs = []string{}
		}
		ui.Nodes = append(ui.Nodes, InteractionUINode{AutomationID: v.AutomationID, Text: v.Text, Role: v.Role, Value: v.Value,
			Enabled: v.Enabled, Actions: v.Actions, AncestorAutomationIDs: v.AncestorAutomationIDs})
	}
	return ui, nil
}
