"""Metrics through OpenTelemetry's API, when it is installed (``pip install 'redlock-rs[otel]'``),
and the tallies of ``redlock_rs.prometheus``'s collectors.

The instruments and attributes are those of the book's observability page, on the meter
``redlock_rs``. The clients
recording into one meter share its instruments and a ``_Tally`` (Rust), into which the core's
measurements go without the GIL: the counters are summed there and read by observable
instruments when a reader collects; the durations wait there until a thread that holds the
GIL anyway records them (a caller once a batch is due, and every collection: the callbacks
below flush first). No attribute carries a resource name, a token or a password: masters are
named by host and port.
"""

import os
import threading
import weakref
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple
from urllib.parse import urlsplit

from ._redlock_rs import _Tally

# Histogram buckets (s): from a loopback round trip to an acquire that retried for long; the
# core's DURATION_BUCKETS_S, which the load generator uses too (tests/test_metrics.py checks).
_BOUNDARIES = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]


def _server(url: str) -> Dict[str, Any]:
    """server.address and server.port of a (redacted) master URL."""
    parts = urlsplit(url)
    if parts.hostname is None:
        return {"server.address": parts.path}
    return {"server.address": parts.hostname, "server.port": parts.port or 6379}


class _Servers:
    """A tally's server attributes: one id per distinct server, in the order registered."""

    def __init__(self, tally: _Tally) -> None:
        self.tally = tally
        self.attributes: List[Dict[str, Any]] = []
        self._ids: Dict[Tuple[Tuple[str, Any], ...], int] = {}
        self._lock = threading.Lock()

    def ids(self, masters: Sequence[str]) -> List[int]:
        """The tally's id of each master's server attributes."""
        ids = []
        with self._lock:
            for url in masters:
                attributes = _server(url)
                key = tuple(sorted(attributes.items()))
                if key not in self._ids:
                    self._ids[key] = self.tally.add_server(attributes)
                    self.attributes.append(attributes)
                ids.append(self._ids[key])
        return ids


class _Instruments:
    """One meter's instruments, shared by every client recording into it (an observable
    instrument is created once per meter: a second callback under its name would be
    ignored), and the tally they read."""

    def __init__(self, meter: Any) -> None:
        from opentelemetry.context import Context
        from opentelemetry.metrics import Observation

        self._observation = Observation

        def seconds(name: str, description: str) -> Any:
            return meter.create_histogram(
                name, unit="s", description=description, explicit_bucket_boundaries_advisory=_BOUNDARIES
            )

        self._histograms = (
            seconds("redlock.acquire.duration", "Duration of acquires, every attempt and wait included").record,
            seconds("redlock.extend.duration", "Duration of extends").record,
            seconds("redlock.release.duration", "Duration of releases").record,
            seconds("db.client.operation.duration", "Duration of each request to a master").record,
        )
        # Values are recorded in batches, mostly on other threads than the operations that
        # measured them: the recording thread's context (its span) is not theirs.
        self._context = Context()
        self._start_over()
        # The callbacks reach this object weakly: the tally holds the histograms, which hold
        # the SDK's callbacks; strongly, that would be a cycle through Rust the GC cannot see.
        # The registry keeps this object as long as its meter lives.
        this = weakref.ref(self)

        def callback(read: Callable[["_Instruments"], Iterable[Any]]) -> Callable[[Any], Iterable[Any]]:
            def observe(_options: Any) -> Iterable[Any]:
                instruments = this()
                if instruments is None:
                    return []
                # Records the pending durations first, so that they reach this collection (the
                # SDK runs the callbacks before it reads the histograms).
                instruments.tally.flush()
                return read(instruments)

            return observe

        meter.create_observable_counter(
            "redlock.attempts", [callback(_Instruments._attempts)], unit="{attempt}", description="Acquire attempts, by how each ended"
        )
        meter.create_observable_up_down_counter(
            "redlock.locks.held", [callback(_Instruments._held)], unit="{lock}", description="Locks acquired and not yet released"
        )
        meter.create_observable_counter(
            "redlock.locks.lost", [callback(_Instruments._lost)], unit="{lock}", description="Held locks found lost before their release"
        )
        meter.create_observable_counter(
            "redlock.master.failures",
            [callback(_Instruments._failures)],
            unit="{failure}",
            description="Requests to a master that failed or timed out",
        )

    def _start_over(self) -> None:
        """A new tally (and lock): at the start, and in a forked child, whose copy of the
        parent's may be locked by a thread the child does not have. The child's counts start
        from zero; its parent's clients cannot be used there."""
        self.tally = _Tally(*self._histograms, self._context)
        self.servers = _Servers(self.tally)

    def _attempts(self) -> Iterable[Any]:
        return [self._observation(n, {"redlock.attempt.result": result}) for result, n in self.tally.attempts()]

    # Every counter is observed from the start, 0 included (each attempt result, each master's
    # failures for every error.type, the held and lost locks): a series that first appeared at
    # 1 would show no increase() for its first event.
    def _held(self) -> Iterable[Any]:
        return [self._observation(self.tally.locks_held())]

    def _lost(self) -> Iterable[Any]:
        return [self._observation(self.tally.locks_lost())]

    def _failures(self) -> Iterable[Any]:
        servers = self.servers.attributes
        return [
            self._observation(n, {**servers[server], "error.type": error})
            for server, error, n in self.tally.failures()
            if server < len(servers)
        ]


