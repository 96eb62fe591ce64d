"""Take, extend and release locks with the blocking API.

Redlock needs several independent Redis masters. To try it, start five local ones with
`redlock-masters` (from a checkout: `make masters` builds it; the book's "Local masters" page
has the details) and pass their URLs:

    target/debug/redlock-masters --until-signal > urls.txt &
    python quickstart.py $(cat urls.txt)
"""

import os
import sys

from redlock_rs import LockLost, NotAcquired, Redlock, Unavailable

masters = sys.argv[1:] or [url for url in os.environ.get("REDLOCK_MASTERS", "").split(",") if url]
if not masters:
    sys.exit(
        "no masters given: start five local ones with `target/debug/redlock-masters --until-signal > urls.txt &`"
        " (`make masters` builds it), then run `python quickstart.py $(cat urls.txt)`"
    )
redlock = Redlock(
    masters,
    fanout="concurrent",  # or "sequential"
    retry_count=3, retry_delay=0.2, instance_timeout=0.05,  # seconds, as floats
)

try:
    with redlock.lock("orders:42", ttl=10.0, timeout=5.0) as lock:
        # Act as the owner while lock.is_valid(); lock.remaining() is the time left.
        print(lock.vote.granted, "of", len(lock.vote.masters), "masters; valid for", lock.validity)
except NotAcquired as err:  # someone else holds it (err.vote says who answered what)
    print("busy:", err)
except Unavailable as err:  # fewer than a quorum of masters answered: are they running?
    sys.exit(f"down: fewer than a quorum of masters answered ({err})")
except LockLost:  # the lock expired or was lost before the block ended
    print("the critical section outlived the lock")

try:
    lock = redlock.acquire("orders:43", ttl=30.0)  # or try_acquire(): one attempt
    lock.extend(60.0)  # LockLost if it is no longer held
    print("released on", lock.release(), "masters")

    with redlock.lock("report", ttl=5.0, auto_extend=True):
        pass  # renewed in the background; leaving the block raises LockLost if it was lost
except Unavailable as err:  # e.g. nothing listens at those URLs
    sys.exit(f"down: fewer than a quorum of masters answered ({err})")
finally:
    redlock.close()
