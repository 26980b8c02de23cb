// The discrete-time simulator: it owns the servers and the links and
// decides when each message is delivered.
package chandy_lamport

import (
	"fmt"
	"math/rand"
	"sync"
)

// A message is delivered from 1 to maxDelay ticks after it is sent (or
// later, if the link is busy).
const maxDelay = 5

// serverPart is what one server recorded for one snapshot.
type serverPart struct {
	tokens   int
	messages []*SnapshotMessage
}

type Simulator struct {
	time           int
	nextSnapshotId int
	servers        map[string]*Server // id -> server
	logger         *Logger

	// CollectSnapshot runs in a goroutine of its own, at the same time as
	// Tick: it reads only parts, under mu.
	mu       sync.Mutex
	finished *sync.Cond
	parts    map[int]map[string]serverPart // snapshot id -> server -> its part
}

func NewSimulator() *Simulator {
	sim := &Simulator{
		servers: make(map[string]*Server),
		logger:  NewLogger(),
		parts:   make(map[int]map[string]serverPart),
	}
	sim.finished = sync.NewCond(&sim.mu)
	return sim
}

// GetReceiveTime is the earliest time a message sent now may be delivered.
func (sim *Simulator) GetReceiveTime() int {
	return sim.time + 1 + rand.Intn(maxDelay)
}

func (sim *Simulator) AddServer(id string, tokens int) {
	sim.servers[id] = NewServer(id, tokens, sim)
}

func (sim *Simulator) AddForwardLink(src string, dest string) {
	from, ok1 := sim.servers[src]
	to, ok2 := sim.servers[dest]
	if !ok1 || !ok2 {
		panic(fmt.Sprintf("link %s->%s: unknown server", src, dest))
	}
	link := &Link{src: src, dest: dest}
	from.outboundLinks[dest] = link
	to.inboundLinks[src] = link
}

func (sim *Simulator) InjectEvent(event interface{}) {
	switch e := event.(type) {
	case PassTokenEvent:
		sim.servers[e.src].SendTokens(e.tokens, e.dest)
	case SnapshotEvent:
		sim.StartSnapshot(e.serverId)
	default:
		panic(fmt.Sprintf("unknown event %#v", event))
	}
}

// Tick advances time by one step. Servers are visited in sorted order and
// each server's outbound links in sorted order; only the head of a link may
// be delivered, and at most one message per sending server per tick.
func (sim *Simulator) Tick() {
	sim.time++
	sim.logger.NewEpoch()
	for _, id := range sortedServerIds(sim.servers) {
		server := sim.servers[id]
		for _, dest := range sortedLinkIds(server.outboundLinks) {
			link := server.outboundLinks[dest]
			if !link.due(sim.time) {
				continue
			}
			e := link.pop()
			receiver := sim.servers[e.dest]
			sim.logger.RecordEvent(receiver, ReceivedMessageEvent{e.src, e.dest, e.message})
			receiver.HandlePacket(e.src, e.message)
			break
		}
	}
}

// StartSnapshot starts a new snapshot at serverId.
func (sim *Simulator) StartSnapshot(serverId string) {
	snapshotId := sim.nextSnapshotId
	sim.nextSnapshotId++
	server := sim.servers[serverId]
	sim.logger.RecordEvent(server, StartSnapshot{serverId, snapshotId})
	server.StartSnapshot(snapshotId)
}

// NotifySnapshotComplete is called by a server when its part of a snapshot
// is done.
func (sim *Simulator) NotifySnapshotComplete(serverId string, snapshotId int) {
	server := sim.servers[serverId]
	sim.logger.RecordEvent(server, EndSnapshot{serverId, snapshotId})
	local := server.snapshots[snapshotId]
	part := serverPart{local.tokens, append([]*SnapshotMessage(nil), local.messages...)}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	if sim.parts[snapshotId] == nil {
		sim.parts[snapshotId] = make(map[string]serverPart)
	}
	sim.parts[snapshotId][serverId] = part
	sim.finished.Broadcast()
}

// CollectSnapshot waits until every server has finished snapshot snapshotId
// and returns the global snapshot.
func (sim *Simulator) CollectSnapshot(snapshotId int) *SnapshotState {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	for len(sim.parts[snapshotId]) < len(sim.servers) {
		sim.finished.Wait()
	}
	state := &SnapshotState{snapshotId, make(map[string]int), nil}
	for _, id := range sortedServerIds(sim.servers) {
		part := sim.parts[snapshotId][id]
		state.tokens[id] = part.tokens
		state.messages = append(state.messages, part.messages...)
	}
	return state
}
