package uritemplate_test

import (
	"errors"
	"fmt"
	"log"
	"slices"

	"github.com/mcpres/mcpres/uritemplate"
)

func ExampleParse() {
	for _, s := range []string{
		"file:///{+path}{?v}",
		"db://{table",    // unclosed
		"db://{=table}",  // a reserved operator
		"db://{table:0}", // a bad prefix modifier
	} {
		t, err := uritemplate.Parse(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s: variables %v, literal prefix %q\n", t, t.Varnames(), t.Prefix())
	}
	// Output:
	// file:///{+path}{?v}: variables [path v], literal prefix "file:///"
	// uritemplate: "db://{table": incomplete expression: db://{table_
	// uritemplate: "db://{=table}": unimplemented operator (op-reserved): db://{=|
	// uritemplate: "db://{table:0}": max-length must be (0, 9999]: db://{table:0|
}

func ExampleTemplate_Match() {
	t, err := uritemplate.Parse("db://{table}/rows{/id*}{?sort,limit}")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.Varnames())

	// Values come back percent-decoded; an exploded {/id*} gives a list;
	// query parameters match in any order, each optional.
	for _, uri := range []string{
		"db://sales%20q3/rows/7/12?limit=10&sort=-date",
		"db://users/rows/42",
		"db://users/rows?sort=name",
		"other://users/rows/42",
	} {
		vars, ok := t.Match(uri)
		if !ok {
			fmt.Printf("%s: no match\n", uri)
			continue
		}
		fmt.Printf("%s: table=%q id=%q", uri, vars.Get("table"), vars.List("id"))
		for _, name := range []string{"sort", "limit"} {
			if vars.Has(name) { // an absent parameter is unbound
				fmt.Printf(" %s=%q", name, vars.Get(name))
			}
		}
		fmt.Println()
	}
	// Output:
	// [table id sort limit]
	// db://sales%20q3/rows/7/12?limit=10&sort=-date: table="sales q3" id=["7" "12"] sort="-date" limit="10"
	// db://users/rows/42: table="users" id=["42"]
	// db://users/rows?sort=name: table="users" id=[] sort="name"
	// other://users/rows/42: no match
}

// A variable not exploded matches scalars only: a URI that gives it a
// list does not match, so code that checks the one value Get gives sees
// the whole value.
func ExampleTemplate_Match_listsAndScalars() {
	team := uritemplate.MustParse("t://teams/{team}/notes")
	teams := uritemplate.MustParse("t://teams/{teams*}/notes")
	path := uritemplate.MustParse("t://teams/{+path}")
	for _, uri := range []string{
		"t://teams/red/notes",
		"t://teams/red,blue/notes",
		"t://teams/red%2Cblue/notes",
	} {
		for _, t := range []*uritemplate.Template{team, teams, path} {
			vars, ok := t.Match(uri)
			if !ok {
				fmt.Printf("%s %s: no match\n", uri, t)
				continue
			}
			name := t.Varnames()[0]
			v, _ := vars.Lookup(name)
			fmt.Printf("%s %s: %s=%q (%v)\n", uri, t, name, v.Items, v.Kind)
		}
	}
	// Expansion is RFC 6570's: a List given to {team} expands, but the
	// URI does not match back.
	uri, _ := team.Expand(map[string]uritemplate.Value{"team": uritemplate.ListValue("red", "blue")})
	_, ok := team.Match(uri)
	fmt.Println(uri, ok)
	// Output:
	// t://teams/red/notes t://teams/{team}/notes: team=["red"] (String)
	// t://teams/red/notes t://teams/{teams*}/notes: teams=["red"] (List)
	// t://teams/red/notes t://teams/{+path}: path=["red/notes"] (String)
	// t://teams/red,blue/notes t://teams/{team}/notes: no match
	// t://teams/red,blue/notes t://teams/{teams*}/notes: teams=["red" "blue"] (List)
	// t://teams/red,blue/notes t://teams/{+path}: path=["red,blue/notes"] (String)
	// t://teams/red%2Cblue/notes t://teams/{team}/notes: team=["red,blue"] (String)
	// t://teams/red%2Cblue/notes t://teams/{teams*}/notes: teams=["red,blue"] (List)
	// t://teams/red%2Cblue/notes t://teams/{+path}: path=["red,blue/notes"] (String)
	// t://teams/red,blue/notes false
}

