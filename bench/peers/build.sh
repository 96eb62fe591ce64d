#!/usr/bin/env bash
# Builds every driver of `make bench-peers`. The harness itself and this project's Rust
# driver must build; any other driver that fails to build (or install) is recorded in
# $TARGET/bench-peers/skipped/<name> with the reason, and the harness reports it as skipped.
#
# Usage: bench/peers/build.sh   (from the repository root; CARGO, PYTHON and TARGET may be set)
set -uo pipefail

CARGO=${CARGO:-cargo}
PYTHON=${PYTHON:-python3}
TARGET=$(realpath -m "${TARGET:-target}")
VENV=$PWD/bench/peers/.venv
OUT=$TARGET/bench-peers
SKIPPED=$OUT/skipped
LOGS=$OUT/logs
rm -rf "$SKIPPED"
mkdir -p "$SKIPPED" "$LOGS"

# try NAME COMMAND...: runs COMMAND with its output in $LOGS/NAME.log; on failure records why.
try() {
  local name=$1; shift
  if "$@" >>"$LOGS/$name.log" 2>&1; then
    return 0
  fi
  local why
  why=$(grep -m 3 -E '^error|ERROR|Error' "$LOGS/$name.log" | tr '\n' ' ' | cut -c1-300)
  echo "build failed (${why:-see $LOGS/$name.log}); full log: $LOGS/$name.log" >"$SKIPPED/$name"
  echo "bench-peers: $name not built, it will be skipped: $(cat "$SKIPPED/$name")" >&2
  return 1
}

echo "bench-peers: building the harness and this project's Rust driver (release)"
"$CARGO" build --release --locked -q -p redlock-bench --bin bench-peers --bin peers-driver || exit 1

echo "bench-peers: building libredlock (release) and the C driver"
: >"$LOGS/c.log"
try c "$CARGO" build --release --locked -q -p redlock-ffi &&
  try c cc -std=c11 -O2 -Wall -Wextra -Werror -pedantic -Iffi/include bench/peers/c/driver.c \
    -L"$TARGET/release" -lredlock -lpthread -Wl,-rpath,'$ORIGIN' -o "$OUT/c-driver" &&
  # libredlock's SONAME is libredlock.so.0: the driver finds it next to itself.
  ln -sf "$(cd "$TARGET/release" && pwd)/libredlock.so" "$OUT/libredlock.so.0"

# Each peer alone, with its own feature, so one that does not build cannot stop the other.
for peer in rslock:peer-rslock redlock-crate:peer-redlock; do
  name=${peer%%:*} bin=${peer##*:}
  echo "bench-peers: building $name (release; bench/peers/rust, outside the workspace)"
  : >"$LOGS/$name.log"
  try "$name" "$CARGO" build --release --locked -q --manifest-path bench/peers/rust/Cargo.toml \
    --target-dir "$TARGET" --features "${bin#peer-}" --bin "$bin"
done

echo "bench-peers: building redsync (Go; bench/peers/go, its modules pinned by go.sum)"
: >"$LOGS/redsync.log"
if command -v go >/dev/null 2>&1; then
  try redsync bash -c "cd bench/peers/go && go build -trimpath -o '$OUT/redsync-driver' ."
else
  echo "go is not installed (the Go toolchain builds the redsync driver)" >"$SKIPPED/redsync"
fi

echo "bench-peers: Python virtualenv $VENV (bench/peers/requirements.txt)"
: >"$LOGS/python.log"
if [ ! -x "$VENV/bin/python" ] && ! "$PYTHON" -m venv "$VENV" >>"$LOGS/python.log" 2>&1; then
  rm -rf "$VENV"
  for name in redlock-rs aioredlock pottery; do
    echo "cannot create the virtualenv $VENV with $PYTHON -m venv (see $LOGS/python.log)" >"$SKIPPED/$name"
  done
  exit 0
fi
stamp=$VENV/.requirements-installed
if [ ! -f "$stamp" ] || [ bench/peers/requirements.txt -nt "$stamp" ]; then
  if "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r bench/peers/requirements.txt \
      >>"$LOGS/python.log" 2>&1; then
    touch "$stamp"
  else
    # Install what can be; a peer left out reports "cannot import" and is skipped.
    echo "bench-peers: some pinned packages did not install; trying them one by one" >&2
    grep -E '^[A-Za-z]' bench/peers/requirements.txt | while read -r requirement; do
      "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$requirement" \
        >>"$LOGS/python.log" 2>&1 || echo "bench-peers: $requirement did not install" >&2
    done
  fi
fi

echo "bench-peers: building redlock_rs (release wheel) into $VENV"
: >"$LOGS/redlock-rs.log"
rm -rf "$OUT/wheels"
if try redlock-rs env -u VIRTUAL_ENV bash -c "cd python && '$VENV/bin/maturin' build -q --release --locked -i '$VENV/bin/python' -o '$OUT/wheels'"; then
  try redlock-rs "$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall \
    --no-deps "$OUT"/wheels/*.whl
fi
exit 0
