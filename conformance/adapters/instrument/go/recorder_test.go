package instrument

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// outDir is where the logs go: $REDLETTER_INSTRUMENT_OUT (the kit's test
// validates them in the model), else a temporary directory.
func outDir(t *testing.T) string {
	if dir := os.Getenv("REDLETTER_INSTRUMENT_OUT"); dir != "" {
		return dir
	}
	return t.TempDir()
}

type line struct {
	Node  string         `json:"node"`
	Seq   int            `json:"seq"`
	VC    map[string]int `json:"vc"`
	Event string         `json:"event"`
}

func readLines(t *testing.T, path string) []line {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []line
	sc := bufio.NewScanner(f)
	for no := 1; sc.Scan(); no++ {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s:%d: not JSON: %v: %q", path, no, err, sc.Text())
		}
		out = append(out, l)
	}
	return out
}

// TestTokenSnapshot writes the logs of a run of MCToken2 (p1 holds 2 tokens,
// p2 none; p2 starts snapshot 1 while p1's message to it is in flight): the
// snapshot records p1: 1, p2: 0 and the message 1 on p1 -> p2.
func TestTokenSnapshot(t *testing.T) {
	dir := outDir(t)
	p1, err := Open("p1", filepath.Join(dir, "p1.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Open("p2", filepath.Join(dir, "p2.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	type msg struct {
		Tokens, Marker int
		VC             Clock
	}
	toP2 := make(chan msg, 4)
	toP1 := make(chan msg, 4)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // p1: send a token, then react to p2's marker
		defer wg.Done()
		tokens := 2
		tokens--
		toP2 <- msg{Tokens: 1, VC: p1.SendApp("p2", 1, tokens)}
		m := <-toP1
		st := p1.Begin()
		st.ReceiveMarker("p2", m.Marker, m.VC)
		st.RecordState(1, tokens)
		vc := st.SendMarker("p2", 1)
		st.CloseChannel(1, "p2")
		st.Complete(1, tokens, map[string][]int{"p2": nil})
		st.End()
		toP2 <- msg{Marker: 1, VC: vc}
	}()
	go func() { // p2: start snapshot 1, record p1's token, close at p1's marker
		defer wg.Done()
		tokens := 0
		st := p2.Begin()
		st.StartSnapshot(1)
		st.RecordState(1, tokens)
		vc := st.SendMarker("p1", 1)
		st.End()
		toP1 <- msg{Marker: 1, VC: vc}
		recorded := []int{}
		for {
			m := <-toP2
			st := p2.Begin()
			if m.Marker == 0 {
				tokens += m.Tokens
				st.ReceiveApp("p1", m.Tokens, m.VC, tokens)
				st.RecordMessage(1, "p1", m.Tokens)
				recorded = append(recorded, m.Tokens)
				st.End()
				continue
			}
			st.ReceiveMarker("p1", m.Marker, m.VC)
			st.CloseChannel(1, "p1")
			st.Complete(1, 0, map[string][]int{"p1": recorded})
			st.End()
			return
		}
	}()
	wg.Wait()
	for _, r := range []*Recorder{p1, p2} {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	a := readLines(t, filepath.Join(dir, "p1.ndjson"))
	b := readLines(t, filepath.Join(dir, "p2.ndjson"))
	if len(a) != 7 || len(b) != 9 || a[6].Event != "end" || b[8].Event != "end" {
		t.Fatalf("want 6 and 8 lines and an end each, got %d and %d", len(a), len(b))
	}
	for _, l := range append(a, b...) {
		if l.VC[l.Node] != l.Seq {
			t.Fatalf("vc[%s] = %d, want its seq %d", l.Node, l.VC[l.Node], l.Seq)
		}
	}
	if b[7].Event != "complete" || b[7].VC["p1"] != 4 {
		t.Fatalf("p2's last event: %+v (want complete after p1's marker, vc p1: 4)", b[7])
	}
}

// TestConcurrentWriters: many goroutines on one recorder and several
// recorders on one shared file never tear a line, and each node's seqs appear
// in file order as 1, 2, 3, ...
func TestConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.ndjson")
	var recs []*Recorder
	for _, n := range []string{"a", "b", "c"} {
		r, err := OpenAppend(n, path)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	var wg sync.WaitGroup
	for _, r := range recs {
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(r *Recorder, g int) {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					if i%10 == 0 {
						st := r.Begin()
						st.Internal(g)
						st.RecordState(1, map[string]int{"i": i})
						st.End()
					} else {
						r.Internal(i, i)
					}
				}
			}(r, g)
		}
	}
	wg.Wait()
	for _, r := range recs {
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	lines := readLines(t, path)
	if len(lines) != 3*4*(200+20)+3 {
		t.Fatalf("want %d lines (and an end each), got %d", 3*4*220+3, len(lines))
	}
	last := map[string]int{}
	for _, l := range lines {
		if l.Seq != last[l.Node]+1 {
			t.Fatalf("%s: seq %d after %d", l.Node, l.Seq, last[l.Node])
		}
		last[l.Node] = l.Seq
	}
}

func TestMisusePanics(t *testing.T) {
	r := New("p1", &discard{})
	for what, f := range map[string]func(){
		"a snapshot id 0":        func() { r.SendMarker("p2", 0) },
		"an empty snapshot id":   func() { r.StartSnapshot("") },
		"a float snapshot id":    func() { r.RecordState(1.5, 0) },
		"a channel to nobody":    func() { r.SendApp("", "x") },
		"a payload not JSON":     func() { r.SendApp("p2", func() {}) },
		"a report of no lists":   func() { r.Complete("s", nil, map[string]int{"p2": 1}) },
		"a negative clock entry": func() { r.ReceiveApp("p2", 1, Clock{"p2": -1}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s must panic", what)
				}
			}()
			f()
		}()
	}
	if r.Seq() != 0 {
		t.Fatalf("a refused event took seq %d", r.Seq())
	}
}

