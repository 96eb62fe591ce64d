"""Every bad argument raises ValueError/TypeError naming it; nothing crashes."""

from __future__ import annotations

import math
from typing import Any

import pytest
from conftest import LocalMasters

from redlock_rs import AsyncRedlock, Redlock

CLIENTS = [Redlock, AsyncRedlock]


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize(
    ("kwargs", "error", "names"),
    [
        ({"retry_count": -1}, ValueError, "retry_count"),
        ({"retry_count": 2**32}, ValueError, "retry_count"),
        ({"retry_count": 1.5}, TypeError, "retry_count"),
        ({"retry_delay": -0.1}, ValueError, "retry_delay"),
        ({"retry_delay": math.nan}, ValueError, "retry_delay"),
        ({"retry_delay": "0.2"}, TypeError, "retry_delay"),
        ({"drift_factor": 1.5}, ValueError, "drift_factor"),
        ({"drift_factor": -0.01}, ValueError, "drift_factor"),
        ({"drift_factor": math.inf}, ValueError, "drift_factor"),
        ({"instance_timeout": 0.0}, ValueError, "instance_timeout"),
        ({"instance_timeout": -1.0}, ValueError, "instance_timeout"),
        ({"fanout": "parallel"}, ValueError, "parallel"),
        ({"fanout": 1}, TypeError, "fanout"),
        ({"quorum": 2}, ValueError, "quorum 2"),
        ({"quorum": 6}, ValueError, "quorum 6"),
        ({"quorum": 0}, ValueError, "quorum"),
        ({"quorum": -3}, ValueError, "quorum"),
        ({"max_extensions": -1}, ValueError, "max_extensions"),
        # Ints beyond a C long or a float: ValueError naming the argument, not OverflowError.
        ({"retry_count": 2**64}, ValueError, "retry_count"),
        ({"retry_count": -(10**400)}, ValueError, "retry_count"),
        ({"quorum": 2**70}, ValueError, "quorum"),
        ({"max_extensions": 10**30}, ValueError, "max_extensions"),
        ({"retry_delay": 10**400}, ValueError, "retry_delay"),
        ({"instance_timeout": 10**400}, ValueError, "instance_timeout"),
        ({"drift_factor": 10**400}, ValueError, "drift_factor"),
        ({"retry_count": "3"}, TypeError, "retry_count"),
        ({"quorum": 3.0}, TypeError, "quorum"),
        ({"local_handoff": 1}, TypeError, "local_handoff"),
        ({"local_handoff": "no"}, TypeError, "local_handoff"),
        ({"local_handoff": None}, TypeError, "local_handoff"),
    ],
)
def test_bad_client_settings(
    client: type[Any], masters: LocalMasters, kwargs: dict[str, Any], error: type[Exception], names: str
) -> None:
    with pytest.raises(error) as caught:
        client(masters.urls, **kwargs)
    # The message itself names the argument (not only a note added to it).
    assert names in str(caught.value)
    assert not isinstance(caught.value, OverflowError)


@pytest.mark.parametrize("client", CLIENTS)
def test_local_handoff_is_on_unless_turned_off(client: type[Any], masters: LocalMasters) -> None:
    assert client(masters.urls).local_handoff is True
    assert client(masters.urls, local_handoff=False).local_handoff is False


@pytest.mark.parametrize("client", CLIENTS)
def test_bad_master_lists(client: type[Any]) -> None:
    with pytest.raises(ValueError, match="masters"):
        client([])
    with pytest.raises(TypeError) as caught:
        client("redis://user:s3cret@127.0.0.1:7001")  # a str, not a list of URLs
    assert "masters" in str(caught.value) and "s3cret" not in str(caught.value)
    with pytest.raises(TypeError) as caught:
        client(["redis://127.0.0.1:7001", 7001])
    assert "masters[1]" in str(caught.value)
    with pytest.raises(TypeError) as caught:
        client(7001)
    assert "masters" in str(caught.value)
    with pytest.raises(TypeError):
        client(["redis://127.0.0.1:7001"], 3)  # settings are keyword-only
    with pytest.raises(ValueError, match="not-a-url"):
        client(["not-a-url"])


@pytest.mark.parametrize("client", CLIENTS)
def test_an_unparsable_url_is_named_without_its_password(client: type[Any]) -> None:
    with pytest.raises(ValueError) as caught:
        client(["redis://user:s3cret@127.0.0.1:notaport"])
    assert "s3cret" not in str(caught.value)
    assert "notaport" in str(caught.value)


