// Command reference-go is the kit's second reference node: the Chandy–Lamport
// snapshot algorithm as in EWD 864, several snapshots at once, told apart by
// snapshot id.  It speaks the line protocol of docs/protocol.md on stdin and
// stdout, logs on stderr, and may host one node or several (routed by dest).
// It uses the standard library only.
//
// Per snapshot k a machine is white or red, and so is each input buffer:
// turning red (start_snapshot k, or the first red letter of k) it records its
// own state and sends one red letter on each output buffer, in the order of
// out_channels; the buffer a red letter of k comes from turns red in k (its
// recording ends); while red in k it records the app messages received from
// buffers still white in k; when every input buffer is red in k, k is
// complete at this machine.  App states are opaque JSON given by the harness.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
)

// envelope is one protocol line.
type envelope struct {
	Src  string          `json:"src"`
	Dest string          `json:"dest"`
	Body json.RawMessage `json:"body"`
}

// request holds the fields of every request body (unused ones stay zero).
type request struct {
	Type        string          `json:"type"`
	MsgID       *int64          `json:"msg_id"`
	NodeID      string          `json:"node_id"`
	NodeIDs     []string        `json:"node_ids"`
	InChannels  [][2]string     `json:"in_channels"`
	OutChannels [][2]string     `json:"out_channels"`
	App         string          `json:"app"`
	AppState    json.RawMessage `json:"app_state"`
	To          string          `json:"to"`
	Payload     *int64          `json:"payload"`
	Event       *int64          `json:"event"`
	NewState    json.RawMessage `json:"new_state"`
	From        string          `json:"from"`
	Msg         *wireMsg        `json:"msg"`
	Snapshot    int64           `json:"snapshot"`
}

// wireMsg is an app message or a red letter (marker).
type wireMsg struct {
	Type     string `json:"type"`
	Payload  *int64 `json:"payload,omitempty"`
	Snapshot int64  `json:"snapshot,omitempty"`
}

type sent struct {
	Channel [2]string `json:"channel"`
	Msg     wireMsg   `json:"msg"`
}

// recorded is one recording event: record_state, record_message or close_channel.
type recorded struct {
	Event    string          `json:"event"`
	Snapshot int64           `json:"snapshot"`
	State    json.RawMessage `json:"state,omitempty"`
	Channel  *[2]string      `json:"channel,omitempty"`
	Payload  *int64          `json:"payload,omitempty"`
}

type snapshot struct {
	state     json.RawMessage    // the local state recorded on turning red
	channels  map[string][]int64 // per input buffer (by source): messages recorded
	redInputs map[string]bool    // input buffers red in this snapshot
	complete  bool
}

type node struct {
	id        string
	inFrom    []string
	outTo     []string
	state     json.RawMessage
	snapshots map[int64]*snapshot
	// effects of the current step
	sent      []sent
	recorded  []recorded
	completed []int64
}

type failure struct{ code, text string }

func (f *failure) Error() string { return f.text }

