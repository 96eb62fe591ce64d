"""redlock_rs.prometheus.RedlockCollector: histograms aggregated in Rust and served as exact
bucket counts at collection, checked against OpenTelemetry's SDK fed the same values (one
client recording into both), on real masters with won, contended, unavailable and failed
requests."""

from __future__ import annotations

from typing import Any, Callable

import pytest
from conftest import LocalMasters
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader, NumberDataPoint
from prometheus_client import CollectorRegistry, generate_latest

import redlock_rs
from redlock_rs.prometheus import RedlockCollector

# OpenTelemetry instrument -> the collector's family.
FAMILIES = {
    "redlock.acquire.duration": "redlock_acquire_duration_seconds",
    "redlock.extend.duration": "redlock_extend_duration_seconds",
    "redlock.release.duration": "redlock_release_duration_seconds",
    "db.client.operation.duration": "db_client_operation_duration_seconds",
}
Series = dict[tuple[str, frozenset[tuple[str, str]]], tuple[list[float], float]]
# The closed vocabularies (redlock_core's AcquireOutcome, AttemptResult, ERROR_TYPES).
OUTCOMES = ["acquired", "not_acquired", "unavailable", "cancelled", "error"]
RESULTS = ["won", "split", "clean_loss", "expired", "unavailable"]
ERROR_TYPES = ["connection", "server", "protocol", "other", "auth", "tls", "overloaded", "timeout"]


def sdk_histograms(reader: InMemoryMetricReader) -> Series:
    """(family, labels) -> (cumulative bucket counts, sum) from the SDK's own histograms."""
    found: Series = {}
    data = reader.get_metrics_data()
    assert data is not None
    for resource_metrics in data.resource_metrics:
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                if metric.name not in FAMILIES:
                    continue
                for point in metric.data.data_points:
                    assert isinstance(point, HistogramDataPoint)
                    labels = frozenset((k.replace(".", "_"), str(v)) for k, v in (point.attributes or {}).items())
                    cumulative, total = [], 0
                    for count in point.bucket_counts:
                        total += count
                        cumulative.append(float(total))
                    found[(FAMILIES[metric.name], labels)] = (cumulative, point.sum)
    return found


def sdk_attempts(reader: InMemoryMetricReader) -> dict[frozenset[tuple[str, str]], float]:
    """The SDK's `redlock.attempts`, keyed by the collector's label set."""
    found: dict[frozenset[tuple[str, str]], float] = {}
    data = reader.get_metrics_data()
    assert data is not None
    for resource_metrics in data.resource_metrics:
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                if metric.name != "redlock.attempts":
                    continue
                for point in metric.data.data_points:
                    assert isinstance(point, NumberDataPoint)
                    labels = frozenset((k.replace(".", "_"), str(v)) for k, v in (point.attributes or {}).items())
                    found[labels] = float(point.value)
    return found


def collector_histograms(registry: CollectorRegistry) -> Series:
    """The same from the collector's samples (empty labels dropped, as Prometheus drops them)."""
    buckets: dict[tuple[str, frozenset[tuple[str, str]]], list[float]] = {}
    sums: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for family in registry.collect():
        if family.name not in FAMILIES.values():
            continue
        for sample in family.samples:
            labels = frozenset((k, v) for k, v in sample.labels.items() if k != "le" and v != "")
            key = (family.name, labels)
            if sample.name.endswith("_bucket"):
                buckets.setdefault(key, []).append(sample.value)
            elif sample.name.endswith("_sum"):
                sums[key] = sample.value
    return {key: (counts, sums[key]) for key, counts in buckets.items()}


def sample_values(registry: CollectorRegistry, name: str) -> dict[frozenset[tuple[str, str]], float]:
    return {
        frozenset(s.labels.items()): s.value for family in registry.collect() for s in family.samples if s.name == name
    }


