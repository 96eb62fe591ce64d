#!/usr/bin/env bash
# Installs redis-server (and openssl, for the TLS tests' throw-away certificates) from the
# distribution's packages (Debian/Ubuntu via apt-get).
set -euo pipefail
if command -v redis-server >/dev/null && command -v openssl >/dev/null; then exit 0; fi
if ! command -v apt-get >/dev/null; then
  echo "redis-server is missing and apt-get is not available: install Redis (>= 6) with your package manager" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "redis-server is missing: run 'apt-get install redis-server' as root" >&2; exit 1; }
  SUDO=sudo
fi
echo "Installing redis-server and openssl from the distribution's packages..." >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends redis-server openssl >/dev/null
# The package may start a system service on 6379; the suite never uses it, but stop it to stay out of the way.
($SUDO service redis-server stop >/dev/null 2>&1 || true)
redis-server --version
