package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// historyBuilder writes history lines as redlock-loadgen does.
type historyBuilder struct {
	lines []string
	index int
}

func (b *historyBuilder) add(process, typ, f, key, value string, t int64) {
	if value == "" {
		value = "null"
	}
	b.lines = append(b.lines, fmt.Sprintf(`{"index":%d,"process":%s,"type":%q,"f":%q,"key":%q,"value":%s,"time":%d}`,
		b.index, process, typ, f, key, value, t))
	b.index++
}

// hold adds one lease of key by process p: acquire [inv, ok] valid until `until`,
// released at `release` (0: never).
func (b *historyBuilder) hold(p int, key, token string, fence int64, inv, ok, until, release int64) {
	proc := fmt.Sprint(p)
	b.add(proc, "invoke", "acquire", key, "", inv)
	fenceJSON := "null"
	if fence >= 0 {
		fenceJSON = fmt.Sprint(fence)
	}
	b.add(proc, "ok", "acquire", key, fmt.Sprintf(`{"token":%q,"fence":%s,"valid_until":%d}`, token, fenceJSON, until), ok)
	if release > 0 {
		b.release(p, key, token, release)
	}
}

func (b *historyBuilder) release(p int, key, token string, at int64) {
	proc := fmt.Sprint(p)
	b.add(proc, "invoke", "release", key, fmt.Sprintf(`{"token":%q}`, token), at)
	b.add(proc, "ok", "release", key, fmt.Sprintf(`{"token":%q}`, token), at+5)
}

func (b *historyBuilder) write(p int, key, token string, fence int64, inv, end int64, accepted bool) {
	proc := fmt.Sprint(p)
	v := fmt.Sprintf(`{"token":%q,"fence":%d}`, token, fence)
	b.add(proc, "invoke", "write", key, v, inv)
	typ := "fail"
	if accepted {
		typ = "ok"
	}
	b.add(proc, typ, "write", key, v, end)
}

func (b *historyBuilder) text() string { return strings.Join(b.lines, "\n") + "\n" }

func (b *historyBuilder) read(t *testing.T) *History {
	t.Helper()
	h, err := ReadHistory(strings.NewReader(b.text()), defaultMaxEvents)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return h
}

// verdict checks a history in pieces of `target` operations.
func verdict(t *testing.T, b *historyBuilder, target int) porcupine.CheckResult {
	t.Helper()
	return CheckPieces(Pieces(b.read(t), target), time.Minute, 2).Result
}

// judge checks a history whole and in pieces of one operation (split wherever it may): the
// two verdicts must agree.
func judge(t *testing.T, b *historyBuilder) porcupine.CheckResult {
	t.Helper()
	whole := verdict(t, b, 1<<30)
	if split := verdict(t, b, 1); split != whole {
		t.Fatalf("whole: %v, in pieces: %v", whole, split)
	}
	return whole
}

func TestTakingTurnsIsLegal(t *testing.T) {
	b := &historyBuilder{}
	b.hold(0, "r", "a", -1, 0, 10, 1000, 100)
	b.hold(1, "r", "b", -1, 50, 120, 1000, 200) // waited for a's release
	b.hold(2, "s", "c", -1, 60, 70, 1000, 0)    // another key: independent
	if got := judge(t, b); got != porcupine.Ok {
		t.Fatalf("verdict %v, want Ok", got)
	}
}

func TestTwoHoldersAtOnceAreFlagged(t *testing.T) {
	b := &historyBuilder{}
	b.hold(0, "r", "a", -1, 0, 10, 1000, 100)
	b.hold(1, "r", "b", -1, 20, 30, 1000, 200) // acquired while a held it
	if got := judge(t, b); got != porcupine.Illegal {
		t.Fatalf("verdict %v, want Illegal", got)
	}
}

func TestALeaseEndsAtItsValidityEvenIfReleasedLater(t *testing.T) {
	b := &historyBuilder{}
	b.hold(0, "r", "a", -1, 0, 10, 100, 500) // valid until 100, released at 500
	b.hold(1, "r", "b", -1, 150, 160, 1000, 600)
	if got := judge(t, b); got != porcupine.Ok {
		t.Fatalf("verdict %v, want Ok", got)
	}
}

func TestFencesMustGrow(t *testing.T) {
	b := &historyBuilder{}
	b.hold(0, "r", "a", 7, 0, 10, 1000, 100)
	b.hold(1, "r", "b", 7, 150, 160, 1000, 200) // the same fence again
	if got := judge(t, b); got != porcupine.Illegal {
		t.Fatalf("verdict %v, want Illegal", got)
	}
}

func TestAStaleWriteRefusedIsLegalAndAcceptedIsFlagged(t *testing.T) {
	for _, accepted := range []bool{false, true} {
		b := &historyBuilder{}
		b.hold(0, "r", "a", 1, 0, 10, 100, 0)     // paused past its validity, never released
		b.hold(1, "r", "b", 2, 150, 160, 1000, 0) // the next holder
		b.write(1, "r", "b", 2, 170, 180, true)
		b.write(0, "r", "a", 1, 300, 310, accepted) // the paused holder wakes and writes
		b.release(1, "r", "b", 400)
		want := porcupine.Ok
		if accepted {
			want = porcupine.Illegal
		}
		if got := judge(t, b); got != want {
			t.Fatalf("stale write accepted=%v: verdict %v, want %v", accepted, got, want)
		}
	}
}

func TestFaultsBecomeTimelineAnnotations(t *testing.T) {
	b := &historyBuilder{}
	b.add(`"nemesis"`, "info", "start", "", `"clock:m2:+120s"`, 5)
	b.hold(0, "r", "a", -1, 0, 10, 1000, 100)
	b.hold(1, "r", "b", -1, 20, 30, 1000, 200)
	b.add(`"nemesis"`, "info", "stop", "", `"clock:m2:+120s"`, 250)
	h := b.read(t)
	if len(h.Faults) != 1 || h.Faults[0].Label != "clock:m2:+120s" || h.Faults[0].End != 250 {
		t.Fatalf("faults %+v", h.Faults)
	}
	pieces := Pieces(h, pieceOps)
	outcome := CheckPieces(pieces, time.Minute, 1)
	if outcome.Result != porcupine.Illegal {
		t.Fatalf("verdict %v", outcome.Result)
	}
	path := filepath.Join(t.TempDir(), "timeline.html")
	if err := DrawTimeline(path, pieces, timelinePieces(pieces, outcome.Illegal), h.Faults, time.Minute); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(path)
	if !strings.Contains(string(page), "clock:m2:+120s") {
		t.Fatal("the timeline does not show the fault")
	}
}

func TestABadLineNamesItsNumber(t *testing.T) {
	_, err := ReadHistory(strings.NewReader(`{"index":0,"process":0,"type":"invoke","f":"acquire","key":"r","time":1}`+"\nnot json\n"), 10)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("error %v", err)
	}
	_, err = ReadHistory(strings.NewReader(`{"index":0,"process":1,"type":"ok","f":"acquire","key":"r","time":1}`), 10)
	if err == nil || !strings.Contains(err.Error(), "no invoke") {
		t.Fatalf("error %v", err)
	}
	_, err = ReadHistory(strings.NewReader(`{"index":0,"process":1,"type":"done","f":"acquire","key":"r","time":1}`), 10)
	if err == nil || !strings.Contains(err.Error(), `type "done"`) {
		t.Fatalf("error %v", err)
	}
}
