package main

// Reading a history: JSON lines in Jepsen's shape, as `redlock-loadgen --history FILE`
// writes them (the faults page of the book describes the format).
//
// One line per event: {"index", "process", "type", "f", "key", "value", "time"}.
//   - index: the event's number, from 0, growing line by line.
//   - process: a client's number (≥ 0), or "nemesis" for a fault window's start/stop.
//   - type: "invoke" when a client starts an operation; "ok", "fail" or "info" (outcome
//     unknown) when it ends. A client runs one operation at a time, so an ending event
//     belongs to the last invoke of the same process.
//   - f: "acquire", "extend", "release", "write"; a fault is f "start"/"stop" of process
//     "nemesis" with value the fault's label.
//   - time: nanoseconds on the generator's monotonic clock.
//   - value of an acquire or extend "ok": {"token", "fence" (or null), "valid_until"}: the
//     monotonic time at which the holder stops acting on the lock. Of a release's invoke:
//     {"token"}. Of a write: {"token", "fence"}; "ok" means the resource applied it, "fail"
//     that it refused it.
//
// A lease is held from its acquire's "ok" until the earlier of its release's invoke and its
// last valid_until. Every field the model reads is checked here (validate.go): a checker
// that trusted them could be talked out of a violation by the very file it judges.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// maxLine bounds one line of the file (a history line is a few hundred bytes).
const maxLine = 1 << 20

// Event is one line of a history file; pointers tell a missing field from a zero.
type Event struct {
	Index   *int64          `json:"index"`
	Process json.RawMessage `json:"process"`
	Type    string          `json:"type"`
	F       string          `json:"f"`
	Key     *string         `json:"key"`
	Value   json.RawMessage `json:"value"`
	Time    *int64          `json:"time"`
}

// leaseValue is the value of an acquire's or an extend's "ok", of a release and of a write.
type leaseValue struct {
	Token      *string `json:"token"`
	Fence      *int64  `json:"fence"`
	ValidUntil *int64  `json:"valid_until"`
}

// Fault is a fault window read from the nemesis' events.
type Fault struct {
	Label      string
	Start, End int64
}

// Op is one operation of the lock model (see model.go), with its call and return times.
type Op struct {
	Key          string
	Process      int
	Input        Input
	Call, Return int64
	// Event is the index of the event that completed it, for the messages.
	Event int64
}

// History is a file's operations (all keys, in file order), and its fault windows.
type History struct {
	Ops    []Op
	Faults []Fault
	Events int
	// Unfinished counts invokes the file never completed (the run ended first).
	Unfinished int
}

// TooLargeError refuses a history before it is checked: more events than the bound.
type TooLargeError struct{ Events, Max int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%d events or more, over -max-events %d: too large to check; shorten the run", e.Events, e.Max)
}

// ReadHistory reads and validates a history of at most maxEvents events and turns it into
// operations of the lock model.
func ReadHistory(r io.Reader, maxEvents int) (*History, error) {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64*1024), maxLine)
	rd := newReader()
	line := 0
	for scanner.Scan() {
		line++
		if len(scanner.Bytes()) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("line %d: not a history event: %v", line, err)
		}
		if err := rd.event(line, &e); err != nil {
			return nil, err
		}
		if rd.h.Events > maxEvents {
			return nil, &TooLargeError{Events: rd.h.Events, Max: maxEvents}
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %v", line+1, err)
	}
	return rd.finish()
}

func unquote(raw string) string {
	var s string
	if json.Unmarshal([]byte(raw), &s) == nil {
		return s
	}
	return raw
}
