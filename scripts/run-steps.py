#!/usr/bin/env python3
"""Runs the steps of a tier (`make check`, `make test`) one after another, each as `make STEP`.

A failing step does not stop the tier: every later step still runs, as `make -k` would, so one
failure never hides another. Each step's output is shown as it comes and kept in
target/steps/<tier>/<step>.log; at the end one table gives every step's time and result, then
every failing test and step found in the logs, and the exit status is 1 when anything failed
(130/143 when interrupted).

A step written `A+B+C` runs A as usual and, beside it, B then C (builds that use the cores A's
tests leave idle while they wait on timers and masters). Their output goes to their logs and
is shown as one block once A ends; the next step starts when all of them have ended.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

# Lines that name one failure, per tool: cargo's test harness and its closing list, pytest,
# Go's test runner, mypy, make, the compiler.
FAILURE_LINES = [
    re.compile(r"^test (\S+) \.\.\. FAILED$"),
    re.compile(r"^error: test failed, to rerun pass (.+)$"),
    re.compile(r"^    `(-p \S+ --(?:test|lib|bin|doc|example|bench)\b.*)`$"),
    re.compile(r"^(FAILED \S+.*)$"),
    re.compile(r"^(ERROR \S+::\S+.*)$"),
    re.compile(r"^--- FAIL: (\S+)"),
    re.compile(r"^(\S+\.pyi?:\d+: error: .*)$"),
    re.compile(r"^(error(?:\[E\d+\])?: .*)$"),
    re.compile(r"^(make(?:\[\d+\])?: \*\*\* .*)$"),
]
# At most this many failure lines per step in the summary (the log has the rest).
MAX_LINES_PER_STEP = 40


def clock(seconds: float) -> str:
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


def ended(status: int) -> str:
    """How a step ended: `exit N`, or `signal N` (Popen's negative status)."""
    return f"signal {-status}" if status < 0 else f"exit {status}"


def failures_in(log: Path) -> list[str]:
    found: list[str] = []
    seen: set[str] = set()
    for raw in log.read_text(errors="replace").splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", raw.rstrip())
        for pattern in FAILURE_LINES:
            match = pattern.match(line)
            if match and match.group(1) not in seen:
                seen.add(match.group(1))
                found.append(match.group(1))
                break
    return found


# The status of a step whose `make` could not be started (as a shell reports it).
NOT_STARTED = 127


def start(
    make: str, step: str, stdout: int | IO[bytes], running: list[subprocess.Popen[bytes]]
) -> subprocess.Popen[bytes] | None:
    """`make STEP` started and listed in `running`; None (the reason printed) if it could not be."""
    try:
        process = subprocess.Popen(
            [make, "--no-print-directory", step], stdout=stdout, stderr=subprocess.STDOUT, bufsize=0
        )
    except OSError as error:
        print(f"run-steps: could not start `{make} {step}`: {error}", file=sys.stderr, flush=True)
        return None
    running.append(process)
    return process


def run_step(make: str, step: str, log: Path, running: list[subprocess.Popen[bytes]]) -> int:
    """`make STEP`, its output both shown and written to `log`; returns its exit status."""
    with log.open("wb") as sink:
        process = start(make, step, subprocess.PIPE, running)
        if process is None:
            return NOT_STARTED
        assert process.stdout is not None
        stdout = process.stdout.fileno()
        for chunk in iter(lambda: os.read(stdout, 65536), b""):
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
            sink.write(chunk)
        return process.wait()


class Beside(threading.Thread):
    """Steps run one after another beside a foreground step, each `make STEP` into its log."""

    def __init__(
        self,
        make: str,
        steps: list[str],
        logs: Path,
        running: list[subprocess.Popen[bytes]],
        stopped: list[int],
    ) -> None:
        super().__init__(daemon=True)
        self.make, self.steps, self.logs = make, steps, logs
        self.running, self.stopped = running, stopped
        self.results: list[tuple[str, float, int]] = []

    def run(self) -> None:
        for step in self.steps:
            if self.stopped:
                return
            began = time.monotonic()
            with (self.logs / f"{step}.log").open("wb") as sink:
                process = start(self.make, step, sink, self.running)
                status = NOT_STARTED if process is None else process.wait()
            self.results.append((step, time.monotonic() - began, status))

    def show(self, beside: str) -> None:
        """Each ended step's log, as one block."""
        for step, seconds, status in self.results:
            verdict = "ok" if status == 0 else f"FAILED ({ended(status)})"
            print(f"\n== beside {beside}: {step} ({clock(seconds)}, {verdict}) ==", flush=True)
            sys.stdout.buffer.write((self.logs / f"{step}.log").read_bytes())
            sys.stdout.buffer.flush()


def summary(
    tier: str,
    planned: int,
    results: list[tuple[str, float, int]],
    beside: dict[str, str],
    logs: Path,
    total: float,
) -> list[str]:
    """The closing table; `beside` maps a step run beside another to ` (beside OTHER)`."""
    lines = [f"== make {tier}: {len(results)} of {planned} step(s) in {clock(total)} =="]
    for step, seconds, status in results:
        verdict = "ok" if status == 0 else f"FAILED ({ended(status)})"
        name = step if step not in beside else f"+ {step}"
        lines.append(f"  {name:<24} {clock(seconds):>8}  {verdict}{beside.get(step, '')}")
    failed = [(step, status) for step, _, status in results if status != 0]
    if not failed:
        if len(results) == planned:
            lines.append(f"make {tier}: every step passed")
        else:
            lines.append(f"make {tier}: {planned - len(results)} step(s) never ran")
        return lines
    lines.append(f"make {tier}: {len(failed)} step(s) failed; what their logs name:")
    for step, status in failed:
        log = logs / f"{step}.log"
        found = failures_in(log)
        lines.append(f"  {step} ({ended(status)}, log {log}):")
        for line in found[:MAX_LINES_PER_STEP]:
            lines.append(f"    {line}")
        if len(found) > MAX_LINES_PER_STEP:
            lines.append(f"    … {len(found) - MAX_LINES_PER_STEP} more in the log")
        if not found:
            lines.append("    (no test named: read the end of the log)")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", required=True, help="the tier's name (check, test)")
    parser.add_argument("--make", default=os.environ.get("MAKE", "make"))
    parser.add_argument("--logs", default="target/steps", help="parent of the tier's log folder")
    parser.add_argument("steps", nargs="+")
    args = parser.parse_args()
    if not re.fullmatch(r"[a-z][a-z0-9-]*", args.tier):
        parser.error(f"--tier {args.tier!r}: letters, digits and dashes only")
    for group in args.steps:
        if not re.fullmatch(r"[a-z][a-z0-9-]*(\+[a-z][a-z0-9-]*)*", group):
            parser.error(f"step {group!r}: a make target, or targets joined by '+'")
    logs = Path(args.logs) / args.tier
    logs.mkdir(parents=True, exist_ok=True)
    # A signal stops the step in flight (make and its children are in our process group) and
    # the tier: no later step starts, the summary says what ran.
    stopped: list[int] = []
    running: list[subprocess.Popen[bytes]] = []

    def stop(signum: int, _frame: object) -> None:
        stopped.append(signum)
        for process in running:
            if process.poll() is None:
                process.send_signal(signum)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    results: list[tuple[str, float, int]] = []
    beside: dict[str, str] = {}
    planned = sum(len(group.split("+")) for group in args.steps)
    started = time.monotonic()
    for group in args.steps:
        if stopped:
            break
        step, *others = group.split("+")
        note = f" (and beside it: {', '.join(others)})" if others else ""
        print(f"\n== make {args.tier}: step {len(results) + 1}/{planned}: {step}{note} ==", flush=True)
        running.clear()
        chain = Beside(args.make, others, logs, running, stopped)
        chain.start()
        began = time.monotonic()
        status = run_step(args.make, step, logs / f"{step}.log", running)
        results.append((step, time.monotonic() - began, status))
        chain.join()
        chain.show(step)
        results.extend(chain.results)
        beside.update({other: f"  (beside {step})" for other, _, _ in chain.results})
    report = summary(args.tier, planned, results, beside, logs, time.monotonic() - started)
    if stopped:
        report.append(f"make {args.tier}: stopped by signal {stopped[0]} after {len(results)} step(s)")
    text = "\n".join(report) + "\n"
    (logs / "summary.txt").write_text(text)
    print("\n" + text, end="", flush=True)
    if stopped:
        return 128 + stopped[0]
    # A step that never ran (a beside step whose thread died) is a failure too, never a pass.
    passed = len(results) == planned and all(status == 0 for _, _, status in results)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