func fail(code, format string, args ...any) error {
	return &failure{code, fmt.Sprintf(format, args...)}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (n *node) turnRed(k int64) {
	s := &snapshot{state: n.state, channels: map[string][]int64{}, redInputs: map[string]bool{}}
	for _, q := range n.inFrom {
		s.channels[q] = []int64{}
	}
	n.snapshots[k] = s
	n.recorded = append(n.recorded, recorded{Event: "record_state", Snapshot: k, State: n.state})
	for _, q := range n.outTo {
		n.sent = append(n.sent, sent{Channel: [2]string{n.id, q}, Msg: wireMsg{Type: "marker", Snapshot: k}})
	}
}

func (n *node) checkComplete(k int64) {
	s := n.snapshots[k]
	if !s.complete && len(s.redInputs) == len(n.inFrom) {
		s.complete = true
		n.completed = append(n.completed, k)
	}
}

func (n *node) onMarker(from string, k int64) error {
	if _, red := n.snapshots[k]; !red {
		n.turnRed(k)
	}
	s := n.snapshots[k]
	if s.redInputs[from] {
		return fail("precondition-failed", "a second red letter of snapshot %d arrived on %s -> %s", k, from, n.id)
	}
	s.redInputs[from] = true
	ch := [2]string{from, n.id}
	n.recorded = append(n.recorded, recorded{Event: "close_channel", Snapshot: k, Channel: &ch})
	n.checkComplete(k)
	return nil
}

func (n *node) onAppMessage(from string, payload int64) {
	ks := make([]int64, 0, len(n.snapshots))
	for k := range n.snapshots {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	for _, k := range ks {
		s := n.snapshots[k]
		if !s.redInputs[from] {
			s.channels[from] = append(s.channels[from], payload)
			ch := [2]string{from, n.id}
			p := payload
			n.recorded = append(n.recorded, recorded{Event: "record_message", Snapshot: k, Channel: &ch, Payload: &p})
		}
	}
}

// handle performs one request (not init) and returns the reply body.
func (n *node) handle(r *request, msgID int64) (map[string]any, error) {
	n.sent, n.recorded, n.completed = []sent{}, []recorded{}, []int64{}
	var replyType string
	switch r.Type {
	case "app_send":
		if !contains(n.outTo, r.To) || r.Payload == nil {
			return nil, fail("bad-request", "app_send needs to (an output channel) and payload")
		}
		n.state = r.NewState
		n.sent = append(n.sent, sent{Channel: [2]string{n.id, r.To}, Msg: wireMsg{Type: "app", Payload: r.Payload}})
		replyType = "app_send_ok"
	case "app_internal":
		n.state = r.NewState
		replyType = "app_internal_ok"
	case "deliver":
		if !contains(n.inFrom, r.From) || r.Msg == nil {
			return nil, fail("bad-request", "%s -> %s is not an input channel", r.From, n.id)
		}
		switch {
		case r.Msg.Type == "marker" && r.Msg.Snapshot >= 1:
			if err := n.onMarker(r.From, r.Msg.Snapshot); err != nil {
				return nil, err
			}
		case r.Msg.Type == "app" && r.Msg.Payload != nil:
			n.state = r.NewState
			n.onAppMessage(r.From, *r.Msg.Payload)
		default:
			return nil, fail("bad-request", "deliver.msg must be an app message or a marker")
		}
		replyType = "deliver_ok"
	case "start_snapshot":
		if r.Snapshot < 1 {
			return nil, fail("bad-request", "snapshot ids are integers >= 1")
		}
		if _, red := n.snapshots[r.Snapshot]; red {
			return nil, fail("precondition-failed", "%s is already red in snapshot %d", n.id, r.Snapshot)
		}
		n.turnRed(r.Snapshot)
		n.checkComplete(r.Snapshot)
		replyType = "start_snapshot_ok"
	case "report":
		channels := map[string][]int64{}
		for _, q := range n.inFrom {
			channels[q] = []int64{}
		}
		var state json.RawMessage
		complete := false
		if s, red := n.snapshots[r.Snapshot]; red {
			state, complete = s.state, s.complete
			for q, ms := range s.channels {
				channels[q] = ms
			}
		}
		return map[string]any{"type": "report_ok", "in_reply_to": msgID,
			"local_state": state, "channels": channels, "complete": complete}, nil
	case "init":
		return nil, fail("bad-request", "%s is already initialised", n.id)
	default:
		return nil, fail("unsupported", "unsupported request %q", r.Type)
	}
	return map[string]any{"type": replyType, "in_reply_to": msgID,
		"sent": n.sent, "recorded": n.recorded, "completed": n.completed}, nil
}

// host routes requests to the nodes of this process by dest.
type host struct{ nodes map[string]*node }

func (h *host) handle(dest string, r *request, msgID int64) (map[string]any, error) {
	if r.Type == "init" {
		if r.NodeID != dest {
			return nil, fail("bad-request", "init.node_id differs from dest")
		}
		if _, ok := h.nodes[dest]; ok {
			return nil, fail("bad-request", "%s is already initialised", dest)
		}
		n := &node{id: dest, state: r.AppState, snapshots: map[int64]*snapshot{}}
		for _, c := range r.InChannels {
			n.inFrom = append(n.inFrom, c[0])
		}
		for _, c := range r.OutChannels {
			n.outTo = append(n.outTo, c[1])
		}
		h.nodes[dest] = n
		return map[string]any{"type": "init_ok", "in_reply_to": msgID}, nil
	}
	n, ok := h.nodes[dest]
	if !ok {
		return nil, fail("not-initialised", "no node %s was initialised", dest)
	}
	return n.handle(r, msgID)
}

func main() {
	h := &host{nodes: map[string]*node{}}
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	enc := json.NewEncoder(out)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			serveLine(h, line, enc)
			if ferr := out.Flush(); ferr != nil {
				os.Exit(1)
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "reading stdin: %v\n", err)
			os.Exit(1)
		}
	}
}

func serveLine(h *host, line []byte, enc *json.Encoder) {
	var env envelope
	var r request
	if len(trimSpace(line)) == 0 {
		return
	}
	if err := json.Unmarshal(line, &env); err != nil {
		fmt.Fprintf(os.Stderr, "bad line: %v\n", err)
		writeErr(enc, "unknown", 0, "bad-request", "bad line: "+err.Error())
		return
	}
	if err := json.Unmarshal(env.Body, &r); err != nil || r.MsgID == nil {
		fmt.Fprintf(os.Stderr, "bad request body: %s\n", env.Body)
		var id int64
		if r.MsgID != nil {
			id = *r.MsgID
		}
		writeErr(enc, env.Dest, id, "bad-request", "bad request body")
		return
	}
	body, err := h.handle(env.Dest, &r, *r.MsgID)
	if err != nil {
		code := "internal"
		if f, ok := err.(*failure); ok {
			code = f.code
		}
		writeErr(enc, env.Dest, *r.MsgID, code, err.Error())
		return
	}
	_ = enc.Encode(map[string]any{"src": env.Dest, "dest": env.Src, "body": body})
}

func writeErr(enc *json.Encoder, src string, inReplyTo int64, code, text string) {
	_ = enc.Encode(map[string]any{"src": src, "dest": "harness", "body": map[string]any{
		"type": "error", "in_reply_to": inReplyTo, "code": code, "text": text}})
}

func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == '\n' || b[j-1] == '\r' || b[j-1] == '\t') {
		j--
	}
	return b[i:j]
}
