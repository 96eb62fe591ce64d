// Command history-check is an independent verdict on a `redlock-loadgen --history` file: it
// checks, with Porcupine (github.com/anishathalye/porcupine), that the history is
// linearizable under a lock model per key (model.go): no two leases of a key overlap,
// fencing tokens grow, and no write was accepted from a lease that had ended.
//
// Usage: history-check [-timeline FILE] [-timeout 60s] HISTORY.jsonl
//
// It prints one JSON object (verdict "ok", "illegal" or "unknown" when the search ran out
// of time) and exits 0 (ok), 1 (illegal), 2 (bad input) or 3 (unknown).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/anishathalye/porcupine"
)

type report struct {
	Verdict    string  `json:"verdict"`
	Events     int     `json:"events"`
	Operations int     `json:"operations"`
	Keys       int     `json:"keys"`
	Faults     int     `json:"faults"`
	Seconds    float64 `json:"seconds"`
	Timeline   string  `json:"timeline,omitempty"`
}

func main() {
	timeline := flag.String("timeline", "", "write Porcupine's HTML timeline here (fault windows annotated)")
	timeout := flag.Duration("timeout", 60*time.Second, "give up (verdict unknown) after this long")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: history-check [-timeline FILE] [-timeout 60s] HISTORY.jsonl")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	path := flag.Arg(0)
	file, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "history-check: %v\n", err)
		os.Exit(2)
	}
	history, err := ReadHistory(file)
	file.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "history-check: %s: %v\n", path, err)
		os.Exit(2)
	}
	started := time.Now()
	ops := Operations(history)
	result, info := porcupine.CheckOperationsVerbose(LockModel, ops, *timeout)
	out := report{
		Events:     history.Events,
		Operations: len(ops),
		Keys:       len(LockModel.Partition(ops)),
		Faults:     len(history.Faults),
		Seconds:    time.Since(started).Seconds(),
	}
	switch result {
	case porcupine.Ok:
		out.Verdict = "ok"
	case porcupine.Illegal:
		out.Verdict = "illegal"
	default:
		out.Verdict = "unknown"
	}
	if *timeline != "" {
		info.AddAnnotations(faultAnnotations(history.Faults))
		if err := porcupine.VisualizePath(LockModel, info, *timeline); err != nil {
			fmt.Fprintf(os.Stderr, "history-check: timeline %s: %v\n", *timeline, err)
			os.Exit(2)
		}
		out.Timeline = *timeline
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(2)
	}
	switch result {
	case porcupine.Ok:
		os.Exit(0)
	case porcupine.Illegal:
		os.Exit(1)
	default:
		os.Exit(3)
	}
}

// faultAnnotations draws each fault window on a row of its own.
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
