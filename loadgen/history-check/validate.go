package main

// The reader behind ReadHistory: one event at a time, every field the model reads checked
// before it is used. A history that breaks a rule is refused as malformed (exit 2) rather
// than judged: the rules are what the load generator always writes, so a break means the
// file was edited or the writer is broken, and a verdict on it would prove nothing.

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// lease is one granted acquire, found again by its token.
type lease struct {
	id         int64 // the model's lease number: assigned here, never read from the file
	key        string
	process    int
	fence      int64 // -1: unfenced
	start      int64 // the acquire's ok
	validUntil int64
	releasedAt int64 // math.MaxInt64 until its release is invoked
	event      int64 // the acquire's ok event
}

// call is an invoke waiting for its completion.
type call struct {
	e     *Event
	value leaseValue
	lease *lease // the lease its token names (extend, release, write)
}

type process struct {
	open     *call
	lastTime int64
}

// fencing is whether a key's leases carry fences: all do, or none.
type fencing int

const (
	fenceUnknown fencing = iota
	fenced
	unfenced
)

type reader struct {
	h           *History
	processes   map[int]*process
	leases      map[string]*lease // by token
	order       []*lease
	keyFencing  map[string]fencing
	faultStarts map[string]int64
	lastIndex   int64
	clientOps   int
	keys        map[string]string // one copy of each key for every operation of it
}

func newReader() *reader {
	return &reader{h: &History{}, processes: map[int]*process{}, leases: map[string]*lease{},
		keyFencing: map[string]fencing{}, faultStarts: map[string]int64{}, lastIndex: -1,
		keys: map[string]string{}}
}

// where names an event in a message: its index and line.
func where(line int, e *Event) string {
	if e.Index == nil {
		return fmt.Sprintf("line %d", line)
	}
	return fmt.Sprintf("event %d (line %d)", *e.Index, line)
}

// event checks the fields every event has, then reads it by its kind.
func (r *reader) event(line int, e *Event) error {
	at := where(line, e)
	switch {
	case e.Index == nil:
		return fmt.Errorf("%s: no index", at)
	case *e.Index < 0 || *e.Index <= r.lastIndex:
		return fmt.Errorf("%s: index %d does not follow %d (indexes grow from 0)", at, *e.Index, r.lastIndex)
	case e.Time == nil:
		return fmt.Errorf("%s: no time", at)
	case *e.Time < 0:
		return fmt.Errorf("%s: time %d is negative", at, *e.Time)
	case len(e.Process) == 0:
		return fmt.Errorf("%s: no process", at)
	}
	r.lastIndex = *e.Index
	r.h.Events++
	switch e.Type {
	case "invoke", "ok", "fail", "info":
	default:
		return fmt.Errorf("%s: type %q is not invoke, ok, fail or info", at, e.Type)
	}
	if string(e.Process) == `"nemesis"` {
		return r.nemesis(at, e)
	}
	var p int
	if err := json.Unmarshal(e.Process, &p); err != nil || p < 0 {
		return fmt.Errorf("%s: process %s is neither a client number (≥ 0) nor \"nemesis\"", at, e.Process)
	}
	switch e.F {
	case "acquire", "extend", "release", "write":
	default:
		return fmt.Errorf("%s: f %q of process %d is not acquire, extend, release or write", at, e.F, p)
	}
	if e.Key == nil {
		return fmt.Errorf("%s: %s of process %d has no key", at, e.F, p)
	}
	if key, ok := r.keys[*e.Key]; ok {
		e.Key = &key
	} else {
		r.keys[*e.Key] = *e.Key
	}
	var v leaseValue
	if len(e.Value) > 0 && string(e.Value) != "null" {
		if err := json.Unmarshal(e.Value, &v); err != nil {
			return fmt.Errorf("%s: value of %q: %v", at, e.F, err)
		}
	}
	r.clientOps++
	return r.client(at, p, e, v)
}

