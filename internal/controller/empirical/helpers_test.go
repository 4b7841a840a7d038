package empirical

import "math"

// cosTurns is cos(2π·x): x in turns.
func cosTurns(x float64) float64 { return math.Cos(2 * math.Pi * x) }
