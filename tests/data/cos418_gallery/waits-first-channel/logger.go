// The log of a run: one epoch per tick, each holding what the servers did.
package chandy_lamport

import (
	"fmt"
	"strings"
)

// SentMessageEvent: src put message on link src->dest.
type SentMessageEvent struct {
	src     string
	dest    string
	message interface{}
}

// ReceivedMessageEvent: dest took message off link src->dest.
type ReceivedMessageEvent struct {
	src     string
	dest    string
	message interface{}
}

// StartSnapshot: serverId started snapshot snapshotId (by request of the test).
type StartSnapshot struct {
	serverId   string
	snapshotId int
}

// EndSnapshot: serverId finished its part of snapshot snapshotId.
type EndSnapshot struct {
	serverId   string
	snapshotId int
}

// LogEntry is one event, with the tokens its server held right after it.
type LogEntry struct {
	serverId     string
	serverTokens int
	event        interface{}
}

// Logger keeps the entries of each epoch in order. Epoch 0 holds what
// happens before the first tick.
type Logger struct {
	epochs [][]LogEntry
}

func NewLogger() *Logger {
	return &Logger{epochs: [][]LogEntry{{}}}
}

func (logger *Logger) NewEpoch() {
	logger.epochs = append(logger.epochs, []LogEntry{})
}

func (logger *Logger) RecordEvent(server *Server, event interface{}) {
	last := len(logger.epochs) - 1
	logger.epochs[last] = append(logger.epochs[last], LogEntry{server.Id, server.Tokens, event})
}

func (logger *Logger) String() string {
	var b strings.Builder
	for epoch, entries := range logger.epochs {
		if len(entries) == 0 {
			continue
		}
		fmt.Fprintf(&b, "time %d:\n", epoch)
		for _, e := range entries {
			fmt.Fprintf(&b, "  %s (%d tokens): %s\n", e.serverId, e.serverTokens, describe(e.event))
		}
	}
	return b.String()
}

func describe(event interface{}) string {
	switch e := event.(type) {
	case SentMessageEvent:
		return fmt.Sprintf("send %v %s->%s", e.message, e.src, e.dest)
	case ReceivedMessageEvent:
		return fmt.Sprintf("receive %v %s->%s", e.message, e.src, e.dest)
	case StartSnapshot:
		return fmt.Sprintf("start snapshot %d", e.snapshotId)
	case EndSnapshot:
		return fmt.Sprintf("end snapshot %d", e.snapshotId)
	}
	return fmt.Sprint(event)
}
