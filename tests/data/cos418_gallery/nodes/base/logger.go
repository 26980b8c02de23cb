// The log of a run: one epoch per tick, each holding what the nodes did in
// it, in order.
package chandy_lamport

import (
	"fmt"
	"strings"
)

// SentMsgRecord: src put message on the link src->dest.
type SentMsgRecord struct {
	src     string
	dest    string
	message interface{} // a Message, from the simulator and the node's send helper
}

// ReceivedMsgRecord: dest took message off the link src->dest.
type ReceivedMsgRecord struct {
	src     string
	dest    string
	message interface{} // a Message, from the simulator and the node's send helper
}

// StartSnapshotRecord: nodeId started snapshot snapshotId (asked by the test).
type StartSnapshotRecord struct {
	nodeId     string
	snapshotId int
}

// EndSnapshotRecord: nodeId finished its part of snapshot snapshotId.
type EndSnapshotRecord struct {
	nodeId     string
	snapshotId int
}

// LogRecord is one record and the tokens its node held then.
type LogRecord struct {
	nodeId     string
	nodeTokens int
	record     interface{}
}

// Logger holds one list of records per epoch. It starts with none: whoever
// drives the simulator opens the first epoch, and Tick opens one at its
// start.
type Logger struct {
	epochs [][]LogRecord
}

func NewLogger() *Logger {
	return &Logger{epochs: [][]LogRecord{}}
}

func (logger *Logger) NewEpoch() {
	logger.epochs = append(logger.epochs, []LogRecord{})
}

// RecordEvent appends to the last epoch (there must be one).
func (logger *Logger) RecordEvent(node *Node, record interface{}) {
	n := len(logger.epochs)
	logger.epochs[n-1] = append(logger.epochs[n-1], LogRecord{node.id, node.tokens, record})
}

func (logger *Logger) String() string {
	var b strings.Builder
	for epoch, records := range logger.epochs {
		if len(records) == 0 {
			continue
		}
		fmt.Fprintf(&b, "epoch %d:\n", epoch)
		for _, r := range records {
			fmt.Fprintf(&b, "  %s (%d tokens): %s\n", r.nodeId, r.nodeTokens, describeRecord(r.record))
		}
	}
	return b.String()
}

func describeRecord(record interface{}) string {
	switch r := record.(type) {
	case SentMsgRecord:
		return fmt.Sprintf("sent %v %s->%s", r.message, r.src, r.dest)
	case ReceivedMsgRecord:
		return fmt.Sprintf("received %v %s->%s", r.message, r.src, r.dest)
	case StartSnapshotRecord:
		return fmt.Sprintf("started snapshot %d", r.snapshotId)
	case EndSnapshotRecord:
		return fmt.Sprintf("ended snapshot %d", r.snapshotId)
	}
	return fmt.Sprint(record)
}
