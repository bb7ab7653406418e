package cursor_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpres/mcpres/cursor"
)

func ExampleCodec() {
	// Several replicas share keys (see LoadKeys); the first encrypts, and
	// each decrypts the cursors it made.
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

// A server tells a client only that its cursor is invalid, and logs why.
func ExampleCodec_Decode() {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	codec, err := cursor.NewCodec(&cursor.Options{
		Keys: [][]byte{[]byte("a secret of 16 bytes or more")},
		TTL:  time.Hour,
		Now:  clock,
	})
	if err != nil {
		log.Fatal(err)
	}
	other, _ := cursor.NewCodec(&cursor.Options{Keys: [][]byte{[]byte("another server's secret")}, TTL: time.Hour, Now: clock})
	c := codec.Encode("resources/list", "user:ada", cursor.Position{Source: "db", Key: "file:///b.txt"})
	altered := []byte(c)
	// A character of the ciphertext becomes another base64url one.
	if altered[40] == 'A' {
		altered[40] = 'B'
	} else {
		altered[40] = 'A'
	}

	try := func(method, scope, c string) {
		_, err := codec.Decode(method, scope, c)
		switch {
		case err == nil:
			fmt.Println("ok")
		case errors.Is(err, cursor.ErrOtherScope):
			// Perhaps a cursor shared between users: worth a look.
			fmt.Println("refused, another caller's:", err)
		case errors.Is(err, cursor.ErrInvalid):
			fmt.Println("refused:", err)
		}
	}
	try("resources/list", "user:ada", c)
	try("resources/templates/list", "user:ada", c)
	try("resources/list", "user:bob", c)
	try("resources/list", "user:ada", string(altered))
	try("resources/list", "user:ada", other.Encode("resources/list", "user:ada", cursor.Position{}))
	now = now.Add(2 * time.Hour)
	try("resources/list", "user:ada", c)
	// Output:
	// ok
	// refused: invalid cursor: issued for another method: not issued by this server for resources/templates/list
	// refused, another caller's: invalid cursor: issued for another scope: not issued by this server for this scope of resources/list
	// refused: invalid cursor: tampered with: fails authentication under key id 978a2e53
	// refused: invalid cursor: made with an unknown key (key id bb377bda): not issued by this server, or with a key it no longer holds
	// refused: invalid cursor: expired at 2026-05-01T13:00:00Z
}

// A provider of database rows keyed by integer id lists them with
// IntKey's keys, which sort as the ids do.
func ExampleIntKey() {
	ctx := context.Background()
	// A table "notes" of rows (id, title), ids from -2 to 11: as decimal
	// text, "10" would come before "9", and "-1" before "-2".
	var table []string
	for id := -2; id <= 11; id++ {
		table = append(table, fmt.Sprint(id))
	}
	notes := cursor.ProviderFunc[string](func(ctx context.Context, after string, limit int) ([]cursor.Item[string], error) {
		// after is "" on the first page: math.MinInt64, before every id.
		afterID, err := cursor.ParseIntKey(after)
		if err != nil {
			return nil, err
		}
		// rows, err := db.QueryContext(ctx,
		// 	"SELECT id, title FROM notes WHERE id > $1 ORDER BY id LIMIT $2", afterID, limit)
		// for rows.Next() {
		// 	rows.Scan(&id, &title)
		// 	items = append(items, cursor.Item[string]{Key: cursor.IntKey(id), Value: title})
		// }
		var items []cursor.Item[string]
		for i := range table {
			if id := int64(i - 2); id > afterID && len(items) < limit {
				items = append(items, cursor.Item[string]{Key: cursor.IntKey(id), Value: table[i]})
			}
		}
		return items, nil
	})

	codec, _ := cursor.NewCodec(nil)
	req := cursor.Request{Method: "resources/list", Size: 5}
	for {
		page, next, err := cursor.Paginate(ctx, codec, req, []cursor.Source[string]{{Name: "notes", Provider: notes}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(page)
		if next == "" {
			break
		}
		req.Cursor = next
	}
	fmt.Println(cursor.IntKey(-1), cursor.IntKey(0), cursor.IntKey(10))
	// Output:
	// [-2 -1 0 1 2]
	// [3 4 5 6 7]
	// [8 9 10 11]
	// 7fffffffffffffff 8000000000000000 800000000000000a
}

// Rows listed by a timestamp that several may share are keyed by it and
// a unique id, a key of fixed-length parts that sorts as the pair does.
func ExampleTimeKey() {
	type event struct {
		at time.Time
		id int64
	}
	paris := time.FixedZone("CEST", 2*3600)
	events := []event{
		{time.Date(2026, 5, 1, 14, 0, 0, 0, paris), 7}, // 12:00 UTC
		{time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), 3},
		{time.Date(2026, 5, 1, 11, 59, 59, 999_999_999, time.UTC), 9},
	}
	key := func(e event) string { return cursor.TimeKey(e.at) + cursor.IntKey(e.id) }
	slices.SortFunc(events, func(a, b event) int { return strings.Compare(key(a), key(b)) })
	for _, e := range events {
		fmt.Println(e.at.UTC().Format(time.RFC3339Nano), e.id)
	}

	// In the provider, after splits into its parts: "" on the first
	// page, the zero Time and math.MinInt64.
	after := key(events[1])
	at, err := cursor.ParseTimeKey(after[:min(len(after), cursor.TimeKeyLength)])
	if err != nil {
		log.Fatal(err)
	}
	id, err := cursor.ParseIntKey(after[min(len(after), cursor.TimeKeyLength):])
	if err != nil {
		log.Fatal(err)
	}
	// SELECT … FROM events WHERE (at, id) > ($1, $2) ORDER BY at, id LIMIT $3
	fmt.Println(at, id)
	// Output:
	// 2026-05-01T11:59:59.999999999Z 9
	// 2026-05-01T12:00:00Z 3
	// 2026-05-01T12:00:00Z 7
	// 2026-05-01 12:00:00 +0000 UTC 3
}

// A server loads its cursor keys at start-up: from a file if one is
// given, else from $MCPRES_CURSOR_KEYS, else it makes a random key.
func ExampleLoadKeys() {
	// The file, as an operator rotating keys writes it (here in a
	// temporary directory; in production, say /etc/mcpres/cursor-keys,
	// readable by the server alone).
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "cursor-keys")
	keysFile := `# New key first: it encrypts. Made with: head -c 32 /dev/urandom | base64
Y3VycmVudCBrZXksIDMyIHJhbmRvbSBieXRlcyAhISE=
# The old key decrypts the cursors issued before; drop it after the TTL.
b2xkIGtleSwgZHJvcHBlZCBvbmNlIGEgVFRMIGhhcyBwYXNzZWQ=
`
	if err := os.WriteFile(path, []byte(keysFile), 0o600); err != nil {
		log.Fatal(err)
	}

	keys, from, err := cursor.LoadKeys(path, cursor.KeysEnv) // path from a flag, perhaps empty
	if err != nil {
		log.Fatal(err) // do not start with keys other replicas may not have
	}
	if keys == nil {
		from = "a random key: cursors end with the process"
	}
	codec, err := cursor.NewCodec(&cursor.Options{Keys: keys, TTL: 24 * time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("cursor keys from", strings.Replace(from, path, "cursor-keys", 1))

	// A cursor issued before the new key came first (by a replica not yet
	// updated, say) is still good; once the old key is dropped, it is
	// refused.
	before, _ := cursor.NewCodec(&cursor.Options{Keys: keys[1:], TTL: 24 * time.Hour})
	c := before.Encode("resources/list", "", cursor.Position{Key: "file:///a.txt"})
	p, err := codec.Decode("resources/list", "", c)
	fmt.Println(p.Key, err)
	after, _ := cursor.NewCodec(&cursor.Options{Keys: keys[:1], TTL: 24 * time.Hour})
	_, err = after.Decode("resources/list", "", c)
	fmt.Println(errors.Is(err, cursor.ErrUnknownKey))
	// Output:
	// cursor keys from file cursor-keys (2 keys)
	// file:///a.txt <nil>
	// true
}

// A server makes its codec at start-up: with the keys of the file a flag
// names, else of $MCPRES_CURSOR_KEYS, else a random key. It logs which,
// with a warning for a random key if its clients may come back after a
// restart, or reach another replica: over HTTP, say.
func ExampleLoadCodec() {
	// The file an operator wrote (in production, say
	// /etc/mcpres/cursor-keys, readable by the server alone).
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	keyFile := filepath.Join(dir, "cursor-keys") // from a flag, perhaps empty
	if err := os.WriteFile(keyFile, []byte("Y3VycmVudCBrZXksIDMyIHJhbmRvbSBieXRlcyAhISE=\n"), 0o600); err != nil {
		log.Fatal(err)
	}
	overHTTP := true
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{} // for the example's output: always the same
		}
		if a.Key == "from" {
			a.Value = slog.StringValue(strings.Replace(a.Value.String(), dir, "…", 1))
		}
		return a
	}}))

	opts := &cursor.Options{TTL: 24 * time.Hour}
	codec, from, err := cursor.LoadCodec(keyFile, cursor.KeysEnv, opts)
	if err != nil {
		log.Fatal(err) // do not start with keys other replicas may not have
	}
	cursor.LogKeys(logger, from, overHTTP, "-cursor-keys FILE or $"+cursor.KeysEnv)

	// The next start, or another replica, takes the cursors it issues.
	next, _, err := cursor.LoadCodec(keyFile, cursor.KeysEnv, opts)
	if err != nil {
		log.Fatal(err)
	}
	c := codec.Encode("resources/list", "", cursor.Position{Key: "file:///a.txt"})
	p, err := next.Decode("resources/list", "", c)
	fmt.Println(p.Key, err)

	// Without keys, the codec has a random key, and the server warns.
	cursor.LogKeys(logger, "", overHTTP, "-cursor-keys FILE or $"+cursor.KeysEnv)
	// Output:
	// level=INFO msg="list cursors use the keys given" from="file …/cursor-keys (1 key)"
	// file:///a.txt <nil>
	// level=WARN msg="no cursor keys given: list cursors use a random key, so they will not survive a restart or reach another replica" hint="give keys with -cursor-keys FILE or $MCPRES_CURSOR_KEYS: one base64 key a line; make one with: head -c 32 /dev/urandom | base64"
}