// TestStepHoldsNoLock: a goroutine inside a Step waits for a lock another
// goroutine holds while it logs; the recorder must not deadlock them.
func TestStepHoldsNoLock(t *testing.T) {
	r := New("p1", &discard{})
	var app sync.Mutex
	app.Lock()
	done := make(chan struct{})
	go func() {
		st := r.Begin()
		st.Internal(1)
		app.Lock() // waits for the main goroutine, inside the step
		st.Internal(2)
		app.Unlock()
		st.End()
		close(done)
	}()
	for r.Seq() < 1 {
		runtime.Gosched()
	}
	r.Internal(3) // would block forever if the step held the recorder's mutex
	app.Unlock()
	<-done
	if r.Seq() != 3 {
		t.Fatalf("want 3 events, got %d", r.Seq())
	}
}

type discard struct{}

func (*discard) Write(b []byte) (int, error) { return len(b), nil }

// TestClockBytes: the binary form of a clock is the Python recorder's
// encode_clock, byte for byte, and reads back.
func TestClockBytes(t *testing.T) {
	c := Clock{"p1": 3, "zürich": 128, "b": 300}
	got := c.AppendBinary([]byte{})
	const want = "030162ac0202703103077ac3bc726963688001"
	if hex := fmt.Sprintf("%x", got); hex != want {
		t.Fatalf("AppendBinary = %s, want %s", hex, want)
	}
	back, n, err := DecodeClock(append(got, "rest"...))
	if err != nil || n != len(got) || len(back) != 3 || back["zürich"] != 128 || back["b"] != 300 {
		t.Fatalf("DecodeClock = %v, %d, %v", back, n, err)
	}
	if _, _, err := DecodeClock(got[:len(got)-1]); err == nil {
		t.Fatal("a clock cut short must be an error")
	}
}

// TestTwoHalves: a send whose debit comes first, a send written first and a
// receipt applied later are logged as the log format says (split, apply, of).
func TestTwoHalves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p1.ndjson")
	r, err := Open("p1", path)
	if err != nil {
		t.Fatal(err)
	}
	change := r.SendChange("p2", 1, 4)
	r.SendAppOf("p2", 1, change)
	vc := r.SendAppSplit("p2", 2)
	r.Apply(vc["p1"], 2)
	seq := r.ReceiveAppSplit("p2", 5, Clock{"p2": 1})
	r.Apply(seq, 7)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "vc")
		delete(m, "node")
		got = append(got, m)
	}
	want := []string{
		`{"channel":["p1","p2"],"event":"apply","msg":{"app":1},"seq":1,"state":4}`,
		`{"channel":["p1","p2"],"event":"send","msg":{"app":1},"of":1,"seq":2}`,
		`{"channel":["p1","p2"],"event":"send","msg":{"app":2},"seq":3,"split":true}`,
		`{"channel":["p1","p2"],"event":"apply","msg":{"app":2},"of":3,"seq":4,"state":2}`,
		`{"channel":["p2","p1"],"event":"receive","msg":{"app":5},"seq":5,"split":true}`,
		`{"channel":["p2","p1"],"event":"apply","msg":{"app":5},"of":5,"seq":6,"state":7}`,
		`{"event":"end","seq":7}`,
	}
	for i, m := range got {
		b, _ := json.Marshal(m)
		if i >= len(want) || string(b) != want[i] {
			t.Fatalf("line %d: %s", i+1, b)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("applying an event twice must panic")
		}
	}()
	r2, _ := Open("p1", filepath.Join(t.TempDir(), "x.ndjson"))
	s := r2.ReceiveAppSplit("p2", 1, nil)
	r2.Apply(s)
	r2.Apply(s)
}
