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

	"github.com/anishathalye/porcupine"
)

// Kind is an operation of the lock model.
type Kind int

const (
	Acquire Kind = iota
	End
	Write
)

// Input is an operation's input (its output folded in).
type Input struct {
	Kind     Kind
	Lease    int64
	Fence    int64 // -1: unfenced
	Accepted bool
}

// State is a key's state: comparable, so the default equality works.
type State struct {
	Holder      int64 // -1: free
	MaxFence    int64
	MaxAccepted int64
}

func step(s State, in Input) (bool, State) {
	switch in.Kind {
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

// LockModel is the Porcupine model of one history, partitioned by key.
var LockModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			key := op.Metadata.(string)
			if _, seen := byKey[key]; !seen {
				keys = append(keys, key)
			}
			byKey[key] = append(byKey[key], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() interface{} { return State{Holder: -1, MaxFence: -1, MaxAccepted: -1} },
	Step: func(state, input, _ interface{}) (bool, interface{}) {
		return step(state.(State), input.(Input))
	},
	DescribeOperation: func(input, _ interface{}) string {
		in := input.(Input)
		fence := ""
		if in.Fence >= 0 {
			fence = fmt.Sprintf(" fence %d", in.Fence)
		}
		switch in.Kind {
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
	},
	DescribeState: func(state interface{}) string {
		s := state.(State)
		holder := "free"
		if s.Holder >= 0 {
			holder = fmt.Sprintf("held by lease %d", s.Holder)
		}
		if s.MaxFence >= 0 {
			return fmt.Sprintf("%s; highest fence %d, highest accepted %d", holder, s.MaxFence, s.MaxAccepted)
		}
		return holder
	},
	DescribeOperationMetadata: func(info interface{}) string { return fmt.Sprintf("key %v", info) },
}

// Operations turns a history's operations into Porcupine's, keyed by their key.
func Operations(h *History) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, len(h.Ops))
	for _, op := range h.Ops {
		ops = append(ops, porcupine.Operation{
			ClientId: op.Process,
			Input:    op.Input,
			Call:     op.Call,
			Output:   nil,
			Return:   op.Return,
			Metadata: op.Key,
		})
	}
	return ops
}
