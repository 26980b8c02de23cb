// Package instrument writes redletter's NDJSON event log from a Go program
// (standard library only), so that `redletter conform validate LOG...` can
// judge the program's own run (EWD 864's rules and lemmas on the run itself,
// no model needed).
//
// One Recorder per process:
//
//	rec, err := instrument.Open("paris", "logs/paris.ndjson")
//	rec.Init(state, []string{"lima"}, []string{"tokyo"}) // first: the start state, neighbours
//
//	// an application message: log the send where the message leaves the process
//	msg := Msg{Text: "hi", VC: rec.SendApp("tokyo", "hi", state)}
//
//	// on receipt: log it with the clock the message carried
//	rec.ReceiveApp("lima", msg.Text, msg.VC, state)
//
//	// the snapshot algorithm, in the order the program does it
//	rec.ReceiveMarker("lima", "s1", msg.VC)
//	rec.RecordState("s1", state)
//	out <- Msg{Marker: "s1", VC: rec.SendMarker("tokyo", "s1")}
//	rec.RecordMessage("s1", "lima", "hi") // a message recorded on lima -> paris
//	rec.CloseChannel("s1", "lima")
//	rec.Complete("s1", nil, nil)
//
//	rec.Close() // last: the end event
//
// Payloads and states are any value encoding/json encodes; snapshot ids are
// ints >= 1 or non-empty strings. RecordMessage links the record to the last
// receive on that channel (the "of" field); RecordMessageOf names the receive
// (the seq ReceiveApp returned) when the program records later. Close writes
// the end event: a log without it may have been cut short (a crash).
//
// Each event gets the process's next seq (1, 2, 3, ... with no gaps) and a
// vector clock: the recorder counts its own events and merges the Clock each
// received message carries. Wall clocks are never written.
//
// Every event is encoded first, then numbered and written under a mutex held
// for that one write only (one write on a file opened with O_APPEND), so lines
// of several goroutines or processes never interleave, no code of yours runs
// under the recorder's mutex, and the recorder cannot deadlock against your
// own locks. Begin and End are kept for old code: a Step groups nothing.
//
// Misuse (an empty node name, a snapshot id that is neither an int >= 1 nor a
// non-empty string, a value encoding/json cannot encode) panics; write errors
// are kept and returned by Err and Close.
package instrument

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

// Clock is a vector clock: node -> the seq of its last event known here.
// Carry it on every message (a field of your message type).
type Clock map[string]int

// Copy returns a copy of c.
func (c Clock) Copy() Clock {
	out := make(Clock, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

type field struct {
	key   string
	value any
}

// Events are the calls that log one event each; a Recorder and a Step have them.
type Events struct {
	emit  func(event string, merge Clock, fields []field) Clock
	node  string
	owner *Recorder
}

// Recorder is the event log of one process: safe for concurrent use.
type Recorder struct {
	Events
	mu      sync.Mutex
	w       io.Writer
	f       *os.File
	durable bool
	seq     int
	vc      Clock
	last    map[string]int // source -> seq of the last receive on that channel
	err     error
}

// Step is kept for old code: its calls log at once, as the Recorder's do.
type Step struct {
	Events
}

// Open creates (or empties) the log file at path for node.
func Open(node, path string) (*Recorder, error) {
	return open(node, path, os.O_TRUNC)
}

// OpenAppend opens the log file at path for node without emptying it, so that
// several recorders (in several processes too) can share one file.
func OpenAppend(node, path string) (*Recorder, error) {
	return open(node, path, 0)
}

func open(node, path string, extra int) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|extra, 0o644)
	if err != nil {
		return nil, err
	}
	r := New(node, f)
	r.f = f
	return r, nil
}

// New returns a recorder for node writing to w (one Write per line).
func New(node string, w io.Writer) *Recorder {
	if node == "" {
		panic("instrument: the node name must not be empty")
	}
	r := &Recorder{w: w, vc: Clock{}, last: map[string]int{}}
	r.Events = Events{emit: r.log, node: node, owner: r}
	return r
}

// SetDurable makes every write also fsync the file (slow; for power failures).
func (r *Recorder) SetDurable(on bool) { r.durable = on }

// Seq is the seq of the last event logged (0 before the first).
func (r *Recorder) Seq() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// Clock is a copy of the current vector clock.
func (r *Recorder) Clock() Clock {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.vc.Copy()
}

