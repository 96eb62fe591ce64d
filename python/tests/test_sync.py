"""The blocking API on real masters, in both fan-out modes."""

from __future__ import annotations

import re
import threading
import time

import pytest
from conftest import FanOutName, LocalMasters, wait_until

import redlock_rs
from redlock_rs import LockLost, NotAcquired, Redlock, RedlockError


@pytest.fixture
def redlock(masters: LocalMasters, fanout: FanOutName) -> Redlock:
    return Redlock(masters.urls, fanout=fanout, retry_delay=0.02)


def test_acquire_sets_token_on_a_quorum_and_release_removes_it(
    redlock: Redlock, masters: LocalMasters, resource: str
) -> None:
    lock = redlock.acquire(resource, ttl=5.0)
    assert lock.resource == resource
    assert len(lock.token) == 40 and int(lock.token, 16) >= 0
    assert 0.0 < lock.validity <= 5.0
    assert lock.ttl == 5.0
    assert lock.is_valid() and 0.0 < lock.remaining() <= lock.validity
    assert masters.holders_of(resource, lock.token) >= 3
    released = lock.release()
    assert released >= 3
    masters.wait_cleared(resource)
    assert not lock.is_valid()


def test_vote_reports_every_master(redlock: Redlock, resource: str, fanout: FanOutName) -> None:
    lock = redlock.acquire(resource)
    vote = lock.vote
    assert vote.won and vote.verdict == "won"
    assert vote.quorum == 3 and vote.granted >= 3
    assert vote.granted + vote.denied + vote.failed + vote.not_awaited == 5
    assert vote.elapsed > 0.0 and vote.validity is not None and vote.validity > 0.0
    assert [m.master for m in vote.masters] == [0, 1, 2, 3, 4]
    for master in vote.masters:
        assert master.outcome in ("granted", "not_awaited")
        assert master.failure is None
        if master.outcome == "granted":
            assert master.round_trip is not None and master.round_trip > 0.0
    if fanout == "sequential":
        assert vote.granted == 5  # sequential asks every master in turn
    assert "won" in repr(vote) and "MasterVote(master=0" in repr(vote.masters[0])
    lock.release()


def test_try_acquire_on_a_held_resource_raises_not_acquired_with_the_vote(
    redlock: Redlock, resource: str
) -> None:
    holder = redlock.acquire(resource)
    with pytest.raises(NotAcquired) as caught:
        redlock.try_acquire(resource)
    err = caught.value
    assert isinstance(err, RedlockError) and isinstance(err, Exception)
    assert err.resource == resource and resource in str(err)
    assert err.vote is not None and err.vote.denied >= 3 and err.vote.granted < 3
    # Concurrent fan-out may not have waited for the holder's last masters: those can grant.
    assert err.vote.verdict in ("clean_loss", "split_vote")
    holder.release()


def test_acquire_retries_then_raises_not_acquired(masters: LocalMasters, fanout: FanOutName, resource: str) -> None:
    redlock = Redlock(masters.urls, fanout=fanout, retry_count=2, retry_delay=0.01)
    holder = masters.occupy(resource)
    before = [masters.calls(index, "set") for index in range(5)]
    started = time.monotonic()
    with pytest.raises(NotAcquired) as caught:
        redlock.acquire(resource)
    took = time.monotonic() - started
    message = str(caught.value)
    # The whole call (3 attempts, 2 retry delays), in seconds, and who has the lock.
    said = re.match(rf'^lock on "{re.escape(resource)}" not acquired after 3 attempts in ([0-9.]+) s: another holder has it; ', message)
    assert said is not None, message
    assert 0.01 <= float(said.group(1)) <= took, message
    vote = caught.value.vote
    assert vote is not None
    assert f"{vote.not_awaited} not awaited of 5 masters; quorum 3" in message
    sets = [masters.calls(index, "set") - before[index] for index in range(5)]
    if fanout == "sequential":
        assert sets[0] == 3  # 1 + retry_count attempts, each asking master 0 first
    else:
        # Each attempt is decided by 3 denials; stragglers may not have been sent.
        assert 9 <= sum(sets) <= 15, sets
    masters.vacate(resource, holder)


