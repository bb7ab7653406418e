// Command tool is package main: not listed.
package main

// Exported is not listed.
var Exported int

func main() {}
