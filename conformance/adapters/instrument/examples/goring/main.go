// Command goring: three weather stations that gossip readings over Go
// channels, with Chandy–Lamport snapshots of what they have sent and heard.
//
// Written the way a Go program with goroutines and channels is usually
// written, then instrumented: every line that exists only for redletter ends
// with the comment "// rl" (count them with grep -c '// rl').
//
// The stations (paris, tokyo, lima) each run one goroutine that handles the
// messages of its inbox in order; every station can send to every other one,
// and a station's messages reach an inbox in the order it sent them, so each
// directed pair is a FIFO channel. On every tick a station may send a reading
// (an int) to another; its state is how many readings it sent and the sum of
// the readings it heard.
//
// Snapshots: paris starts "g1" and lima starts "g2" at the same moment (the
// operator pauses every station while starting both). A station turns red at
// its start or at the first marker of a snapshot: it records its state and
// sends a marker to every other station; it records the readings that arrive
// from a station after that and before that station's marker.
//
// Two bugs, each a flag (-bug):
//
//	marker-as-message  the recording runs on every incoming message before its
//	                   kind is looked at, so a marker of the other snapshot
//	                   arriving from a station being recorded is recorded as a
//	                   reading;
//	skip-one-output    on turning red a station sends its markers to every
//	                   station but the last one: that channel never turns red
//	                   and the snapshot never completes.
//
// Run it:
//
//	go build -o goring . && ./goring -out /tmp/goring
//	.venv/bin/redletter conform validate /tmp/goring/*.ndjson
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"time"

	"redletter/instrument"
)

var stations = []string{"paris", "tokyo", "lima"}

type Msg struct {
	From   string
	Value  int
	Marker string
	Tick   bool
	Quit   bool
	VC     instrument.Clock // rl
}

type State struct {
	Sent int `json:"sent"`
	Sum  int `json:"sum"`
}

type Snapshot struct {
	state    State
	open     map[string]bool
	markers  map[string]bool
	channels map[string][]any
	done     bool
}

type Station struct {
	name      string
	others    []string
	inbox     chan Msg
	net       *Net
	rng       *rand.Rand
	bug       string
	state     State
	snapshots map[string]*Snapshot
	rec       *instrument.Recorder // rl
}

type Net struct {
	world    sync.RWMutex // stations handle messages under RLock; the operator pauses them
	stations map[string]*Station
	done     chan string
}

func (s *Station) send(dst string, m Msg) {
	m.From = s.name
	s.net.stations[dst].inbox <- m
}

func (s *Station) run(wg *sync.WaitGroup) {
	defer wg.Done()
	for m := range s.inbox {
		if m.Quit {
			return
		}
		s.net.world.RLock()
		s.handle(m)
		s.net.world.RUnlock()
	}
}

func (s *Station) handle(m Msg) {
	if m.Tick {
		if s.rng.Intn(10) < 7 {
			dst := s.others[s.rng.Intn(len(s.others))]
			v := s.rng.Intn(100)
			s.state.Sent++
			s.send(dst, Msg{Value: v, VC: s.rec.SendApp(dst, v, s.state)}) // rl: the VC field
		}
		return
	}
	if m.Marker != "" {
		s.rec.ReceiveMarker(m.From, m.Marker, m.VC) // rl
	} else {
		s.state.Sum += m.Value
		s.rec.ReceiveApp(m.From, m.Value, m.VC, s.state) // rl
	}
	if s.bug == "marker-as-message" || m.Marker == "" {
		for k, snap := range s.snapshots {
			if snap.open[m.From] {
				var what any = m.Value
				if m.Marker != "" {
					what = map[string]string{"marker": m.Marker}
				}
				snap.channels[m.From] = append(snap.channels[m.From], what)
				s.rec.RecordMessage(k, m.From, what) // rl
			}
		}
	}
	if m.Marker != "" {
		k := m.Marker
		if s.snapshots[k] == nil {
			s.turnRed(k)
		}
		snap := s.snapshots[k]
		snap.open[m.From] = false
		snap.markers[m.From] = true
		s.rec.CloseChannel(k, m.From) // rl
		s.checkDone(k)
	}
}