def test_timeout_keeps_trying_until_the_holder_releases(
    masters: LocalMasters, fanout: FanOutName, resource: str
) -> None:
    redlock = Redlock(masters.urls, fanout=fanout, retry_count=0, retry_delay=0.02)
    holder = masters.occupy(resource)
    sets_before = masters.calls(0, "set")
    result: list[object] = []

    def contender() -> None:
        try:
            result.append(redlock.acquire(resource, ttl=5.0, timeout=10.0))
        except BaseException as err:  # reported below
            result.append(err)

    thread = threading.Thread(target=contender)
    thread.start()
    # Release only once the contender's first attempt was denied: retry_count=0, so only the
    # timeout can make it try again.
    wait_until(lambda: masters.calls(0, "set") > sets_before, 5.0, "the contender's first attempt")
    masters.vacate(resource, holder)
    thread.join(15.0)
    assert not thread.is_alive()
    assert isinstance(result[0], redlock_rs.Lock), result
    result[0].release()


def test_timeout_expiring_raises_not_acquired(redlock: Redlock, resource: str) -> None:
    holder = redlock.acquire(resource)
    with pytest.raises(NotAcquired):
        redlock.acquire(resource, timeout=0.1)
    with pytest.raises(NotAcquired):
        redlock.acquire(resource, timeout=0.0)  # one attempt
    holder.release()


def test_lock_is_a_context_manager(redlock: Redlock, masters: LocalMasters, resource: str) -> None:
    with redlock.acquire(resource) as lock:
        assert masters.holders_of(resource, lock.token) >= 3
    masters.wait_cleared(resource)
    assert lock.release() == 0  # already released: nothing left, not an error


def test_lock_context_releases_when_the_block_raises(
    redlock: Redlock, masters: LocalMasters, resource: str
) -> None:
    with pytest.raises(ZeroDivisionError):
        with redlock.lock(resource, ttl=5.0) as lock:
            assert lock.is_valid()
            _ = 1 / 0
    masters.wait_cleared(resource)


def test_lock_context_is_not_reentrant(redlock: Redlock, resource: str) -> None:
    context = redlock.lock(resource)
    with context:
        with pytest.raises(RedlockError, match="already entered"):
            context.__enter__()
    with context:  # usable again once left
        pass


def test_extend_renews_every_master(redlock: Redlock, masters: LocalMasters, resource: str) -> None:
    lock = redlock.acquire(resource, ttl=1.0)
    lock.extend(30.0)
    assert lock.ttl == 30.0 and lock.extensions == 1
    assert 29.0 < lock.validity <= 30.0

    def renewed_everywhere() -> bool:
        # Concurrent fan-out returns at quorum: the last renewals may still be on their way.
        pttls = [masters.command(index, "PTTL", resource) for index in range(5)]
        return all(isinstance(p, int) and (p == -2 or p > 20_000) for p in pttls)

    wait_until(renewed_everywhere, 10.0, "the extension reaches every master holding the key")
    lock.extend()  # default: the current ttl
    assert lock.extensions == 2 and lock.ttl == 30.0
    lock.release()


def test_extend_after_expiry_raises_lock_lost(redlock: Redlock, masters: LocalMasters, resource: str) -> None:
    lock = redlock.acquire(resource, ttl=0.05)
    wait_until(lambda: masters.values(resource) == [None] * 5, 5.0, "the keys to expire")
    with pytest.raises(LockLost) as caught:
        lock.extend(1.0)
    assert isinstance(caught.value, RedlockError)
    assert caught.value.resource == resource
    assert masters.values(resource) == [None] * 5  # extend never re-creates a key
    assert lock.release() == 0


def test_extend_after_release_raises_lock_lost(redlock: Redlock, resource: str) -> None:
    lock = redlock.acquire(resource)
    lock.release()
    with pytest.raises(LockLost):
        lock.extend()


def test_leaving_a_block_after_the_validity_ran_out_raises_lock_lost(redlock: Redlock, resource: str) -> None:
    # The core's scope rule (the C++ Guard's too), with its words.
    with pytest.raises(LockLost, match="validity ran out before it was released"):
        with redlock.lock(resource, ttl=0.05) as lock:
            wait_until(lambda: not lock.is_valid(), 5.0, "the validity to run out")


def test_auto_extend_keeps_the_lock_past_its_ttl(redlock: Redlock, masters: LocalMasters, resource: str) -> None:
    with redlock.lock(resource, ttl=1.0, auto_extend=True) as lock:
        assert lock.auto_extend
        wait_until(lambda: lock.extensions >= 3, 20.0, "three renewals")
        assert lock.is_valid()
        assert masters.holders_of(resource, lock.token) >= 3
        with pytest.raises(RedlockError, match="background"):
            lock.extend()
    masters.wait_cleared(resource)


