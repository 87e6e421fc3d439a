#!/usr/bin/python3
"""Fault-injecting FUSE filesystem for iocurve's integration tests.

iocurve must report the failing operation and offset when a device returns
I/O errors, and must time slow devices correctly.  Real hardware that fails
on demand is not available in CI, and device-mapper (dm-error, dm-delay) is
not either, so the tests build such a device themselves:

    BACKING_FILE  --(this FUSE fs)-->  MOUNTPOINT/disk.img  --(losetup)-->  /dev/loopN

This program serves exactly one file, ``disk.img``, with the size and
contents of BACKING_FILE; writes go through to BACKING_FILE.  Any read or
write whose byte range touches a configured bad range fails with EIO, and
every read and write can be delayed by a fixed number of milliseconds.

The mount uses ``direct_io`` so the kernel keeps no page cache for
``disk.img``: every request the loop device issues reaches this process
(otherwise a cached page would hide a fault, and a write could be
acknowledged before it ever got here).  The loop device must be attached
without ``--direct-io``; the tests open ``/dev/loopN`` with O_DIRECT so the
block device's own page cache is bypassed too.

Usage:
    faultfs.py BACKING_FILE MOUNTPOINT [--eio-read START:LEN]...
               [--eio-write START:LEN]... [--eio-write-limit N]
               [--delay-ms N] [--mbps MB/s]
               [--fast-bytes N --fast-mbps MB/s] [--stall-at OFFSET:MS]...
               [--slow-range START:LEN:MS]... [--page BYTES]
               [--exit-on-stdin-eof]

--fast-bytes/--fast-mbps model a device with a write cache (an SLC region):
the first N bytes written go at --fast-mbps (0: no limit), every later
write at --mbps.  --stall-at makes the first read or write touching OFFSET
wait MS milliseconds once, like a device busy with garbage collection.
--slow-range makes every request touching START..START+LEN wait MS
milliseconds more: a slow stretch of an otherwise even medium.
--page makes a write cost whole pages of BYTES at --mbps, as flash programs
them: a write touching pages P0..P1 is charged (P1 - P0 + 1) * BYTES, so a
write smaller than a page costs as much as one page.

START and LEN are byte counts (decimal, or 0x-prefixed hex).  The process
stays in the foreground; SIGTERM or SIGINT unmounts and exits.  With
--exit-on-stdin-eof it also does so when its stdin reaches end of file, so a
test that holds the write end of a pipe cannot leave it behind even if the
test process is killed.  Each injected fault is logged as a line on stderr.

Needs Debian's python3-fusepy (module ``fusepy``; elsewhere it is called
``fuse``) and libfuse2; run as root.
"""

import argparse
import errno
import os
import signal
import stat
import sys
import threading
import time

try:
    import fusepy as fuse  # Debian's python3-fusepy
except ImportError:
    try:
        import fuse  # fusepy as installed from PyPI
        fuse.FUSE  # python-fuse (a different binding) has no FUSE class
    except (ImportError, AttributeError):
        sys.stderr.write("faultfs: python fusepy missing "
                         "(apt-get install python3-fusepy)\n")
        sys.exit(2)

IMAGE = "/disk.img"
EXIT_USAGE = 2


def parse_range(text):
    """Parse START:LEN into a half-open (start, end) byte range."""
    try:
        start_s, len_s = text.split(":", 1)
        start, length = int(start_s, 0), int(len_s, 0)
    except ValueError:
        raise argparse.ArgumentTypeError("expected START:LEN, got %r" % text)
    if start < 0 or length <= 0:
        raise argparse.ArgumentTypeError("bad range %r" % text)
    return (start, start + length)


def parse_slow_range(text):
    """Parse START:LEN:MS into ((start, end), seconds)."""
    try:
        where, ms_s = text.rsplit(":", 1)
        ms = int(ms_s, 0)
    except ValueError:
        raise argparse.ArgumentTypeError("expected START:LEN:MS, got %r" % text)
    if ms < 0:
        raise argparse.ArgumentTypeError("bad delay in %r" % text)
    return (parse_range(where), ms / 1000.0)


def parse_stall(text):
    """Parse OFFSET:MS into (offset, milliseconds)."""
    try:
        off_s, ms_s = text.split(":", 1)
        off, ms = int(off_s, 0), int(ms_s, 0)
    except ValueError:
        raise argparse.ArgumentTypeError("expected OFFSET:MS, got %r" % text)
    if off < 0 or ms <= 0:
        raise argparse.ArgumentTypeError("bad stall %r" % text)
    return (off, ms)


