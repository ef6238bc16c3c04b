package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// ArtifactProvider produces artifacts: snapshots of the app's state (an export, a log, a
// report) that a host records with the session. artifacts.query lists what the providers
// offer; artifacts.request asks one of them for one artifact and streams its bytes.
type ArtifactProvider struct {
	// ID names the provider in requests ("notes.export"); a plain name.
	ID          string
	Name        string
	Description string
	Category    string
	Tags        []string
	Metadata    map[string]string
	// List returns the artifacts the provider can produce now (artifacts.query). An error
	// is reported in the provider's entry; the query goes on. Nil lists none.
	List func(ctx context.Context) ([]ArtifactInfo, error)
	// Create produces one artifact (artifacts.request); required. Returning an error fails
	// the request with artifact_request_failed, or with the error's own code if it is a
	// *wire.Error (see app.ToolErrorf).
	Create func(ctx context.Context, req ArtifactRequest) (*Artifact, error)
}

// ArtifactInfo describes an artifact a provider can produce.
type ArtifactInfo struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitzero"`
	Kind        string            `json:"kind" jsonschema:"log, trace, report, image, snapshot, …"`
	Category    string            `json:"category,omitzero"`
	Tags        []string          `json:"tags,omitzero"`
	Metadata    map[string]string `json:"metadata,omitzero"`
	// MimeType and FileName are what a request will most likely produce.
	MimeType string `json:"-"`
	FileName string `json:"-"`
}

// ArtifactRequest is one artifacts.request as a provider receives it.
type ArtifactRequest struct {
	ArtifactID string
	// Arguments are the caller's "arguments" object ({} when none).
	Arguments jsontext.Value
	// RequestID and SessionID identify the request envelope.
	RequestID, SessionID string
}

// Artifact is a produced artifact: its metadata and exactly Size bytes read from Body.
type Artifact struct {
	Name        string // defaults to the listed name, else the file name
	Kind        string // defaults to the listed kind, else "artifact"
	Description string
	MimeType    string // defaults to the listed MIME type, else from FileName's extension
	FileName    string // required unless listed
	Tags        []string
	Metadata    map[string]string
	CreatedAt   time.Time // defaults to now
	Size        int64
	// Body is read at the pace the connection takes it, after the result; it is closed
	// when it is an io.Closer.
	Body io.Reader
}

// Ids of the artifact tools.
const (
	QueryArtifactsToolID  = "artifacts.query"
	RequestArtifactToolID = "artifacts.request"
)

// RegisterArtifacts adds artifacts.query and artifacts.request (both read) over providers
// to a. Called again on the same app, it adds the providers to the tools the first call
// registered: each package that produces artifacts (app/diag, the app's own code) registers
// its providers without knowing of the others. Provider ids must be plain names, unique
// (any case) among all the providers of the app.
func RegisterArtifacts(a *app.App, providers ...ArtifactProvider) error {
	s := a.Extension(artifactsKey{}, func() any { return &artifacts{} }).(*artifacts)
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, p := range s.providers {
		seen[strings.ToLower(p.ID)] = true
	}
	for _, p := range providers {
		if err := catalog.CheckID(p.ID); err != nil {
			return fmt.Errorf("files: artifact provider id %q is not a plain name", p.ID)
		}
		if seen[strings.ToLower(p.ID)] {
			return fmt.Errorf("files: two artifact providers are called %q", p.ID)
		}
		seen[strings.ToLower(p.ID)] = true
		if p.Create == nil {
			return fmt.Errorf("files: artifact provider %q has no Create", p.ID)
		}
	}
	if !s.registered {
		if err := s.register(a); err != nil {
			return err
		}
		s.registered = true
	}
	s.providers = append(s.providers, providers...)
	return nil
}

// artifactsKey keeps an app's artifact providers (App.Extension).
type artifactsKey struct{}

