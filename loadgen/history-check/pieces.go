package main

// Splitting a key's history into pieces that Porcupine checks one by one.
//
// Porcupine's search keeps, for every state it reaches, the set of operations linearized so
// far (a bitset of the whole partition), so its memory and time grow with the square of a
// partition's operations: a whole key's history of a 40 s run does not fit in 6 GiB. A piece
// of at most a few hundred operations costs a few kilobytes, so the history costs memory and
// time in proportion to its length.
//
// Why the pieces may be checked apart (soundness):
//
//   - Operations are placed at their call, an acquire at its ok, and a piece ends before an
//     operation placed after every operation of the piece returned. So a write (or any
//     operation but an acquire) pending there forbids the split; an acquire still pending
//     (called before, granted after) goes into the next piece.
//   - That loses no linearization: an acquire can always be linearized at its ok rather than
//     earlier, because between the two points the lease holds the key in the model, so
//     nothing linearized there needs the key free, nor is any of the lease's own operations
//     there (its writes are called after its ok — its process got its token there, and a
//     process's events are in time order, as the reader checks — and its end is at or after
//     its ok). With every acquire at its ok, real time orders each piece's operations before
//     the next piece's, so a linearization of the key is one of each piece in turn; and the
//     pieces' own linearizations, in turn, respect real time (nothing of a later piece
//     returns before its placing, which is after every return of the earlier one).
//   - The state a piece leaves does not depend on the order its operations were linearized
//     in, when the piece is legal: the holder is the one lease acquired (or carried in) and
//     not ended in it, the highest fence is the highest acquired, the highest accepted the
//     highest accepted. So it is folded over the piece's operations and carried into the
//     next piece by a Carry operation placed before all of them. Should two leases be open
//     after a piece, some piece up to it is illegal (the first one where it happens starts
//     from a state that is exact), so whichever lease is carried, the verdict is illegal.

import (
	"sort"

	"github.com/anishathalye/porcupine"
)

// pieceOps is the number of operations after which a piece ends at the next point where it
// may; maxPieceOps the most one piece may hold before the history is refused as too large
// to check (its search would cost about maxPieceOps²/8 bytes per state kept).
const (
	pieceOps    = 256
	maxPieceOps = 20000
)

// Piece is a run of one key's operations checked on its own.
type Piece struct {
	Key   string
	Index int
	ops   []Op
	first bool // the key's first piece: starts from the initial state
	// From, To: the times of its first call and last return; FirstEvent, LastEvent the
	// events that completed its operations, lowest and highest, for the messages.
	From, To    int64
	FirstEvent  int64
	LastEvent   int64
	CarriedFrom State
}

// effective is the time an operation is placed at to split: an acquire at its ok.
func effective(op Op) int64 {
	if op.Input.Kind == Acquire {
		return op.Return
	}
	return op.Call
}

// Pieces splits every key's operations into pieces, keys in order of first appearance.
func Pieces(h *History, target int) []Piece {
	byKey := map[string][]Op{}
	var keys []string
	for _, op := range h.Ops {
		if _, seen := byKey[op.Key]; !seen {
			keys = append(keys, op.Key)
		}
		byKey[op.Key] = append(byKey[op.Key], op)
	}
	var out []Piece
	for _, key := range keys {
		ops := byKey[key]
		delete(byKey, key)
		sort.SliceStable(ops, func(i, j int) bool { return effective(ops[i]) < effective(ops[j]) })
		out = splitKey(out, key, ops, target)
	}
	return out
}

// splitKey appends one key's pieces to out: a piece ends once it holds target operations, at
// the first operation called after every one in it returned.
func splitKey(out []Piece, key string, ops []Op, target int) []Piece {
	state := initial
	start := 0
	reach := int64(0) // the latest return in the current piece
	for i, op := range ops {
		if i > start && i-start >= target && reach < effective(op) {
			out = append(out, newPiece(key, len(out), ops[start:i], state, start == 0))
			state = fold(state, ops[start:i])
			start = i
		}
		if i == start || op.Return > reach {
			reach = op.Return
		}
	}
	return append(out, newPiece(key, len(out), ops[start:], state, start == 0))
}

// newPiece makes a piece of ops (the times and events it spans, for the messages).
func newPiece(key string, index int, ops []Op, from State, first bool) Piece {
	p := Piece{Key: key, Index: index, ops: ops, CarriedFrom: from, first: first, From: ops[0].Call,
		To: ops[0].Return, FirstEvent: ops[0].Event, LastEvent: ops[0].Event}
	for _, op := range ops {
		if op.Call < p.From {
			p.From = op.Call
		}
		if op.Return > p.To {
			p.To = op.Return
		}
		if op.Event < p.FirstEvent {
			p.FirstEvent = op.Event
		}
		if op.Event > p.LastEvent {
			p.LastEvent = op.Event
		}
	}
	return p
}

// Len is the number of operations Porcupine checks in the piece.
func (p *Piece) Len() int {
	if p.first {
		return len(p.ops)
	}
	return len(p.ops) + 1
}

// Operations are the piece's operations for Porcupine, made when it is checked (so only the
// pieces being checked hold them). A piece after the key's first starts with a Carry of the
// state the pieces before it left, called before every operation of the piece.
func (p *Piece) Operations() []porcupine.Operation {
	meta := opMeta{Key: p.Key, Piece: p.Index}
	out := make([]porcupine.Operation, 0, p.Len())
	if !p.first {
		out = append(out, porcupine.Operation{ClientId: -1, Input: Input{Kind: Carry, State: p.CarriedFrom},
			Call: p.From - 1, Return: p.From - 1, Metadata: meta})
	}
	for _, op := range p.ops {
		out = append(out, porcupine.Operation{ClientId: op.Process, Input: op.Input, Call: op.Call,
			Return: op.Return, Metadata: meta})
	}
	return out
}

// fold is the state a legal run of ops leaves from s (see the file's comment).
func fold(s State, ops []Op) State {
	open := map[int64]bool{}
	if s.Holder >= 0 {
		open[s.Holder] = true
	}
	for _, op := range ops {
		in := op.Input
		switch {
		case in.Kind == Acquire:
			open[in.Lease] = true
			if in.Fence > s.MaxFence {
				s.MaxFence = in.Fence
			}
		case in.Kind == Write && in.Accepted && in.Fence > s.MaxAccepted:
			s.MaxAccepted = in.Fence
		}
	}
	for _, op := range ops {
		if op.Input.Kind == End {
			delete(open, op.Input.Lease)
		}
	}
	s.Holder = -1
	for lease := range open {
		if lease > s.Holder {
			s.Holder = lease // the latest; more than one means the verdict is illegal anyway
		}
	}
	return s
}
