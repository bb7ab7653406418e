//go:build !race

package resource_test

const raceEnabled = false