// register adds the two artifact tools, served by s.
func (s *artifacts) register(a *app.App) error {
	if err := app.Register(a, catalog.Definition{ID: QueryArtifactsToolID, Name: "Query artifacts", Category: "artifacts",
		Policy: wire.PolicyRead, Keywords: "artifact artifacts query list providers export snapshot",
		Description: "Lists the artifact providers of the app and the artifacts they can produce now; " +
			"request one with artifacts.request.",
	}, s.query); err != nil {
		return fmt.Errorf("files: %w", err)
	}
	if err := app.Register(a, catalog.Definition{ID: RequestArtifactToolID, Name: "Request artifact", Category: "artifacts",
		Policy: wire.PolicyRead, Keywords: "artifact artifacts request export snapshot binary stream download",
		PrerequisiteToolIDs: []string{QueryArtifactsToolID},
		Description: "Asks a provider to produce one artifact now and streams its bytes to the host over ASFT " +
			"after the result, which carries the artifact's metadata and the transfer.",
	}, s.request); err != nil {
		return fmt.Errorf("files: %w", err)
	}
	return nil
}

// artifacts is an app's artifact providers, in the order they were registered.
type artifacts struct {
	mu         sync.Mutex
	registered bool // the tools are registered
	providers  []ArtifactProvider
}

// list returns the providers registered so far.
func (s *artifacts) list() []ArtifactProvider {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clip(s.providers)
}

// ArtifactRef points at an artifact that artifacts.request serves, for a tool whose result
// is an artifact (a profile it captured, an export it wrote): the tool returns the reference
// and the caller requests the bytes with Request. The bytes then reach any host, the
// official one included, which receives transfers only from artifacts.request and a few
// other tools (see app.Call.SendArtifact).
type ArtifactRef struct {
	ProviderID string `json:"providerId"`
	ArtifactID string `json:"artifactId"`
	FileName   string `json:"fileName"`
	MimeType   string `json:"mimeType"`
	SizeBytes  int64  `json:"sizeBytes"`
	// Request is the call that streams the artifact: artifacts.request with its provider
	// and artifact ids.
	Request ArtifactRequestCall `json:"request"`
}

// ArtifactRequestCall is a ready-to-send artifacts.request call (toolId and arguments).
type ArtifactRequestCall struct {
	ToolID    string `json:"toolId"`
	Arguments struct {
		ProviderID string `json:"providerId"`
		ArtifactID string `json:"artifactId"`
	} `json:"arguments"`
}

// NewArtifactRef returns a reference to the artifact artifactID of the provider providerID,
// with the file hints its artifacts.request will give.
func NewArtifactRef(providerID, artifactID, fileName, mimeType string, size int64) ArtifactRef {
	r := ArtifactRef{ProviderID: providerID, ArtifactID: artifactID, FileName: fileName, MimeType: mimeType, SizeBytes: size}
	r.Request.ToolID = RequestArtifactToolID
	r.Request.Arguments.ProviderID, r.Request.Arguments.ArtifactID = providerID, artifactID
	return r
}

type queryArtifactsArgs struct {
	ProviderID *string `json:"providerId,omitzero" jsonschema:"only this provider (any case)"`
	Category   *string `json:"category,omitzero" jsonschema:"only artifacts of this category (any case)"`
	Kind       *string `json:"kind,omitzero" jsonschema:"only artifacts of this kind (any case)"`
	Tag        *string `json:"tag,omitzero" jsonschema:"only artifacts with this tag (any case)"`
}

type providerEntry struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Category    string            `json:"category"`
	Tags        []string          `json:"tags"`
	Metadata    map[string]string `json:"metadata"`
	Error       *string           `json:"error" jsonschema:"why listing failed, or null"`
}

type artifactEntry struct {
	ProviderID string `json:"providerId"`
	ArtifactInfo
	Content artifactContent `json:"content"`
}

