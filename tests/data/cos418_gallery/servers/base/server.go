// A server holds tokens, passes them on, and takes part in snapshots.
package chandy_lamport

import "fmt"

// localSnapshot is this server's part of one snapshot.
type localSnapshot struct {
	tokens      int                // tokens held when the state was recorded
	recording   map[string]bool    // inbound channel (by src) -> still recorded
	markersLeft int                // inbound channels whose marker has not come
	messages    []*SnapshotMessage // recorded in-flight messages, in arrival order
	done        bool
}

type Server struct {
	Id            string
	Tokens        int
	sim           *Simulator
	outboundLinks map[string]*Link // dest -> link
	inboundLinks  map[string]*Link // src -> link
	snapshots     map[int]*localSnapshot
}

func NewServer(id string, tokens int, sim *Simulator) *Server {
	return &Server{
		Id:            id,
		Tokens:        tokens,
		sim:           sim,
		outboundLinks: make(map[string]*Link),
		inboundLinks:  make(map[string]*Link),
		snapshots:     make(map[int]*localSnapshot),
	}
}

// send puts message on the link to dest; every send goes through here.
func (server *Server) send(dest string, message interface{}) {
	link, ok := server.outboundLinks[dest]
	if !ok {
		panic(fmt.Sprintf("no link %s->%s", server.Id, dest))
	}
	server.sim.logger.RecordEvent(server, SentMessageEvent{server.Id, dest, message})
	link.push(SendMessageEvent{server.Id, dest, message, server.sim.GetReceiveTime()})
}

// SendToNeighbors puts message on every outbound link, in sorted order.
func (server *Server) SendToNeighbors(message interface{}) {
	for _, dest := range sortedLinkIds(server.outboundLinks) {
		server.send(dest, message)
	}
}

// SendTokens passes numTokens to dest.
func (server *Server) SendTokens(numTokens int, dest string) {
	if server.Tokens < numTokens {
		panic(fmt.Sprintf("%s cannot send %d tokens: it has %d", server.Id, numTokens, server.Tokens))
	}
	server.Tokens -= numTokens
	server.send(dest, TokenMessage{numTokens})
}

// HandlePacket is called by the simulator when a message from src arrives.
func (server *Server) HandlePacket(src string, message interface{}) {
	switch m := message.(type) {
	case TokenMessage:
		server.Tokens += m.numTokens
		for _, local := range server.snapshots {
			if !local.done && local.recording[src] {
				local.messages = append(local.messages, &SnapshotMessage{src, server.Id, m})
			}
		}
	case MarkerMessage:
		local, seen := server.snapshots[m.snapshotId]
		if !seen {
			server.StartSnapshot(m.snapshotId)
			local = server.snapshots[m.snapshotId]
		}
		// The marker closes its channel (recorded empty if it was the first).
		if local.recording[src] {
			local.recording[src] = false
			local.markersLeft--
		}
		server.finishIfDone(local, m.snapshotId)
	default:
		panic(fmt.Sprintf("%s: unknown message %#v", server.Id, message))
	}
}

// StartSnapshot records this server's state, starts recording every inbound
// channel and sends a marker on every outbound link.
func (server *Server) StartSnapshot(snapshotId int) {
	local := &localSnapshot{
		tokens:      server.Tokens,
		recording:   make(map[string]bool),
		markersLeft: len(server.inboundLinks),
	}
	for src := range server.inboundLinks {
		local.recording[src] = true
	}
	server.snapshots[snapshotId] = local
	server.SendToNeighbors(MarkerMessage{snapshotId})
	server.finishIfDone(local, snapshotId)
}

func (server *Server) finishIfDone(local *localSnapshot, snapshotId int) {
	if !local.done && local.markersLeft == 0 {
		local.done = true
		server.sim.NotifySnapshotComplete(server.Id, snapshotId)
	}
}
