"""A short run of every fuzz harness in tests/fuzz/ (a few thousand inputs each), and every
input saved in tests/fuzz/corpus/<harness>/ (inputs that once crashed) replayed: each must end
in a result or a Python exception, never a crash. Long campaigns: tests/fuzz/campaign.sh."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris")
pytest.importorskip("numpy")

FUZZ = Path(__file__).resolve().parent / "fuzz"
HARNESSES = sorted(p.stem for p in FUZZ.glob("fuzz_*.py"))
# Under the sanitizers (tests/sanitizer/run.sh) an input costs ~10x as much.
SANITIZED = "libasan" in os.environ.get("LD_PRELOAD", "")
RUNS = int(os.environ.get("EMBER_FUZZ_RUNS", "500" if SANITIZED else "5000"))


def run(harness, *args, timeout=600):
    proc = subprocess.run([sys.executable, str(FUZZ / f"{harness}.py"), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=FUZZ.parent.parent)
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-40:])
    assert proc.returncode == 0, f"{harness} {' '.join(args)} exited with {proc.returncode}:\n{tail}"
    return proc.stdout + proc.stderr


def test_every_harness_has_a_corpus_folder():
    assert HARNESSES == sorted(p.name for p in (FUZZ / "corpus").iterdir() if p.is_dir())


@pytest.mark.parametrize("harness", HARNESSES)
def test_short_fuzz_run(harness, tmp_path):
    # Under the sanitizers an input can take seconds; -timeout=0 is no way out there: atheris
    # then reports any input that keeps native code busy for a second as a timeout.
    extra = ["-timeout=600"] if SANITIZED else []
    out = run(harness, f"-atheris_runs={RUNS}", "-seed=6", f"-artifact_prefix={tmp_path}/", *extra)
    assert f"Done {RUNS}" in out


@pytest.mark.parametrize("harness", HARNESSES)
def test_saved_crashes_stay_fixed(harness, tmp_path):
    inputs = sorted(str(p) for p in (FUZZ / "corpus" / harness).iterdir() if p.name != ".gitkeep")
    if not inputs:
        pytest.skip(f"no saved input for {harness}")
    out = run(harness, f"-artifact_prefix={tmp_path}/", *inputs)
    assert out.count("Executed") >= len(inputs) or "Running:" in out


@pytest.mark.skipif(SANITIZED, reason="tests the driver; a sanitizer-built ember._C cannot load without the runtime")
def test_a_crash_is_seen(tmp_path):
    """The harness driver really reports a failing input (so the runs above can fail)."""
    bad = tmp_path / "fuzz_bad.py"
    bad.write_text("import sys\nsys.path.insert(0, %r)\nimport _common\n"
                   "def one(data):\n    if len(data) > 2:\n        raise SystemError('boom')\n"
                   "_common.main(one)\n" % str(FUZZ))
    # without the sanitizer runtime: libFuzzer would print this crash's stack into its log as a report
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    proc = subprocess.run([sys.executable, str(bad), "-atheris_runs=2000", f"-artifact_prefix={tmp_path}/"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode != 0 and "SystemError: boom" in proc.stdout + proc.stderr
    assert list(tmp_path.glob("crash-*"))
