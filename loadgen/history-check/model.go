package main

// The lock model, per key: a mutex whose holder is a lease, and a fenced register.
//
// Operations (inputs; the outputs are in the inputs, as a history records them):
//   - Acquire(lease, fence): legal when no lease holds the key, and, for a fenced lock, when
//     the fence is above every fence issued before (token order);
//   - End(lease): the lease stops holding (its release began, or its validity ran out);
//   - Write(lease, fence, accepted): a write the resource accepted is legal only from the
//     lease that holds the key, and, when fenced, with a fence no lower than every accepted
//     one before; a refused write is always legal (refusing is safe).
//
// A history is linearizable under this model exactly when no two leases of a key overlap,
// fences grow with every acquisition, and no write was accepted from a lease that no longer
// held the key (a stale write).

import (
	"fmt"
	"html"

	"github.com/anishathalye/porcupine"
)

// Kind is an operation of the lock model.
type Kind int

const (
	Acquire Kind = iota
	End
	Write
	// Carry starts a piece of a key's history (pieces.go) in the state the pieces before it
	// left: legal only first, from the initial state.
	Carry
)

// Input is an operation's input (its output folded in).
type Input struct {
	Kind     Kind
	Lease    int64
	Fence    int64 // -1: unfenced
	Accepted bool
	State    State // Carry's
}

// State is a key's state: comparable, so the default equality works.
type State struct {
	Holder      int64 // -1: free
	MaxFence    int64
	MaxAccepted int64
}

// initial is the state of a key no lease has touched.
var initial = State{Holder: -1, MaxFence: -1, MaxAccepted: -1}

func step(s State, in Input) (bool, State) {
	switch in.Kind {
	case Carry:
		return s == initial, in.State
	case Acquire:
		if s.Holder != -1 {
			return false, s
		}
		if in.Fence >= 0 {
			if in.Fence <= s.MaxFence {
				return false, s
			}
			s.MaxFence = in.Fence
		}
		s.Holder = in.Lease
		return true, s
	case End:
		if s.Holder != in.Lease {
			// A lease that never held (its acquire was illegal) ends without effect.
			return true, s
		}
		s.Holder = -1
		return true, s
	case Write:
		if !in.Accepted {
			return true, s
		}
		if s.Holder != in.Lease || in.Lease < 0 {
			return false, s
		}
		if in.Fence >= 0 {
			if in.Fence < s.MaxAccepted {
				return false, s
			}
			s.MaxAccepted = in.Fence
		}
		return true, s
	}
	return false, s
}

// opMeta is an operation's metadata: its key and the piece it is checked in.
type opMeta struct {
	Key   string
	Piece int
}

// LockModel is the Porcupine model of one piece of one key's history (pieces.go splits
// a history into pieces; the timeline draws several, partitioned by piece).
//
// Porcupine's timeline writes DescribeOperationMetadata's and DescribeState's strings into
// the page as HTML (a tooltip's innerHTML), so they are escaped; operation descriptions and
// annotations are set as text (textContent) and hold no file strings but fault labels.
var LockModel = porcupine.Model{
	Init: func() interface{} { return initial },
	Step: func(state, input, _ interface{}) (bool, interface{}) {
		return step(state.(State), input.(Input))
	},
	DescribeOperation: func(input, _ interface{}) string { return describe(input.(Input)) },
	DescribeState: func(state interface{}) string {
		return html.EscapeString(describeState(state.(State)))
	},
	DescribeOperationMetadata: func(info interface{}) string {
		m := info.(opMeta)
		return html.EscapeString(fmt.Sprintf("key %q, piece %d", m.Key, m.Piece))
	},
}

// byPiece partitions operations by the piece their metadata names, for the timeline.
func byPiece(history []porcupine.Operation) [][]porcupine.Operation {
	index := map[int]int{}
	var out [][]porcupine.Operation
	for _, op := range history {
		p := op.Metadata.(opMeta).Piece
		i, seen := index[p]
		if !seen {
			i = len(out)
			index[p] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], op)
	}
	return out
}

func describe(in Input) string {
	fence := ""
	if in.Fence >= 0 {
		fence = fmt.Sprintf(" fence %d", in.Fence)
	}
	switch in.Kind {
	case Carry:
		return "from before: " + describeState(in.State)
	case Acquire:
		return fmt.Sprintf("acquire → lease %d%s", in.Lease, fence)
	case End:
		return fmt.Sprintf("lease %d ends", in.Lease)
	default:
		verdict := "refused"
		if in.Accepted {
			verdict = "accepted"
		}
		return fmt.Sprintf("write by lease %d%s: %s", in.Lease, fence, verdict)
	}
}

func describeState(s State) string {
	holder := "free"
	if s.Holder >= 0 {
		holder = fmt.Sprintf("held by lease %d", s.Holder)
	}
	if s.MaxFence >= 0 {
		return fmt.Sprintf("%s; highest fence %d, highest accepted %d", holder, s.MaxFence, s.MaxAccepted)
	}
	return holder
}
