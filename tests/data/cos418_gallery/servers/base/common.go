// Types shared by the simulator and the servers (redletter COS 418 gallery,
// first dialect). Written for redletter from the interface facts only.
package chandy_lamport

import (
	"fmt"
	"sort"
)

// PassTokenEvent asks server src to pass tokens to dest (injected by a test).
type PassTokenEvent struct {
	src    string
	dest   string
	tokens int
}

// SnapshotEvent asks serverId to start a new snapshot (injected by a test).
type SnapshotEvent struct {
	serverId string
}

// TokenMessage is the application message: it carries tokens.
type TokenMessage struct {
	numTokens int
}

func (m TokenMessage) String() string {
	return fmt.Sprintf("token(%d)", m.numTokens)
}

// MarkerMessage is the marker of one snapshot.
type MarkerMessage struct {
	snapshotId int
}

func (m MarkerMessage) String() string {
	return fmt.Sprintf("marker(%d)", m.snapshotId)
}

// SendMessageEvent is a message on a link: it may be delivered from
// receiveTime on, once everything ahead of it on the link has been.
type SendMessageEvent struct {
	src         string
	dest        string
	message     interface{}
	receiveTime int
}

// SnapshotMessage is a message recorded as in flight on channel src->dest.
type SnapshotMessage struct {
	src     string
	dest    string
	message interface{}
}

// SnapshotState is one global snapshot, as CollectSnapshot returns it.
type SnapshotState struct {
	id       int
	tokens   map[string]int
	messages []*SnapshotMessage
}

// Link is a one-way FIFO channel from src to dest.
type Link struct {
	src   string
	dest  string
	queue []SendMessageEvent
}

func (link *Link) push(e SendMessageEvent) {
	link.queue = append(link.queue, e)
}

// due tells whether the head of the link may be delivered at time now.
func (link *Link) due(now int) bool {
	return len(link.queue) > 0 && link.queue[0].receiveTime <= now
}

func (link *Link) pop() SendMessageEvent {
	e := link.queue[0]
	link.queue = link.queue[1:]
	return e
}

func sortedServerIds(m map[string]*Server) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func sortedLinkIds(m map[string]*Link) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
