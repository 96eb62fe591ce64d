"""Checks the wheel `make wheel` built, as a user without Rust would meet it.

    python wheel_check.py target/wheels

- its name is a CPython >= 3.9 abi3 wheel for manylinux2014 (glibc 2.17) x86_64, and the
  extension asks for no glibc symbol newer than 2.17;
- it carries LICENSE-MIT and LICENSE-APACHE, the license expression and the project URLs;
- installed into a fresh virtualenv whose PATH has no Rust toolchain, it takes and releases a
  lock (blocking and asyncio) on 5 local masters, and no key is left behind.

Run by `make test-wheel` (part of `make test`); not a pytest module (it needs the built wheel).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from conftest import LocalMasters

MAX_GLIBC = (2, 17)
ROUND_TRIP = r"""
import asyncio, os, shutil, sys
import redlock_rs
from redlock_rs import AsyncRedlock, Redlock

assert shutil.which("cargo") is None and shutil.which("rustc") is None, "a Rust toolchain is on PATH"
assert redlock_rs.__file__.startswith(sys.prefix), f"imported from {redlock_rs.__file__}, not the venv"
urls = os.environ["REDLOCK_URLS"].split(",")
with Redlock(urls) as redlock:
    assert redlock.wait_connected(10.0) == len(urls)
    with redlock.lock("wheel:check", ttl=5.0) as lock:
        assert lock.vote.won and lock.is_valid()
    print("blocking round trip: won", lock.vote.granted, "of", len(urls))

async def main() -> int:
    async with AsyncRedlock(urls) as redlock:
        lock = await asyncio.create_task(redlock.acquire("wheel:check:async", ttl=5.0))
        return await lock.release()

print("asyncio round trip: released on", asyncio.run(main()))
print("redlock_rs", redlock_rs.__version__, "from", redlock_rs.__file__)
"""


def fail(message: str) -> None:
    sys.exit(f"wheel_check: {message}")


def the_wheel(directory: Path) -> Path:
    wheels = sorted(directory.glob("redlock_rs-*.whl"))
    if len(wheels) != 1:
        fail(f"expected one redlock_rs wheel in {directory}, found {[w.name for w in wheels]}")
    return wheels[0]


def check_contents(wheel: Path) -> None:
    tags = wheel.name.removesuffix(".whl").split("-")[-3:]
    python_tag, abi_tag, platforms = tags
    if (python_tag, abi_tag) != ("cp39", "abi3"):
        fail(f"{wheel.name}: not a cp39-abi3 wheel")
    if not {"manylinux2014_x86_64", "manylinux_2_17_x86_64"} & set(platforms.split(".")):
        fail(f"{wheel.name}: not tagged manylinux2014 / manylinux_2_17 x86_64")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        licenses = {Path(n).name for n in names if ".dist-info/licenses/" in n}
        if not {"LICENSE-MIT", "LICENSE-APACHE"} <= licenses:
            fail(f"{wheel.name}: license files missing (found {sorted(licenses)})")
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        for needed in ("License-Expression: MIT OR Apache-2.0", "Project-URL: Repository,", "Project-URL: Homepage,"):
            if needed not in metadata:
                fail(f"{wheel.name}: METADATA has no {needed!r}")
        extension = archive.read(next(n for n in names if n.endswith(".abi3.so")))
    versions = {tuple(int(p) for p in v.split(b".")) for v in re.findall(rb"GLIBC_(\d+\.\d+(?:\.\d+)?)", extension)}
    newest = max(versions)
    if newest[:2] > MAX_GLIBC:
        fail(f"{wheel.name}: needs GLIBC_{'.'.join(map(str, newest))}, newer than 2.17")
    print(f"{wheel.name}: abi3, manylinux2014, newest glibc symbol {'.'.join(map(str, newest))}, licenses and URLs present")


def without_rust(path: str) -> str:
    """PATH without the directories that hold a Rust toolchain."""
    kept = [d for d in path.split(os.pathsep) if d and not any(Path(d, tool).exists() for tool in ("cargo", "rustc"))]
    return os.pathsep.join(kept)


def install_and_run(wheel: Path, urls: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="redlock-wheel-") as tmp:
        venv = Path(tmp, "venv")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = venv / "bin" / "python"
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index", str(wheel)],
            check=True,
        )
        env = {
            "PATH": without_rust(os.environ.get("PATH", "")),
            "HOME": tmp,
            "REDLOCK_URLS": ",".join(urls),
        }
        done = subprocess.run(
            [str(python), "-c", ROUND_TRIP], env=env, cwd=tmp, capture_output=True, text=True, timeout=120
        )
        print(done.stdout, end="")
        if done.returncode != 0:
            fail(f"the round trip in a fresh virtualenv failed:\n{done.stderr}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("wheel_dir", type=Path)
    wheel = the_wheel(parser.parse_args().wheel_dir)
    check_contents(wheel)
    masters = LocalMasters(5)
    try:
        install_and_run(wheel, masters.urls)
        for key in ("wheel:check", "wheel:check:async"):
            if masters.values(key) != [None] * 5:
                fail(f"{key} left on the masters: {masters.values(key)}")
    finally:
        masters.stop()
    print("wheel_check: ok")


if __name__ == "__main__":
    main()