func ExampleTemplate_Expand() {
	t := uritemplate.MustParse("file:///{+dir}/{name}{?v}")
	uri, err := t.Expand(map[string]uritemplate.Value{
		"dir":  uritemplate.StringValue("notes/2026"), // {+dir} keeps its '/'
		"name": uritemplate.StringValue("meeting notes.md"),
		// v is undefined: no query.
	})
	fmt.Println(uri, err)

	// Match gives the values back.
	vars, _ := t.Match(uri)
	fmt.Println(vars.Get("dir"), "|", vars.Get("name"))
	// Output:
	// file:///notes/2026/meeting%20notes.md <nil>
	// notes/2026 | meeting notes.md
}

// A server hands out instance URIs in the template's shape: what a
// reserved expansion would let start a query or fragment is encoded.
func ExampleTemplate_ExpandURI() {
	t := uritemplate.MustParse("file:///{+path}")
	vars := map[string]uritemplate.Value{"path": uritemplate.StringValue("pages/[id]/C#.md")}
	raw, _ := t.Expand(vars)
	uri, err := t.ExpandURI(vars)
	fmt.Println(raw) // RFC 6570's reserved expansion: a fragment, and brackets outside a host
	fmt.Println(uri, err)
	back, _ := t.Match(uri)
	fmt.Println(back.Get("path"))
	// Output:
	// file:///pages/[id]/C#.md
	// file:///pages/%5Bid%5D/C%23.md <nil>
	// pages/[id]/C#.md
}

func ExampleRouter() {
	templates := []string{
		"file:///{+path}",        // anything under file:///
		"file:///~/{name}",       // a longer literal prefix
		"file:///~/{name}.json",  // goes on with a literal
		"file:///~/{name}{?rev}", // goes on with a query
	}
	newRouter := func(templates []string) *uritemplate.Router[string] {
		var r uritemplate.Router[string]
		for _, s := range templates {
			if err := r.Add(uritemplate.MustParse(s), s); err != nil {
				log.Fatal(err)
			}
		}
		return &r
	}
	// The same templates, added in the opposite order.
	r := newRouter(templates)
	backward := slices.Clone(templates)
	slices.Reverse(backward)
	reversed := newRouter(backward)

	for _, uri := range []string{
		"file:///etc/hosts",
		"file:///~/notes",
		"file:///~/notes.json",
		"file:///~/notes?rev=3",
		"file:///~/a/b", // {name} stops at '/'
		"http://example.com/",
	} {
		tmpl, vars, ok := r.Lookup(uri)
		if !ok {
			fmt.Printf("%-22s no match\n", uri)
			continue
		}
		// The most specific template wins, whatever the order they were
		// added in.
		other, _, _ := reversed.Lookup(uri)
		fmt.Printf("%-22s %-23s same in reverse: %-5v", uri, tmpl, other == tmpl)
		for _, name := range vars.Template().Varnames() {
			if vars.Has(name) {
				fmt.Printf(" %s=%q", name, vars.Get(name))
			}
		}
		fmt.Println()
	}

	// A template that matches the same URIs as one already added, equally
	// specifically, could never be chosen: Add refuses it.
	err := r.Add(uritemplate.MustParse("file:///~/{file}"), "file")
	fmt.Println(errors.Is(err, uritemplate.ErrConflict))
	fmt.Println(err)
	// Output:
	// file:///etc/hosts      file:///{+path}         same in reverse: true  path="etc/hosts"
	// file:///~/notes        file:///~/{name}        same in reverse: true  name="notes"
	// file:///~/notes.json   file:///~/{name}.json   same in reverse: true  name="notes"
	// file:///~/notes?rev=3  file:///~/{name}{?rev}  same in reverse: true  name="notes" rev="3"
	// file:///~/a/b          file:///{+path}         same in reverse: true  path="~/a/b"
	// http://example.com/    no match
	// true
	// uritemplate: conflicting templates: "file:///~/{name}" and "file:///~/{file}" match the same URIs, so one could never be chosen; both match file:///~/v
}

// Find chooses the template Lookup would, without the values: where only
// the template matters, such as checking that some template reads a URI,
// it costs no allocation.
func ExampleRouter_Find() {
	var r uritemplate.Router[string]
	for _, s := range []string{"file:///{+path}", "file:///~/{name}"} {
		if err := r.Add(uritemplate.MustParse(s), s); err != nil {
			log.Fatal(err)
		}
	}
	for _, uri := range []string{"file:///etc/hosts", "file:///~/notes", "file:///~/bad%zz", "http://example.com/"} {
		tmpl, ok := r.Find(uri)
		fmt.Printf("%-20s %-17q %v\n", uri, tmpl, ok)
	}
	// Output:
	// file:///etc/hosts    "file:///{+path}" true
	// file:///~/notes      "file:///~/{name}" true
	// file:///~/bad%zz     ""                false
	// http://example.com/  ""                false
}
