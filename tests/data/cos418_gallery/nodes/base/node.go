// A node holds tokens, passes them on, and takes part in snapshots.
package chandy_lamport

import "fmt"

// localState is this node's part of one snapshot.
type localState struct {
	tokens   int             // tokens held when the state was recorded
	open     map[string]bool // inbound channel (by src) -> still recorded
	waiting  int             // inbound channels whose marker has not come
	messages []*MsgSnapshot  // recorded in-flight messages, in arrival order
	complete bool
}

type Node struct {
	sim           *ChandyLamportSim
	id            string
	tokens        int
	outboundLinks map[string]*Link // dest -> link
	inboundLinks  map[string]*Link // src -> link
	snapshots     map[int]*localState
}

func CreateNode(id string, tokens int, sim *ChandyLamportSim) *Node {
	return &Node{
		sim:           sim,
		id:            id,
		tokens:        tokens,
		outboundLinks: make(map[string]*Link),
		inboundLinks:  make(map[string]*Link),
		snapshots:     make(map[int]*localState),
	}
}

// sendMsg puts message on the link to dest; every send goes through here.
func (node *Node) sendMsg(dest string, message Message) {
	link, ok := node.outboundLinks[dest]
	if !ok {
		panic(fmt.Sprintf("no link %s->%s", node.id, dest))
	}
	node.sim.logger.RecordEvent(node, SentMsgRecord{node.id, dest, message})
	link.msgQueue.Push(SendMsgEvent{node.id, dest, message, node.sim.GetReceiveTime()})
}

// SendToNeighbors puts message on every outbound link, in sorted order.
func (node *Node) SendToNeighbors(message Message) {
	for _, dest := range sortedDests(node.outboundLinks) {
		node.sendMsg(dest, message)
	}
}

// SendTokens passes numTokens to dest.
func (node *Node) SendTokens(numTokens int, dest string) {
	if node.tokens < numTokens {
		panic(fmt.Sprintf("%s cannot send %d tokens: it has %d", node.id, numTokens, node.tokens))
	}
	node.tokens -= numTokens
	node.sendMsg(dest, Message{false, numTokens})
}

// HandlePacket is called by the simulator when a message from src arrives.
func (node *Node) HandlePacket(src string, message Message) {
	if !message.isMarker {
		node.tokens += message.data
		for _, state := range node.snapshots {
			if !state.complete && state.open[src] {
				state.messages = append(state.messages, &MsgSnapshot{src, node.id, message})
			}
		}
		return
	}
	snapshotId := message.data
	state, seen := node.snapshots[snapshotId]
	if !seen {
		node.StartSnapshot(snapshotId)
		state = node.snapshots[snapshotId]
	}
	// The marker closes its channel (recorded empty if it was the first).
	if state.open[src] {
		state.open[src] = false
		state.waiting--
	}
	node.completeIfDone(state, snapshotId)
}

// StartSnapshot records this node's state, starts recording every inbound
// channel and sends a marker on every outbound link.
func (node *Node) StartSnapshot(snapshotId int) {
	state := &localState{
		tokens:  node.tokens,
		open:    make(map[string]bool),
		waiting: len(node.inboundLinks),
	}
	for src := range node.inboundLinks {
		state.open[src] = true
	}
	node.snapshots[snapshotId] = state
	node.SendToNeighbors(Message{true, snapshotId})
	node.completeIfDone(state, snapshotId)
}

func (node *Node) completeIfDone(state *localState, snapshotId int) {
	if !state.complete && state.waiting == 0 {
		state.complete = true
		node.sim.NotifyCompletedSnapshot(node.id, snapshotId)
	}
}