func (s *Station) start(k string) {
	s.rec.StartSnapshot(k) // rl
	s.turnRed(k)
	s.checkDone(k)
}

func (s *Station) turnRed(k string) {
	snap := &Snapshot{state: s.state, open: map[string]bool{}, markers: map[string]bool{},
		channels: map[string][]any{}}
	for _, q := range s.others {
		snap.open[q] = true
		snap.channels[q] = []any{}
	}
	s.snapshots[k] = snap
	s.rec.RecordState(k, snap.state) // rl
	outs := s.others
	if s.bug == "skip-one-output" {
		outs = outs[:len(outs)-1]
	}
	for _, q := range outs {
		s.send(q, Msg{Marker: k, VC: s.rec.SendMarker(q, k)}) // rl: the VC field
	}
}

func (s *Station) checkDone(k string) {
	snap := s.snapshots[k]
	if len(snap.markers) == len(s.others) && !snap.done {
		snap.done = true
		s.rec.Complete(k, snap.state, snap.channels) // rl
		s.net.done <- s.name + " " + k
	}
}

func main() {
	out := flag.String("out", "", "directory for the event logs")
	seed := flag.Int64("seed", 0, "seed of every random choice")
	ticks := flag.Int("ticks", 40, "ticks of each station")
	bug := flag.String("bug", "", "marker-as-message or skip-one-output")
	flag.Parse()
	if *out == "" || (*bug != "" && *bug != "marker-as-message" && *bug != "skip-one-output") {
		fmt.Fprintln(os.Stderr, "usage: goring -out DIR [-seed N] [-ticks N] [-bug marker-as-message|skip-one-output]")
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	master := rand.New(rand.NewSource(*seed))
	net := &Net{stations: map[string]*Station{}, done: make(chan string, 16)}
	for _, n := range stations {
		s := &Station{name: n, inbox: make(chan Msg, 4096), net: net, bug: *bug,
			rng: rand.New(rand.NewSource(master.Int63())), snapshots: map[string]*Snapshot{}}
		for _, q := range stations {
			if q != n {
				s.others = append(s.others, q)
			}
		}
		rec, err := instrument.Open(n, filepath.Join(*out, n+".ndjson")) // rl
		if err != nil {                                                  // rl
			fmt.Fprintln(os.Stderr, err) // rl
			os.Exit(1)                   // rl
		} // rl
		s.rec = rec                           // rl
		rec.Init(s.state, s.others, s.others) // rl
		net.stations[n] = s
	}
	var wg sync.WaitGroup
	var tickers sync.WaitGroup
	for _, s := range net.stations {
		wg.Add(1)
		go s.run(&wg)
		tickers.Add(1)
		go func(s *Station) {
			defer tickers.Done()
			for i := 0; i < *ticks; i++ {
				time.Sleep(time.Millisecond)
				s.inbox <- Msg{Tick: true}
			}
		}(s)
	}
	time.Sleep(10 * time.Millisecond)
	net.world.Lock() // the operator starts both snapshots at once
	net.stations["paris"].start("g1")
	net.stations["lima"].start("g2")
	net.world.Unlock()
	tickers.Wait()
	timeout := time.After(2 * time.Second)
wait:
	for got := 0; got < 2*len(stations); got++ {
		select {
		case <-net.done:
		case <-timeout:
			break wait // a snapshot that never completes: the logs say so
		}
	}
	for _, s := range net.stations {
		s.inbox <- Msg{Quit: true}
	}
	wg.Wait()
	for _, s := range net.stations {
		if err := s.rec.CloseState(s.state); err != nil { // rl
			fmt.Fprintln(os.Stderr, err) // rl
			os.Exit(1)                   // rl
		} // rl
	}
}
