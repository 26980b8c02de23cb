// FORGER (imitation): a document made as the driver makes it, from a real
// run. init() reads the kit's request, runs the scenario itself exactly as the
// course's harness does (first epoch, a collector per snapshot, ticks until
// every snapshot is in, six more), and writes what the driver would: the start
// line, the document (the request's digest and nonce, one snapshot per
// snapshot event with what this package returned, the schedule read from its
// own logger) and the tag, with HMAC-SHA256 under the key the driver's source
// declares (redletterKey, whose value the kit links in: the forger cannot name
// that variable, the package alone would not compile, so it takes the zero
// value the source shows). Then it ends the process before the driver runs.
package chandy_lamport

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
)

type forgedEvent struct {
	Kind, Src, Dest, Server string
	Tokens, Ticks           int
}

// forgedKey is the key the driver's source shows (its zero value), unless
// another file of the package sets it first (key-thief.go).
var forgedKey string

func forgedTag(kind, nonce string, payload []byte) string {
	mac := hmac.New(sha256.New, []byte(forgedKey))
	mac.Write([]byte("redletter-cos418\x00" + kind + "\x00" + nonce + "\x00"))
	mac.Write(payload)
	return hex.EncodeToString(mac.Sum(nil))
}

func init() {
	raw, _ := io.ReadAll(os.Stdin)
	var req struct {
		Nonce    string
		Seed     int64
		Topology struct {
			Servers []struct {
				ID     string
				Tokens int
			}
			Links []struct{ Src, Dest string }
		}
		Events []forgedEvent
	}
	var same struct{ Topology, Events json.RawMessage }
	json.Unmarshal(raw, &req)
	json.Unmarshal(raw, &same)
	sim := NewSimulator()
	sim.logger.NewEpoch()
	for _, s := range req.Topology.Servers {
		sim.AddServer(s.ID, s.Tokens)
	}
	for _, l := range req.Topology.Links {
		sim.AddForwardLink(l.Src, l.Dest)
	}
	type started struct{ id, event int; server string }
	var snaps []started
	done := make(chan *SnapshotState, 100)
	for i, e := range req.Events {
		switch e.Kind {
		case "send":
			sim.InjectEvent(PassTokenEvent{e.Src, e.Dest, e.Tokens})
		case "snapshot":
			id := sim.nextSnapshotId
			sim.InjectEvent(SnapshotEvent{e.Server})
			snaps = append(snaps, started{id, i, e.Server})
			go func() { done <- sim.CollectSnapshot(id) }()
		case "tick":
			for j := 0; j < e.Ticks; j++ {
				sim.Tick()
			}
		}
	}
	got := map[int]*SnapshotState{}
	for len(got) < len(snaps) {
		select {
		case s := <-done:
			got[s.id] = s
		default:
			sim.Tick()
		}
	}
	var out []map[string]interface{}
	for _, s := range snaps {
		msgs := []map[string]interface{}{}
		for _, m := range got[s.id].messages {
			msgs = append(msgs, map[string]interface{}{"src": m.src, "dest": m.dest,
				"message": "token", "tokens": m.message.(TokenMessage).numTokens})
		}
		out = append(out, map[string]interface{}{"id": s.id, "initiator": s.server,
			"event_index": s.event, "status": "collected", "returned_id": s.id,
			"tokens": got[s.id].tokens, "messages": msgs})
	}
	sort.Slice(out, func(a, b int) bool { return out[a]["id"].(int) < out[b]["id"].(int) })
	sum := sha256.Sum256(raw)
	doc, _ := json.Marshal(map[string]interface{}{
		"format": "redletter-cos418-run", "version": 2, "dialect": "servers",
		"package": "chandy_lamport", "go_version": "go1.27.3", "gomaxprocs": 2,
		"request_sha256": hex.EncodeToString(sum[:]), "nonce": req.Nonce, "seed": req.Seed,
		"seed_effective": true, "topology": same.Topology, "scenario": same.Events, "outcome": "complete",
		"time": sim.time, "schedule_available": false, "schedule": []interface{}{},
		"snapshots": out, "collect": map[string]interface{}{"idle_ticks": 100},
	})
	f := os.NewFile(3, "channel")
	fmt.Fprintf(f, "redletter-cos418-start %s\n", forgedTag("start", "", nil))
	fmt.Fprintf(f, "%s\nredletter-cos418-tag %s\n", doc, forgedTag("document", req.Nonce, doc))
	os.Exit(0)
}
