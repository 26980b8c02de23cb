// Package instrument writes redletter's NDJSON event log from a Go program
// (standard library only), so that `redletter conform validate MODEL LOG...`
// can replay the program's own run in the model.
//
// One Recorder per node:
//
//	rec, err := instrument.Open("p1", "logs/p1.ndjson")
//
//	// an application message: log the send, carry the clock on the message
//	msg := Msg{Tokens: 3, VC: rec.SendApp("p2", 3, tokens)} // tokens: the state after it
//
//	// on receipt: log it with the clock the message carried
//	rec.ReceiveApp("p2", msg.Tokens, msg.VC, tokens)
//
//	// the snapshot algorithm: the action, then its effects, as one write
//	st := rec.Begin()
//	st.ReceiveMarker("p2", 1, msg.VC)
//	st.RecordState(1, tokens)
//	for _, q := range outputs {
//		send(q, Msg{Marker: 1, VC: st.SendMarker(q, 1)})
//	}
//	st.CloseChannel(1, "p2")
//	st.Complete(1, tokens, map[string][]int{"p2": {}})
//	st.End()
//
// The events and fields are exactly those of the log format (see
// redletter/conformance/eventlog.py): send, receive, internal, start_snapshot
// (the model's actions) and record_state, record_message, close_channel,
// complete (their effects). Log an action's effects right after it, and a
// marker send before any later application message on that link.
//
// Each event gets the node's next seq (1, 2, 3, ... with no gaps, so a lost
// line shows) and a vector clock: the recorder counts its own events and
// merges the Clock each received message carries. Wall clocks are never
// written: only vector clocks order the events of different nodes.
//
// Every event is one line written with one write on a file opened with
// O_APPEND, under a mutex (seq order is file order), so lines of several
// goroutines or processes never interleave, and a line is on its way to the
// disk when the call returns. A Step (Begin ... End) writes an action and its
// effects with one write, so a crash cannot separate them.
//
// Misuse (a negative payload, a snapshot < 1, an empty node name, a state
// encoding/json cannot encode) panics; write errors are kept and returned by
// Err and Close.
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
	emit func(event string, merge Clock, fields []field) Clock
	node string
}

// Recorder is the event log of one node: safe for concurrent use.
type Recorder struct {
	Events
	mu      sync.Mutex
	w       io.Writer
	f       *os.File
	durable bool
	seq     int
	vc      Clock
	batch   []byte
	inStep  bool
	err     error
}

// Step logs one action and its effects as a single write; End it.
type Step struct {
	Events
	r *Recorder
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

// New returns a recorder for node writing to w (one Write per line or step).
func New(node string, w io.Writer) *Recorder {
	if node == "" {
		panic("instrument: the node name must not be empty")
	}
	r := &Recorder{w: w, vc: Clock{}}
	r.Events = Events{emit: r.logNow, node: node}
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

// Close closes the log file (when the recorder opened it) and returns the
// first error the recorder met.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f != nil {
		if err := r.f.Close(); err != nil && r.err == nil {
			r.err = err
		}
		r.f = nil
		r.w = nil
	}
	return r.err
}

// Begin starts a step: other goroutines' events wait until End.
func (r *Recorder) Begin() *Step {
	r.mu.Lock()
	r.batch = r.batch[:0]
	r.inStep = true
	s := &Step{r: r}
	s.Events = Events{emit: r.logLocked, node: r.node}
	return s
}

// End writes the step's lines with one write.
func (s *Step) End() {
	r := s.r
	if len(r.batch) > 0 {
		r.write(r.batch)
	}
	r.batch = r.batch[:0]
	r.inStep = false
	r.mu.Unlock()
}

func (r *Recorder) logNow(event string, merge Clock, fields []field) Clock {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logLocked(event, merge, fields)
}