type artifactContent struct {
	SupportedMimeTypes []string `json:"supportedMimeTypes"`
	DefaultMimeType    *string  `json:"defaultMimeType"`
	SuggestedFileName  *string  `json:"suggestedFileName"`
}

type queryArtifactsResult struct {
	Providers     []providerEntry `json:"providers"`
	Artifacts     []artifactEntry `json:"artifacts"`
	ProviderCount int             `json:"providerCount"`
	ArtifactCount int             `json:"artifactCount"`
	CapturedAtUtc time.Time       `json:"capturedAtUtc"`
}

func (s *artifacts) query(ctx context.Context, c *app.Call, a queryArtifactsArgs) (*queryArtifactsResult, error) {
	res := &queryArtifactsResult{Providers: []providerEntry{}, Artifacts: []artifactEntry{}, CapturedAtUtc: c.Now().UTC()}
	match := func(filter *string, value string) bool {
		return str(filter) == "" || strings.EqualFold(str(filter), value)
	}
	for _, p := range s.list() {
		if !match(a.ProviderID, p.ID) {
			continue
		}
		e := providerEntry{ID: p.ID, Name: p.Name, Description: p.Description, Category: p.Category,
			Tags: nonNil(p.Tags), Metadata: p.Metadata}
		if e.Metadata == nil {
			e.Metadata = map[string]string{}
		}
		var infos []ArtifactInfo
		if p.List != nil {
			var err error
			if infos, err = p.List(ctx); err != nil {
				msg := err.Error()
				e.Error = &msg
			}
		}
		res.Providers = append(res.Providers, e)
		for _, info := range infos {
			tagged := str(a.Tag) == ""
			for _, t := range info.Tags {
				tagged = tagged || strings.EqualFold(t, str(a.Tag))
			}
			if !match(a.Category, info.Category) || !match(a.Kind, info.Kind) || !tagged {
				continue
			}
			c := artifactContent{SupportedMimeTypes: []string{}}
			if info.MimeType != "" {
				c.SupportedMimeTypes, c.DefaultMimeType = []string{info.MimeType}, &info.MimeType
			}
			if info.FileName != "" {
				c.SuggestedFileName = &info.FileName
			}
			res.Artifacts = append(res.Artifacts, artifactEntry{ProviderID: p.ID, ArtifactInfo: info, Content: c})
		}
	}
	res.ProviderCount, res.ArtifactCount = len(res.Providers), len(res.Artifacts)
	return res, nil
}

type requestArtifactArgs struct {
	ProviderID string         `json:"providerId" jsonschema:"the provider, from artifacts.query"`
	ArtifactID string         `json:"artifactId" jsonschema:"the artifact, from artifacts.query"`
	DownloadID *string        `json:"downloadId,omitzero" jsonschema:"the caller's correlation id for the host-side file (default: the request id)"`
	ChunkBytes *int           `json:"chunkBytes,omitzero" jsonschema:"bytes per ASFT frame, clamped to 1024..524288 (default 65536)"`
	Arguments  jsontext.Value `json:"arguments,omitzero" jsonschema:"the provider's own arguments (an object)"`
}

// artifactMeta is the artifact member of an artifacts.request result.
type artifactMeta struct {
	ArtifactID  string            `json:"artifactId"`
	ProviderID  string            `json:"providerId"`
	Name        string            `json:"name"`
	Kind        string            `json:"kind"`
	Description *string           `json:"description"`
	MimeType    string            `json:"mimeType"`
	FileName    string            `json:"fileName"`
	SizeBytes   int64             `json:"sizeBytes"`
	CreatedAt   time.Time         `json:"createdAtUtc"`
	Tags        []string          `json:"tags"`
	Metadata    map[string]string `json:"metadata"`
}

type requestArtifactResult struct {
	Artifact artifactMeta `json:"artifact"`
	handoff
	// The file hints again at the top level, where transfer descriptors carry them (the
	// official host reads them from artifact first).
	FileName  string `json:"fileName"`
	MimeType  string `json:"mimeType"`
	SizeBytes int64  `json:"sizeBytes"`
}

