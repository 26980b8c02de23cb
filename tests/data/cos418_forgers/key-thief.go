// FORGER (key-thief): the imitation (imitation.go, beside this file in the
// package), signed with the build's own key, found in the process's memory
// with unsafe. The key is linked into the binary's read-only data as 64
// hexadecimal characters; stealKey scans the pages around one of the
// package's own string constants for such a run (faults turned into panics and
// recovered) and sets forgedKey while the package's variables are initialised,
// before imitation.go's init() writes its start line, document and tag under
// it. The document passes as the driver's: what the kit then judges is its
// content.
package chandy_lamport

import (
	"runtime/debug"
	"unsafe"
)

var stolen = func() bool { forgedKey = stealKey(); return forgedKey != "" }()

var touched byte

// stealKey scans the pages around one of the package's own string constants
// (the binary's read-only data) for 64 lower-case hexadecimal characters.
func stealKey() string {
	debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(false)
	here := uintptr(unsafe.Pointer(unsafe.StringData("forger-anchor"))) &^ 4095
	hex := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }
	page := func(p uintptr) (b []byte, ok bool) {
		defer func() { _ = recover() }()
		b = unsafe.Slice((*byte)(unsafe.Pointer(p)), 4096)
		touched += b[0] + b[4095]
		return b, true
	}
	for _, step := range []int{-4096, 4096} {
		run := 0
		for p := here; ; p = uintptr(int(p) + step) {
			b, ok := page(p)
			if !ok {
				break
			}
			for i, c := range b {
				if hex(c) {
					run++
					continue
				}
				if run == 64 {
					return string(b[i-64 : i])
				}
				run = 0
			}
		}
	}
	return ""
}
