package cursor_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/mcpres/mcpres/cursor"
)

func ExampleCodec() {
	// Several replicas share keys; the first encrypts, each is tried to
	// decrypt.
	codec, err := cursor.NewCodec(&cursor.Options{
		Keys: [][]byte{[]byte("a secret of 16 bytes or more")},
		TTL:  time.Hour,
	})
	if err != nil {
		log.Fatal(err)
	}
	c := codec.Encode("resources/list", "user:ada", cursor.Position{Source: "db", Key: "file:///b.txt"})

	p, err := codec.Decode("resources/list", "user:ada", c)
	fmt.Printf("%+v %v\n", p, err)

	// The cursor is encrypted: decoded, it shows nothing of the position.
	raw, _ := base64.RawURLEncoding.DecodeString(c)
	fmt.Println(bytes.Contains(raw, []byte("file:///b.txt")))

	// Another method, another identity or an altered cursor is refused.
	_, err = codec.Decode("resources/templates/list", "user:ada", c)
	fmt.Println(errors.Is(err, cursor.ErrInvalid))
	_, err = codec.Decode("resources/list", "user:bob", c)
	fmt.Println(errors.Is(err, cursor.ErrInvalid))
	_, err = codec.Decode("resources/list", "user:ada", strings.ToUpper(c))
	fmt.Println(errors.Is(err, cursor.ErrInvalid))
	// Output:
	// {Source:db Key:file:///b.txt} <nil>
	// false
	// true
	// true
	// true
}

func ExamplePaginate() {
	ctx := context.Background()
	codec, _ := cursor.NewCodec(nil) // a random key: cursors live as long as the process

	// An in-memory collection…
	var files cursor.Sorted[string]
	for _, name := range []string{"c.txt", "a.txt", "b.txt"} {
		files.Set("file:///"+name, name)
	}
	// …and a dynamic one, as a database table would be queried:
	// WHERE key > after ORDER BY key LIMIT limit.
	table := []string{"users://ada", "users://bob", "users://eve"}
	users := cursor.ProviderFunc[string](func(ctx context.Context, after string, limit int) ([]cursor.Item[string], error) {
		var out []cursor.Item[string]
		for _, k := range table {
			if k > after && len(out) < limit {
				out = append(out, cursor.Item[string]{Key: k, Value: strings.TrimPrefix(k, "users://")})
			}
		}
		return out, nil
	})
	// One list: the files, then the users (sources sorted by name).
	sources := []cursor.Source[string]{
		{Name: "files", Provider: &files},
		{Name: "users", Provider: users},
	}

	req := cursor.Request{Method: "resources/list", Size: 2} // Cursor "" is the start
	for {
		page, next, err := cursor.Paginate(ctx, codec, req, sources)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(page, next != "")
		if next == "" {
			break
		}
		req.Cursor = next
		if page[0] == "a.txt" {
			// Changes between pages do not shift the walk.
			files.Delete("a.txt")
			files.Set("file:///0.txt", "0.txt") // before the cursor: not listed
			files.Set("file:///d.txt", "d.txt") // after it: listed
		}
	}
	// Output:
	// [a.txt b.txt] true
	// [c.txt d.txt] true
	// [ada bob] true
	// [eve] false
}
