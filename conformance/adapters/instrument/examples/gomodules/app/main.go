// Command app runs two token peers of the module example.com/peer, takes a
// snapshot while a token is on its way, and leaves one event log per peer in
// -out: redletter judges it without a model, or in the model MCToken2.
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"

	"example.com/peer"
)

func main() {
	out := flag.String("out", "logs", "directory for the event logs")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	a, b := make(chan peer.Msg, 8), make(chan peer.Msg, 8) // p1 -> p2, p2 -> p1
	p1, err := peer.New("p1", "p2", 2, b, a, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p2, err := peer.New("p2", "p1", 0, a, b, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The run is the same every time: p1's first token is on its way when
	// p2 starts the snapshot (no peer listens yet, the channels hold 8), so
	// p2 records it; p1's second token leaves after p1 turned red, so the
	// snapshot does not hold it.
	p1.Give(1)
	p2.Start()
	var wg sync.WaitGroup
	wg.Add(2)
	go p1.Listen(&wg)
	go p2.Listen(&wg)
	p1.Wait()
	p1.Give(1)
	p2.Wait()
	p1.Bye()
	p2.Bye()
	wg.Wait()
	for _, p := range []*peer.Peer{p1, p2} {
		if err := p.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
