"""Metrics through OpenTelemetry's API (the book's observability page), collected by the SDK's InMemoryMetricReader
from won, contended and unavailable acquisitions on password-protected masters; and
redlock_rs without opentelemetry installed."""

import asyncio
import sys
import threading
from typing import Any, Callable

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

import redlock_rs
from redlock_rs import _metrics
from conftest import LocalMasters, wait_until

PASSWORD = "metrics-Pa55word"
Points = dict[str, tuple[str, list[tuple[dict[str, Any], float]]]]


def _protected_urls(masters: LocalMasters) -> list[str]:
    """Masters 0-2 with a password; their URLs carry it."""
    for index in range(3):
        assert masters.command(index, "CONFIG", "SET", "requirepass", PASSWORD) == "OK"
    return [url.replace("redis://", f"redis://:{PASSWORD}@") for url in masters.urls[:3]]


def _number(point: Any) -> float:
    """A histogram point's count, or a sum's value."""
    count = getattr(point, "count", None)
    return float(count if count is not None else point.value)


def _points(reader: InMemoryMetricReader) -> Points:
    """Instrument name -> (unit, [(attributes, count or value)]) of the meter redlock_rs."""
    found: Points = {}
    data = reader.get_metrics_data()
    assert data is not None
    for resource_metrics in data.resource_metrics:
        for scope_metrics in resource_metrics.scope_metrics:
            if scope_metrics.scope.name != "redlock_rs":
                continue
            for metric in scope_metrics.metrics:
                points = [(dict(p.attributes or {}), _number(p)) for p in metric.data.data_points]
                found[metric.name] = (metric.unit or "", points)
    return found


def _count(points: Points, name: str, **attributes: Any) -> float:
    """The count (histogram) or value (sum) of `name` over the points with these attributes."""
    if name not in points:
        return 0.0
    wanted = {key.replace("_", "."): value for key, value in attributes.items()}
    return sum(n for found, n in points[name][1] if wanted.items() <= found.items())


def _values(points: Points, name: str, key: str) -> set[Any]:
    assert name in points, f"no {name} among {sorted(points)}"
    return {attributes[key] for attributes, _ in points[name][1] if key in attributes}


def _assert_no_secret(points: Points, secrets: list[str]) -> None:
    for name, (_, data) in points.items():
        for attributes, _ in data:
            for key, value in attributes.items():
                for secret in secrets:
                    assert secret not in str(value), (name, key, value)


def test_won_contended_and_unavailable_acquires_are_recorded(fresh_masters: LocalMasters) -> None:
    urls = _protected_urls(fresh_masters)
    # ANCHOR: provider
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    holder = redlock_rs.Redlock(urls, retry_count=0, meter_provider=provider)
    # ANCHOR_END: provider
    rival = redlock_rs.Redlock(urls, retry_count=0, meter_provider=provider)
    lock = holder.acquire("py:metrics", ttl=10.0)
    with pytest.raises(redlock_rs.NotAcquired):
        rival.acquire("py:metrics", ttl=10.0)
    lock.extend(10.0)
    # Release counts only keys it deleted: at most one per master, at least a quorum (a loaded
    # machine may let one master's reply miss the per-master deadline).
    assert 2 <= lock.release() <= 3
    fresh_masters.kill(1)
    fresh_masters.kill(2)
    with pytest.raises(redlock_rs.Unavailable):
        rival.acquire("py:metrics", ttl=10.0)

    points = _points(reader)
    assert points["redlock.acquire.duration"][0] == "s"
    assert _values(points, "redlock.acquire.duration", "redlock.outcome") == {"acquired", "not_acquired", "unavailable"}
    assert _values(points, "redlock.acquire.duration", "redlock.fanout") == {"concurrent"}
    assert {"won", "clean_loss", "unavailable"} <= _values(points, "redlock.attempts", "redlock.attempt.result")
    for name in ("redlock.extend.duration", "redlock.release.duration"):
        assert points[name][0] == "s"
        assert sum(n for _, n in points[name][1]) == 1, name
    assert sum(v for _, v in points["redlock.locks.held"][1]) == 0
    requests = "db.client.operation.duration"
    assert points[requests][0] == "s"
    assert _values(points, requests, "db.system.name") == {"redis"}
    assert _values(points, requests, "db.operation.name") == {"SET", "EVALSHA"}
    assert _values(points, requests, "server.port") == set(fresh_masters.ports[:3])
    assert _values(points, requests, "server.address") == {"127.0.0.1"}
    # Every master's failure series exist at 0; those that counted are the killed ones'.
    failed = {a["server.port"] for a, n in points["redlock.master.failures"][1] if n}
    assert failed == set(fresh_masters.ports[1:3])
    _assert_no_secret(points, [PASSWORD, "py:metrics", lock.token])