func (r *Recorder) logLocked(event string, merge Clock, fields []field) Clock {
	if r.w == nil {
		panic("instrument: the recorder of " + r.node + " is closed")
	}
	seq := r.seq + 1
	vc := r.vc.Copy()
	for q, n := range merge {
		if n < 0 {
			panic(fmt.Sprintf("instrument: a clock entry must be >= 0, got %s: %d", q, n))
		}
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
	line = append(line, `,"event":`...)
	line = append(line, mustJSON(event)...)
	for _, f := range fields {
		line = append(line, ',')
		line = append(line, mustJSON(f.key)...)
		line = append(line, ':')
		line = append(line, mustJSON(f.value)...)
	}
	line = append(line, '}', '\n')
	r.seq, r.vc = seq, vc
	if r.inStep {
		r.batch = append(r.batch, line...)
	} else {
		r.write(line)
	}
	return vc.Copy()
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

// SendApp logs an application send of n on node -> dst (state, optional: the
// node's state after it) and returns the clock to carry on the message.
func (e Events) SendApp(dst string, n int, state ...any) Clock {
	return e.emit("send", nil, withState([]field{
		{"channel", []string{e.node, name("dst", dst)}},
		{"msg", map[string]int{"app": count("an app message", n, 0)}},
	}, state))
}

// SendMarker logs the marker of snapshot sent on node -> dst; carry the clock.
func (e Events) SendMarker(dst string, snapshot int) Clock {
	return e.emit("send", nil, []field{
		{"channel", []string{e.node, name("dst", dst)}},
		{"msg", map[string]int{"marker": count("snapshot", snapshot, 1)}},
	})
}

// ReceiveApp logs the receipt of application message n on src -> node; clock
// is the one the message carried (state, optional: the state after it).
func (e Events) ReceiveApp(src string, n int, clock Clock, state ...any) {
	e.emit("receive", clock, withState([]field{
		{"channel", []string{name("src", src), e.node}},
		{"msg", map[string]int{"app": count("an app message", n, 0)}},
	}, state))
}

// ReceiveMarker logs the receipt of the marker of snapshot on src -> node.
func (e Events) ReceiveMarker(src string, snapshot int, clock Clock) {
	e.emit("receive", clock, []field{
		{"channel", []string{name("src", src), e.node}},
		{"msg", map[string]int{"marker": count("snapshot", snapshot, 1)}},
	})
}

// Internal logs internal event ev (state, optional: the state after it).
func (e Events) Internal(ev int, state ...any) {
	e.emit("internal", nil, withState([]field{
		{"msg", map[string]int{"internal": count("an internal event", ev, 0)}},
	}, state))
}

// StartSnapshot logs that this node starts snapshot (then log its effects).
func (e Events) StartSnapshot(snapshot int) {
	e.emit("start_snapshot", nil, []field{{"snapshot", count("snapshot", snapshot, 1)}})
}

// RecordState logs the local state recorded for snapshot (on turning red).
func (e Events) RecordState(snapshot int, state any) {
	e.emit("record_state", nil, []field{
		{"snapshot", count("snapshot", snapshot, 1)},
		{"state", state},
	})
}

// RecordMessage logs app message n recorded on src -> node in snapshot.
func (e Events) RecordMessage(snapshot int, src string, n int) {
	e.emit("record_message", nil, []field{
		{"snapshot", count("snapshot", snapshot, 1)},
		{"channel", []string{name("src", src), e.node}},
		{"msg", map[string]int{"app": count("an app message", n, 0)}},
	})
}

// CloseChannel logs that src -> node is closed in snapshot (its marker arrived).
func (e Events) CloseChannel(snapshot int, src string) {
	e.emit("close_channel", nil, []field{
		{"snapshot", count("snapshot", snapshot, 1)},
		{"channel", []string{name("src", src), e.node}},
	})
}

// Complete logs that snapshot is complete here, with the node's report of it:
// its recorded state and channels {source: [app payloads]} (nil: no report).
func (e Events) Complete(snapshot int, state any, channels map[string][]int) {
	fields := []field{{"snapshot", count("snapshot", snapshot, 1)}}
	if state != nil {
		fields = append(fields, field{"state", state})
	}
	if channels != nil {
		report := make(map[string][]int, len(channels))
		for q, ms := range channels {
			name("a channel's source", q)
			report[q] = []int{}
			for _, m := range ms {
				report[q] = append(report[q], count("an app message", m, 0))
			}
		}
		fields = append(fields, field{"channels", report})
	}
	e.emit("complete", nil, fields)
}
