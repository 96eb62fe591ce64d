package main

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

type timedLine struct {
	process int
	typ, f  string
	value   string
	time    int64
}

// randomHistory is a key's history of n leases, starting close enough to overlap at times,
// with writes (some after the lease ended) and fences (some out of order): a lease goes to a
// process idle since before its invoke, so every process's events are in time order.
func randomHistory(rng *rand.Rand, n int, fenced bool) *historyBuilder {
	var events []timedLine
	busy := []int64{}
	start := int64(200)
	fence := int64(0)
	for k := 0; k < n; k++ {
		start += int64(rng.Intn(220) - 10)
		invoke := start - int64(rng.Intn(120))
		if invoke < 0 {
			invoke = 0
		}
		p := 0
		for p < len(busy) && busy[p] >= invoke {
			p++
		}
		if p == len(busy) {
			busy = append(busy, 0)
		}
		token := fmt.Sprintf("t%d", k)
		if rng.Intn(20) > 0 {
			fence++ // else the same fence again: illegal
		}
		fenceJSON := "null"
		if fenced {
			fenceJSON = fmt.Sprint(fence + 1)
		}
		valid := start + 1 + int64(rng.Intn(60))
		events = append(events,
			timedLine{p, "invoke", "acquire", "null", invoke},
			timedLine{p, "ok", "acquire", fmt.Sprintf(`{"token":%q,"fence":%s,"valid_until":%d}`, token, fenceJSON, valid), start})
		t := start
		for w := rng.Intn(3); w > 0; w-- {
			t += int64(rng.Intn(30))
			v := fmt.Sprintf(`{"token":%q,"fence":%s}`, token, fenceJSON)
			outcome := []string{"ok", "fail", "info"}[rng.Intn(3)]
			events = append(events, timedLine{p, "invoke", "write", v, t}, timedLine{p, outcome, "write", v, t + int64(rng.Intn(15))})
			t = events[len(events)-1].time
		}
		if rng.Intn(4) > 0 {
			t += int64(rng.Intn(60))
			v := fmt.Sprintf(`{"token":%q}`, token)
			events = append(events, timedLine{p, "invoke", "release", v, t}, timedLine{p, "ok", "release", v, t + 1})
			t++
		}
		busy[p] = t
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].time < events[j].time })
	b := &historyBuilder{}
	for _, e := range events {
		b.add(fmt.Sprint(e.process), e.typ, e.f, "r", e.value, e.time)
	}
	return b
}

// Checking in pieces gives the verdict of checking whole, on random histories legal and not.
func TestPiecesAgreeWithTheWholeHistory(t *testing.T) {
	rng := rand.New(rand.NewSource(51))
	verdicts := map[porcupine.CheckResult]int{}
	split := 0
	for i := 0; i < 1500; i++ {
		b := randomHistory(rng, 2+rng.Intn(10), i%2 == 0)
		h := b.read(t)
		whole := CheckPieces(Pieces(h, 1<<30), time.Minute, 1).Result
		for _, target := range []int{1, 2, 5} {
			pieces := Pieces(h, target)
			if target == 1 && len(pieces) > 2 {
				split++
			}
			if got := CheckPieces(pieces, time.Minute, 2).Result; got != whole {
				t.Fatalf("history %d: whole %v, in %d pieces of %d: %v\n%s", i, whole, len(pieces), target, got, b.text())
			}
		}
		verdicts[whole]++
	}
	if verdicts[porcupine.Ok] < 300 || verdicts[porcupine.Illegal] < 300 || split < 500 {
		t.Fatalf("too one-sided to tell: %v, %d split in more than 2 pieces", verdicts, split)
	}
	t.Logf("verdicts %v, %d split in more than 2 pieces", verdicts, split)
}

// A long history of leases taken in turns splits into small pieces, each carrying the state
// (holder and fences) the pieces before it left.
func TestALongHistorySplitsIntoSmallPieces(t *testing.T) {
	b := &historyBuilder{}
	for k := int64(0); k < 3000; k++ {
		p := int(k % 4)
		token := fmt.Sprintf("t%d", k)
		at := k * 100
		b.hold(p, "r", token, k+1, at, at+10, at+90, 0)
		b.write(p, "r", token, k+1, at+20, at+30, true)
		b.release(p, "r", token, at+60)
	}
	h := b.read(t)
	pieces := Pieces(h, pieceOps)
	for _, p := range pieces {
		if p.Len() > 2*pieceOps {
			t.Fatalf("piece %d holds %d operations", p.Index, p.Len())
		}
	}
	if len(pieces) < 30 {
		t.Fatalf("%d pieces", len(pieces))
	}
	if got := CheckPieces(pieces, time.Minute, 2).Result; got != porcupine.Ok {
		t.Fatalf("verdict %v", got)
	}
	last := pieces[len(pieces)-1]
	if in := last.Operations()[0].Input.(Input); in.Kind != Carry || in.State.MaxFence < 2900 {
		t.Fatalf("the last piece starts with %+v", in)
	}
}
