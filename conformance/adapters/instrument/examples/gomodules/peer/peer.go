// Package peer is a token-passing peer with Chandy–Lamport snapshots: a
// library module of its own (example.com/peer) that a program in another
// module (example.com/app) uses. Lines that exist only for redletter end with
// the comment "rl".
package peer

import (
	"path/filepath"
	"sync"

	"redletter/instrument" // rl
)

// Msg is what goes on a channel between two peers.
type Msg struct {
	Tokens int
	Marker int
	Bye    bool
	VC     instrument.Clock // rl: the clock rides on every message
}

// Peer holds tokens and talks to one other peer over two Go channels.
type Peer struct {
	name, other string
	in          <-chan Msg
	out         chan<- Msg
	mu          sync.Mutex // orders the state and the writes on out
	tokens      int
	red         bool
	recorded    []int
	done        chan struct{}
	rec         *instrument.Recorder // rl
}

// New makes a peer whose log goes to dir/name.ndjson.
func New(name, other string, tokens int, in <-chan Msg, out chan<- Msg, dir string) (*Peer, error) {
	rec, err := instrument.Open(name, filepath.Join(dir, name+".ndjson")) // rl
	if err != nil {                                                       // rl
		return nil, err // rl
	} // rl
	rec.Init(tokens, []string{other}, []string{other}) // rl
	return &Peer{name: name, other: other, in: in, out: out, tokens: tokens,
		done: make(chan struct{}), rec: rec}, nil
}

// Give sends n tokens to the other peer.
func (p *Peer) Give(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokens -= n
	p.out <- Msg{Tokens: n, VC: p.rec.SendApp(p.other, n, p.tokens)} // rl: VC
}

// Start starts snapshot 1 here (unless a marker turned this peer red already).
func (p *Peer) Start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.red {
		p.rec.StartSnapshot(1) // rl
		p.turnRed()
	}
}

func (p *Peer) turnRed() {
	p.red = true
	p.rec.RecordState(1, p.tokens)                            // rl
	p.out <- Msg{Marker: 1, VC: p.rec.SendMarker(p.other, 1)} // rl: VC
}

// Listen handles what the other peer sends until it says bye.
func (p *Peer) Listen(wg *sync.WaitGroup) {
	defer wg.Done()
	for m := range p.in {
		if m.Bye {
			return
		}
		p.mu.Lock()
		if m.Marker != 0 {
			p.rec.ReceiveMarker(p.other, m.Marker, m.VC) // rl
			if !p.red {
				p.turnRed()
			}
			p.rec.CloseChannel(1, p.other)                                                    // rl
			p.rec.Complete(1, nil, map[string][]int{p.other: append([]int{}, p.recorded...)}) // rl
			close(p.done)
		} else {
			p.tokens += m.Tokens
			p.rec.ReceiveApp(p.other, m.Tokens, m.VC, p.tokens) // rl
			if p.red && !closed(p.done) {
				p.recorded = append(p.recorded, m.Tokens)
				p.rec.RecordMessage(1, p.other, m.Tokens) // rl
			}
		}
		p.mu.Unlock()
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Wait waits until snapshot 1 is complete here.
func (p *Peer) Wait() { <-p.done }

// Bye tells the other peer that nothing more comes.
func (p *Peer) Bye() { p.out <- Msg{Bye: true} }

// Close logs the end event.
func (p *Peer) Close() error { return p.rec.CloseState(p.tokens) } // rl