_INSTRUMENTS: "weakref.WeakKeyDictionary[Any, _Instruments]" = weakref.WeakKeyDictionary()
_INSTRUMENTS_LOCK = threading.Lock()
_UNREGISTERED: List[_Instruments] = []
# Every redlock_rs.prometheus collector, for the fork hook.
_COLLECTORS: "weakref.WeakSet[Any]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    global _INSTRUMENTS_LOCK
    _INSTRUMENTS_LOCK = threading.Lock()
    for instruments in [*_INSTRUMENTS.values(), *_UNREGISTERED]:
        instruments._start_over()
    for collector in list(_COLLECTORS):
        collector._start_over()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _instruments(meter: Any) -> _Instruments:
    with _INSTRUMENTS_LOCK:
        try:
            found = _INSTRUMENTS.get(meter)
        except TypeError:  # a meter that cannot be weakly referenced: kept for good
            found = _Instruments(meter)
            _UNREGISTERED.append(found)
            return found
        if found is None:
            found = _INSTRUMENTS[meter] = _Instruments(meter)
        return found


def _is_set(provider: Any) -> bool:
    """False for the API's placeholder providers (no SDK configured): nothing to record."""
    from opentelemetry import metrics

    placeholders = tuple(
        cls
        for cls in (getattr(metrics, "NoOpMeterProvider", None), _proxy_provider_class())
        if isinstance(cls, type)
    )
    return not isinstance(provider, placeholders)


def _proxy_provider_class() -> Any:
    try:
        from opentelemetry.metrics._internal import _ProxyMeterProvider
    except ImportError:
        return None
    return _ProxyMeterProvider


def collector_recorder(collector: Optional[Any], masters: Sequence[str]) -> Optional[Tuple[_Tally, List[int]]]:
    """What one client records into for its ``collector``: the collector's aggregating tally
    and its masters' server ids; None without a collector."""
    if collector is None:
        return None
    servers = getattr(collector, "_redlock_servers", None)
    if not isinstance(servers, _Servers):
        raise TypeError(
            f"collector must be a redlock_rs.prometheus.RedlockCollector, not {type(collector).__name__}"
        )
    return servers.tally, servers.ids(masters)


def recorder(
    meter_provider: Optional[Any], masters: Sequence[str], collector_given: bool = False
) -> Optional[Tuple[_Tally, List[int]]]:
    """What one client records into: its meter's tally and its masters' server ids. None when
    OpenTelemetry is not installed or, without a ``meter_provider``, when no global meter
    provider was set before the client was created or a collector was given (nothing is
    recorded unless turned on)."""
    if meter_provider is None and collector_given:
        return None
    try:
        from opentelemetry import metrics
    except ImportError:
        if meter_provider is not None:
            raise ImportError(
                "meter_provider needs the opentelemetry package: pip install 'redlock-rs[otel]'"
            ) from None
        return None
    from . import __version__

    if meter_provider is None:
        meter_provider = metrics.get_meter_provider()
        if not _is_set(meter_provider):
            return None
    instruments = _instruments(meter_provider.get_meter("redlock_rs", __version__))
    return instruments.tally, instruments.servers.ids(masters)