def test_bucket_counts_equal_the_sdks_for_the_same_values(fresh_masters: LocalMasters) -> None:
    registry = CollectorRegistry()
    collector = RedlockCollector(registry=registry)
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    client = redlock_rs.Redlock(fresh_masters.urls, retry_count=0, meter_provider=provider, collector=collector)
    rival = redlock_rs.Redlock(fresh_masters.urls, retry_count=0, meter_provider=provider, collector=collector)
    acquires = 0
    for i in range(200):
        lock = client.acquire(f"py:collector:{i}", ttl=10.0)
        acquires += 1
        if i % 3 == 0:
            lock.extend(10.0)
        with pytest.raises(redlock_rs.NotAcquired):
            acquires += 1
            rival.acquire(f"py:collector:{i}", ttl=10.0)
        lock.release()
    fresh_masters.kill(0)  # failed requests: their own series, with error_type
    for i in range(20):
        client.acquire(f"py:collector:down:{i}", ttl=10.0).release()
        acquires += 1
    fresh_masters.kill(1)
    fresh_masters.kill(2)
    with pytest.raises(redlock_rs.Unavailable):
        acquires += 1
        client.acquire("py:collector:unavailable", ttl=10.0)

    sdk = sdk_histograms(reader)  # flushes every pending value into the SDK first
    everything = collector_histograms(registry)
    # The collector serves a client's series from its start at 0; the SDK those with a value.
    ours = {key: value for key, value in everything.items() if value[0][-1] > 0}
    assert set(ours) == set(sdk)
    assert {labels for name, labels in everything if name == "redlock_acquire_duration_seconds"} == {
        frozenset({("redlock_outcome", o), ("redlock_fanout", "concurrent")}) for o in OUTCOMES
    }
    for key, (counts, total) in sdk.items():
        assert ours[key][0] == counts, key
        assert ours[key][1] == pytest.approx(total, rel=1e-9, abs=1e-12), key
    outcomes = {dict(labels)["redlock_outcome"] for name, labels in ours if name == "redlock_acquire_duration_seconds"}
    assert outcomes == {"acquired", "not_acquired", "unavailable"}
    acquire_count = sum(
        counts[-1] for (name, _), (counts, _) in ours.items() if name == "redlock_acquire_duration_seconds"
    )
    assert acquire_count == acquires
    assert any(dict(labels).get("error_type") for name, labels in ours if name.startswith("db_client"))

    attempts = sample_values(registry, "redlock_attempts_total")
    # Both routes serve every result, 0 for those not seen.
    assert attempts == sdk_attempts(reader)
    won = attempts[frozenset({("redlock_attempt_result", "won")})]
    lost = [attempts.get(frozenset({("redlock_attempt_result", r)}), 0) for r in ("clean_loss", "split")]
    assert won == 220
    # Each rival call lost its one attempt: a clean loss, or (a holder's SET that reached a
    # master after its timeout, on a busy machine) a split vote.
    assert sum(lost) == 200
    assert sample_values(registry, "redlock_locks_held") == {frozenset(): 0.0}
    failures = sample_values(registry, "redlock_master_failures_total")
    failed = {dict(labels)["server_port"] for labels, n in failures.items() if n}
    assert failed == {str(p) for p in fresh_masters.ports[:3]}
    client.close()
    rival.close()
    provider.shutdown()


def test_every_series_is_served_at_zero_from_the_clients_start(masters: LocalMasters) -> None:
    """Before any operation: each outcome, attempt result, master and cause at 0, so that a
    rule's increase() sees the first event (a series that first appears at 1 shows none)."""
    registry = CollectorRegistry()
    collector = RedlockCollector(registry=registry)
    with redlock_rs.Redlock(masters.urls, collector=collector):
        counts = sample_values(registry, "redlock_acquire_duration_seconds_count")
        assert {dict(labels)["redlock_outcome"]: n for labels, n in counts.items()} == dict.fromkeys(OUTCOMES, 0.0)
        attempts = sample_values(registry, "redlock_attempts_total")
        assert sorted(dict(labels)["redlock_attempt_result"] for labels in attempts) == sorted(RESULTS)
        assert set(attempts.values()) == {0.0}
        assert sample_values(registry, "redlock_locks_lost_total") == {frozenset(): 0.0}
        assert sample_values(registry, "redlock_locks_held") == {frozenset(): 0.0}
        failures = sample_values(registry, "redlock_master_failures_total")
        assert set(failures.values()) == {0.0}
        per_master = {(dict(labels)["server_port"], dict(labels)["error_type"]) for labels in failures}
        assert per_master == {(str(port), error) for port in masters.ports for error in ERROR_TYPES}


