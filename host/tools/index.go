package tools

import "context"

// Index brings the catalog cache up to date with one conditional index query and returns
// the annotated catalog without fetching any definition: entries carry schemas only for
// tools whose definitions are already cached. It is the cheap way to list or search tools.
func (c *Client) Index(ctx context.Context) (*Catalog, error) {
	st, err := c.refresh(ctx, want{})
	if err != nil {
		return nil, err
	}
	return st.snap, nil
}

// Cached returns the last catalog fetched, without asking the app, or nil when none was.
func (c *Client) Cached() *Catalog { return c.cachedCatalog() }