def touches(ranges, offset, size):
    """Return the first range overlapping [offset, offset+size), or None."""
    end = offset + size
    for lo, hi in ranges:
        if offset < hi and lo < end:
            return (lo, hi)
    return None


class FaultFS(fuse.Operations):
    use_ns = True

    def __init__(self, backing, eio_read, eio_write, delay_ms,
                 eio_write_limit=None, mbps=0.0,
                 fast_bytes=0, fast_mbps=0.0, stalls=(), slow_ranges=(),
                 page=0):
        self.fd = os.open(backing, os.O_RDWR)
        # After this many injected write errors, writes succeed again (a
        # transient fault: the device answers once more).
        self.eio_write_left = eio_write_limit
        self.size = os.fstat(self.fd).st_size
        self.eio_read = eio_read
        self.eio_write = eio_write
        self.delay = delay_ms / 1000.0
        # Seconds per byte: a bandwidth limit on top of the fixed delay.
        self.per_byte = 1.0 / (mbps * 1e6) if mbps > 0 else 0.0
        self.now_ns = time.time_ns()
        self.log_lock = threading.Lock()
        # The write cache: bytes still to be written at the fast rate.
        self.fast_left = fast_bytes
        self.fast_per_byte = 1.0 / (fast_mbps * 1e6) if fast_mbps > 0 else 0.0
        # One-shot stalls: offset -> seconds, removed once served.
        self.stalls = {off: ms / 1000.0 for off, ms in stalls}
        self.slow_ranges = list(slow_ranges)
        # Writes are charged whole pages of this many bytes (0: by length).
        self.page = page
        self.state_lock = threading.Lock()

    def log(self, msg):
        with self.log_lock:
            sys.stderr.write("faultfs: %s\n" % msg)
            sys.stderr.flush()

    # --- metadata -----------------------------------------------------

    def getattr(self, path, fh=None):
        common = dict(st_uid=0, st_gid=0, st_atime=self.now_ns,
                      st_mtime=self.now_ns, st_ctime=self.now_ns)
        if path == "/":
            return dict(common, st_mode=stat.S_IFDIR | 0o755, st_nlink=2)
        if path == IMAGE:
            return dict(common, st_mode=stat.S_IFREG | 0o644, st_nlink=1,
                        st_size=self.size, st_blocks=(self.size + 511) // 512,
                        st_blksize=4096)
        raise fuse.FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        if path != "/":
            raise fuse.FuseOSError(errno.ENOTDIR)
        return [".", "..", IMAGE[1:]]

    def statfs(self, path):
        return dict(f_bsize=4096, f_frsize=4096,
                    f_blocks=(self.size + 4095) // 4096,
                    f_bfree=0, f_bavail=0, f_files=1, f_ffree=0,
                    f_namemax=255)

    def open(self, path, flags):
        if path != IMAGE:
            raise fuse.FuseOSError(errno.ENOENT)
        return 0

    def truncate(self, path, length, fh=None):
        # The image has a fixed size; setting it to that size is harmless.
        if path != IMAGE:
            raise fuse.FuseOSError(errno.ENOENT)
        if length != self.size:
            raise fuse.FuseOSError(errno.EPERM)

    def chmod(self, path, mode):
        return 0

    def chown(self, path, uid, gid):
        return 0

    def utimens(self, path, times=None):
        return 0

    # --- data ---------------------------------------------------------

    def charged(self, length, offset):
        """Bytes a write of LENGTH at OFFSET is charged: whole pages."""
        if not self.page or offset is None:
            return length
        first = offset // self.page
        last = (offset + length - 1) // self.page
        return (last - first + 1) * self.page

    def pause(self, length, offset=None, writing=False):
        per_byte = self.per_byte
        stall = 0.0
        if writing:
            length = self.charged(length, offset)
        with self.state_lock:
            if writing and self.fast_left > 0:
                self.fast_left -= length
                per_byte = self.fast_per_byte
            if offset is not None:
                for at in [a for a in self.stalls if offset <= a < offset + length]:
                    stall += self.stalls.pop(at)
        if stall:
            self.log("stall %.0f ms at offset %d" % (stall * 1000, offset))
        wait = self.delay + length * per_byte + stall
        if offset is not None:
            for rng, seconds in self.slow_ranges:
                if touches([rng], offset, length):
                    wait += seconds
        if wait:
            time.sleep(wait)

    def read(self, path, size, offset, fh):
        self.pause(size, offset)
        bad = touches(self.eio_read, offset, size)
        if bad:
            self.log("EIO read offset=%d len=%d (bad range %d..%d)"
                     % (offset, size, bad[0], bad[1]))
            raise fuse.FuseOSError(errno.EIO)
        if offset >= self.size:
            return b""
        return os.pread(self.fd, min(size, self.size - offset), offset)

    def write(self, path, data, offset, fh):
        self.pause(len(data), offset, writing=True)
        bad = touches(self.eio_write, offset, len(data))
        if bad and self.eio_write_left is not None:
            with self.log_lock:
                if self.eio_write_left > 0:
                    self.eio_write_left -= 1
                else:
                    bad = None
        if bad:
            self.log("EIO write offset=%d len=%d (bad range %d..%d)"
                     % (offset, len(data), bad[0], bad[1]))
            raise fuse.FuseOSError(errno.EIO)
        if offset + len(data) > self.size:
            raise fuse.FuseOSError(errno.ENOSPC)
        return os.pwrite(self.fd, data, offset)

    def flush(self, path, fh):
        return 0

    def fsync(self, path, datasync, fh):
        if datasync:
            os.fdatasync(self.fd)
        else:
            os.fsync(self.fd)
        return 0

    def release(self, path, fh):
        return 0

    def destroy(self, path):
        os.close(self.fd)


