"""Masters down or stalled: a quorum still wins; without one the error says Redis is down."""

from __future__ import annotations

import pytest
from conftest import FanOutName, LocalMasters, wait_until

from redlock_rs import LockLost, NotAcquired, Redlock, Unavailable


def test_two_masters_down_still_acquires(fresh_masters: LocalMasters, fanout: FanOutName) -> None:
    redlock = Redlock(fresh_masters.urls, fanout=fanout, retry_count=0)
    fresh_masters.kill(0)
    fresh_masters.kill(3)
    lock = redlock.acquire("orders:42")
    vote = lock.vote
    assert vote.granted == 3
    assert vote.failed + vote.not_awaited == 2
    for index in (0, 3):
        assert vote.masters[index].outcome in ("failed", "timed_out", "not_awaited")
    assert lock.release() == 3


def test_three_masters_down_raises_unavailable(fresh_masters: LocalMasters, fanout: FanOutName) -> None:
    redlock = Redlock(fresh_masters.urls, fanout=fanout, retry_count=1, retry_delay=0.01)
    for index in (1, 2, 4):
        fresh_masters.kill(index)
    with pytest.raises(Unavailable) as caught:
        redlock.acquire("orders:42")
    err = caught.value
    assert not isinstance(err, NotAcquired)  # "Redis is down", not "someone else holds it"
    assert err.vote is not None and err.vote.failed >= 3 and err.vote.granted < 3
    failed = [m for m in err.vote.masters if m.outcome == "failed"]
    assert all(m.failure == "connection" for m in failed)
    assert "unavailable" in str(err)


def test_an_outage_without_contention_is_unavailable_not_a_split_vote(
    fresh_masters: LocalMasters, fanout: FanOutName
) -> None:
    redlock = Redlock(fresh_masters.urls, fanout=fanout, retry_count=0, instance_timeout=0.05)
    redlock.acquire("warm-up").release()  # connections open
    for index in (0, 1, 2):
        fresh_masters.pause(index)
    try:
        with pytest.raises(Unavailable) as caught:
            redlock.acquire("orders:42")
    finally:
        for index in (0, 1, 2):
            fresh_masters.resume(index)
    vote = caught.value.vote
    assert vote is not None and vote.verdict == "unavailable" and vote.denied == 0
    # Each master counted once: timed-out masters are a part of the failed ones.
    assert vote.granted + vote.denied + vote.failed + vote.not_awaited == 5
    assert vote.timed_out <= vote.failed
    assert f"failed={vote.failed} (timed_out={vote.timed_out})" in repr(vote)
    message = str(caught.value)
    assert message.startswith('lock on "orders:42" unavailable after 1 attempt in '), message
    assert message.count("timed out (") == 1 and "split" not in message, message


def test_a_stalled_master_costs_at_most_its_timeout(fresh_masters: LocalMasters, fanout: FanOutName) -> None:
    redlock = Redlock(fresh_masters.urls, fanout=fanout, instance_timeout=0.05)
    lock = redlock.acquire("warm-up")  # connections open
    lock.release()
    fresh_masters.pause(2)
    try:
        lock = redlock.acquire("orders:42")
        outcome = lock.vote.masters[2].outcome
        assert outcome in ("timed_out", "not_awaited")
        if fanout == "sequential":
            assert outcome == "timed_out" and lock.vote.timed_out == 1
    finally:
        fresh_masters.resume(2)
    lock.release()


def test_extend_without_a_quorum_of_masters_raises_unavailable(fresh_masters: LocalMasters, fanout: FanOutName) -> None:
    redlock = Redlock(fresh_masters.urls, fanout=fanout)
    lock = redlock.acquire("orders:42", ttl=30.0)
    for index in (0, 1, 2):
        fresh_masters.kill(index)
    with pytest.raises(Unavailable):
        lock.extend()
    assert lock.release() == 2  # the two masters still up let go


def test_auto_extend_is_lost_as_soon_as_the_validity_runs_out(fresh_masters: LocalMasters, fanout: FanOutName) -> None:
    # A per-master timeout longer than the TTL: with a quorum paused, a renewal round outlasts
    # the validity. Leaving the block once the validity ran out must report the loss, however
    # far the renewal still is from giving up.
    redlock = Redlock(fresh_masters.urls, fanout=fanout, instance_timeout=0.5)
    try:
        with pytest.raises(LockLost):
            with redlock.lock("watchdog", ttl=0.3, auto_extend=True) as lock:
                for index in (0, 1, 2):
                    fresh_masters.pause(index)
                wait_until(lambda: not lock.is_valid(), 10.0, "the validity to run out")
                assert "status='lost'" in repr(lock)
    finally:
        for index in (0, 1, 2):
            fresh_masters.resume(index)
    assert not lock.is_valid()
