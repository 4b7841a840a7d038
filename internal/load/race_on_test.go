//go:build race

package load

// raceDetector is true when the tests run under -race, whose
// instrumentation makes every memory access several times dearer.
const raceDetector = true
