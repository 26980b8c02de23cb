// Types shared by the simulator and the nodes (redletter COS 418 gallery,
// second dialect). Written for redletter from the interface facts only.
package chandy_lamport

import (
	"fmt"
	"sort"
)

// Message is what travels on a link: a marker (data is its snapshot id) or
// tokens (data is how many).
type Message struct {
	isMarker bool
	data     int
}

func (m Message) String() string {
	if m.isMarker {
		return fmt.Sprintf("marker(%d)", m.data)
	}
	return fmt.Sprintf("token(%d)", m.data)
}

// PassTokenEvent asks node src to pass tokens to dest (given by a test).
type PassTokenEvent struct {
	src    string
	dest   string
	tokens int
}

// SnapshotEvent asks nodeId to start a new snapshot (given by a test).
type SnapshotEvent struct {
	nodeId string
}

// SendMsgEvent is a message on a link: it may be delivered from receiveTime
// on, once everything ahead of it on the link has been.
type SendMsgEvent struct {
	src         string
	dest        string
	message     Message
	receiveTime int
}

// MsgSnapshot is a message recorded as in flight on channel src->dest.
type MsgSnapshot struct {
	src     string
	dest    string
	message Message
}

// GlobalSnapshot is one snapshot, as CollectSnapshot returns it.
type GlobalSnapshot struct {
	id       int
	tokenMap map[string]int
	messages []*MsgSnapshot
}

// Queue is a FIFO of messages on a link.
type Queue struct {
	elements []SendMsgEvent
}

func NewQueue() *Queue {
	return &Queue{}
}

func (q *Queue) Empty() bool {
	return len(q.elements) == 0
}

func (q *Queue) Push(e SendMsgEvent) {
	q.elements = append(q.elements, e)
}

func (q *Queue) Peek() SendMsgEvent {
	return q.elements[0]
}

func (q *Queue) Pop() SendMsgEvent {
	e := q.elements[0]
	q.elements = q.elements[1:]
	return e
}

// Link is a one-way FIFO channel from src to dest.
type Link struct {
	src      string
	dest     string
	msgQueue *Queue
}

func sortedNodeIds(nodes map[string]*Node) []string {
	ids := make([]string, 0, len(nodes))
	for id := range nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func sortedDests(links map[string]*Link) []string {
	ids := make([]string, 0, len(links))
	for id := range links {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
