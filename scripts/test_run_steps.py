"""scripts/run-steps.py on a planted Makefile: every step runs after a failure, steps run beside
another really overlap it, and the table and exit status say what failed (run by `make lint`)."""

import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

RUN_STEPS = Path(__file__).resolve().parent / "run-steps.py"

# `beside` waits until `main` has started, then `main` waits until `beside` has written: the
# two can only both finish if they really run at once (bounded by the loops' 20 s).
MAKEFILE = """\
ok:
\t@echo ok-ran
broken:
\t@echo 'test planted::failure ... FAILED'; exit 3
main:
\t@touch main-started; for i in $$(seq 200); do [ -e beside-wrote ] && exit 0; sleep 0.1; done; exit 1
beside:
\t@for i in $$(seq 200); do [ -e main-started ] && break; sleep 0.1; done; touch beside-wrote; echo beside-ran
late:
\t@echo late-ran
"""


class RunSteps(unittest.TestCase):
    def run_steps(self, *steps: str, make: str = "make") -> tuple[subprocess.CompletedProcess, Path]:
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        (tmp / "Makefile").write_text(MAKEFILE)
        run = subprocess.run(
            [sys.executable, str(RUN_STEPS), "--make", make, "--tier", "t", "--logs", str(tmp / "logs"), *steps],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return run, tmp

    def table(self, run: subprocess.CompletedProcess) -> str:
        return run.stdout[run.stdout.index("== make t:") :]

    def test_a_failure_does_not_stop_the_later_steps_and_is_named(self):
        run, tmp = self.run_steps("broken", "ok")
        self.assertEqual(run.returncode, 1, run.stdout)
        table = self.table(run)
        self.assertIn("2 of 2 step(s)", table)
        self.assertRegex(table, r"broken +\S+ +FAILED \(exit 2\)")
        self.assertIn("test planted::failure ... FAILED", (tmp / "logs/t/broken.log").read_text())
        self.assertIn("planted::failure", table)
        self.assertRegex(table, r"ok +\S+ +ok")

    def test_steps_beside_another_run_at_once_and_are_reported(self):
        run, tmp = self.run_steps("ok", "main+beside", "late")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        table = self.table(run)
        self.assertIn("4 of 4 step(s)", table)
        self.assertRegex(table, r"main +\S+ +ok")
        self.assertRegex(table, r"\+ beside +\S+ +ok  \(beside main\)")
        self.assertIn("every step passed", table)
        self.assertIn("beside-ran", (tmp / "logs/t/beside.log").read_text())
        # The beside step's output is shown as one block before the next step starts.
        self.assertLess(run.stdout.index("beside-ran"), run.stdout.index("late-ran"))

    def test_a_failing_step_beside_another_fails_the_tier(self):
        run, _ = self.run_steps("ok+broken", "late")
        self.assertEqual(run.returncode, 1, run.stdout)
        table = self.table(run)
        self.assertRegex(table, r"\+ broken +\S+ +FAILED \(exit 2\)  \(beside ok\)")
        self.assertIn("planted::failure", table)
        self.assertRegex(table, r"late +\S+ +ok")

    def test_a_make_that_cannot_start_fails_every_step_never_passes(self):
        run, _ = self.run_steps("ok+late", make="/nonexistent/make")
        self.assertEqual(run.returncode, 1, run.stdout)
        table = self.table(run)
        self.assertRegex(table, r"ok +\S+ +FAILED \(exit 127\)")
        self.assertRegex(table, r"\+ late +\S+ +FAILED \(exit 127\)  \(beside ok\)")
        self.assertIn("could not start `/nonexistent/make ok`", run.stderr)

    def test_a_malformed_step_is_refused_naming_it(self):
        run, _ = self.run_steps("ok+", "late")
        self.assertEqual(run.returncode, 2)
        self.assertIn("'ok+'", run.stderr)


if __name__ == "__main__":
    unittest.main()
