// The discrete-time simulator: it owns the nodes and the links and decides
// when each message is delivered.
package chandy_lamport

import (
	"fmt"
	"math/rand"
	"sync"
)

// A message is delivered from 1 to maxDelay ticks after it is sent (or
// later, if the link is busy).
const maxDelay = 5

// nodePart is what one node recorded for one snapshot.
type nodePart struct {
	tokens   int
	messages []*MsgSnapshot
}

type ChandyLamportSim struct {
	time           int
	nextSnapshotId int
	nodes          map[string]*Node // id -> node
	logger         *Logger

	// CollectSnapshot runs in a goroutine of its own, at the same time as
	// Tick: it reads only completed, under lock.
	lock      sync.Mutex
	changed   *sync.Cond
	completed map[int]map[string]nodePart // snapshot id -> node -> its part
}

func NewSimulator() *ChandyLamportSim {
	sim := &ChandyLamportSim{
		nodes:     make(map[string]*Node),
		logger:    NewLogger(),
		completed: make(map[int]map[string]nodePart),
	}
	sim.changed = sync.NewCond(&sim.lock)
	return sim
}

// GetReceiveTime is the earliest time a message sent now may be delivered.
func (sim *ChandyLamportSim) GetReceiveTime() int {
	return sim.time + 1 + rand.Intn(maxDelay)
}

func (sim *ChandyLamportSim) AddNode(id string, tokens int) {
	sim.nodes[id] = CreateNode(id, tokens, sim)
}

func (sim *ChandyLamportSim) AddLink(src string, dest string) {
	from, ok1 := sim.nodes[src]
	to, ok2 := sim.nodes[dest]
	if !ok1 || !ok2 {
		panic(fmt.Sprintf("link %s->%s: unknown node", src, dest))
	}
	link := &Link{src, dest, NewQueue()}
	from.outboundLinks[dest] = link
	to.inboundLinks[src] = link
}

func (sim *ChandyLamportSim) ProcessEvent(event interface{}) {
	switch e := event.(type) {
	case PassTokenEvent:
		sim.nodes[e.src].SendTokens(e.tokens, e.dest)
	case SnapshotEvent:
		sim.StartSnapshot(e.nodeId)
	default:
		panic(fmt.Sprintf("unknown event %#v", event))
	}
}

// Tick advances time by one step. Nodes are visited in sorted order and
// each node's outbound links in sorted order; only the head of a link may
// be delivered, and at most one message per sending node per tick.
func (sim *ChandyLamportSim) Tick() {
	sim.time++
	sim.logger.NewEpoch()
	for _, id := range sortedNodeIds(sim.nodes) {
		node := sim.nodes[id]
		for _, dest := range sortedDests(node.outboundLinks) {
			link := node.outboundLinks[dest]
			if link.msgQueue.Empty() || link.msgQueue.Peek().receiveTime > sim.time {
				continue
			}
			e := link.msgQueue.Pop()
			receiver := sim.nodes[e.dest]
			sim.logger.RecordEvent(receiver, ReceivedMsgRecord{e.src, e.dest, e.message})
			receiver.HandlePacket(e.src, e.message)
			break
		}
	}
}

// StartSnapshot starts a new snapshot at nodeId.
func (sim *ChandyLamportSim) StartSnapshot(nodeId string) {
	snapshotId := sim.nextSnapshotId
	sim.nextSnapshotId++
	node := sim.nodes[nodeId]
	sim.logger.RecordEvent(node, StartSnapshotRecord{nodeId, snapshotId})
	node.StartSnapshot(snapshotId)
}

// NotifyCompletedSnapshot is called by a node when its part of a snapshot
// is done.
func (sim *ChandyLamportSim) NotifyCompletedSnapshot(nodeId string, snapshotId int) {
	node := sim.nodes[nodeId]
	sim.logger.RecordEvent(node, EndSnapshotRecord{nodeId, snapshotId})
	state := node.snapshots[snapshotId]
	part := nodePart{state.tokens, append([]*MsgSnapshot(nil), state.messages...)}
	sim.lock.Lock()
	defer sim.lock.Unlock()
	if sim.completed[snapshotId] == nil {
		sim.completed[snapshotId] = make(map[string]nodePart)
	}
	sim.completed[snapshotId][nodeId] = part
	sim.changed.Broadcast()
}

// CollectSnapshot waits until every node has finished snapshot snapshotId
// and returns the global snapshot.
func (sim *ChandyLamportSim) CollectSnapshot(snapshotId int) *GlobalSnapshot {
	sim.lock.Lock()
	defer sim.lock.Unlock()
	for len(sim.completed[snapshotId]) < len(sim.nodes) {
		sim.changed.Wait()
	}
	snap := &GlobalSnapshot{snapshotId, make(map[string]int), nil}
	for _, id := range sortedNodeIds(sim.nodes) {
		part := sim.completed[snapshotId][id]
		snap.tokenMap[id] = part.tokens
		snap.messages = append(snap.messages, part.messages...)
	}
	return snap
}
