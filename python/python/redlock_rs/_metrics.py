"""Metrics through OpenTelemetry's API, when it is installed (``pip install 'redlock-rs[otel]'``).

The instruments and attributes are DESIGN §9's, on the meter ``redlock_rs``. The Rust core
hands each client's measurements over in batches (one per finished operation); this module
only turns them into instrument calls. No attribute carries a resource name, a token or a
password: masters are named by host and port.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import urlsplit

# Histogram buckets (s): from a loopback round trip to a long wait.
_BOUNDARIES = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0]


def _server(url: str) -> Dict[str, Any]:
    """server.address and server.port of a (redacted) master URL."""
    parts = urlsplit(url)
    if parts.hostname is None:
        return {"server.address": parts.path}
    return {"server.address": parts.hostname, "server.port": parts.port or 6379}


class _Recorder:
    def __init__(self, meter: Any, masters: Sequence[str], fanout: str) -> None:
        def seconds(name: str, description: str) -> Any:
            return meter.create_histogram(
                name, unit="s", description=description, explicit_bucket_boundaries_advisory=_BOUNDARIES
            )

        self._acquire = seconds("redlock.acquire.duration", "Duration of acquires, every attempt and wait included")
        self._extend = seconds("redlock.extend.duration", "Duration of extends")
        self._release = seconds("redlock.release.duration", "Duration of releases")
        self._request = seconds("db.client.operation.duration", "Duration of each request to a master")
        self._attempts = meter.create_counter("redlock.attempts", unit="{attempt}", description="Acquire attempts, by how each ended")
        self._held = meter.create_up_down_counter("redlock.locks.held", unit="{lock}", description="Locks acquired and not yet released")
        self._lost = meter.create_counter("redlock.locks.lost", unit="{lock}", description="Held locks found lost before their release")
        self._failures = meter.create_counter(
            "redlock.master.failures", unit="{failure}", description="Requests to a master that failed or timed out"
        )
        self._fanout = fanout
        self._servers = [_server(url) for url in masters]
        self._requests = {
            (i, op): {"db.system.name": "redis", "db.operation.name": op, **server}
            for i, server in enumerate(self._servers)
            for op in ("SET", "EVALSHA")
        }

    def __call__(self, batch: List[Tuple[Any, ...]]) -> None:
        for item in batch:
            kind = item[0]
            if kind == "request":
                _, master, operation, seconds, error = item
                attributes = self._requests[(master, operation)]
                if error is None:
                    self._request.record(seconds, attributes)
                else:
                    self._request.record(seconds, {**attributes, "error.type": error})
                    self._failures.add(1, {**self._servers[master], "error.type": error})
            elif kind == "attempt":
                self._attempts.add(1, {"redlock.attempt.result": item[1]})
            elif kind == "acquire":
                self._acquire.record(item[2], {"redlock.outcome": item[1], "redlock.fanout": self._fanout})
            elif kind == "held":
                self._held.add(item[1])
            elif kind == "extend":
                self._extend.record(item[1])
            elif kind == "release":
                self._release.record(item[1])
            elif kind == "lost":
                self._lost.add(1)


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


def recorder(meter_provider: Optional[Any], masters: Sequence[str], fanout: str) -> Optional[_Recorder]:
    """The recorder of one client: None when OpenTelemetry is not installed or, without a
    ``meter_provider``, when no global meter provider was set before the client was created
    (nothing is recorded unless turned on)."""
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
    meter = meter_provider.get_meter("redlock_rs", __version__)
    return _Recorder(meter, masters, fanout)