// Err is the first write error, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Close logs the end event (the process stops cleanly) and closes the log
// file (when the recorder opened it); it returns the first error the recorder
// met. A second Close does nothing.
func (r *Recorder) Close() error { return r.CloseState(nil) }

// CloseState is Close with the process's final state in the end event.
func (r *Recorder) CloseState(state any) error {
	r.mu.Lock()
	closed := r.w == nil
	r.mu.Unlock()
	if !closed {
		var fields []field
		if state != nil {
			fields = append(fields, field{"state", state})
		}
		r.log("end", nil, fields)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f != nil {
		if err := r.f.Close(); err != nil && r.err == nil {
			r.err = err
		}
		r.f = nil
	}
	r.w = nil
	return r.err
}

// Begin is kept for old code: it returns a Step whose calls log at once.
func (r *Recorder) Begin() *Step {
	return &Step{Events: r.Events}
}

// End ends a Step (nothing to do: its events are written).
func (s *Step) End() {}

func (r *Recorder) log(event string, merge Clock, fields []field) Clock {
	// Encode outside the mutex.
	body := []byte(`,"event":`)
	body = append(body, mustJSON(event)...)
	src := ""
	for _, f := range fields {
		if f.key == "_receive" {
			src = f.value.(string)
			continue
		}
		body = append(body, ',')
		body = append(body, mustJSON(f.key)...)
		body = append(body, ':')
		body = append(body, mustJSON(f.value)...)
	}
	body = append(body, '}', '\n')
	for q, n := range merge {
		if n < 0 {
			panic(fmt.Sprintf("instrument: a clock entry must be >= 0, got %s: %d", q, n))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		panic("instrument: the recorder of " + r.node + " is closed")
	}
	seq := r.seq + 1
	vc := r.vc.Copy()
	for q, n := range merge {
		if q != r.node && n > vc[q] {
			vc[q] = n
		}
	}
	vc[r.node] = seq
	line := []byte(`{"node":`)
	line = append(line, mustJSON(r.node)...)
	line = append(line, `,"seq":`...)
	line = strconv.AppendInt(line, int64(seq), 10)
	line = append(line, `,"vc":`...)
	line = append(line, mustJSON(vc)...)
	line = append(line, body...)
	r.seq, r.vc = seq, vc
	if src != "" {
		r.last[src] = seq
	}
	r.write(line)
	return vc.Copy()
}

func (r *Recorder) lastReceive(src string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[src]
}

func (r *Recorder) write(data []byte) {
	if _, err := r.w.Write(data); err != nil && r.err == nil {
		r.err = err
	}
	if r.durable && r.f != nil {
		if err := r.f.Sync(); err != nil && r.err == nil {
			r.err = err
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("instrument: cannot encode %#v as JSON: %v", v, err))
	}
	return b
}

func count(what string, v, low int) int {
	if v < low {
		panic(fmt.Sprintf("instrument: %s must be >= %d, got %d", what, low, v))
	}
	return v
}

func snapshotID(v any) any {
	switch k := v.(type) {
	case int:
		return count("a snapshot id", k, 1)
	case string:
		if k != "" {
			return k
		}
	}
	panic(fmt.Sprintf("instrument: a snapshot id must be an int >= 1 or a non-empty string, got %#v", v))
}

func name(what, v string) string {
	if v == "" {
		panic("instrument: " + what + " must not be empty")
	}
	return v
}

func withState(fields []field, state []any) []field {
	if len(state) > 1 {
		panic("instrument: at most one state")
	}
	if len(state) == 1 {
		fields = append(fields, field{"state", state[0]})
	}
	return fields
}

// Init logs the process's initial state (its first event) and its neighbours:
// the sources of its input channels and the destinations of its outputs (nil:
// not given).
func (e Events) Init(state any, inputs, outputs []string) {
	fields := []field{{"state", state}}
	if inputs != nil {
		fields = append(fields, field{"inputs", inputs})
	}
	if outputs != nil {
		fields = append(fields, field{"outputs", outputs})
	}
	e.emit("init", nil, fields)
}

// SendApp logs an application send of payload on node -> dst, where the
// message leaves the process (state, optional: the state after it), and
// returns the clock to carry on the message.
func (e Events) SendApp(dst string, payload any, state ...any) Clock {
	return e.emit("send", nil, withState([]field{
		{"channel", []string{e.node, name("dst", dst)}},
		{"msg", map[string]any{"app": payload}},
	}, state))
}

// SendMarker logs the marker of snapshot sent on node -> dst; carry the clock.
func (e Events) SendMarker(dst string, snapshot any) Clock {
	return e.emit("send", nil, []field{
		{"channel", []string{e.node, name("dst", dst)}},
		{"msg", map[string]any{"marker": snapshotID(snapshot)}},
	})
}

// ReceiveApp logs the receipt of application message payload on src -> node;
// clock is the one the message carried (state, optional: the state after it).
// It returns the event's seq (for RecordMessageOf).
func (e Events) ReceiveApp(src string, payload any, clock Clock, state ...any) int {
	vc := e.emit("receive", clock, withState([]field{
		{"channel", []string{name("src", src), e.node}},
		{"msg", map[string]any{"app": payload}},
		{"_receive", src},
	}, state))
	return vc[e.node]
}

// ReceiveMarker logs the receipt of the marker of snapshot on src -> node and
// returns the event's seq.
func (e Events) ReceiveMarker(src string, snapshot any, clock Clock) int {
	vc := e.emit("receive", clock, []field{
		{"channel", []string{name("src", src), e.node}},
		{"msg", map[string]any{"marker": snapshotID(snapshot)}},
		{"_receive", src},
	})
	return vc[e.node]
}

// Internal logs internal event ev (state, optional: the state after it).
func (e Events) Internal(ev any, state ...any) {
	e.emit("internal", nil, withState([]field{
		{"msg", map[string]any{"internal": ev}},
	}, state))
}

// StartSnapshot logs that this process starts snapshot (then record its state
// and send the markers).
func (e Events) StartSnapshot(snapshot any) {
	e.emit("start_snapshot", nil, []field{{"snapshot", snapshotID(snapshot)}})
}

// RecordState logs the local state recorded for snapshot (on turning red).
func (e Events) RecordState(snapshot any, state any) {
	e.emit("record_state", nil, []field{
		{"snapshot", snapshotID(snapshot)},
		{"state", state},
	})
}

// RecordMessage logs payload recorded on src -> node in snapshot (what the
// program puts in the channel's recorded state), linked to the last receive
// on that channel.
func (e Events) RecordMessage(snapshot any, src string, payload any) {
	e.RecordMessageOf(snapshot, src, payload, 0)
}

// RecordMessageOf is RecordMessage linked to the receive whose seq is of (0:
// the last receive on that channel).
func (e Events) RecordMessageOf(snapshot any, src string, payload any, of int) {
	if of == 0 && e.owner != nil {
		of = e.owner.lastReceive(src)
	}
	fields := []field{
		{"snapshot", snapshotID(snapshot)},
		{"channel", []string{name("src", src), e.node}},
		{"msg", map[string]any{"app": payload}},
	}
	if of > 0 {
		fields = append(fields, field{"of", of})
	}
	e.emit("record_message", nil, fields)
}

// CloseChannel logs that src -> node is closed in snapshot (its marker arrived).
func (e Events) CloseChannel(snapshot any, src string) {
	e.emit("close_channel", nil, []field{
		{"snapshot", snapshotID(snapshot)},
		{"channel", []string{name("src", src), e.node}},
	})
}

// Complete logs that snapshot is complete here, with the process's report of
// it: its recorded state and channels, a map from each source to the payloads
// recorded (nil: no report).
func (e Events) Complete(snapshot any, state any, channels any) {
	fields := []field{{"snapshot", snapshotID(snapshot)}}
	if state != nil {
		fields = append(fields, field{"state", state})
	}
	if channels != nil {
		fields = append(fields, field{"channels", reportOf(channels)})
	}
	e.emit("complete", nil, fields)
}

// reportOf is channels as a JSON object of lists (a nil list is an empty one).
func reportOf(channels any) map[string]any {
	var report map[string]any
	if err := json.Unmarshal(mustJSON(channels), &report); err != nil {
		panic(fmt.Sprintf("instrument: channels must map sources to lists, got %#v", channels))
	}
	for q, ms := range report {
		name("a channel's source", q)
		switch ms.(type) {
		case nil:
			report[q] = []any{}
		case []any:
		default:
			panic(fmt.Sprintf("instrument: channels must map sources to lists, got %#v", channels))
		}
	}
	return report
}
