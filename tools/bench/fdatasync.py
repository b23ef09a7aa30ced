#!/usr/bin/env python3
"""The cost of a small write + fdatasync in a file whose space was only reserved
(posix_fallocate: "unwritten" extents on ext4 and XFS) against one whose space was written with
zeros first, which is why innoxide zero-fills new redo log files (crates/engine/src/redo/file.rs
I4). Each round appends --block bytes and syncs, as a commit does; rounds alternate the two
files so machine drift hits both alike.

    python3 tools/bench/fdatasync.py --dir /tmp --writes 3000 --rounds 2
"""

import argparse
import os
import sys
import time


def one(path, zero_filled, size, block, writes):
    """Microseconds per write + fdatasync, appending `block` bytes at a time."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        if zero_filled:
            chunk = b"\0" * (1 << 20)
            for off in range(0, size, len(chunk)):
                os.pwrite(fd, chunk[: min(len(chunk), size - off)], off)
        else:
            os.posix_fallocate(fd, 0, size)
        os.fsync(fd)
        data = b"x" * block
        start = time.perf_counter()
        for i in range(writes):
            if os.pwrite(fd, data, i * block) != block:
                raise OSError("short write")
            os.fdatasync(fd)
        return (time.perf_counter() - start) / writes * 1e6
    finally:
        os.close(fd)
        os.unlink(path)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default="/tmp", help="directory on the file system to measure (default /tmp)")
    p.add_argument("--writes", type=int, default=3000, help="write + fdatasync pairs per file (default 3000)")
    p.add_argument("--block", type=int, default=2048, help="bytes per write (default 2048)")
    p.add_argument("--rounds", type=int, default=2, help="times each file kind is measured (default 2)")
    args = p.parse_args()
    size = args.writes * args.block + (1 << 20)
    path = os.path.join(args.dir, "innoxide-fdatasync-%d" % os.getpid())
    res = {"reserved (posix_fallocate)": [], "zero-filled": []}
    for _ in range(args.rounds):
        res["reserved (posix_fallocate)"].append(one(path, False, size, args.block, args.writes))
        res["zero-filled"].append(one(path, True, size, args.block, args.writes))
    print("| file | us per %d-byte write + fdatasync |" % args.block)
    print("|---|---|")
    for name, v in res.items():
        print("| %s | %s |" % (name, ", ".join("%.1f" % x for x in v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
