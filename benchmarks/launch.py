"""Run one command, report its wall time and peak RSS: a tiny stand-in for ``/usr/bin/time``.

Run as ``python -S benchmarks/launch.py REPORT.json TIMEOUT_S RSS_LIMIT_MIB -- CMD...``
(stdlib only, no site: this process stays ~8 MiB).

Why a launcher at all: Linux charges a child's ``ru_maxrss`` with the high-water mark of
the process it was spawned from (``exec`` keeps the old mm's peak), so a harness that has
imported numpy would inflate every child's reading. Spawning from this small process keeps
the floor under any Python child's own peak. The child's stdout/stderr go to files named
REPORT.json.out / .err. A watchdog thread kills the child on timeout or when its resident
set passes RSS_LIMIT_MIB (0: no limit); the report says which.
"""

import json
import os
import signal
import sys
import threading
import time


def _rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    report, timeout, limit_mib = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    cmd = sys.argv[sys.argv.index("--") + 1:]
    out = os.open(report + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(report + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    actions = [(os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, err, 2)]
    killed = []
    done = threading.Event()
    start = time.perf_counter()
    pid = os.posix_spawnp(cmd[0], cmd, os.environ, file_actions=actions)

    def watch():
        while not done.wait(0.05):
            if time.perf_counter() - start > timeout:
                killed.append(f"timeout after {timeout:g} s")
            elif limit_mib and _rss_kib(pid) > limit_mib * 1024:
                killed.append(f"RSS above {limit_mib:g} MiB")
            if killed:
                os.kill(pid, signal.SIGKILL)
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    done.set()
    result = {"rc": os.waitstatus_to_exitcode(status), "seconds": seconds,
              "peak_kib": usage.ru_maxrss, "killed": killed[0] if killed else None}
    with open(report, "w") as fh:
        json.dump(result, fh)


if __name__ == "__main__":
    main()
