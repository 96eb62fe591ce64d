"""Lock a resource on the masters named in REDLOCK_MASTERS (their URLs, comma-separated), for
example the local ones `redlock-masters --until-signal > urls.txt &` started:

    REDLOCK_MASTERS=$(paste -sd, urls.txt) python local_masters.py

Exit status: 0 done, 1 someone else holds the lock, 2 no masters given, 3 Redis is down.
"""

from __future__ import annotations

import os
import sys

from redlock_rs import NotAcquired, Redlock, Unavailable


def main() -> int:
    urls = [url for url in os.environ.get("REDLOCK_MASTERS", "").split(",") if url]
    if not urls:
        print("set REDLOCK_MASTERS to the masters' URLs, comma-separated", file=sys.stderr)
        return 2
    with Redlock(urls) as redlock:
        try:
            with redlock.lock("reports:nightly", ttl=10.0) as lock:
                print(f"locked {lock.resource} for {lock.validity:.3f} s on {lock.vote.granted} of {len(urls)} masters")
                # ... work while lock.is_valid() ...
        except NotAcquired as err:  # another holder has it
            print(f"busy: {err}", file=sys.stderr)
            return 1
        except Unavailable as err:  # too few masters answered: Redis is down
            print(f"Redis is down: {err}", file=sys.stderr)
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