func (s *artifacts) request(ctx context.Context, c *app.Call, a requestArtifactArgs) (*requestArtifactResult, error) {
	var p *ArtifactProvider
	providers := s.list()
	for i := range providers {
		if strings.EqualFold(providers[i].ID, strings.TrimSpace(a.ProviderID)) {
			p = &providers[i]
		}
	}
	if p == nil {
		return nil, app.ToolErrorDetails(CodeArtifactProviderNotFound, fmt.Sprintf("artifact provider %q is not registered", a.ProviderID),
			map[string]string{"providerId": a.ProviderID})
	}
	args := a.Arguments
	if len(args) == 0 || args.Kind() == 'n' {
		args = jsontext.Value(`{}`)
	} else if args.Kind() != '{' {
		return nil, app.ToolErrorf(CodeArtifactRequestFailed, "arguments must be an object")
	}
	artifactID := strings.TrimSpace(a.ArtifactID)
	art, err := p.Create(ctx, ArtifactRequest{ArtifactID: artifactID, Arguments: args, RequestID: c.RequestID, SessionID: c.SessionID})
	if err != nil {
		return nil, artifactError(p.ID, artifactID, err)
	}
	meta, err := s.complete(ctx, c, p, artifactID, art)
	if err != nil {
		if cl, ok := art.Body.(io.Closer); ok {
			cl.Close()
		}
		return nil, artifactError(p.ID, artifactID, err)
	}
	chunk := chunkBytes(a.ChunkBytes)
	d := c.SendArtifact(meta.FileName, meta.MimeType, meta.SizeBytes, art.Body, app.WithChunkBytes(chunk))
	return &requestArtifactResult{Artifact: meta, handoff: newHandoff(c, d, a.DownloadID, chunk),
		FileName: meta.FileName, MimeType: meta.MimeType, SizeBytes: meta.SizeBytes}, nil
}

// complete checks a produced artifact and fills its metadata from the provider's listing.
func (s *artifacts) complete(ctx context.Context, c *app.Call, p *ArtifactProvider, id string, art *Artifact) (artifactMeta, error) {
	if art == nil || art.Body == nil || art.Size < 0 {
		return artifactMeta{}, errors.New("the provider returned no artifact, no body or a negative size")
	}
	var info ArtifactInfo
	if p.List != nil {
		if infos, err := p.List(ctx); err == nil {
			for _, i := range infos {
				if strings.EqualFold(i.ID, id) {
					info = i
				}
			}
		}
	}
	m := artifactMeta{ArtifactID: id, ProviderID: p.ID, Name: first(art.Name, info.Name), Kind: first(art.Kind, info.Kind, "artifact"),
		FileName: first(art.FileName, info.FileName), SizeBytes: art.Size, CreatedAt: art.CreatedAt,
		Tags: nonNil(art.Tags), Metadata: art.Metadata}
	if m.FileName == "" {
		return artifactMeta{}, errors.New("the artifact has no file name")
	}
	m.Name = first(m.Name, m.FileName)
	m.MimeType = first(art.MimeType, info.MimeType, mimeType(m.FileName))
	if d := first(art.Description, info.Description); d != "" {
		m.Description = &d
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = c.Now()
	}
	m.CreatedAt = m.CreatedAt.UTC()
	if m.Metadata == nil {
		m.Metadata = map[string]string{}
	}
	return m, nil
}

// artifactError is a provider's failure as a tool failure: a *wire.Error keeps its code,
// anything else is artifact_request_failed.
func artifactError(provider, artifact string, err error) error {
	if wire.CodeOf(err) != "" {
		return err
	}
	return app.ToolErrorDetails(CodeArtifactRequestFailed, fmt.Sprintf("artifact provider %q could not produce %q: %v", provider, artifact, err),
		map[string]string{"providerId": provider, "artifactId": artifact})
}

func first(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
