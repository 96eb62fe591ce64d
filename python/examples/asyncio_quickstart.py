"""The same with asyncio: every method of AsyncRedlock and AsyncLock is awaitable.

Masters as for quickstart.py (`make masters`, then `redlock-masters`):

    target/debug/redlock-masters --until-signal > urls.txt &
    python asyncio_quickstart.py $(cat urls.txt)
"""

import asyncio
import os
import sys

from redlock_rs import AsyncRedlock, Unavailable

MASTERS = sys.argv[1:] or [url for url in os.environ.get("REDLOCK_MASTERS", "").split(",") if url]
if not MASTERS:
    sys.exit(
        "no masters given: start five local ones with `target/debug/redlock-masters --until-signal > urls.txt &`"
        " (`make masters` builds it), then run `python asyncio_quickstart.py $(cat urls.txt)`"
    )


async def main() -> None:
    async with AsyncRedlock(MASTERS) as redlock:
        async with redlock.lock("orders:42", ttl=10.0) as lock:
            await lock.extend(20.0)
        lock = await redlock.acquire("orders:43")
        await lock.release()
        # Many at once: one client serves any number of tasks.
        locks = await asyncio.gather(*(redlock.acquire(f"batch:{n}") for n in range(3)))
        for each in locks:
            await each.release()
        print("took and released", len(locks) + 2, "locks")


try:
    asyncio.run(main())
except Unavailable as err:  # e.g. nothing listens at those URLs
    sys.exit(f"down: fewer than a quorum of masters answered ({err})")
