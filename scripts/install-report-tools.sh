#!/usr/bin/env bash
# Installs what the loadgen tests use, where missing: headless Chromium (renders the HTML
# reports), Java with Maven, which fetches HdrHistogram's jar from Maven Central (its
# HistogramLogProcessor reads the --hlog files back), and the Prometheus server (scrapes a
# `run --prometheus`). Debian/Ubuntu via apt-get.
# Usage: install-report-tools.sh chromium | hdrhistogram VERSION | prometheus
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "run 'make deps' as root, or install $* yourself" >&2; exit 1; }
  SUDO=sudo
fi
apt_install() {
  command -v apt-get >/dev/null || { echo "apt-get is not available: install $* with your package manager" >&2; exit 1; }
  echo "Installing $* from the distribution's packages..." >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
case "${1:-}" in
  chromium)
    command -v chromium >/dev/null || apt_install chromium
    ;;
  hdrhistogram)
    version="${2:?the HdrHistogram version}"
    command -v java >/dev/null || apt_install default-jre-headless
    command -v mvn >/dev/null || apt_install maven
    mvn -q dependency:get -Dartifact="org.hdrhistogram:HdrHistogram:${version}"
    ;;
  prometheus)
    command -v prometheus >/dev/null || apt_install prometheus
    ;;
  *)
    echo "usage: $0 chromium | hdrhistogram VERSION | prometheus" >&2
    exit 2
    ;;
esac
