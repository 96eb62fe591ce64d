package main

// Checking the pieces (pieces.go): each its own Porcupine search, a few at a time, so memory
// is bounded by the few largest pieces rather than by the history; and the timeline, drawn
// by Porcupine from the pieces worth reading.

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
)

// timelineOps bounds the operations a timeline draws (a browser draws every one of them).
const timelineOps = 20000

// Outcome is the verdict on a history's pieces.
type Outcome struct {
	Result porcupine.CheckResult
	// Illegal: the pieces found illegal (the search stops at the first, so usually one).
	Illegal []int
	// Checked: the pieces whose search finished.
	Checked int
}

// CheckPieces checks every piece with at most workers searches at once, stopping at the first
// illegal piece or at the deadline (Unknown).
func CheckPieces(pieces []Piece, timeout time.Duration, workers int) Outcome {
	deadline := time.Now().Add(timeout)
	results := make([]porcupine.CheckResult, len(pieces))
	var stop atomic.Bool
	next := int64(-1)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				i := int(atomic.AddInt64(&next, 1))
				if i >= len(pieces) {
					return
				}
				left := time.Until(deadline)
				if left <= 0 {
					stop.Store(true)
					return
				}
				results[i] = porcupine.CheckOperationsTimeout(LockModel, pieces[i].Operations(), left)
				if results[i] != porcupine.Ok {
					stop.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	out := Outcome{Result: porcupine.Ok}
	for i, r := range results {
		switch r {
		case porcupine.Ok:
			out.Checked++
		case porcupine.Illegal:
			out.Checked++
			out.Illegal = append(out.Illegal, i)
		default:
			out.Result = porcupine.Unknown // not checked: timed out, or stopped early
		}
	}
	if len(out.Illegal) > 0 {
		out.Result = porcupine.Illegal
	}
	return out
}

// timelinePieces picks the pieces a timeline draws: the illegal ones first, then the others in
// order, up to timelineOps operations (always at least one piece); sorted by index.
func timelinePieces(pieces []Piece, illegal []int) []int {
	chosen := map[int]bool{}
	var out []int
	ops := 0
	add := func(i int) {
		if chosen[i] || (len(out) > 0 && ops+pieces[i].Len() > timelineOps) {
			return
		}
		chosen[i] = true
		out = append(out, i)
		ops += pieces[i].Len()
	}
	for _, i := range illegal {
		add(i)
	}
	for i := range pieces {
		add(i)
	}
	sort.Ints(out)
	return out
}

// DrawTimeline writes Porcupine's timeline of the chosen pieces, one partition each, with the
// fault windows on a row of their own.
func DrawTimeline(path string, pieces []Piece, chosen []int, faults []Fault, timeout time.Duration) error {
	var ops []porcupine.Operation
	for _, i := range chosen {
		ops = append(ops, pieces[i].Operations()...)
	}
	model := LockModel
	model.Partition = byPiece
	_, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	info.AddAnnotations(faultAnnotations(faults))
	return porcupine.VisualizePath(model, info, path)
}

// faultAnnotations draws each fault window on a row of its own. Porcupine sets an
// annotation's description and details as text, not HTML, so the label is shown as written.
func faultAnnotations(faults []Fault) []porcupine.Annotation {
	out := make([]porcupine.Annotation, 0, len(faults))
	for _, f := range faults {
		out = append(out, porcupine.Annotation{
			Tag:             "faults",
			Start:           f.Start,
			End:             f.End,
			Description:     f.Label,
			Details:         fmt.Sprintf("fault %s from %d ns to %d ns", f.Label, f.Start, f.End),
			BackgroundColor: "#f8d7a0",
		})
	}
	return out
}
