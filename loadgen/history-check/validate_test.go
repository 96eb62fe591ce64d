package main

// The plantings of issue #51: a second lease planted inside an existing lease L, disguised
// by editing a field the checker used to trust. Each is flagged: the plain planting as a
// violation (illegal), the disguised ones refused as malformed, because the disguise breaks
// a rule the load generator always keeps (so a verdict on such a file would prove nothing),
// with an error naming the event and the field.

import (
	"errors"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
)

// planted is L (process 0, token "L", fence 1, valid 10..1000, released at 500) with a
// write, and a second lease P (process 9, fence 2) planted inside it.
func planted() *historyBuilder {
	b := &historyBuilder{}
	b.hold(0, "r", "L", 1, 0, 10, 1000, 0)
	b.write(0, "r", "L", 1, 20, 30, true)
	b.hold(9, "r", "P", 2, 100, 110, 200, 150)
	b.release(0, "r", "L", 500)
	return b
}

// edit replaces old with new in the one line holding old.
func (b *historyBuilder) edit(t *testing.T, old, new string) {
	t.Helper()
	found := 0
	for i, l := range b.lines {
		if strings.Contains(l, old) {
			b.lines[i] = strings.Replace(l, old, new, 1)
			found++
		}
	}
	if found != 1 {
		t.Fatalf("%q is on %d lines", old, found)
	}
}

func refused(t *testing.T, b *historyBuilder, want ...string) {
	t.Helper()
	_, err := ReadHistory(strings.NewReader(b.text()), defaultMaxEvents)
	if err == nil {
		t.Fatalf("accepted; want an error naming %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not name %q", err, w)
		}
	}
}

func TestAPlantedLeaseIsIllegal(t *testing.T) {
	if got := judge(t, planted()); got != porcupine.Illegal {
		t.Fatalf("verdict %v, want Illegal", got)
	}
}

// L's acquire ok numbered -1, the model's "free" holder. Lease numbers are now the reader's
// own, but an index that does not follow the one before is refused anyway.
func TestAnIndexOfMinusOneIsRefused(t *testing.T) {
	b := planted()
	b.edit(t, `{"index":1,`, `{"index":-1,`)
	refused(t, b, "event -1 (line 2)", "index -1")
}

func TestAnAcquireWithoutValidUntilIsRefused(t *testing.T) {
	b := planted()
	b.edit(t, `"token":"L","fence":1,"valid_until":1000}`, `"token":"L","fence":1}`)
	refused(t, b, "event 1 (line 2)", "no valid_until")
	b = planted()
	b.edit(t, `"valid_until":1000`, `"valid_until":10`)
	refused(t, b, "event 1 (line 2)", "valid until 10 ns, not after it")
}

// Another process invokes release with L's token, so L would end early.
func TestAReleaseByAnotherProcessIsRefused(t *testing.T) {
	b := planted()
	b.release(7, "r", "L", 90)
	refused(t, b, "process 7 releases with token \"L\", granted to process 0 (event 1)")
}

// A later lease with fence -1 (read as unfenced) would hide fences out of order.
func TestAFenceBelowOneIsRefused(t *testing.T) {
	b := &historyBuilder{}
	b.hold(0, "r", "a", 5, 0, 10, 1000, 100)
	b.hold(1, "r", "b", 3, 150, 160, 1000, 200) // out of order: illegal
	if got := judge(t, b); got != porcupine.Illegal {
		t.Fatalf("fences out of order: verdict %v", got)
	}
	b.edit(t, `"fence":3`, `"fence":-1`)
	refused(t, b, "event 5 (line 6)", "fence -1")
	b = &historyBuilder{}
	b.hold(0, "r", "a", 5, 0, 10, 1000, 100)
	b.hold(1, "r", "b", -1, 150, 160, 1000, 200) // null: unfenced, on a fenced key
	refused(t, b, "event 5 (line 6)", `key "r" mixes fenced and unfenced leases`)
}

func TestAnEmptyHistoryIsRefused(t *testing.T) {
	for _, text := range []string{"", "\n\n", `{"index":0,"process":"nemesis","type":"info","f":"start","key":null,"value":"kill:m0","time":1}`} {
		_, err := ReadHistory(strings.NewReader(text), 10)
		if err == nil || !strings.Contains(err.Error(), "no client operations") {
			t.Fatalf("%q: error %v", text, err)
		}
	}
}

// Further rules a planting could lean on: writes and extends tied to their lease, times in
// order per process, one operation at a time, tokens granted once.
func TestOtherFieldsAreChecked(t *testing.T) {
	cases := []struct {
		name  string
		plant func(*historyBuilder)
		want  string
	}{
		{"write with another's token", func(b *historyBuilder) { b.write(9, "r", "L", 1, 600, 610, true) },
			`process 9 writes with token "L", granted to process 0`},
		{"write claiming another fence", func(b *historyBuilder) { b.write(0, "r", "L", 4, 600, 610, true) },
			`claims fence 4, its acquire (event 1) returned 1`},
		{"released twice", func(b *historyBuilder) { b.release(0, "r", "L", 700) }, "released a second time"},
		{"time going back", func(b *historyBuilder) { b.add("0", "invoke", "acquire", "r", "", 400) },
			"time 400 ns is before process 0's previous event (505 ns)"},
		{"token granted twice", func(b *historyBuilder) { b.hold(3, "r", "P", 7, 800, 810, 900, 0) },
			`token "P" was already granted to process 9 (event 5)`},
		{"release on another key", func(b *historyBuilder) { b.release(0, "s", "L", 900) },
			`release on key "s" with token "L", granted on key "r"`},
		{"two operations at once", func(b *historyBuilder) {
			b.add("5", "invoke", "acquire", "r", "", 900)
			b.add("5", "invoke", "acquire", "r", "", 901)
		}, "process 5 invokes acquire while its acquire of event"},
		{"unknown process", func(b *historyBuilder) { b.add(`"x"`, "invoke", "acquire", "r", "", 900) },
			`process "x" is neither`},
	}
	for _, c := range cases {
		b := planted()
		c.plant(b)
		_, err := ReadHistory(strings.NewReader(b.text()), defaultMaxEvents)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

func TestMoreEventsThanTheBoundAreRefusedAsTooLarge(t *testing.T) {
	_, err := ReadHistory(strings.NewReader(planted().text()), 5)
	var tooLarge *TooLargeError
	if !errors.As(err, &tooLarge) {
		t.Fatalf("error %v, want TooLargeError", err)
	}
}

// setnx-getset's token is a timestamp in ms (named by its process): a process may be granted
// the same one again, which then stands for its latest lease.
func TestAProcessMayBeGrantedItsTokenAgain(t *testing.T) {
	b := &historyBuilder{}
	b.hold(0, "r", "p0-1700", -1, 0, 10, 1000, 100)
	b.hold(0, "r", "p0-1700", -1, 200, 210, 1000, 300)
	b.hold(1, "r", "p1-1700", -1, 400, 410, 1000, 500)
	if got := judge(t, b); got != porcupine.Ok {
		t.Fatalf("verdict %v, want Ok", got)
	}
}
