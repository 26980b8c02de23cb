// Types shared by the simulator and the servers of the redletter COS 418
// gallery. Written for redletter from the interface facts only.
package chandy_lamport

import (
	"fmt"
	"sort"
)

// PassTokenEvent asks server src to send tokens to dest (injected by a test).
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

func (m TokenMessage) String() string { return fmt.Sprintf("token(%d)", m.numTokens) }

// MarkerMessage is the Chandy-Lamport marker of one snapshot.
type MarkerMessage struct {
	snapshotId int
}

func (m MarkerMessage) String() string { return fmt.Sprintf("marker(%d)", m.snapshotId) }

// SendMessageEvent is a message waiting on a link; it may be delivered from
// receiveTime on, and only once everything ahead of it on the link has been.
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

// SnapshotState is one global snapshot, as returned by CollectSnapshot.
type SnapshotState struct {
	id       int
	tokens   map[string]int
	messages []*SnapshotMessage
}

// Link is a one-way FIFO channel between two servers.
type Link struct {
	src   string
	dest  string
	queue []SendMessageEvent
}

func (l *Link) empty() bool { return len(l.queue) == 0 }

func (l *Link) head() SendMessageEvent { return l.queue[0] }

func (l *Link) pop() { l.queue = l.queue[1:] }

func (l *Link) push(e SendMessageEvent) { l.queue = append(l.queue, e) }

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