@pytest.mark.parametrize("client", CLIENTS)
def test_the_core_checks_values_and_python_shows_them_in_seconds(client: type[Any], masters: LocalMasters) -> None:
    # One check, in the core; Python only puts the value in its own unit (seconds).
    with pytest.raises(ValueError, match=r"^instance_timeout 0\.0: must be greater than zero$"):
        client(masters.urls, instance_timeout=0)
    with pytest.raises(ValueError, match=r"^quorum 0: must be between 3 \(majority\) and 5 \(all masters\)$"):
        client(masters.urls, quorum=0)
    with pytest.raises(ValueError, match=r"^retry_delay -0\.1: must be a finite number of seconds >= 0"):
        client(masters.urls, retry_delay=-0.1)


def test_a_bad_ttl_is_named_in_seconds(masters: LocalMasters) -> None:
    redlock = Redlock(masters.urls)
    with pytest.raises(ValueError, match=r"^ttl 0\.001: must be longer than the clock-drift allowance 0\.00201 s \(ttl × drift_factor \+ 0\.002 s\)$"):
        redlock.acquire("r", ttl=0.001)
    with pytest.raises(ValueError, match=r"^ttl 0\.0: must be longer"):
        redlock.try_acquire("r", ttl=0)


BAD_CALLS: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"resource": ""}, ValueError, "resource"),
    ({"resource": 42}, TypeError, "resource"),
    ({"resource": "r", "ttl": 0.0}, ValueError, "ttl"),
    ({"resource": "r", "ttl": -1.0}, ValueError, "ttl"),
    ({"resource": "r", "ttl": math.nan}, ValueError, "ttl"),
    ({"resource": "r", "ttl": math.inf}, ValueError, "ttl"),
    ({"resource": "r", "ttl": 0.001}, ValueError, "ttl"),  # not longer than the drift allowance
    ({"resource": "r", "ttl": 1e12}, ValueError, "ttl"),
    ({"resource": "r", "ttl": "10"}, TypeError, "ttl"),
    ({"resource": "r", "timeout": -1.0}, ValueError, "timeout"),
    ({"resource": "r", "timeout": math.nan}, ValueError, "timeout"),
    ({"resource": "r", "timeout": "1"}, TypeError, "timeout"),
    ({"resource": "r", "ttl": 10**400}, ValueError, "ttl"),
    ({"resource": "r", "ttl": -(10**400)}, ValueError, "ttl"),
    ({"resource": "r", "timeout": 10**400}, ValueError, "timeout"),
]


@pytest.mark.parametrize(("kwargs", "error", "names"), BAD_CALLS)
def test_bad_acquire_arguments(
    masters: LocalMasters, kwargs: dict[str, Any], error: type[Exception], names: str
) -> None:
    redlock = Redlock(masters.urls)
    with pytest.raises(error) as caught:
        redlock.acquire(**kwargs)
    assert names in str(caught.value) and not isinstance(caught.value, OverflowError)
    if "timeout" not in kwargs:
        with pytest.raises(error, match=names):
            redlock.try_acquire(**kwargs)
    with pytest.raises(error, match=names):
        with redlock.lock(**kwargs):
            pass
    assert masters.values("r") == [None] * 5


@pytest.mark.parametrize(("kwargs", "error", "names"), BAD_CALLS)
async def test_bad_async_acquire_arguments(
    masters: LocalMasters, kwargs: dict[str, Any], error: type[Exception], names: str
) -> None:
    redlock = AsyncRedlock(masters.urls)
    with pytest.raises(error, match=names):
        await redlock.acquire(**kwargs)
    if "timeout" not in kwargs:
        with pytest.raises(error, match=names):
            await redlock.try_acquire(**kwargs)


@pytest.mark.parametrize(
    ("ttl", "error"), [(0.0, ValueError), (-2.0, ValueError), (math.nan, ValueError), ("5", TypeError)]
)
def test_bad_extend_ttl(masters: LocalMasters, ttl: Any, error: type[Exception]) -> None:
    lock = Redlock(masters.urls).acquire("r")
    with pytest.raises(error, match="ttl"):
        lock.extend(ttl)
    assert lock.extensions == 0 and lock.is_valid()
    lock.release()


def test_bad_context_manager_arguments(masters: LocalMasters) -> None:
    with pytest.raises(TypeError, match="auto_extend"):
        Redlock(masters.urls).lock("r", auto_extend="yes")  # type: ignore[arg-type]
