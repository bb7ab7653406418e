package mcptest_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WithHeader's client sends the header on every request, replacing the
// request's own; the client it copied is unchanged.
func TestWithHeader(t *testing.T) {
	got := make(chan []string, 2)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got <- req.Header.Values("X-Client")
	}))
	t.Cleanup(ts.Close)
	base := mcptest.HTTPClient(t, "")
	c := mcptest.WithHeader(base, "X-Client", "mallory")
	req, err := http.NewRequest(http.MethodGet, ts.URL, nil)
	require.NoError(t, err)
	req.Header.Set("X-Client", "alice")
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, []string{"mallory"}, <-got)

	resp, err = base.Get(ts.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Empty(t, <-got, "the copied client")
}