def test_the_first_unavailable_acquire_moves_only_its_series_from_zero(fresh_masters: LocalMasters) -> None:
    registry = CollectorRegistry()
    ports = [str(port) for port in fresh_masters.ports[:3]]
    with redlock_rs.Redlock(fresh_masters.urls[:3], retry_count=0, collector=RedlockCollector(registry=registry)) as client:
        fresh_masters.kill(1)
        fresh_masters.kill(2)
        with pytest.raises(redlock_rs.Unavailable):
            client.acquire("py:collector:unavailable", ttl=10.0)
        counts = sample_values(registry, "redlock_acquire_duration_seconds_count")
        assert {dict(labels)["redlock_outcome"]: n for labels, n in counts.items()} == {
            **dict.fromkeys(OUTCOMES, 0.0),
            "unavailable": 1.0,
        }
        attempts = sample_values(registry, "redlock_attempts_total")
        assert {dict(labels)["redlock_attempt_result"]: n for labels, n in attempts.items()} == {
            **dict.fromkeys(RESULTS, 0.0),
            "unavailable": 1.0,
        }
        assert sample_values(registry, "redlock_locks_held") == {frozenset(): 0.0}
        assert sample_values(registry, "redlock_locks_lost_total") == {frozenset(): 0.0}
        failures = {
            (dict(labels)["server_port"], dict(labels)["error_type"]): n
            for labels, n in sample_values(registry, "redlock_master_failures_total").items()
        }
        assert set(failures) == {(port, error) for port in ports for error in ERROR_TYPES}
        # The killed masters' connection failures (the attempt's request and its clean-up release).
        assert {key for key, n in failures.items() if n} == {(ports[1], "connection"), (ports[2], "connection")}


def test_a_lost_lock_no_longer_counts_as_held_and_counts_as_lost_once(masters: LocalMasters, resource: str) -> None:
    registry = CollectorRegistry()
    with redlock_rs.Redlock(masters.urls, collector=RedlockCollector(registry=registry)) as client:
        lock = client.acquire(resource, ttl=10.0)
        assert sample_values(registry, "redlock_locks_held") == {frozenset(): 1.0}
        for index in range(len(masters.ports)):  # the keys vanish behind the holder's back
            masters.command(index, "DEL", resource)
        with pytest.raises(redlock_rs.LockLost):
            lock.extend()
        assert sample_values(registry, "redlock_locks_held") == {frozenset(): 0.0}
        assert sample_values(registry, "redlock_locks_lost_total") == {frozenset(): 1.0}
        lock.release()  # nothing left to release: uncounts nothing more
        assert sample_values(registry, "redlock_locks_held") == {frozenset(): 0.0}
        assert sample_values(registry, "redlock_locks_lost_total") == {frozenset(): 1.0}


def test_text_exposition_names_no_resource_and_no_token(masters: LocalMasters) -> None:
    registry = CollectorRegistry()
    collector = RedlockCollector(registry=registry)
    with redlock_rs.Redlock(masters.urls, collector=collector) as client:
        lock = client.acquire("py:collector:secret-name")
        token = lock.token
        lock.release()
    text = generate_latest(registry).decode()
    assert 'redlock_acquire_duration_seconds_bucket{le="0.0001",redlock_fanout="concurrent",redlock_outcome="acquired"}' in text
    assert 'redlock_acquire_duration_seconds_count{redlock_fanout="concurrent",redlock_outcome="acquired"} 1.0' in text
    assert "redlock_locks_lost_total 0.0" in text
    assert 'db_operation_name="SET"' in text
    assert "secret-name" not in text and token not in text


GLOBAL_PROVIDER = """
import os
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from prometheus_client import CollectorRegistry
import redlock_rs
from redlock_rs.prometheus import RedlockCollector
urls = os.environ["REDLOCK_URLS"].split(",")
reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
registry = CollectorRegistry()
client = redlock_rs.Redlock(urls, collector=RedlockCollector(registry=registry))
client.acquire("py:collector:only").release()
data = reader.get_metrics_data()
sdk = [m.name for rm in (data.resource_metrics if data else []) for sm in rm.scope_metrics for m in sm.metrics]
print("sdk", sorted(n for n in sdk if n.startswith("redlock.")))
print("collector releases", registry.get_sample_value("redlock_release_duration_seconds_count"))
"""


def test_a_set_global_meter_provider_is_not_used_when_a_collector_is_given(
    masters: LocalMasters, python_script: Callable[[str, list[str]], Any]
) -> None:
    proc = python_script(GLOBAL_PROVIDER, masters.urls)
    out, err = proc.communicate(timeout=30.0)
    assert proc.returncode == 0, err
    assert out.splitlines() == ["sdk []", "collector releases 1.0"], out + err


def test_anything_else_as_collector_is_a_type_error(masters: LocalMasters) -> None:
    with pytest.raises(TypeError, match="collector must be a redlock_rs.prometheus.RedlockCollector, not dict"):
        redlock_rs.Redlock(masters.urls, collector={})
    with pytest.raises(TypeError, match="RedlockCollector, not CollectorRegistry"):
        redlock_rs.AsyncRedlock(masters.urls, collector=CollectorRegistry())
