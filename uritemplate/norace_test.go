//go:build !race

package uritemplate_test

const raceEnabled = false
