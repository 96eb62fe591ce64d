"""What Python users expect of a library of this kind: picklable errors and votes, close() and
`with`, wait_connected, ResourceWarning for a lock dropped while held, repr and docstrings."""

from __future__ import annotations

import ast
import concurrent.futures
import copy
import gc
import inspect
import multiprocessing
import pickle
import warnings
from pathlib import Path

import pytest
from conftest import FanOutName, LocalMasters

import redlock_rs
from redlock_rs import NotAcquired, Redlock, RedlockError, Unavailable, Vote


def test_not_acquired_pickles_with_its_vote(masters: LocalMasters, resource: str, fanout: FanOutName) -> None:
    redlock = Redlock(masters.urls, fanout=fanout)
    holder = redlock.acquire(resource)
    with pytest.raises(NotAcquired) as caught:
        redlock.try_acquire(resource)
    holder.release()
    err = caught.value
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is NotAcquired and str(again) == str(err)
    assert again.resource == err.resource == resource
    assert err.vote is not None and again.vote == err.vote
    assert again.vote.masters == err.vote.masters and again.vote.denied >= 3
    assert copy.deepcopy(err.vote) == err.vote


def test_unavailable_pickles_with_its_failed_masters(fresh_masters: LocalMasters) -> None:
    for index in (0, 1, 2):
        fresh_masters.kill(index)
    with pytest.raises(Unavailable) as caught:
        Redlock(fresh_masters.urls, retry_count=0).acquire("orders:42")
    again = pickle.loads(pickle.dumps(caught.value))
    assert again.vote == caught.value.vote and again.vote is not None and caught.value.vote is not None
    assert [m.failure for m in again.vote.masters[:3]] == [m.failure for m in caught.value.vote.masters[:3]]


def contend(urls: list[str], resource: str) -> None:
    """Runs in a worker process: loses to the holder and raises NotAcquired."""
    Redlock(urls).try_acquire(resource)


def test_not_acquired_crosses_a_process_pool(masters: LocalMasters, resource: str) -> None:
    holder = Redlock(masters.urls).acquire(resource, ttl=30.0)
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        future = pool.submit(contend, masters.urls, resource)
        with pytest.raises(NotAcquired) as caught:
            future.result(timeout=60)
    holder.release()
    assert caught.value.vote is not None and caught.value.vote.denied >= 3


def test_a_vote_compares_and_shows_every_count(masters: LocalMasters, resource: str) -> None:
    redlock = Redlock(masters.urls, fanout="sequential")
    lock = redlock.acquire(resource)
    vote = lock.vote
    assert vote == pickle.loads(pickle.dumps(vote)) and isinstance(vote, Vote)
    text = repr(vote)
    for field in ("verdict", "granted", "denied", "failed", "timed_out", "not_awaited", "quorum", "elapsed", "validity"):
        assert f"{field}=" in text, (field, text)
    assert "failure=None" in repr(vote.masters[0])
    lock.release()


def test_remaining_is_zero_after_release(masters: LocalMasters, resource: str) -> None:
    lock = Redlock(masters.urls).acquire(resource, ttl=5.0)
    assert lock.remaining() > 0.0
    lock.release()
    assert lock.remaining() == 0.0 and not lock.is_valid()


def test_with_closes_the_client_and_its_locks_still_release(masters: LocalMasters, resource: str) -> None:
    with Redlock(masters.urls) as redlock:
        assert not redlock.closed
        lock = redlock.acquire(resource)
    assert redlock.closed and "closed" in repr(redlock)
    assert redlock.masters == masters.urls and redlock.quorum == 3  # still readable
    for call in (lambda: redlock.acquire(resource), lambda: redlock.wait_connected(1.0), redlock.connected_masters):
        with pytest.raises(RedlockError, match="closed"):
            call()
    assert lock.release() >= 3
    assert masters.values(resource) == [None] * 5
    redlock.close()  # twice is fine


def test_wait_connected_counts_the_masters_up(fresh_masters: LocalMasters) -> None:
    fresh_masters.kill(0)
    fresh_masters.kill(3)
    redlock = Redlock(fresh_masters.urls)
    assert redlock.wait_connected(10.0) == 3
    assert redlock.connected_masters() == 3
    with pytest.raises(ValueError, match="timeout"):
        redlock.wait_connected(-1.0)