def test_auto_extend_lost_raises_lock_lost_on_exit(redlock: Redlock, masters: LocalMasters, resource: str) -> None:
    with pytest.raises(LockLost):
        with redlock.lock(resource, ttl=0.3, auto_extend=True) as lock:
            for index in range(5):  # someone deletes the keys behind our back
                masters.command(index, "DEL", resource)
            wait_until(lambda: not lock.is_valid(), 10.0, "the renewal to notice the loss")


def test_auto_extend_loss_does_not_hide_the_blocks_own_exception(
    redlock: Redlock, masters: LocalMasters, resource: str
) -> None:
    with pytest.raises(KeyError):
        with redlock.lock(resource, ttl=0.3, auto_extend=True) as lock:
            for index in range(5):
                masters.command(index, "DEL", resource)
            wait_until(lambda: not lock.is_valid(), 10.0, "the renewal to notice the loss")
            raise KeyError("the block's own error")


def test_repr_never_shows_the_full_token(redlock: Redlock, resource: str) -> None:
    lock = redlock.acquire(resource)
    text = repr(lock)
    assert lock.token[:8] in text and lock.token not in text
    assert resource in text and "held" in text
    lock.release()
    assert "released" in repr(lock)


def test_client_properties(masters: LocalMasters, fanout: FanOutName) -> None:
    redlock = Redlock(masters.urls, fanout=fanout, quorum=4)
    assert redlock.masters == masters.urls
    assert redlock.fanout == fanout
    assert redlock.quorum == 4
    assert f"fanout='{fanout}'" in repr(redlock)


def test_urls_with_passwords_are_redacted(masters: LocalMasters) -> None:
    url = masters.urls[0].replace("redis://", "redis://user:s3cret@")
    redlock = Redlock([url, *masters.urls[1:]])
    assert "s3cret" not in repr(redlock) and "s3cret" not in str(redlock.masters)


@pytest.mark.parametrize(
    "url",
    [
        "redis://user:S3cretPass#x@127.0.0.1:1",  # a password with URL delimiters: unparsable
        "redis://user:S3cretPass/x@127.0.0.1:1",
        "redis://user:S3cretPass?x@127.0.0.1:1",
        "unix:///nonexistent/redlock.sock?pass=S3cretPass",  # a socket's password parameter
        "redis://user:x@S3cretPass@127.0.0.1:1",  # the last `@` ends the userinfo
    ],
)
@pytest.mark.parametrize("client", [Redlock, redlock_rs.AsyncRedlock])
def test_passwords_anywhere_in_a_url_are_redacted(client: type[Redlock], url: str) -> None:
    try:
        made = client([url])
    except ValueError as err:
        assert "S3cretPass" not in str(err) and "***" in str(err)
    else:
        assert "S3cretPass" not in repr(made) and "S3cretPass" not in str(made.masters)
        assert "***" in str(made.masters)


@pytest.mark.parametrize("client", [Redlock, redlock_rs.AsyncRedlock])
def test_the_same_server_twice_is_refused_naming_both(masters: LocalMasters, client: type[Redlock]) -> None:
    # One server under three database numbers would be three votes: a quorum on its own.
    first = masters.urls[0]
    with pytest.raises(ValueError, match=r"#2 .*same server.*#0 ") as caught:
        client([f"{first}/0", masters.urls[1], f"{first}/2"])
    assert first.removeprefix("redis://") in str(caught.value)


def test_a_rust_panic_surfaces_as_redlock_error() -> None:
    from redlock_rs import _redlock_rs

    with pytest.raises(RedlockError, match="boom"):
        _redlock_rs._panic_in_call("boom")


def test_a_huge_timeout_means_keep_trying(redlock: Redlock, masters: LocalMasters, resource: str) -> None:
    holder = masters.occupy(resource)
    result: list[object] = []
    sets_before = masters.calls(0, "set")
    thread = threading.Thread(target=lambda: result.append(redlock.acquire(resource, timeout=1e15)))
    thread.start()
    # Far more attempts than 1 + retry_count (4): the timeout, not the retry count, rules.
    wait_until(lambda: masters.calls(0, "set") >= sets_before + 12, 10.0, "a dozen attempts")
    assert thread.is_alive() and result == []
    masters.vacate(resource, holder)
    thread.join(10.0)
    assert isinstance(result[0], redlock_rs.Lock)
    result[0].release()