func (r *reader) nemesis(at string, e *Event) error {
	var label string
	if err := json.Unmarshal(e.Value, &label); err != nil {
		return fmt.Errorf("%s: a fault's value must be its label (a string), not %s", at, e.Value)
	}
	switch e.F {
	case "start":
		if _, open := r.faultStarts[label]; open {
			return fmt.Errorf("%s: fault %q starts again before it stopped", at, label)
		}
		r.faultStarts[label] = *e.Time
	case "stop":
		start, ok := r.faultStarts[label]
		if !ok {
			return fmt.Errorf("%s: fault %q stops without a start", at, label)
		}
		if *e.Time < start {
			return fmt.Errorf("%s: fault %q stops at %d ns, before its start at %d ns", at, label, *e.Time, start)
		}
		delete(r.faultStarts, label)
		r.h.Faults = append(r.h.Faults, Fault{Label: label, Start: start, End: *e.Time})
	default:
		return fmt.Errorf("%s: f %q of the nemesis is not start or stop", at, e.F)
	}
	return nil
}

// client reads an invoke or a completion of process p, whose events must be in time order.
func (r *reader) client(at string, p int, e *Event, v leaseValue) error {
	proc := r.processes[p]
	if proc == nil {
		proc = &process{lastTime: math.MinInt64}
		r.processes[p] = proc
	}
	if *e.Time < proc.lastTime {
		return fmt.Errorf("%s: time %d ns is before process %d's previous event (%d ns)", at, *e.Time, p, proc.lastTime)
	}
	proc.lastTime = *e.Time
	if e.Type == "invoke" {
		if proc.open != nil {
			return fmt.Errorf("%s: process %d invokes %s while its %s of event %d is not complete", at, p, e.F,
				proc.open.e.F, *proc.open.e.Index)
		}
		c := &call{e: e, value: v}
		if err := r.invoke(at, p, c); err != nil {
			return err
		}
		proc.open = c
		return nil
	}
	c := proc.open
	if c == nil || c.e.F != e.F {
		return fmt.Errorf("%s: %s %q of process %d has no invoke", at, e.Type, e.F, p)
	}
	if *c.e.Key != *e.Key {
		return fmt.Errorf("%s: %s of key %q ends an invoke of key %q", at, e.F, *e.Key, *c.e.Key)
	}
	proc.open = nil
	switch e.F {
	case "acquire":
		return r.acquired(at, p, c, e, v)
	case "extend":
		return r.extended(at, p, c, e, v)
	case "write":
		r.wrote(p, c, e)
	}
	return nil
}

// held is the lease a token names, which must be process p's on this key.
func (r *reader) held(at string, p int, e *Event, v leaseValue) (*lease, error) {
	if v.Token == nil {
		return nil, fmt.Errorf("%s: %s of process %d has no token", at, e.F, p)
	}
	l := r.leases[*v.Token]
	switch {
	case l == nil:
		return nil, fmt.Errorf("%s: %s of process %d names token %q, which no acquire returned", at, e.F, p, *v.Token)
	case l.process != p:
		return nil, fmt.Errorf("%s: process %d %ss with token %q, granted to process %d (event %d)", at, p, e.F,
			*v.Token, l.process, l.event)
	case l.key != *e.Key:
		return nil, fmt.Errorf("%s: %s on key %q with token %q, granted on key %q", at, e.F, *e.Key, *v.Token, l.key)
	}
	return l, nil
}

// invoke checks the lease an extend, release or write claims to act for.
func (r *reader) invoke(at string, p int, c *call) error {
	e, v := c.e, c.value
	switch e.F {
	case "acquire":
		return nil
	case "extend":
		if v.Token == nil {
			return nil // the completion names the lease
		}
	}
	l, err := r.held(at, p, e, v)
	if err != nil {
		return err
	}
	c.lease = l
	switch e.F {
	case "release":
		if l.releasedAt != math.MaxInt64 {
			return fmt.Errorf("%s: token %q is released a second time", at, *v.Token)
		}
		l.releasedAt = *e.Time
	case "write":
		if fenceOf(v.Fence) != l.fence {
			return fmt.Errorf("%s: write with token %q claims fence %s, its acquire (event %d) returned %s", at,
				*v.Token, showFence(fenceOf(v.Fence)), l.event, showFence(l.fence))
		}
	}
	return nil
}

