package main

// The timeline page shows what the file holds (keys, fault labels) as text: Porcupine puts
// operation metadata and state descriptions into a tooltip as HTML, so a key such as
// <img src=x onerror=…> ran when the reader hovered over an operation (issue #51).

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	hostileKey   = `<img src=x onerror="document.body.dataset.pwned='key'">`
	hostileFault = `<img src=x onerror="document.body.dataset.pwned='fault'">`
)

// hostileTimeline draws the timeline of an illegal history whose key and fault label are
// markup; it returns the page's path.
func hostileTimeline(t *testing.T) string {
	t.Helper()
	b := &historyBuilder{}
	faultJSON, _ := json.Marshal(hostileFault)
	b.add(`"nemesis"`, "info", "start", "", string(faultJSON), 5)
	b.hold(0, hostileKey, "a", -1, 0, 10, 1000, 100)
	b.hold(1, hostileKey, "b", -1, 20, 30, 1000, 200)
	b.add(`"nemesis"`, "info", "stop", "", string(faultJSON), 250)
	h := b.read(t)
	pieces := Pieces(h, pieceOps)
	outcome := CheckPieces(pieces, time.Minute, 1)
	path := filepath.Join(t.TempDir(), "timeline.html")
	if err := DrawTimeline(path, pieces, timelinePieces(pieces, outcome.Illegal), h.Faults, time.Minute); err != nil {
		t.Fatal(err)
	}
	return path
}

// The strings Porcupine writes as HTML are escaped; the page holds no markup of the file's.
func TestTheTimelineEscapesWhatItShows(t *testing.T) {
	page, err := os.ReadFile(hostileTimeline(t))
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)
	if strings.Contains(text, "<img") {
		t.Fatal("the page holds the key's markup as written")
	}
	start := strings.Index(text, "const data = ")
	end := strings.LastIndex(text, "render(data)")
	if start < 0 || end < start {
		t.Fatal("no data in the page")
	}
	var data struct {
		Partitions []struct {
			History []struct{ Metadata, Description string }
			// Each partial linearization's steps.
			PartialLinearizations [][]struct{ StateDescription string }
		}
		Annotations []struct{ Description, Details string }
	}
	if err := json.Unmarshal([]byte(text[start+len("const data = "):end]), &data); err != nil {
		t.Fatal(err)
	}
	asHTML := 0
	for _, p := range data.Partitions {
		for _, op := range p.History {
			if strings.ContainsAny(op.Metadata, `<>"`) || !strings.Contains(op.Metadata, "&lt;img") {
				t.Fatalf("metadata %q is not escaped", op.Metadata)
			}
			asHTML++
		}
		for _, lin := range p.PartialLinearizations {
			for _, step := range lin {
				if strings.ContainsAny(step.StateDescription, `<>"&`) {
					t.Fatalf("state %q is not escaped", step.StateDescription)
				}
			}
		}
	}
	if asHTML == 0 || len(data.Annotations) != 1 || data.Annotations[0].Description != hostileFault {
		t.Fatalf("%d operations, annotations %+v", asHTML, data.Annotations)
	}
}

// probe hovers over every operation and fault of the timeline, as a reader would, and
// writes what the tooltips held into the page.
const probe = `<script>
window.addEventListener('load', () => {
  const found = {hovered: 0, injected: 0, shownAsText: 0}
  for (const target of document.querySelectorAll('.target-rect')) {
    target.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}))
    target.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: 20, clientY: 20}))
    const tip = document.querySelector('.tooltip')
    found.hovered++
    found.injected += tip.querySelectorAll('img, script, [onerror]').length
    if (tip.textContent.includes('<img src=x onerror=')) found.shownAsText++
  }
  const out = document.createElement('pre')
  out.id = 'probe'
  out.textContent = JSON.stringify(found)
  document.body.appendChild(out)
})
</script>
</body>`

func chromium(t *testing.T) string {
	if path := os.Getenv("CHROMIUM"); path != "" {
		return path
	}
	if path, err := exec.LookPath("chromium"); err == nil {
		return path
	}
	if os.Getenv("HISTORY_CHECK_BROWSER") != "" {
		t.Fatal("chromium is not installed (HISTORY_CHECK_BROWSER asks for it): `make deps-chromium`")
	}
	t.Skip("chromium is not installed: `make deps-chromium` (make test-history-check requires it)")
	return ""
}

// In headless Chromium, hovering over every operation runs nothing of the file's: the key
// and the fault label are shown as text.
func TestTheTimelineRunsNoInjectedScriptInChromium(t *testing.T) {
	browser := chromium(t)
	path := hostileTimeline(t)
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	probed := strings.Replace(string(page), "</body>", probe, 1)
	if err := os.WriteFile(path, []byte(probed), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(browser, "--headless", "--disable-gpu", "--no-sandbox", "--virtual-time-budget=5000",
		"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dom := string(out)
	start := strings.Index(dom, `<pre id="probe">`)
	if start < 0 {
		t.Fatalf("the probe did not run:\n%.2000s", dom)
	}
	probeText := dom[start+len(`<pre id="probe">`):]
	probeText = probeText[:strings.Index(probeText, "</pre>")]
	var found struct{ Hovered, Injected, ShownAsText int }
	if err := json.Unmarshal([]byte(probeText), &found); err != nil {
		t.Fatalf("probe %q: %v", probeText, err)
	}
	if found.Hovered < 5 || found.Injected != 0 || found.ShownAsText < 4 {
		t.Fatalf("tooltips: %+v", found)
	}
	if strings.Contains(dom, "data-pwned") {
		t.Fatal("an injected handler ran")
	}
	if !strings.Contains(dom, "&lt;img src=x onerror=\"document.body.dataset.pwned='fault'\"&gt;") {
		t.Fatal("the fault label is not shown as text")
	}
}
