// Command broken is an MCP server that breaks the audit's rules on
// purpose, for the tests of the mcpaudit command: with -break ID it
// breaks rule ID alone (see mcpaudit -rules); without it, it breaks a few
// at once: a listed URI with credentials, JSON that does not parse, a PNG
// that is a JPEG, and an unknown resource answered with empty contents.
//
// It serves stdio, or streamable HTTP at -http addr (until interrupted).
// With -tools it has two tools that make changes, for mcpaudit -change
// and -list-change: "touch" {"uri": ...} tells the subscribers of uri that
// it changed, "add" adds a resource to the list. With -watch DIR it tells
// the subscribers of the URI written in each new file of DIR, for a
// change made by a shell command. With -chatty it logs every message it
// receives to stderr, as go-sdk's examples do.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpres/mcpres/audit/internal/broken"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	rule := flag.String("break", "", "break only the rule `ID`")
	tools := flag.Bool("tools", false, "add the tools touch and add, which make changes")
	watch := flag.String("watch", "", "tell the subscribers of the URI in each new file of `dir`")
	chatty := flag.Bool("chatty", false, "log every message received to stderr")
	addr := flag.String("http", "", "serve streamable HTTP at `addr` instead of stdio")
	flag.Parse()
	server := broken.Several()
	if *rule != "" {
		breakRule, ok := broken.Breakers[*rule]
		if !ok {
			log.Fatalf("broken: no way to break rule %q", *rule)
		}
		server = broken.Base()
		breakRule(server)
	}
	if *tools {
		addTools(server)
	}
	if *watch != "" {
		go watchDir(server, *watch)
	}
	if *chatty {
		server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				log.Printf("broken: received %s", method)
				return next(ctx, method, req)
			}
		})
	}
	if *addr != "" {
		serveHTTP(server, *addr)
		return
	}
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

// touchArgs are the arguments of the tool touch.
type touchArgs struct {
	URI string `json:"uri"`
}

// addTools adds the tools touch and add to s.
func addTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "tell the subscribers of uri that it changed"},
		func(ctx context.Context, _ *mcp.CallToolRequest, args touchArgs) (*mcp.CallToolResult, any, error) {
			if args.URI == "" {
				return nil, nil, errors.New("touch: no uri")
			}
			return &mcp.CallToolResult{}, nil, s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: args.URI})
		})
	var n atomic.Int32
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "add a resource to the list"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			uri := fmt.Sprintf("test://added/%d", n.Add(1))
			s.AddResource(&mcp.Resource{URI: uri, Name: "added", MIMEType: "text/plain"},
				func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "added"}}}, nil
				})
			return &mcp.CallToolResult{}, nil, nil
		})
}

// watchDir tells the subscribers of the URI written in each new file of
// dir, polling it.
func watchDir(s *mcp.Server, dir string) {
	seen := map[string]bool{}
	for range time.Tick(20 * time.Millisecond) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if seen[e.Name()] {
				continue
			}
			seen[e.Name()] = true
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if uri := strings.TrimSpace(string(data)); err == nil && uri != "" {
				s.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
			}
		}
	}
}

// serveHTTP serves s over streamable HTTP at addr, /mcp, until
// interrupted.
func serveHTTP(s *mcp.Server, addr string) {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	hs := &http.Server{Addr: addr, Handler: mux}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(shut)
	}()
	if err := hs.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
