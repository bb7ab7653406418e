package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A change is how mcpaudit makes the server change something, for the
// checks of notifications: a tool call over the audited session, or a
// shell command.
type change struct {
	spec string
	// tool and args, for "tool:NAME JSON"; args may hold {uri}.
	tool, args string
	// shell, for "sh:COMMAND".
	shell string
}

// uriPlaceholder in a tool's arguments stands for the URI to change.
const uriPlaceholder = "{uri}"

// parseChange parses a -change or -list-change value: "tool:NAME" or
// "tool:NAME JSON", a call of tool NAME with the JSON object as its
// arguments (where {uri} stands for the URI, escaped for JSON), or
// "sh:COMMAND", a shell command run with MCPAUDIT_URI in its environment.
func parseChange(spec string) (*change, error) {
	switch kind, rest, _ := strings.Cut(spec, ":"); kind {
	case "tool":
		name, args, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if name == "" {
			return nil, fmt.Errorf("%q names no tool: want tool:NAME [JSON arguments]", spec)
		}
		args = strings.TrimSpace(args)
		if args == "" {
			args = "{}"
		}
		var probe map[string]any
		if err := json.Unmarshal([]byte(strings.ReplaceAll(args, uriPlaceholder, "x")), &probe); err != nil {
			return nil, fmt.Errorf("%q: the arguments are not a JSON object: %v", spec, err)
		}
		return &change{spec: spec, tool: name, args: args}, nil
	case "sh":
		if strings.TrimSpace(rest) == "" {
			return nil, fmt.Errorf("%q names no command: want sh:COMMAND", spec)
		}
		return &change{spec: spec, shell: rest}, nil
	}
	return nil, fmt.Errorf("%q: want tool:NAME [JSON arguments] or sh:COMMAND", spec)
}

// make makes the change to uri ("" for a change to the list), over cs
// for a tool.
func (ch *change) make(ctx context.Context, cs *mcp.ClientSession, uri string) error {
	if ch.shell != "" {
		cmd := exec.CommandContext(ctx, "sh", "-c", ch.shell)
		cmd.Env = append(os.Environ(), "MCPAUDIT_URI="+uri)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %v: %s", ch.spec, err, strings.TrimSpace(out.String()))
		}
		return nil
	}
	quoted, _ := json.Marshal(uri)
	var args map[string]any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(ch.args, uriPlaceholder, string(quoted[1:len(quoted)-1]))), &args); err != nil {
		return fmt.Errorf("%s: the arguments for %s: %v", ch.spec, uri, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ch.tool, Arguments: args})
	if err != nil {
		return fmt.Errorf("%s: %w", ch.spec, err)
	}
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				text = append(text, t.Text)
			}
		}
		return fmt.Errorf("%s: the tool reported an error: %s", ch.spec, cmp.Or(strings.Join(text, " "), "(no text)"))
	}
	return nil
}