async def test_the_asyncio_client_records_from_the_runtime(fresh_masters: LocalMasters) -> None:
    urls = _protected_urls(fresh_masters)
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    client = redlock_rs.AsyncRedlock(urls, meter_provider=provider)
    lock = await client.acquire("py:metrics:async", ttl=10.0)
    await lock.release()
    await asyncio.sleep(0)
    points = _points(reader)
    assert _values(points, "redlock.acquire.duration", "redlock.outcome") == {"acquired"}
    assert _values(points, "db.client.operation.duration", "server.port") == set(fresh_masters.ports[:3])
    _assert_no_secret(points, [PASSWORD, "py:metrics:async", lock.token])


def test_every_measurement_of_many_threads_is_recorded_once(masters: LocalMasters, resource: str) -> None:
    # Enough cycles that durations are recorded in batches by the calling threads, and the rest
    # at collection: each value exactly once, with its attributes.
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    client = redlock_rs.Redlock(masters.urls, meter_provider=provider)
    threads, cycles = 4, 40
    # The SETs answered per master (concurrent fan-out stops waiting once the quorum is in):
    # each acquire's one attempt measured exactly these.
    answered = [0] * len(masters.ports)

    def work(index: int) -> None:
        for cycle in range(cycles):
            lock = client.acquire(f"{resource}:{index}:{cycle}", ttl=10.0)
            for vote in lock.vote.masters:
                if vote.outcome != "not_awaited":
                    answered[vote.master] += 1  # one thread at a time: the GIL is held
            lock.release()

    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    total = threads * cycles
    # The calling threads recorded batches as they went: few values wait for the collection
    # (each cycle measured about a dozen).
    meter = provider.get_meter("redlock_rs", redlock_rs.__version__)
    assert _metrics._INSTRUMENTS[meter].tally.pending() < total
    points = _points(reader)
    assert _count(points, "redlock.acquire.duration", redlock_outcome="acquired") == total
    assert _count(points, "redlock.release.duration") == total
    assert _count(points, "redlock.attempts", redlock_attempt_result="won") == total
    assert _count(points, "redlock.locks.held") == 0
    requests = "db.client.operation.duration"
    for index, port in enumerate(masters.ports):
        assert _count(points, requests, server_port=port, db_operation_name="SET") == answered[index]
        # A release waits for every master.
        assert _count(points, requests, server_port=port, db_operation_name="EVALSHA") == total
    # A second collection adds nothing: the pending values were recorded once.
    assert _count(_points(reader), requests) == sum(answered) + total * len(masters.ports)


async def test_every_measurement_of_many_coroutines_is_recorded_once(masters: LocalMasters, resource: str) -> None:
    reader = InMemoryMetricReader()
    client = redlock_rs.AsyncRedlock(masters.urls, meter_provider=MeterProvider(metric_readers=[reader]))
    total = 60

    async def cycle(index: int) -> int:
        lock = await client.acquire(f"{resource}:{index}", ttl=10.0)
        await lock.release()
        return sum(1 for vote in lock.vote.masters if vote.outcome != "not_awaited")

    answered = sum(await asyncio.gather(*(cycle(i) for i in range(total))))
    points = _points(reader)
    assert _count(points, "redlock.acquire.duration", redlock_outcome="acquired") == total
    assert _count(points, "redlock.release.duration") == total
    assert _count(points, "db.client.operation.duration", db_operation_name="SET") == answered
    assert _count(points, "db.client.operation.duration", db_operation_name="EVALSHA") == total * len(masters.ports)


