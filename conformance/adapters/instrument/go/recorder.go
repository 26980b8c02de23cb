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
// A message whose state change is not where it is written or taken in is
// logged in two halves, so that the judge can check that the recorded state
// and the channel's stream put it on the same side of the cut:
//
//	change := rec.SendChange("tokyo", 3, balance) // the debit ...
//	out <- Msg{Value: 3, VC: rec.SendAppOf("tokyo", 3, change)} // ... then the write
//
//	seq := rec.ReceiveAppSplit("lima", line, m.VC) // taken in now ...
//	rec.Apply(seq, state)                          // ... applied later
//
// A binary wire format carries the clock as bytes: Clock.AppendBinary and
// DecodeClock (the same bytes as the Python recorder's encode_clock).
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
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"sync"
	"unicode/utf8"
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

// AppendBinary appends c to b in a binary form (for a binary wire format): the
// number of entries, then for each the length of the node's name, the name
// (UTF-8) and its seq, every number an unsigned varint, the entries in the
// order of the names. It returns the extended slice.
func (c Clock) AppendBinary(b []byte) []byte {
	names := make([]string, 0, len(c))
	for q := range c {
		names = append(names, q)
	}
	sort.Strings(names)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, q := range names {
		b = binary.AppendUvarint(b, uint64(len(q)))
		b = append(b, q...)
		b = binary.AppendUvarint(b, uint64(count("a clock entry", c[q], 0)))
	}
	return b
}

// DecodeClock reads a clock written by AppendBinary at the start of b; it
// returns the clock and the number of bytes it took (the rest of the message
// starts there).
func DecodeClock(b []byte) (Clock, int, error) {
	short := errors.New("instrument: the bytes end in the middle of a clock")
	n, at := binary.Uvarint(b)
	if at <= 0 {
		return nil, 0, short
	}
	c := make(Clock, n)
	for i := uint64(0); i < n; i++ {
		size, k := binary.Uvarint(b[at:])
		if k <= 0 || uint64(len(b)-at-k) < size {
			return nil, 0, short
		}
		at += k
		q := string(b[at : at+int(size)])
		if !utf8.ValidString(q) || q == "" {
			return nil, 0, errors.New("instrument: a clock's node name is not UTF-8 text")
		}
		at += int(size)
		v, k := binary.Uvarint(b[at:])
		if k <= 0 {
			return nil, 0, short
		}
		at += k
		c[q] = int(v)
	}
	return c, at, nil
}

type field struct {
	key   string
	value any
}

// owed is a split send or receive waiting for its Apply.
type owed struct {
	channel []string
	payload any
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
	split   map[int]owed   // seq of a split send or receive -> what its Apply logs
	changes map[int]bool   // seq of a SendChange whose write is owed
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
	r := &Recorder{w: w, vc: Clock{}, last: map[string]int{}, split: map[int]owed{},
		changes: map[int]bool{}}
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
	var owe *owed
	settle, change, changed := 0, false, 0
	for _, f := range fields {
		switch f.key {
		case "_receive":
			src = f.value.(string)
			continue
		case "_owe":
			o := f.value.(owed)
			owe = &o
			continue
		case "_settle":
			settle = f.value.(int)
			continue
		case "_change":
			change = true
			continue
		case "of":
			if event == "send" {
				changed = f.value.(int)
			}
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
	if settle > 0 {
		if _, ok := r.split[settle]; !ok {
			panic(fmt.Sprintf("instrument: %s's event %d is not a split send or receive still to be applied", r.node, settle))
		}
		delete(r.split, settle)
	}
	if changed > 0 {
		if !r.changes[changed] {
			panic(fmt.Sprintf("instrument: %s's event %d is not a SendChange still to be written", r.node, changed))
		}
		delete(r.changes, changed)
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
	if owe != nil {
		r.split[seq] = *owe
	}
	if change {
		r.changes[seq] = true
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

// SendChange logs the state change of a send written later (the debit of a
// transfer before its write; state, optional: the state after it). It returns
// its seq, for SendAppOf when the message is written.
func (e Events) SendChange(dst string, payload any, state ...any) int {
	vc := e.emit("apply", nil, withState([]field{
		{"channel", []string{e.node, name("dst", dst)}},
		{"msg", map[string]any{"app": payload}},
		{"_change", true},
	}, state))
	return vc[e.node]
}

// SendAppOf logs the write of a message whose state change SendChange logged
// as change; it returns the clock to carry on the message.
func (e Events) SendAppOf(dst string, payload any, change int, state ...any) Clock {
	return e.emit("send", nil, withState([]field{
		{"channel", []string{e.node, name("dst", dst)}},
		{"msg", map[string]any{"app": payload}},
		{"of", count("change", change, 1)},
	}, state))
}

// SendAppSplit logs the write of a message whose state changes later: Apply
// the seq (the returned clock's own entry) when it does.
func (e Events) SendAppSplit(dst string, payload any, state ...any) Clock {
	channel := []string{e.node, name("dst", dst)}
	return e.emit("send", nil, withState([]field{
		{"channel", channel},
		{"msg", map[string]any{"app": payload}},
		{"split", true},
		{"_owe", owed{channel, payload}},
	}, state))
}

// ReceiveAppSplit logs the receipt of a message taken in now and applied to
// the state later: Apply the seq it returns when it is.
func (e Events) ReceiveAppSplit(src string, payload any, clock Clock, state ...any) int {
	channel := []string{name("src", src), e.node}
	vc := e.emit("receive", clock, withState([]field{
		{"channel", channel},
		{"msg", map[string]any{"app": payload}},
		{"split", true},
		{"_receive", src},
		{"_owe", owed{channel, payload}},
	}, state))
	return vc[e.node]
}

// Apply logs the state change of the split send or receive logged as seq
// (state, optional: the state after it).
func (e Events) Apply(seq int, state ...any) {
	if e.owner == nil {
		panic("instrument: Apply needs the Recorder")
	}
	e.owner.mu.Lock()
	o, ok := e.owner.split[seq]
	e.owner.mu.Unlock()
	if !ok {
		panic(fmt.Sprintf("instrument: %s's event %d is not a split send or receive still to be applied", e.node, seq))
	}
	e.emit("apply", nil, withState([]field{
		{"channel", o.channel},
		{"msg", map[string]any{"app": o.payload}},
		{"of", seq},
		{"_settle", seq},
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