def exit_on_stdin_eof():
    """Unmount and exit once stdin reaches EOF (the parent closed it or died).

    libfuse handles SIGTERM by ending its loop and unmounting.  The signal is
    aimed at the main thread, which is the one waiting in fuse_main, so it
    wakes up and notices.
    """
    main_ident = threading.main_thread().ident

    def watch():
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        signal.pthread_kill(main_ident, signal.SIGTERM)

    threading.Thread(target=watch, name="stdin-watch", daemon=True).start()


def main(argv):
    ap = argparse.ArgumentParser(
        description="FUSE fs serving one file (disk.img) with injected "
                    "EIO ranges and delays")
    ap.add_argument("backing")
    ap.add_argument("mountpoint")
    ap.add_argument("--eio-read", type=parse_range, action="append",
                    default=[], metavar="START:LEN")
    ap.add_argument("--eio-write", type=parse_range, action="append",
                    default=[], metavar="START:LEN")
    ap.add_argument("--delay-ms", type=int, default=0, metavar="N")
    ap.add_argument("--mbps", type=float, default=0.0, metavar="MB/s",
                    help="bandwidth limit, 10^6 bytes/s (0: none)")
    ap.add_argument("--eio-write-limit", type=int, default=None, metavar="N",
                    help="fail only the first N writes that touch an "
                         "--eio-write range")
    ap.add_argument("--fast-bytes", type=lambda s: int(s, 0), default=0,
                    metavar="N", help="bytes written at --fast-mbps first")
    ap.add_argument("--fast-mbps", type=float, default=0.0, metavar="MB/s",
                    help="speed of the first --fast-bytes (0: no limit)")
    ap.add_argument("--stall-at", type=parse_stall, action="append",
                    default=[], metavar="OFFSET:MS")
    ap.add_argument("--slow-range", type=parse_slow_range, action="append",
                    default=[], metavar="START:LEN:MS",
                    help="requests touching this range wait MS ms more")
    ap.add_argument("--page", type=lambda s: int(s, 0), default=0,
                    metavar="BYTES",
                    help="writes cost whole pages of BYTES (0: by length)")
    ap.add_argument("--exit-on-stdin-eof", action="store_true")
    args = ap.parse_args(argv)
    if args.delay_ms < 0:
        ap.error("--delay-ms must be >= 0")
    if args.page < 0:
        ap.error("--page must be >= 0")

    ops = FaultFS(args.backing, args.eio_read, args.eio_write, args.delay_ms,
                  args.eio_write_limit, args.mbps, args.fast_bytes,
                  args.fast_mbps, args.stall_at, args.slow_range, args.page)
    ops.log("serving %s (%d bytes) at %s; eio_read=%s eio_write=%s "
            "delay_ms=%d" % (args.backing, ops.size, args.mountpoint,
                             args.eio_read, args.eio_write, args.delay_ms))
    if args.exit_on_stdin_eof:
        exit_on_stdin_eof()
    # libfuse installs its own SIGTERM/SIGINT/SIGHUP handlers: they end the
    # loop, after which it unmounts.  direct_io: no page cache for disk.img.
    # big_writes/max_*: 128 KiB requests rather than 4 KiB writes.
    try:
        fuse.FUSE(ops, args.mountpoint, foreground=True, direct_io=True,
                  big_writes=True, max_read=131072, max_write=131072,
                  fsname="faultfs", subtype="faultfs")
    except RuntimeError as e:
        # libfuse has already said why on stderr.
        ops.log("fuse_main failed (%s); not mounted" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
