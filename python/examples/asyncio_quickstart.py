"""The same with asyncio: every method of AsyncRedlock and AsyncLock is awaitable.

    python asyncio_quickstart.py redis://127.0.0.1:7001 redis://127.0.0.1:7002 redis://127.0.0.1:7003
"""

import asyncio
import sys

from redlock_rs import AsyncRedlock

MASTERS = sys.argv[1:] or ["redis://127.0.0.1:7001", "redis://127.0.0.1:7002", "redis://127.0.0.1:7003"]


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


asyncio.run(main())
