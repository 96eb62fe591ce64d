// Command redsync-driver is the `make bench-peers` driver for go-redsync, the Go Redlock
// library: `--driver redsync` (its defaults) or `--driver redsync-failfast`
// (`WithFailFast(true)`: a lock or unlock returns once a quorum answered). One process runs
// one workload and prints one JSON line, with the same flags and fields as the other drivers
// (bench/peers/driver.py, bench/peers/workload).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"
)

// W3: 100 retries, each after a delay drawn from [10, 20] ms, as every other driver.
const w3Retries = 100

var w3Delay = [2]time.Duration{10 * time.Millisecond, 20 * time.Millisecond}

type args struct {
	driver, workload string
	masters          []string
	cycles, tasks    int
	seconds, ttl     float64
}

type samples struct {
	acquireNs, releaseNs         []int64
	acquireFailed, releaseFailed int
	errors                       []string
}

func (s *samples) error(err error) {
	message := err.Error()
	if len(s.errors) >= 5 {
		return
	}
	for _, seen := range s.errors {
		if seen == message {
			return
		}
	}
	s.errors = append(s.errors, message)
}

func (s *samples) merge(other *samples) {
	s.acquireNs = append(s.acquireNs, other.acquireNs...)
	s.releaseNs = append(s.releaseNs, other.releaseNs...)
	s.acquireFailed += other.acquireFailed
	s.releaseFailed += other.releaseFailed
	for _, e := range other.errors {
		s.error(fmt.Errorf("%s", e))
	}
}

func emit(a args, fields map[string]any) {
	fields["driver"] = a.driver
	fields["workload"] = a.workload
	line, _ := json.Marshal(fields)
	fmt.Println(string(line))
}

func fail(a args, why string) {
	emit(a, map[string]any{"failed": why})
	os.Exit(1)
}

func cpu() (user, sys float64) {
	var usage syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	seconds := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return seconds(usage.Utime), seconds(usage.Stime)
}

func key(workload string, task int) string {
	if workload == "w2" {
		return fmt.Sprintf("peers:w2:%d", task)
	}
	return "peers:" + workload
}

func parse() args {
	var a args
	var masters string
	flag.StringVar(&a.driver, "driver", "redsync", "redsync or redsync-failfast")
	flag.StringVar(&a.workload, "workload", "w1", "w1, w2 or w3")
	flag.StringVar(&masters, "masters", "", "comma-separated master URLs")
	flag.IntVar(&a.cycles, "cycles", 2000, "cycles per task (W1, W2)")
	flag.IntVar(&a.tasks, "tasks", 16, "tasks (W2, W3; W1 runs one)")
	flag.Float64Var(&a.seconds, "seconds", 10, "W3 duration in seconds")
	flag.Float64Var(&a.ttl, "ttl", 10, "lock TTL in seconds")
	flag.Parse()
	switch {
	case a.driver != "redsync" && a.driver != "redsync-failfast":
		fail(a, fmt.Sprintf("--driver %q: expected redsync or redsync-failfast", a.driver))
	case a.workload != "w1" && a.workload != "w2" && a.workload != "w3":
		fail(a, fmt.Sprintf("--workload %q: expected w1, w2 or w3", a.workload))
	case masters == "":
		fail(a, "--masters: at least one URL is needed")
	case a.cycles <= 0 || a.tasks <= 0 || a.seconds <= 0 || a.ttl <= 0:
		fail(a, "--cycles, --tasks, --seconds and --ttl must be positive")
	}
	a.masters = strings.Split(masters, ",")
	if a.workload == "w1" {
		a.tasks = 1
	}
	return a
}

func main() {
	a := parse()
	pools := make([]redis.Pool, len(a.masters))
	for i, url := range a.masters {
		options, err := goredislib.ParseURL(url)
		if err != nil {
			fail(a, fmt.Sprintf("master %d: %v", i, err))
		}
		pools[i] = goredis.NewPool(goredislib.NewClient(options))
	}
	rs := redsync.New(pools...)
	options := []redsync.Option{redsync.WithExpiry(time.Duration(a.ttl * float64(time.Second)))}
	if a.driver == "redsync-failfast" {
		options = append(options, redsync.WithFailFast(true))
	}
	if a.workload == "w3" {
		options = append(options,
			redsync.WithTries(w3Retries+1),
			redsync.WithRetryDelayFunc(func(int) time.Duration {
				return w3Delay[0] + rand.N(w3Delay[1]-w3Delay[0]+1)
			}))
	}
	cycle := func(name string, s *samples) {
		began := time.Now()
		mutex := rs.NewMutex(name, options...)
		if err := mutex.Lock(); err != nil {
			s.acquireFailed++
			s.error(err)
			return
		}
		acquired := time.Now()
		s.acquireNs = append(s.acquireNs, acquired.Sub(began).Nanoseconds())
		if ok, err := mutex.Unlock(); err != nil || !ok {
			s.releaseFailed++
			if err != nil {
				s.error(err)
			}
		}
		s.releaseNs = append(s.releaseNs, time.Since(acquired).Nanoseconds())
	}
	var warmUp samples
	cycle("peers:warm-up", &warmUp)
	if len(warmUp.acquireNs) == 0 {
		fail(a, fmt.Sprintf("warm-up cycle failed: %v", warmUp.errors))
	}

	results := make([]samples, a.tasks)
	userBefore, sysBefore := cpu()
	start := time.Now()
	deadline := start.Add(time.Duration(a.seconds * float64(time.Second)))
	var wg sync.WaitGroup
	for t := range a.tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, name := &results[t], key(a.workload, t)
			for done := 0; ; done++ {
				if a.workload == "w3" && !time.Now().Before(deadline) {
					return
				}
				if a.workload != "w3" && done >= a.cycles {
					return
				}
				cycle(name, s)
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start).Seconds()
	user, sys := cpu()
	var total samples
	for i := range results {
		total.merge(&results[i])
	}
	emit(a, map[string]any{
		"library":        "go-redsync v4.18.1, go-redis v9.23.0",
		"tasks":          a.tasks,
		"ok":             len(total.acquireNs),
		"acquire_failed": total.acquireFailed,
		"release_failed": total.releaseFailed,
		"errors":         append([]string{}, total.errors...), // [] rather than null
		"wall_s":         wall,
		"cpu_user_s":     user - userBefore,
		"cpu_sys_s":      sys - sysBefore,
		"acquire_ns":     total.acquireNs,
		"release_ns":     total.releaseNs,
	})
}