func (r *reader) acquired(at string, p int, c *call, e *Event, v leaseValue) error {
	if e.Type != "ok" {
		return nil // not won (fail) or unknown (info): the client does not act on it
	}
	switch {
	case v.Token == nil || *v.Token == "":
		return fmt.Errorf("%s: acquire ok has no token", at)
	case r.leases[*v.Token] != nil && r.leases[*v.Token].process != p:
		// The same process may be granted a token again (setnx-getset's is a timestamp in ms,
		// named by its process): from then on the token stands for its latest lease.
		return fmt.Errorf("%s: token %q was already granted to process %d (event %d)", at, *v.Token,
			r.leases[*v.Token].process, r.leases[*v.Token].event)
	case v.ValidUntil == nil:
		return fmt.Errorf("%s: acquire ok has no valid_until (where the lease ends)", at)
	case *v.ValidUntil <= *e.Time:
		return fmt.Errorf("%s: acquire ok at %d ns is valid until %d ns, not after it", at, *e.Time, *v.ValidUntil)
	}
	fence, err := r.fence(at, *e.Key, v.Fence)
	if err != nil {
		return err
	}
	l := &lease{id: int64(len(r.order)), key: *e.Key, process: p, fence: fence, start: *e.Time,
		validUntil: *v.ValidUntil, releasedAt: math.MaxInt64, event: *e.Index}
	r.leases[*v.Token] = l
	r.order = append(r.order, l)
	r.h.Ops = append(r.h.Ops, Op{Key: l.key, Process: p, Call: *c.e.Time, Return: *e.Time,
		Input: Input{Kind: Acquire, Lease: l.id, Fence: fence}, Event: *e.Index})
	return nil
}

// fence checks a granted fence: null or ≥ 1, and a key's leases all fenced or none.
func (r *reader) fence(at, key string, f *int64) (int64, error) {
	mode := unfenced
	if f != nil {
		if *f < 1 {
			return 0, fmt.Errorf("%s: fence %d: fencing tokens start at 1", at, *f)
		}
		mode = fenced
	}
	switch r.keyFencing[key] {
	case fenceUnknown:
		r.keyFencing[key] = mode
	case mode:
	default:
		return 0, fmt.Errorf("%s: key %q mixes fenced and unfenced leases (this one's fence: %s)", at, key,
			showFence(fenceOf(f)))
	}
	return fenceOf(f), nil
}

func (r *reader) extended(at string, p int, c *call, e *Event, v leaseValue) error {
	if e.Type != "ok" {
		return nil // an extend that failed (or may have) changes nothing the holder acts on
	}
	l, err := r.held(at, p, e, v)
	if err != nil {
		return err
	}
	if c.lease != nil && c.lease != l {
		return fmt.Errorf("%s: extend ok names token %q, its invoke another lease", at, *v.Token)
	}
	if v.ValidUntil == nil {
		return fmt.Errorf("%s: extend ok has no valid_until", at)
	}
	if *v.ValidUntil > l.validUntil {
		l.validUntil = *v.ValidUntil
	}
	return nil
}

// wrote records a write the resource applied (ok) or refused (fail); one of unknown outcome
// (info) is left out, as the client does not know what it did.
func (r *reader) wrote(p int, c *call, e *Event) {
	if e.Type == "info" {
		return
	}
	r.h.Ops = append(r.h.Ops, Op{Key: *e.Key, Process: p, Call: *c.e.Time, Return: *e.Time,
		Input: Input{Kind: Write, Lease: c.lease.id, Fence: c.lease.fence, Accepted: e.Type == "ok"},
		Event: *e.Index})
}

// finish adds every lease's end, a point: the earlier of its release's invoke and its last
// valid_until (both after its start, as checked).
func (r *reader) finish() (*History, error) {
	if r.clientOps == 0 {
		return nil, fmt.Errorf("no client operations: an empty history proves nothing")
	}
	for _, p := range r.processes {
		if p.open != nil {
			r.h.Unfinished++
		}
	}
	labels := make([]string, 0, len(r.faultStarts))
	for label := range r.faultStarts {
		labels = append(labels, label)
	}
	sort.Strings(labels)
	for _, label := range labels {
		// Still open when the run ended: drawn at its start, as nothing says how long it lasted.
		start := r.faultStarts[label]
		r.h.Faults = append(r.h.Faults, Fault{Label: label + " (no stop)", Start: start, End: start})
	}
	for _, l := range r.order {
		end := l.validUntil
		if l.releasedAt < end {
			end = l.releasedAt
		}
		r.h.Ops = append(r.h.Ops, Op{Key: l.key, Process: l.process, Call: end, Return: end,
			Input: Input{Kind: End, Lease: l.id, Fence: l.fence}, Event: l.event})
	}
	return r.h, nil
}

func fenceOf(f *int64) int64 {
	if f == nil {
		return -1
	}
	return *f
}

func showFence(f int64) string {
	if f < 0 {
		return "null"
	}
	return fmt.Sprint(f)
}
