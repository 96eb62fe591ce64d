"""Exact histograms for Prometheus at no per-operation cost: a ``prometheus_client`` collector
(``pip install 'redlock-rs[prometheus]'``).

The clients given ``collector=`` aggregate their durations in Rust, into the buckets every
surface uses (100 µs to 10 s), and count their attempts, held and lost locks and master
failures there; the collector reads those figures when Prometheus scrapes and serves them
under the names OpenTelemetry's Prometheus exporter gives the same instruments
(``redlock_acquire_duration_seconds``, ``redlock_attempts_total``, ...)::

    from prometheus_client import start_http_server
    from redlock_rs import Redlock
    from redlock_rs.prometheus import RedlockCollector

    collector = RedlockCollector()  # registered with prometheus_client's default registry
    redlock = Redlock(masters, collector=collector)
    start_http_server(9464)

Every value is counted, in the bucket whose upper bound is the first at or above it (the
``le`` of Prometheus). No label carries a resource name, a token or a password.
"""

from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

from prometheus_client.registry import REGISTRY, Collector, CollectorRegistry
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.utils import floatToGoString

from ._metrics import _BOUNDARIES, _COLLECTORS, _Servers
from ._redlock_rs import _Tally

__all__ = ["RedlockCollector"]

# prometheus_client's own spelling of a bound (untyped there), as its Histogram writes `le`.
_LE = [floatToGoString(bound) for bound in _BOUNDARIES] + ["+Inf"]  # type: ignore[no-untyped-call]
_SERVER_LABELS = ["server_address", "server_port"]

# The tally's histograms, by index: (name, help, label names).
_HISTOGRAMS: List[Tuple[str, str, List[str]]] = [
    (
        "redlock_acquire_duration_seconds",
        "Duration of acquires, every attempt and wait included",
        ["redlock_outcome", "redlock_fanout"],
    ),
    ("redlock_extend_duration_seconds", "Duration of extends", []),
    ("redlock_release_duration_seconds", "Duration of releases", []),
    (
        "db_client_operation_duration_seconds",
        "Duration of each request to a master",
        ["db_system_name", "db_operation_name", *_SERVER_LABELS, "error_type"],
    ),
]


def _labels(attributes: Dict[str, Any], names: List[str]) -> List[str]:
    """The label values of `names` from OpenTelemetry attributes ("" for one not set: the same
    as no label to Prometheus)."""
    found = {key.replace(".", "_"): str(value) for key, value in attributes.items()}
    return [found.get(name, "") for name in names]


class RedlockCollector(Collector):
    """The figures of the clients created with ``collector=`` this collector, for a
    ``prometheus_client`` registry (``registry=None``: register it yourself).

    Costs nothing per operation beyond an addition in Rust: no Python code runs until a
    scrape, which reads every series' bucket counts at once."""

    def __init__(self, registry: Optional[CollectorRegistry] = REGISTRY) -> None:
        self._start_over()
        _COLLECTORS.add(self)
        if registry is not None:
            registry.register(self)

    def _start_over(self) -> None:
        """A new tally: at the start, and in a forked child (see ``_metrics.py``)."""
        self._redlock_servers = _Servers(_Tally.aggregating())

    def describe(self) -> Iterable[Metric]:
        """The families served, without samples (for the registry's duplicate check)."""
        histograms, others = _families()
        return [*histograms, *others]

    def collect(self) -> Iterator[Metric]:
        histograms, (attempts, held, lost, failures) = _families()
        tally = self._redlock_servers.tally
        for index, attributes, counts, total in tally.histograms():
            cumulative, buckets = 0, []
            for le, count in zip(_LE, counts):
                cumulative += count
                buckets.append((le, float(cumulative)))
            histograms[index].add_metric(_labels(attributes, _HISTOGRAMS[index][2]), buckets, total)
        for result, n in tally.attempts():  # every result, 0 until seen
            attempts.add_metric([result], n)
        held.add_metric([], tally.locks_held())
        lost.add_metric([], tally.locks_lost())
        servers = self._redlock_servers.attributes
        for server, error, n in tally.failures():
            if server < len(servers):
                failures.add_metric([*_labels(servers[server], _SERVER_LABELS), error], n)
        yield from histograms
        yield from (attempts, held, lost, failures)


def _families() -> Tuple[
    List[HistogramMetricFamily], Tuple[CounterMetricFamily, GaugeMetricFamily, CounterMetricFamily, CounterMetricFamily]
]:
    """The collector's families, empty."""
    histograms = [HistogramMetricFamily(name, doc, labels=labels) for name, doc, labels in _HISTOGRAMS]
    return histograms, (
        CounterMetricFamily("redlock_attempts", "Acquire attempts, by how each ended", labels=["redlock_attempt_result"]),
        GaugeMetricFamily("redlock_locks_held", "Locks acquired and not yet released"),
        CounterMetricFamily("redlock_locks_lost", "Held locks found lost before their release"),
        CounterMetricFamily(
            "redlock_master_failures",
            "Requests to a master that failed or timed out",
            labels=[*_SERVER_LABELS, "error_type"],
        ),
    )
