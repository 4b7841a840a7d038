package disk

import (
	"encoding/binary"
	"math/rand/v2"
	"unsafe"
)

// alignment of every I/O buffer: O_DIRECT needs buffers aligned to the
// device's logical block size, which is at most 4096 bytes on common devices.
const alignment = 4096

// alignedBuf returns n bytes whose first byte is aligned to alignment. It
// over-allocates and slices; Go's heap does not move objects, so the
// alignment holds for the buffer's life.
func alignedBuf(n int) []byte {
	b := make([]byte, n+alignment)
	off := int(uintptr(unsafe.Pointer(&b[0])) & (alignment - 1))
	if off != 0 {
		off = alignment - off
	}
	return b[off : off+n : off+n]
}

// fillRandom fills b with pseudo-random bytes, so that compression or thin
// provisioning cannot make writes cheaper than they are.
func fillRandom(b []byte, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	for ; i < len(b); i++ {
		b[i] = byte(r.Uint64())
	}
}

// stamp writes a distinct 8-byte value at the start of every 4 KiB of b, so
// that no two written blocks are identical and deduplicating storage cannot
// collapse them (fio's scramble_buffers does the same).
func stamp(b []byte, v uint64) {
	v = v*0x9e3779b97f4a7c15 + 1
	for i := 0; i+8 <= len(b); i += alignment {
		binary.LittleEndian.PutUint64(b[i:], v^uint64(i))
	}
}
