#!/usr/bin/env bash
# Installs Redis 8.6.3 (the server with DELEX and SET ... IFEQ) into a tools directory of the
# repository, without touching the system: Debian experimental's `redis-server 5:8.6.3-1`
# needs glibc >= 2.38, so its binary is unpacked beside sid's C and C++ runtimes and run
# through sid's dynamic loader by a small wrapper (`exec`, so the server keeps the pid the
# local masters kill). The packages are fetched by apt with a private sources list, lists
# and cache under the tools directory: the system's apt configuration stays as it is.
#
# Usage: install-redis8.sh TOOLS_DIR   (writes TOOLS_DIR/redis-8.6.3/ and TOOLS_DIR/redis8-server)
set -euo pipefail

VERSION=8.6.3
PACKAGE_VERSION="5:${VERSION}-1"
# What redis-server 8.6.3 links against (sid's versions: whatever sid has today).
RUNTIME="libc6 libstdc++6 libssl3t64 libjemalloc2 liblzf1 libsystemd0 libcap2 libatomic1 libgcc-s1"

tools=${1:?usage: install-redis8.sh TOOLS_DIR}
mkdir -p "$tools"
tools=$(cd "$tools" && pwd)
home="$tools/redis-$VERSION"
wrapper="$tools/redis8-server"

if [ -x "$wrapper" ] && "$wrapper" --version 2>/dev/null | grep -q "v=$VERSION"; then
  exit 0
fi
command -v apt-get >/dev/null || {
  echo "deps-redis8: apt-get is needed to fetch Debian's redis-server $PACKAGE_VERSION; or point REDIS8_SERVER at a Redis >= 8.4 binary" >&2
  exit 1
}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || { echo "deps-redis8: $keyring is missing (package debian-archive-keyring)" >&2; exit 1; }

rm -rf "$home.partial"
apt_dir="$home.partial/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$home.partial/debs" "$home.partial/root"
cat > "$apt_dir/sources.list" <<EOF
deb [signed-by=$keyring] http://deb.debian.org/debian experimental main
deb [signed-by=$keyring] http://deb.debian.org/debian sid main
EOF
apt_opts=(
  -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
  -o "Dir::Cache::Archives=$apt_dir/cache/archives" -o "Debug::NoLocking=1"
  -o "APT::Sandbox::User=root"
)
echo "deps-redis8: fetching redis-server $PACKAGE_VERSION (Debian experimental) and sid's runtime" >&2
apt-get "${apt_opts[@]}" -qq update
(cd "$home.partial/debs" &&
  apt-get "${apt_opts[@]}" -qq download "redis-server=$PACKAGE_VERSION" "redis-tools=$PACKAGE_VERSION" $RUNTIME) || {
  echo "deps-redis8: could not download redis-server $PACKAGE_VERSION from Debian experimental (has it moved on? see docs/src/servers.md)" >&2
  exit 1
}
for deb in "$home.partial/debs"/*.deb; do
  dpkg-deb -x "$deb" "$home.partial/root"
done
rm -rf "$apt_dir" "$home.partial/debs"
rm -rf "$home"
mv "$home.partial" "$home"

lib="$home/root/usr/lib/x86_64-linux-gnu"
cat > "$wrapper" <<EOF
#!/bin/sh
# Redis $VERSION (Debian experimental) through sid's loader and libraries: see scripts/install-redis8.sh.
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib" "$home/root/usr/bin/redis-server" "\$@"
EOF
chmod +x "$wrapper"
"$wrapper" --version | grep "v=$VERSION" || {
  echo "deps-redis8: $wrapper does not run Redis $VERSION" >&2
  exit 1
}