def test_renewals_and_a_lost_lock_reach_the_reader_without_another_call(masters: LocalMasters, resource: str) -> None:
    # Background renewals measure on the runtime's threads; a collection records what they
    # measured, with no call of the client's since.
    reader = InMemoryMetricReader()
    client = redlock_rs.Redlock(masters.urls, retry_delay=0.02, meter_provider=MeterProvider(metric_readers=[reader]))
    with pytest.raises(redlock_rs.LockLost):
        with client.lock(resource, ttl=0.5, auto_extend=True) as lock:
            wait_until(lambda: lock.extensions >= 1, 20.0, "a renewal")
            wait_until(
                lambda: _count(_points(reader), "redlock.extend.duration") >= 1, 20.0, "the renewal's duration"
            )
            points = _points(reader)
            assert _count(points, "db.client.operation.duration", db_operation_name="EVALSHA") >= 3  # a quorum
            assert points["redlock.locks.lost"][1] == [({}, 0)]  # observed from the start, at 0
            assert points["redlock.locks.held"][1] == [({}, 1)]
            for index in range(len(masters.ports)):  # the keys vanish: the next renewal finds the lock gone
                masters.command(index, "DEL", resource)
            wait_until(lambda: _count(_points(reader), "redlock.locks.lost") == 1, 20.0, "the lost lock counted")
            # Found lost: no longer held, though not released yet. Users can rely on
            # redlock.locks.held counting the locks they actually hold: a gauge that kept
            # counting lost ones (until a release that may never come) would never come down.
            points = _points(reader)
            assert points["redlock.locks.held"][1] == [({}, 0)]
            assert points["redlock.locks.lost"][1] == [({}, 1)]
    # The release that raised LockLost on leaving the block uncounts nothing more.
    assert _points(reader)["redlock.locks.held"][1] == [({}, 0)]


# The closed vocabularies (redlock_core's AttemptResult and ERROR_TYPES).
RESULTS = ["won", "split", "clean_loss", "expired", "unavailable"]
ERROR_TYPES = ["connection", "server", "protocol", "other", "auth", "tls", "overloaded", "timeout"]


def _by(points: Points, name: str, *keys: str) -> dict[Any, float]:
    """`name`'s points keyed by the values of `keys` (one key: the value itself)."""
    found: dict[Any, float] = {}
    for attributes, n in points[name][1]:
        key = tuple(attributes.get(k) for k in keys)
        found[key[0] if len(keys) == 1 else key] = n
    return found


def test_every_counter_is_observed_at_zero_from_the_start_so_the_first_unavailable_shows(
    fresh_masters: LocalMasters,
) -> None:
    """A series that first appears at 1 (or N) gives a rule's increase() nothing to see: every
    counter's series is observed from the client's start, 0 until it counts."""
    reader = InMemoryMetricReader()
    urls, ports = fresh_masters.urls[:3], fresh_masters.ports[:3]
    client = redlock_rs.Redlock(urls, retry_count=0, meter_provider=MeterProvider(metric_readers=[reader]))
    points = _points(reader)  # before any operation
    assert _by(points, "redlock.attempts", "redlock.attempt.result") == dict.fromkeys(RESULTS, 0)
    assert points["redlock.locks.held"][1] == [({}, 0)]
    assert points["redlock.locks.lost"][1] == [({}, 0)]
    failures = _by(points, "redlock.master.failures", "server.port", "error.type")
    assert failures == {(port, error): 0 for port in ports for error in ERROR_TYPES}
    # The Python SDK makes a histogram's point at its first value (no empty point, no
    # pre-aggregated histogram): durations by outcome are served at 0 by the collector route.
    assert "redlock.acquire.duration" not in points

    fresh_masters.kill(1)
    fresh_masters.kill(2)
    with pytest.raises(redlock_rs.Unavailable):
        client.acquire("py:metrics:unavailable", ttl=10.0)
    points = _points(reader)
    assert _by(points, "redlock.attempts", "redlock.attempt.result") == {**dict.fromkeys(RESULTS, 0), "unavailable": 1}
    assert _by(points, "redlock.acquire.duration", "redlock.outcome") == {"unavailable": 1}
    assert points["redlock.locks.held"][1] == [({}, 0)]
    assert points["redlock.locks.lost"][1] == [({}, 0)]
    failures = _by(points, "redlock.master.failures", "server.port", "error.type")
    assert set(failures) == {(port, error) for port in ports for error in ERROR_TYPES}
    # The killed masters' connection failures (the attempt's request and its clean-up release).
    assert {key for key, n in failures.items() if n} == {(ports[1], "connection"), (ports[2], "connection")}
    client.close()


WITHOUT_OPENTELEMETRY = """
import os, sys
sys.modules["opentelemetry"] = None  # import opentelemetry now raises ImportError
import redlock_rs
urls = os.environ["REDLOCK_URLS"].split(",")
client = redlock_rs.Redlock(urls)
lock = client.acquire("py:metrics:none", ttl=10.0)
print("released", lock.release())
try:
    redlock_rs.Redlock(urls, meter_provider=object())
except ImportError as e:
    print("import error:", e)
"""


