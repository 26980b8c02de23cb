// The log of a run: one epoch per tick, each holding what the servers did
// in it, in order.
package chandy_lamport

import (
	"fmt"
	"strings"
)

// SentMessageEvent: src put message on the link src->dest.
type SentMessageEvent struct {
	src     string
	dest    string
	message interface{}
}

// ReceivedMessageEvent: dest took message off the link src->dest.
type ReceivedMessageEvent struct {
	src     string
	dest    string
	message interface{}
}

// StartSnapshot: serverId started snapshot snapshotId (asked by the test).
type StartSnapshot struct {
	serverId   string
	snapshotId int
}

// EndSnapshot: serverId finished its part of snapshot snapshotId.
type EndSnapshot struct {
	serverId   string
	snapshotId int
}

// LogEvent is one recorded event and the tokens its server held then.
type LogEvent struct {
	serverId     string
	serverTokens int
	event        interface{}
}

// Logger holds one list of events per epoch. It starts with no epoch at
// all: whoever drives the simulator opens the first one with NewEpoch, and
// Tick opens one at its start.
type Logger struct {
	events [][]LogEvent
}

func NewLogger() *Logger {
	return &Logger{}
}

func (logger *Logger) NewEpoch() {
	logger.events = append(logger.events, []LogEvent{})
}

// RecordEvent appends to the last epoch (there must be one).
func (logger *Logger) RecordEvent(server *Server, event interface{}) {
	last := len(logger.events) - 1
	logger.events[last] = append(logger.events[last], LogEvent{server.Id, server.Tokens, event})
}

func (logger *Logger) String() string {
	var b strings.Builder
	for epoch, events := range logger.events {
		if len(events) == 0 {
			continue
		}
		fmt.Fprintf(&b, "epoch %d:\n", epoch)
		for _, e := range events {
			fmt.Fprintf(&b, "  %s (%d tokens): %s\n", e.serverId, e.serverTokens, describeEvent(e.event))
		}
	}
	return b.String()
}

func describeEvent(event interface{}) string {
	switch e := event.(type) {
	case SentMessageEvent:
		return fmt.Sprintf("sent %v %s->%s", e.message, e.src, e.dest)
	case ReceivedMessageEvent:
		return fmt.Sprintf("received %v %s->%s", e.message, e.src, e.dest)
	case StartSnapshot:
		return fmt.Sprintf("started snapshot %d", e.snapshotId)
	case EndSnapshot:
		return fmt.Sprintf("ended snapshot %d", e.snapshotId)
	}
	return fmt.Sprint(event)
}
