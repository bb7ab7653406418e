package p

// InTest is in a test file: not listed.
func InTest() {}
