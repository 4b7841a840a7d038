package cpuref

// The loops of the reference workload. Each returns how many operations it
// did; each result is kept alive so that the compiler keeps the work.

import "runtime"

const (
	integerOps = 4_000_000
	hashBytes  = 256 << 10 // fits in a core's L2 cache
	hashPasses = 64
	// memoryWords spans more than the last-level cache of common server
	// processors, so that most loads go to memory.
	memoryWords = 8 << 20 // 64 MiB of uint64
	memoryLoads = 150_000
)

type buffers struct {
	hash   []byte
	memory []uint64
}

func newBuffers() *buffers {
	b := &buffers{hash: make([]byte, hashBytes), memory: make([]uint64, memoryWords)}
	x := uint64(0x9e3779b97f4a7c15)
	for i := range b.hash {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b.hash[i] = byte(x)
	}
	// Written, not left zero: pages never written all map to one shared
	// zero page, which would stay in the cache.
	for i := range b.memory {
		b.memory[i] = uint64(i) & 1
	}
	return b
}

// integerLoop: a xorshift generator feeding divisions and a branch, the
// kind of scalar work parsing and comparing keys is made of.
func integerLoop(_ *buffers) float64 {
	x, acc := uint64(88172645463325252), uint64(0)
	for i := 0; i < integerOps; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if x&1 == 0 {
			acc += x % 1000003
		} else {
			acc ^= x / 7
		}
	}
	runtime.KeepAlive(acc)
	return integerOps
}

// hashLoop: FNV-1a over a cache-resident buffer, a dependent multiply per
// byte as in checksums and hash-table lookups.
func hashLoop(b *buffers) float64 {
	h := uint64(14695981039346656037)
	for p := 0; p < hashPasses; p++ {
		for _, c := range b.hash {
			h ^= uint64(c)
			h *= 1099511628211
		}
	}
	runtime.KeepAlive(h)
	return hashPasses * hashBytes
}

// memoryLoop: loads whose addresses depend on the previous load's value
// (a linear congruential walk over the whole buffer), so each waits for
// memory as an index or B-tree walk does when its pages are not cached.
func memoryLoop(b *buffers) float64 {
	const mask = memoryWords - 1
	idx, acc := uint64(1), uint64(0)
	for i := 0; i < memoryLoads; i++ {
		v := b.memory[idx]
		acc += v
		idx = (idx*6364136223846793005 + 1442695040888963407 + v) & mask
	}
	runtime.KeepAlive(acc)
	return memoryLoads
}
