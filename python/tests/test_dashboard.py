"""The library's Grafana dashboard (deploy/grafana/redlock-library.json) against what a service
using the lock serves, by either route: redlock_rs recording through OpenTelemetry's
Prometheus exporter (`opentelemetry-exporter-prometheus`, served by `prometheus_client`), or
through `redlock_rs.prometheus.RedlockCollector` (histograms aggregated in Rust), scraped by a
real Prometheus server (Debian's `prometheus`, installed by `make deps`). Every query of the
dashboard returns series."""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
from conftest import LocalMasters, wait_until

from redlock_rs import LockLost, NotAcquired, Redlock

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy" / "grafana" / "redlock-library.json"
LIMIT = 90.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def dashboard_exprs() -> list[str]:
    """Every expr of the dashboard (panels and template variables), with Grafana's variables
    replaced as Grafana would: every job, a 1-minute rate window, a 1-hour range."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "expr" and isinstance(item, str):
                    found.append(item)
                elif key == "query" and isinstance(item, dict) and isinstance(item.get("query"), str):
                    found.append(item["query"])
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(json.loads(DASHBOARD.read_text()))
    return [
        e.replace("$job", ".*").replace("$__rate_interval", "1m").replace("$__range", "1h") for e in found
    ]


def query(port: int, promql: str) -> list[Any]:
    if promql.startswith("label_values("):
        metric, label = promql[len("label_values(") : -1].split(", ")
        url = f"http://127.0.0.1:{port}/api/v1/label/{label}/values?" + urllib.parse.urlencode({"match[]": metric})
    else:
        url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=10) as answer:
        body = json.load(answer)
    assert body["status"] == "success", body
    data = body["data"]
    return data if isinstance(data, list) else data["result"]


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[tuple[int, int]]:
    """(exporter port, Prometheus port): a Prometheus scraping the exporter every second."""
    binary = shutil.which("prometheus")
    assert binary, "prometheus is not installed: `make deps-prometheus` installs it"
    exporter, server = free_port(), free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        f"scrape_configs:\n  - job_name: svc\n    static_configs:\n      - targets: ['127.0.0.1:{exporter}']\n"
    )
    with open(tmp_path / "prometheus.log", "w") as log:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{server}",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        wait_until(lambda: ready(server), LIMIT, "Prometheus to be ready", interval=0.2)
        yield exporter, server
    finally:
        process.kill()
        process.wait()


def ready(port: int) -> bool:
    """Prometheus answers its readiness endpoint (it refuses connections, then answers 503,
    while it starts)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=5) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@pytest.mark.parametrize("route", ["meter_provider", "collector"])
def test_every_dashboard_query_returns_series_from_a_service_using_the_lock(
    fresh_masters: LocalMasters, prometheus: tuple[int, int], route: str
) -> None:
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from opentelemetry.sdk.metrics import MeterProvider
    from prometheus_client import REGISTRY, CollectorRegistry, start_http_server

    from redlock_rs.prometheus import RedlockCollector

    exporter_port, prometheus_port = prometheus
    registry = REGISTRY
    if route == "meter_provider":
        provider = MeterProvider(metric_readers=[PrometheusMetricReader()])
        routed: dict[str, Any] = {"meter_provider": provider}
    else:
        provider = MeterProvider()
        registry = CollectorRegistry()
        routed = {"collector": RedlockCollector(registry=registry)}
    http_server, http_thread = start_http_server(exporter_port, addr="127.0.0.1", registry=registry)
    redlock = Redlock(fresh_masters.urls, retry_count=0, **routed)
    rival = Redlock(fresh_masters.urls, retry_count=0, **routed)
    fresh_masters.kill(4)  # its failures, by server
    # Held past the whole wait, so the rival keeps finding it taken (contended acquires).
    busy = redlock.acquire("dash:busy", ttl=2 * LIMIT)
    rounds = 0

    def one_round() -> None:
        nonlocal rounds
        rounds += 1
        lock = redlock.acquire(f"dash:{rounds}")
        lock.extend(10.0)
        lock.release()
        with pytest.raises(NotAcquired):
            rival.acquire("dash:busy")
        lost = redlock.acquire(f"dash:lost:{rounds}")
        for index in range(4):
            fresh_masters.command(index, "DEL", f"dash:lost:{rounds}")
        with pytest.raises(LockLost):
            lost.extend(10.0)
        with contextlib.suppress(LockLost):
            lost.release()

    exprs = dashboard_exprs()
    assert len(exprs) >= 10, exprs

    def empty() -> list[str]:
        one_round()
        return [e for e in exprs if not query(prometheus_port, e)]

    try:
        wait_until(lambda: not empty(), LIMIT, "every dashboard query to return series", interval=0.5)
        # Read while the exporter serves: once a scrape fails, Prometheus marks its series stale.
        labels = query(prometheus_port, '{__name__=~"redlock_.*"}')
    finally:
        busy.release()
        redlock.close()
        rival.close()
        provider.shutdown()
        http_server.shutdown()
        http_server.server_close()
        http_thread.join()
    # The series carry no resource name (only the job, instance and the attributes).
    assert labels and all("dash:" not in value for series in labels for value in series["metric"].values())