def test_a_lock_garbage_collected_while_held_is_released_and_warns(masters: LocalMasters, resource: str) -> None:
    redlock = Redlock(masters.urls)
    lock = redlock.acquire(resource, ttl=30.0)
    with pytest.warns(ResourceWarning, match=f"Lock on \"{resource}\" was garbage-collected while held.*released"):
        del lock
        gc.collect()
    masters.wait_cleared(resource)  # released, not left to its 30 s TTL


def test_released_and_expired_locks_are_collected_quietly(masters: LocalMasters, resource: str) -> None:
    redlock = Redlock(masters.urls)
    released = redlock.acquire(resource)
    released.release()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        del released
        gc.collect()


PUBLIC_CLASSES = [getattr(redlock_rs, name) for name in redlock_rs.__all__ if isinstance(getattr(redlock_rs, name), type)]


@pytest.mark.parametrize("cls", PUBLIC_CLASSES, ids=lambda cls: cls.__name__)
def test_every_public_class_and_member_has_a_docstring(cls: type) -> None:
    assert (cls.__doc__ or "").strip(), cls
    for name, member in vars(cls).items():
        if name.startswith("_") and name not in ("__enter__", "__exit__", "__aenter__", "__aexit__"):
            continue
        if not callable(member) and not hasattr(member, "__get__"):
            continue  # a plain class attribute (e.g. RedlockError.vote = None)
        assert (getattr(member, "__doc__", None) or "").strip(), f"{cls.__name__}.{name} has no docstring"


@pytest.mark.parametrize("cls", [redlock_rs.Redlock, redlock_rs.AsyncRedlock])
def test_help_documents_every_constructor_parameter(cls: type) -> None:
    doc = cls.__doc__ or ""
    for parameter in ("masters", "retry_count", "retry_delay", "drift_factor", "instance_timeout", "fanout", "quorum", "max_extensions"):
        assert parameter in doc, (cls.__name__, parameter)


@pytest.mark.parametrize("cls", [redlock_rs.Redlock, redlock_rs.AsyncRedlock])
def test_the_signatures_show_the_cores_defaults(cls: type, masters: LocalMasters) -> None:
    # DEFAULT_* come from redlock-core's constants; the signatures Python shows must agree.
    constructor = inspect.signature(cls).parameters
    assert constructor["retry_count"].default == redlock_rs.DEFAULT_RETRY_COUNT == 3
    assert constructor["retry_delay"].default == redlock_rs.DEFAULT_RETRY_DELAY == 0.2
    assert constructor["drift_factor"].default == redlock_rs.DEFAULT_DRIFT_FACTOR == 0.01
    assert constructor["instance_timeout"].default == redlock_rs.DEFAULT_INSTANCE_TIMEOUT == 0.05
    assert constructor["fanout"].default == redlock_rs.DEFAULT_FANOUT == "concurrent"
    assert constructor["max_extensions"].default == redlock_rs.DEFAULT_MAX_EXTENSIONS == 1000
    assert constructor["local_handoff"].default is True
    assert constructor["quorum"].default is None
    for method in ("acquire", "try_acquire", "lock"):
        ttl = inspect.signature(getattr(cls, method)).parameters["ttl"].default
        assert ttl == redlock_rs.DEFAULT_TTL == 10.0, method
    # And a client built without them runs with them.
    client = cls(masters.urls)
    assert client.fanout == redlock_rs.DEFAULT_FANOUT
    assert f"retry_count={redlock_rs.DEFAULT_RETRY_COUNT}," in repr(client)
    assert f"retry_delay={redlock_rs.DEFAULT_RETRY_DELAY}," in repr(client)
    assert f"instance_timeout={redlock_rs.DEFAULT_INSTANCE_TIMEOUT}" in repr(client)
    client.close()


def test_every_class_and_function_of_the_stub_has_a_docstring() -> None:
    stub = Path(redlock_rs.__file__).with_name("_redlock_rs.pyi")
    tree = ast.parse(stub.read_text())
    missing = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name.startswith("_") and not node.name.startswith("__"):
                continue  # test hooks
            if node.name in ("__repr__", "__eq__"):
                continue
            if ast.get_docstring(node) is None:
                missing.append(f"{node.name} (line {node.lineno})")
    assert not missing, f"stub entries without a docstring: {missing}"
