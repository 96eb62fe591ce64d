"""The layer gate fails on a planted upward import, naming both modules (run by `make lint`)."""

import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GATE = REPO / "scripts" / "check-layers.py"


class LayerGate(unittest.TestCase):
    def gate(self, crate_dir: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(GATE), str(crate_dir)], capture_output=True, text=True)

    def copy_of(self, crate: str) -> Path:
        tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        shutil.copytree(REPO / crate / "src", tmp / crate / "src")
        return tmp / crate

    def test_the_tree_as_it_stands_passes(self):
        for crate in ("loadgen", "core"):
            run = self.gate(REPO / crate)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)

    def test_the_model_importing_the_engine_fails_naming_both(self):
        crate = self.copy_of("loadgen")
        header = crate / "src" / "model" / "header.rs"
        header.write_text(header.read_text() + "\npub use crate::engine::runner::GRACE;\n")
        run = self.gate(crate)
        self.assertEqual(run.returncode, 1, run.stdout)
        self.assertIn("model::header (layer model) imports engine::runner (layer engine: run, above it)", run.stdout)

    def test_a_renderer_reaching_the_cli_fails(self):
        crate = self.copy_of("loadgen")
        text = crate / "src" / "render" / "text.rs"
        text.write_text(text.read_text() + "\nfn planted(_: &crate::cli::RunArgs) {}\n")
        run = self.gate(crate)
        self.assertEqual(run.returncode, 1, run.stdout)
        self.assertIn("render::text (layer readers) imports cli (layer cli, above it)", run.stdout)

    def test_the_engine_importing_a_plan_a_renderer_or_merge_fails(self):
        for planted, named in [
            ("crate::plans::turns::in_turns", "plans::turns (layer plans, above it)"),
            ("crate::render::json::render", "render::json (layer readers, above it)"),
            ("crate::merge::merge_runs", "merge (layer readers, above it)"),
        ]:
            with self.subTest(planted=planted):
                crate = self.copy_of("loadgen")
                worker = crate / "src" / "engine" / "worker.rs"
                worker.write_text(worker.read_text() + f"\npub use {planted};\n")
                run = self.gate(crate)
                self.assertEqual(run.returncode, 1, run.stdout)
                self.assertIn(f"engine::worker (layer engine: worker) imports {named}", run.stdout)

    def test_a_file_of_the_engine_importing_one_above_it_fails(self):
        crate = self.copy_of("loadgen")
        config = crate / "src" / "engine" / "config.rs"
        config.write_text(config.read_text() + "\npub use crate::engine::runner::RunResult;\n")
        run = self.gate(crate)
        self.assertEqual(run.returncode, 1, run.stdout)
        self.assertIn("engine::config (layer engine: config) imports engine::runner (layer engine: run, above it)", run.stdout)

    def test_an_unplaced_top_level_module_fails(self):
        crate = self.copy_of("core")
        lib = crate / "src" / "lib.rs"
        (crate / "src" / "stray.rs").write_text("pub fn f() {}\n")
        lib.write_text(lib.read_text() + "\nmod stray;\n")
        run = self.gate(crate)
        self.assertEqual(run.returncode, 1, run.stdout)
        self.assertIn("module stray is in no layer", run.stdout)


if __name__ == "__main__":
    unittest.main()
