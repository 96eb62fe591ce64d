// Command history-check is an independent verdict on a `redlock-loadgen --history` file: it
// checks, with Porcupine (github.com/anishathalye/porcupine), that the history is
// linearizable under a lock model per key (model.go): no two leases of a key overlap,
// fencing tokens grow, and no write was accepted from a lease that had ended.
//
// Usage: history-check [-timeline FILE] [-timeout 60s] [-max-events N] HISTORY.jsonl
//
// Every field is validated first (validate.go); each key's history is then split into
// pieces checked one by one (pieces.go), so time and memory grow with the history's length.
// It prints one JSON object (verdict "ok", "illegal", or "unknown" when the search ran out
// of time) and exits with
//
//	0  ok
//	1  illegal (the report names the piece: key, events, times)
//	2  bad input: usage, an unreadable file, a malformed event (named on stderr), or a
//	   history with no client operation
//	3  unknown: the search ran out of time (-timeout)
//	4  too large to check, refused before any search: more than -max-events events, or a
//	   piece of one key's history that never pauses for maxPieceOps operations
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/anishathalye/porcupine"
)

// Exit statuses (see the package comment).
const (
	exitOk       = 0
	exitIllegal  = 1
	exitBadInput = 2
	exitUnknown  = 3
	exitTooLarge = 4
)

// defaultMaxEvents bounds the events read (about 150 bytes of memory each: see the book).
const defaultMaxEvents = 10_000_000

type report struct {
	Verdict        string         `json:"verdict"`
	Events         int            `json:"events"`
	Operations     int            `json:"operations"`
	Keys           int            `json:"keys"`
	Faults         int            `json:"faults"`
	Unfinished     int            `json:"unfinished"`
	Pieces         int            `json:"pieces"`
	LargestPiece   int            `json:"largest_piece"`
	Illegal        []illegalPiece `json:"illegal,omitempty"`
	Seconds        float64        `json:"seconds"`
	Timeline       string         `json:"timeline,omitempty"`
	TimelinePieces int            `json:"timeline_pieces,omitempty"`
}

// illegalPiece names a piece Porcupine found illegal.
type illegalPiece struct {
	Key        string `json:"key"`
	FromNs     int64  `json:"from_ns"`
	ToNs       int64  `json:"to_ns"`
	FirstEvent int64  `json:"first_event"`
	LastEvent  int64  `json:"last_event"`
}

func fail(status int, format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "history-check: "+format+"\n", args...)
	os.Exit(status)
}

func main() {
	timeline := flag.String("timeline", "", "write Porcupine's HTML timeline here (fault windows annotated)")
	timeout := flag.Duration("timeout", 60*time.Second, "give up (verdict unknown, exit 3) after this long")
	maxEvents := flag.Int("max-events", defaultMaxEvents, "refuse (exit 4) a history of more events")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: history-check [-timeline FILE] [-timeout 60s] [-max-events N] HISTORY.jsonl")
		fmt.Fprintln(os.Stderr, "exit: 0 ok, 1 illegal, 2 bad input (or no operations), 3 unknown (timeout), 4 too large to check")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(exitBadInput)
	}
	path := flag.Arg(0)
	file, err := os.Open(path)
	if err != nil {
		fail(exitBadInput, "%v", err)
	}
	// Counted before anything is parsed, so a history too long is refused in a second or two.
	if lines, err := countLines(file); err != nil {
		fail(exitBadInput, "%s: %v", path, err)
	} else if lines > *maxEvents {
		fail(exitTooLarge, "%s: %v", path, &TooLargeError{Events: lines, Max: *maxEvents})
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		fail(exitBadInput, "%s: %v", path, err)
	}
	history, err := ReadHistory(file, *maxEvents)
	file.Close()
	var tooLarge *TooLargeError
	if errors.As(err, &tooLarge) {
		fail(exitTooLarge, "%s: %v", path, err)
	} else if err != nil {
		fail(exitBadInput, "%s: %v", path, err)
	}
	started := time.Now()
	out, status := check(history, *timeout, *timeline)
	out.Seconds = time.Since(started).Seconds()
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(exitBadInput, "writing the report: %v", err)
	}
	os.Exit(status)
}

// check splits, checks and (with a timeline path) draws a history; the report and exit status.
func check(history *History, timeout time.Duration, timeline string) (report, int) {
	pieces := Pieces(history, pieceOps)
	out := report{Events: history.Events, Operations: len(history.Ops), Faults: len(history.Faults),
		Unfinished: history.Unfinished, Pieces: len(pieces)}
	history.Ops = nil // the pieces hold them, by key: let this copy go
	keys := map[string]bool{}
	for _, p := range pieces {
		keys[p.Key] = true
		if p.Len() > out.LargestPiece {
			out.LargestPiece = p.Len()
		}
	}
	out.Keys = len(keys)
	if out.LargestPiece > maxPieceOps {
		fail(exitTooLarge, "a piece of %d operations (at most %d): the history never pauses between "+
			"operations of one key long enough to be checked in pieces", out.LargestPiece, maxPieceOps)
	}
	outcome := CheckPieces(pieces, timeout, workers())
	status := exitOk
	switch outcome.Result {
	case porcupine.Ok:
		out.Verdict = "ok"
	case porcupine.Illegal:
		out.Verdict, status = "illegal", exitIllegal
		for _, i := range outcome.Illegal {
			p := pieces[i]
			out.Illegal = append(out.Illegal, illegalPiece{Key: p.Key, FromNs: p.From, ToNs: p.To,
				FirstEvent: p.FirstEvent, LastEvent: p.LastEvent})
			fmt.Fprintf(os.Stderr, "history-check: illegal: key %q, events %d to %d (%d ns to %d ns)\n",
				p.Key, p.FirstEvent, p.LastEvent, p.From, p.To)
		}
	default:
		out.Verdict, status = "unknown", exitUnknown
		fmt.Fprintf(os.Stderr, "history-check: out of time after %d of %d pieces (-timeout %v)\n",
			outcome.Checked, len(pieces), timeout)
	}
	if timeline != "" {
		chosen := timelinePieces(pieces, outcome.Illegal)
		if err := DrawTimeline(timeline, pieces, chosen, history.Faults, timeout); err != nil {
			fail(exitBadInput, "timeline %s: %v", timeline, err)
		}
		out.Timeline, out.TimelinePieces = timeline, len(chosen)
	}
	return out, status
}

// countLines counts a file's non-empty lines (at most one event each).
func countLines(r io.Reader) (int, error) {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64*1024), maxLine)
	lines := 0
	for scanner.Scan() {
		if len(scanner.Bytes()) > 0 {
			lines++
		}
	}
	return lines, scanner.Err()
}

// workers is how many pieces are searched at once: one per core, at most 8, which bounds
// the memory the searches hold together.
func workers() int {
	n := runtime.GOMAXPROCS(0)
	if n > 8 {
		n = 8
	}
	return n
}
