package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain runs the command itself when asked to (the exit statuses are tested on it).
func TestMain(m *testing.M) {
	if os.Getenv("HISTORY_CHECK_RUN_MAIN") != "" {
		os.Args = append([]string{"history-check"}, strings.Fields(os.Getenv("HISTORY_CHECK_ARGS"))...)
		main()
		return
	}
	os.Exit(m.Run())
}

// run runs the command on a history; its exit status, stdout and stderr.
func run(t *testing.T, history string, flags ...string) (int, string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.jsonl")
	if err := os.WriteFile(path, []byte(history), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "HISTORY_CHECK_RUN_MAIN=1",
		"HISTORY_CHECK_ARGS="+strings.Join(append(flags, path), " "))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// A write left pending for the whole history (never forbids a split otherwise): every lease
// taken meanwhile falls in one piece.
func unsplittable(leases int) *historyBuilder {
	b := &historyBuilder{}
	b.hold(0, "r", "w", -1, 0, 5, 10, 0)
	b.add("0", "invoke", "write", "r", `{"token":"w","fence":null}`, 6)
	for k := 0; k < leases; k++ {
		at := int64(100 + 100*k)
		b.hold(1, "r", fmt.Sprintf("t%d", k), -1, at, at+10, at+50, at+20)
	}
	b.add("0", "fail", "write", "r", `{"token":"w","fence":null}`, int64(200+100*leases))
	return b
}

func TestExitStatuses(t *testing.T) {
	legal := &historyBuilder{}
	legal.hold(0, "r", "a", 1, 0, 10, 1000, 100)
	cases := []struct {
		name    string
		history string
		flags   []string
		status  int
		says    string
	}{
		{"ok", legal.text(), nil, exitOk, `"verdict":"ok"`},
		{"illegal", planted().text(), nil, exitIllegal, `"first_event":`},
		{"malformed", `{"index":0}`, nil, exitBadInput, "event 0 (line 1): no time"},
		{"empty", "", nil, exitBadInput, "no client operations"},
		{"out of time", legal.text(), []string{"-timeout", "1ns"}, exitUnknown, `"verdict":"unknown"`},
		{"too many events", planted().text(), []string{"-max-events", "4"}, exitTooLarge, "10 events or more, over -max-events 4"},
		{"a piece too large", unsplittable(maxPieceOps / 2).text(), nil, exitTooLarge,
			fmt.Sprintf("a piece of %d operations (at most %d)", maxPieceOps+3, maxPieceOps)},
	}
	for _, c := range cases {
		status, stdout, stderr := run(t, c.history, c.flags...)
		if status != c.status || !strings.Contains(stdout+stderr, c.says) {
			t.Errorf("%s: exit %d, want %d saying %q\nstdout: %s\nstderr: %s", c.name, status, c.status, c.says,
				stdout, stderr)
		}
	}
}
