package main

// Reading a history: JSON lines in Jepsen's shape, as `redlock-loadgen --history FILE`
// writes them (the faults page of the book describes the format).
//
// One line per event: {"index", "process", "type", "f", "key", "value", "time"}.
//   - type: "invoke" when a client starts an operation; "ok", "fail" or "info" (outcome
//     unknown) when it ends. A client runs one operation at a time, so an ending event
//     belongs to the last invoke of the same process.
//   - f: "acquire", "extend", "release", "write"; a fault is f "start"/"stop" of process
//     "nemesis" with value the fault's label.
//   - time: nanoseconds on the generator's monotonic clock.
//   - value of an acquire or extend "ok": {"token", "fence" (or null), "valid_until"}: the
//     monotonic time at which the holder stops acting on the lock. Of a write:
//     {"token", "fence"}; "ok" means the resource applied it, "fail" that it refused it.
//
// A lease is held from its acquire's "ok" until the earlier of its release's invoke and its
// last valid_until.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
)

// maxLine bounds one line of the file (a history line is a few hundred bytes).
const maxLine = 1 << 20

// Event is one line of a history file.
type Event struct {
	Index   int64           `json:"index"`
	Process json.RawMessage `json:"process"`
	Type    string          `json:"type"`
	F       string          `json:"f"`
	Key     string          `json:"key"`
	Value   json.RawMessage `json:"value"`
	Time    int64           `json:"time"`
}

// leaseValue is the value of an acquire's or an extend's "ok", and of a write.
type leaseValue struct {
	Token      string `json:"token"`
	Fence      *int64 `json:"fence"`
	ValidUntil int64  `json:"valid_until"`
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
	// Line is the index of the event that completed it, for the messages.
	Line int64
}

// History is a file's operations, per key, and its fault windows.
type History struct {
	Ops    []Op
	Faults []Fault
	Events int
}

type pending struct {
	event Event
	value leaseValue
}

type lease struct {
	id         int64
	key        string
	process    int
	fence      int64
	start      int64
	validUntil int64
	releasedAt int64 // math.MaxInt64 until released
}

// ReadHistory reads a history and turns it into operations of the lock model.
func ReadHistory(r io.Reader) (*History, error) {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64*1024), maxLine)
	processes := map[string]int{}
	open := map[int]pending{}
	leases := map[string]*lease{} // by token
	var order []*lease
	h := &History{}
	faultStarts := map[string]int64{}
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
		h.Events++
		switch e.Type {
		case "invoke", "ok", "fail", "info":
		default:
			return nil, fmt.Errorf("line %d: type %q is not invoke, ok, fail or info", line, e.Type)
		}
		if len(e.Process) == 0 {
			return nil, fmt.Errorf("line %d: no process", line)
		}
		if string(e.Process) == `"nemesis"` {
			switch e.F {
			case "start":
				faultStarts[string(e.Value)] = e.Time
			case "stop":
				label := string(e.Value)
				start, ok := faultStarts[label]
				if !ok {
					start = e.Time
				}
				delete(faultStarts, label)
				h.Faults = append(h.Faults, Fault{Label: unquote(label), Start: start, End: e.Time})
			}
			continue
		}
		process, ok := processes[string(e.Process)]
		if !ok {
			process = len(processes)
			processes[string(e.Process)] = process
		}
		var v leaseValue
		if len(e.Value) > 0 && string(e.Value) != "null" {
			if err := json.Unmarshal(e.Value, &v); err != nil {
				return nil, fmt.Errorf("line %d: value of %q: %v", line, e.F, err)
			}
		}
		if e.Type == "invoke" {
			if e.F == "release" {
				if l := leases[v.Token]; l != nil && e.Time < l.releasedAt {
					l.releasedAt = e.Time
				}
			}
			open[process] = pending{event: e, value: v}
			continue
		}
		call, ok := open[process]
		if !ok || call.event.F != e.F {
			return nil, fmt.Errorf("line %d: %s %q of process %s has no invoke", line, e.Type, e.F, e.Process)
		}
		delete(open, process)
		switch {
		case e.F == "acquire" && e.Type == "ok":
			fence := int64(-1)
			if v.Fence != nil {
				fence = *v.Fence
			}
			l := &lease{id: e.Index, key: e.Key, process: process, fence: fence,
				start: e.Time, validUntil: v.ValidUntil, releasedAt: math.MaxInt64}
			leases[v.Token] = l
			order = append(order, l)
			h.Ops = append(h.Ops, Op{Key: e.Key, Process: process, Call: call.event.Time, Return: e.Time,
				Input: Input{Kind: Acquire, Lease: l.id, Fence: fence}, Line: e.Index})
		case e.F == "extend" && e.Type == "ok":
			if l := leases[v.Token]; l != nil && v.ValidUntil > l.validUntil {
				l.validUntil = v.ValidUntil
			}
		case e.F == "write" && (e.Type == "ok" || e.Type == "fail"):
			// The lease a write claims to act for is the one its token names; a token no
			// acquire returned acts for no lease at all.
			id := int64(-1)
			if l := leases[call.value.Token]; l != nil {
				id = l.id
			}
			fence := int64(-1)
			if call.value.Fence != nil {
				fence = *call.value.Fence
			}
			h.Ops = append(h.Ops, Op{Key: e.Key, Process: process, Call: call.event.Time, Return: e.Time,
				Input: Input{Kind: Write, Lease: id, Fence: fence, Accepted: e.Type == "ok"}, Line: e.Index})
		}
		// Failed acquires and extends change nothing; an "info" acquire or write (outcome
		// unknown) is left out: the client does not act on a lock it does not know it holds.
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %v", line+1, err)
	}
	for _, l := range order {
		end := l.validUntil
		if l.releasedAt < end {
			end = l.releasedAt
		}
		if end < l.start {
			end = l.start
		}
		h.Ops = append(h.Ops, Op{Key: l.key, Process: l.process, Call: end, Return: end,
			Input: Input{Kind: End, Lease: l.id, Fence: l.fence}, Line: l.id})
	}
	sort.SliceStable(h.Ops, func(i, j int) bool { return h.Ops[i].Call < h.Ops[j].Call })
	return h, nil
}

func unquote(raw string) string {
	var s string
	if json.Unmarshal([]byte(raw), &s) == nil {
		return s
	}
	return raw
}
