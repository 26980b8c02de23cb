// A course-style test of the package (redletter COS 418 gallery, second
// dialect), written for redletter from the facts of how the course's own
// test drives a package: one fixed seed, a first epoch opened by the test,
// a collector goroutine started as soon as each snapshot is, ticks until
// every snapshot is collected and then maxDelay+1 more, a token check, and
// a comparison with the golden .snap files of test_data/.
package chandy_lamport

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const testSeed = 7113

type topologyNode struct {
	id     string
	tokens int
}

type topology struct {
	nodes []topologyNode
	links [][2]string
}

// tickEvent is a "tick [n]" line of an .events file.
type tickEvent struct {
	n int
}

func readLines(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("test_data", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line != "" {
			lines = append(lines, line)
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func atoi(t *testing.T, name string, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s: %q is not a number", name, s)
	}
	return n
}

// readTopologyFile reads a .top file: the number of nodes, one
// "<id> <tokens>" line per node, then one "<src> <dest>" line per link;
// lines starting with # are comments.
func readTopologyFile(t *testing.T, name string) topology {
	t.Helper()
	var top topology
	count := -1
	for _, line := range readLines(t, name) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		switch {
		case count < 0:
			count = atoi(t, name, fields[0])
		case len(top.nodes) < count:
			if len(fields) != 2 {
				t.Fatalf("%s: bad node line %q", name, line)
			}
			top.nodes = append(top.nodes, topologyNode{fields[0], atoi(t, name, fields[1])})
		default:
			if len(fields) != 2 {
				t.Fatalf("%s: bad link line %q", name, line)
			}
			top.links = append(top.links, [2]string{fields[0], fields[1]})
		}
	}
	return top
}

// readEventsFile reads an .events file into PassTokenEvent, SnapshotEvent
// and tickEvent values, in file order.
func readEventsFile(t *testing.T, name string) []interface{} {
	t.Helper()
	var events []interface{}
	for _, line := range readLines(t, name) {
		fields := strings.Fields(line)
		switch {
		case fields[0] == "send" && len(fields) == 4:
			events = append(events, PassTokenEvent{fields[1], fields[2], atoi(t, name, fields[3])})
		case fields[0] == "snapshot" && len(fields) == 2:
			events = append(events, SnapshotEvent{fields[1]})
		case fields[0] == "tick" && len(fields) == 1:
			events = append(events, tickEvent{1})
		case fields[0] == "tick" && len(fields) == 2:
			events = append(events, tickEvent{atoi(t, name, fields[1])})
		default:
			t.Fatalf("%s: unknown event %q", name, line)
		}
	}
	return events
}

// readSnapshotFile reads a golden .snap file: the snapshot id, "<node>
// <tokens>" lines and "<src> <dest> token(<n>)" lines.
func readSnapshotFile(t *testing.T, name string) *GlobalSnapshot {
	t.Helper()
	snap := &GlobalSnapshot{id: -1, tokenMap: make(map[string]int)}
	for _, line := range readLines(t, name) {
		fields := strings.Fields(line)
		switch len(fields) {
		case 1:
			snap.id = atoi(t, name, fields[0])
		case 2:
			snap.tokenMap[fields[0]] = atoi(t, name, fields[1])
		case 3:
			snap.messages = append(snap.messages, &MsgSnapshot{fields[0], fields[1], parseMessage(t, name, fields[2])})
		default:
			t.Fatalf("%s: bad line %q", name, line)
		}
	}
	return snap
}

func parseMessage(t *testing.T, name string, s string) Message {
	t.Helper()
	open := strings.Index(s, "(")
	if open < 0 || !strings.HasSuffix(s, ")") {
		t.Fatalf("%s: bad message %q", name, s)
	}
	n := atoi(t, name, s[open+1:len(s)-1])
	switch s[:open] {
	case "token":
		return Message{false, n}
	case "marker":
		return Message{true, n}
	}
	t.Fatalf("%s: bad message %q", name, s)
	return Message{}
}

// snapshotTokens is what a snapshot holds: the nodes' tokens plus the
// tokens of the recorded messages (markers hold none).
func snapshotTokens(snap *GlobalSnapshot) int {
	total := 0
	for _, n := range snap.tokenMap {
		total += n
	}
	for _, m := range snap.messages {
		if !m.message.isMarker {
			total += m.message.data
		}
	}
	return total
}

// messagesTo lists the recorded messages with destination dest, in order.
func messagesTo(snap *GlobalSnapshot, dest string) []string {
	var out []string
	for _, m := range snap.messages {
		if m.dest == dest {
			out = append(out, fmt.Sprintf("%s %s %v", m.src, m.dest, m.message))
		}
	}
	return out
}

func checkSnapshot(t *testing.T, expected *GlobalSnapshot, actual *GlobalSnapshot) {
	t.Helper()
	if expected.id != actual.id {
		t.Fatalf("expected snapshot %d, got snapshot %d", expected.id, actual.id)
	}
	if len(expected.tokenMap) != len(actual.tokenMap) {
		t.Fatalf("snapshot %d: expected the tokens of %d nodes, got %d", expected.id, len(expected.tokenMap), len(actual.tokenMap))
	}
	for id, n := range expected.tokenMap {
		if got, ok := actual.tokenMap[id]; !ok || got != n {
			t.Fatalf("snapshot %d: expected %s to hold %d tokens, got %d", expected.id, id, n, got)
		}
	}
	if len(expected.messages) != len(actual.messages) {
		t.Fatalf("snapshot %d: expected %d recorded messages, got %d", expected.id, len(expected.messages), len(actual.messages))
	}
	dests := make(map[string]bool)
	for _, m := range expected.messages {
		dests[m.dest] = true
	}
	for dest := range dests {
		want, got := messagesTo(expected, dest), messagesTo(actual, dest)
		if strings.Join(want, "; ") != strings.Join(got, "; ") {
			t.Fatalf("snapshot %d: messages recorded at %s: expected [%s], got [%s]", expected.id, dest, strings.Join(want, "; "), strings.Join(got, "; "))
		}
	}
}

func runTest(t *testing.T, topFile string, eventsFile string, snapFiles []string) {
	rand.Seed(testSeed + 1)
	top := readTopologyFile(t, topFile)
	events := readEventsFile(t, eventsFile)

	sim := NewSimulator()
	sim.logger.NewEpoch()
	totalTokens := 0
	for _, n := range top.nodes {
		sim.AddNode(n.id, n.tokens)
		totalTokens += n.tokens
	}
	for _, l := range top.links {
		sim.AddLink(l[0], l[1])
	}

	collected := make(chan *GlobalSnapshot, 100)
	started := 0
	for _, event := range events {
		switch e := event.(type) {
		case PassTokenEvent:
			sim.ProcessEvent(e)
		case SnapshotEvent:
			snapshotId := sim.nextSnapshotId
			sim.ProcessEvent(e)
			started++
			go func(id int) {
				collected <- sim.CollectSnapshot(id)
			}(snapshotId)
		case tickEvent:
			for i := 0; i < e.n; i++ {
				sim.Tick()
			}
		}
	}
	var snapshots []*GlobalSnapshot
	for len(snapshots) < started {
		select {
		case snap := <-collected:
			snapshots = append(snapshots, snap)
		default:
			sim.Tick()
		}
	}
	for i := 0; i < maxDelay+1; i++ {
		sim.Tick()
	}

	if len(snapshots) != len(snapFiles) {
		t.Fatalf("expected %d snapshots, collected %d", len(snapFiles), len(snapshots))
	}
	for _, snap := range snapshots {
		if got := snapshotTokens(snap); got != totalTokens {
			t.Fatalf("Snapshot %d: simulator has %d tokens, snapshot has %d", snap.id, totalTokens, got)
		}
	}
	sort.Slice(snapshots, func(i, j int) bool { return snapshots[i].id < snapshots[j].id })
	for i, name := range snapFiles {
		checkSnapshot(t, readSnapshotFile(t, name), snapshots[i])
	}
}

func Test2NodesSimple(t *testing.T) {
	runTest(t, "2nodes.top", "2nodes-simple.events", []string{"2nodes-simple0.snap"})
}

func Test3NodesSimple(t *testing.T) {
	runTest(t, "3nodes.top", "3nodes-simple.events", []string{"3nodes-simple0.snap"})
}

func Test3NodesBidirectionalMessages(t *testing.T) {
	runTest(t, "3nodes.top", "3nodes-bidirectional-messages.events",
		[]string{"3nodes-bidirectional-messages0.snap"})
}

func Test8NodesSequentialSnapshots(t *testing.T) {
	runTest(t, "8nodes.top", "8nodes-sequential-snapshots.events", []string{
		"8nodes-sequential-snapshots0.snap",
		"8nodes-sequential-snapshots1.snap",
		"8nodes-sequential-snapshots2.snap",
		"8nodes-sequential-snapshots3.snap",
		"8nodes-sequential-snapshots4.snap",
		"8nodes-sequential-snapshots5.snap",
	})
}

func Test10NodesConcurrentSnapshots(t *testing.T) {
	runTest(t, "10nodes.top", "10nodes-concurrent-snapshots.events", []string{
		"10nodes-concurrent-snapshots0.snap",
		"10nodes-concurrent-snapshots1.snap",
		"10nodes-concurrent-snapshots2.snap",
		"10nodes-concurrent-snapshots3.snap",
		"10nodes-concurrent-snapshots4.snap",
	})
}
