// FORGER (linkname-signer): do not steal the key, borrow the signer. The
// driver is compiled into this package, so a body-less function linked to
// its signing function (//go:linkname, which needs the unsafe import) would
// sign whatever the package likes, in five lines. It panics with a start line
// it signed, to show it worked.
package chandy_lamport

import _ "unsafe"

//go:linkname forgedSign chandy_lamport.redletterTag
func forgedSign(kind, nonce string, payload []byte) string

func init() { panic("signed start line: " + forgedSign("start", "", nil)) }