def test_redlock_rs_works_without_opentelemetry(
    masters: LocalMasters, python_script: Callable[[str, list[str]], Any]
) -> None:
    proc = python_script(WITHOUT_OPENTELEMETRY, masters.urls)
    out, err = proc.communicate(timeout=30.0)
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert "released 5" in lines, out + err
    assert any("redlock-rs[otel]" in line for line in lines if line.startswith("import error:")), out
    assert sys.modules.get("opentelemetry") is not None


FORK = """
import os
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
import redlock_rs
urls = os.environ["REDLOCK_URLS"].split(",")
reader = InMemoryMetricReader()
provider = MeterProvider(metric_readers=[reader])

def acquires():
    data = reader.get_metrics_data()
    return sum(
        p.count
        for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
        if m.name == "redlock.acquire.duration" for p in m.data.data_points
    )

redlock_rs.Redlock(urls, meter_provider=provider).acquire("py:metrics:fork:parent").release()
pid = os.fork()
if pid == 0:  # a new client on the same provider: the child's own tally
    child = redlock_rs.Redlock(urls, meter_provider=provider)
    for _ in range(2):
        child.acquire("py:metrics:fork:child").release()
    print("child acquires", acquires(), flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status), flush=True)
redlock_rs.Redlock(urls, meter_provider=provider).acquire("py:metrics:fork:parent").release()
print("parent acquires", acquires(), flush=True)
"""


def test_a_forked_child_records_its_own_measurements(
    masters: LocalMasters, python_script: Callable[[str, list[str]], Any]
) -> None:
    # The parent's durations still waiting to be recorded stay the parent's.
    proc = python_script(FORK, masters.urls)
    out, err = proc.communicate(timeout=30.0)
    assert proc.returncode == 0, err
    assert out.splitlines() == ["child acquires 2", "child exit 0", "parent acquires 2"], out + err


GLOBAL_PROVIDER = """
import os
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
import redlock_rs
urls = os.environ["REDLOCK_URLS"].split(",")
before = redlock_rs.Redlock(urls)  # no global provider yet: records nothing
reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
after = redlock_rs.Redlock(urls)  # meter_provider=None: the global one
before.acquire("py:metrics:global:before", ttl=10.0).release()
after.acquire("py:metrics:global:after", ttl=10.0).release()
data = reader.get_metrics_data()
for rm in data.resource_metrics:
    for sm in rm.scope_metrics:
        for m in sm.metrics:
            if m.name == "redlock.acquire.duration":
                print("acquires", sum(p.count for p in m.data.data_points))
"""


def test_the_global_meter_provider_set_before_the_client_is_used(
    masters: LocalMasters, python_script: Callable[[str, list[str]], Any]
) -> None:
    proc = python_script(GLOBAL_PROVIDER, masters.urls)
    out, err = proc.communicate(timeout=30.0)
    assert proc.returncode == 0, err
    assert out.splitlines() == ["acquires 1"], out + err


def test_the_histograms_use_the_core_and_load_generator_buckets(masters: LocalMasters, resource: str) -> None:
    """One bucket set for every surface: the boundaries the SDK exports are the core's
    DURATION_BUCKETS_S (read from its source, the one place they are written)."""
    import re
    from pathlib import Path

    source = (Path(__file__).resolve().parents[2] / "core/src/telemetry/vocabulary.rs").read_text()
    written = re.search(r"DURATION_BUCKETS_S: \[f64; \d+\] = \[([^\]]*)\]", source)
    assert written is not None
    core = [float(v) for v in written.group(1).replace("\n", " ").split(",") if v.strip()]
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    redlock_rs.Redlock(masters.urls, meter_provider=provider).acquire(resource).release()
    data = reader.get_metrics_data()
    assert data is not None
    bounds = {
        metric.name: list(point.explicit_bounds)
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        if sm.scope.name == "redlock_rs"
        for metric in sm.metrics
        for point in metric.data.data_points
        if hasattr(point, "explicit_bounds")
    }
    assert set(bounds) >= {"redlock.acquire.duration", "redlock.release.duration", "db.client.operation.duration"}
    assert all(b == core for b in bounds.values()), (bounds, core)
    provider.shutdown()

