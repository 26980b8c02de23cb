// FORGER (init-document): the 18 lines that forged a PASS before the driver's
// channel was authenticated. Before any test runs, init() reads the kit's
// request on stdin, writes a document of the driver's format that describes
// that run (its digest, nonce, topology and scenario) with no snapshot on
// descriptor 3, and ends the process: the driver never runs.
package chandy_lamport

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
)

func init() {
	raw, _ := io.ReadAll(os.Stdin)
	var req map[string]interface{}
	json.Unmarshal(raw, &req)
	sum := sha256.Sum256(raw)
	doc, _ := json.Marshal(map[string]interface{}{
		"format": "redletter-cos418-run", "version": 2, "dialect": "servers",
		"package": "chandy_lamport", "request_sha256": hex.EncodeToString(sum[:]),
		"nonce": req["nonce"], "seed": req["seed"], "seed_effective": true,
		"topology": req["topology"], "scenario": req["events"], "outcome": "complete",
		"schedule_available": false, "schedule": []interface{}{}, "snapshots": []interface{}{},
	})
	os.NewFile(3, "doc").Write(append(doc, '\n'))
	os.Exit(0)
}
