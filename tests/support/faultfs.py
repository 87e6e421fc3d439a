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
               [--real BYTES [--fake wrap|zeros|stale|eio]
                [--hide-cache BYTES]]
               [--au BYTES [--cmd-ms MS] [--open-au N]]
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

The flash options mirror iocurve's simulated card (src/engine/sim.rs), so
the flash detectors can be tested through the kernel as well as on the
simulator's virtual clock:

--real makes the device a counterfeit: only the first BYTES (whole 512-byte
sectors) exist, the rest of the backing file's size is only claimed (the
backing file may be sparse there; it is never used).  Beyond the real size,
--fake says what happens, as the f3 documentation describes the kinds sold:
``wrap`` (the default) maps an address to address mod real, so a write
there destroys a real block; ``zeros`` drops writes and reads zeros;
``stale`` drops writes and reads a fixed pattern per sector (the chip's old
contents); ``eio`` fails reads and writes with EIO.  --hide-cache keeps the
last BYTES written (by logical sector, as a read would see them) and
answers reads from that copy first, which hides every kind from an
immediate read-back and, for ``eio``, accepts the writes.

--au gives the allocation unit (erase block).  A read straddling an AU
boundary costs --cmd-ms more (two erase blocks are looked up); one
straddling only a --page boundary costs a quarter of that: the boundary
timing flashbench and ``iocurve flash align`` read the geometry from.  The
plain cost of a command is --delay-ms.  --open-au N keeps N AUs open for
writing, least recently used first out; a write to another AU closes the
oldest, which costs copying its unwritten rest at --mbps (garbage
collection).  Writes taken by the --fast-bytes cache touch no AU.

START and LEN are byte counts (decimal, or 0x-prefixed hex).  The process
stays in the foreground; SIGTERM or SIGINT unmounts and exits.  With
--exit-on-stdin-eof it also does so when its stdin reaches end of file, so a
test that holds the write end of a pipe cannot leave it behind even if the
test process is killed.  Each injected fault is logged as a line on stderr.

Needs Debian's python3-fusepy (module ``fusepy``; elsewhere it is called
``fuse``) and libfuse2; run as root.
"""

import argparse
import collections
import errno
import os
import signal
import stat
import struct
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
SECTOR = 512
FAKE_KINDS = ("wrap", "zeros", "stale", "eio")
# Mixed into the stale pattern so it never looks like a probe's own data.
STALE_SALT = 0x57A1E0000000057A


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


def stale_bytes(offset, length):
    """What a ``stale`` fake reads at OFFSET: a fixed pattern per sector
    (its number and a salt), like whatever the chip held before."""
    first = offset // SECTOR
    last = (offset + length - 1) // SECTOR
    data = b"".join(struct.pack("<QQ", s, STALE_SALT) * (SECTOR // 16)
                    for s in range(first, last + 1))
    skip = offset - first * SECTOR
    return data[skip:skip + length]


class Medium:
    """The backing file as a card that has REAL bytes and claims SIZE.

    Addresses below the real size are the file's; beyond it, a ``wrap``
    fake maps them to address mod real and the other kinds keep nothing.
    """

    def __init__(self, fd, size, real, fake):
        self.fd = fd
        self.size = size
        self.real = real
        self.fake = fake

    def runs(self, offset, length):
        """Split a byte range into runs that map contiguously: (logical
        start, length, physical start or None where nothing is kept)."""
        end = offset + length
        at = offset
        while at < end:
            if at < self.real:
                stop, phys = min(end, self.real), at
            elif self.fake == "wrap":
                stop = min(end, (at // self.real + 1) * self.real)
                phys = at % self.real
            else:
                stop, phys = end, None
            yield at, stop - at, phys
            at = stop

    def read(self, offset, length):
        parts = []
        for at, n, phys in self.runs(offset, length):
            if phys is not None:
                got = os.pread(self.fd, n, phys)
                parts.append(got + bytes(n - len(got)))
            elif self.fake == "stale":
                parts.append(stale_bytes(at, n))
            else:
                parts.append(bytes(n))
        return b"".join(parts)

    def write(self, offset, data):
        for at, n, phys in self.runs(offset, len(data)):
            if phys is not None:
                os.pwrite(self.fd, data[at - offset:at - offset + n], phys)


class HeldSectors:
    """The hiding cache: the last LIMIT bytes written, by logical sector,
    as a read would have seen them right after the write (a sector written
    twice counts twice, like any byte written)."""

    def __init__(self, limit):
        self.limit = limit
        self.order = collections.deque()  # (sector, generation), oldest first
        self.data = {}  # sector -> (generation of its newest write, bytes)
        self.generation = 0

    def hold(self, sector, data):
        self.generation += 1
        self.data[sector] = (self.generation, data)
        self.order.append((sector, self.generation))
        while len(self.order) * SECTOR > self.limit:
            old, gen = self.order.popleft()
            if self.data.get(old, (None,))[0] == gen:
                del self.data[old]

    def get(self, sector):
        entry = self.data.get(sector)
        return entry[1] if entry else None

    def covers(self, first, last):
        return all(s in self.data for s in range(first, last + 1))


class Geometry:
    """Erase-block timing: extra read cost at AU and page boundaries, and
    garbage collection when an open AU has to be closed."""

    def __init__(self, au, page, cmd_s, open_au):
        self.au = au
        self.page = page
        self.cmd_s = cmd_s
        self.open_au = open_au
        self.open = []  # [index, bytes written], least recently used first

    def read_extra(self, offset, length):
        """Seconds a read costs beyond a plain command."""
        def crosses(unit):
            return unit and offset // unit != (offset + length - 1) // unit
        if crosses(self.au):
            return self.cmd_s
        if crosses(self.page):
            return self.cmd_s / 4
        return 0.0

    def gc_bytes(self, offset, length):
        """Opens the AUs a write touches; returns the bytes copied to close
        the AUs that made room for them (the caller holds the lock)."""
        if not self.au or not self.open_au:
            return 0
        copied = 0
        at, end = offset, offset + length
        while at < end:
            index = at // self.au
            stop = min((index + 1) * self.au, end)
            copied += self.touch(index, stop - at)
            at = stop
        return copied

    def touch(self, index, written):
        copied = 0
        entry = next((e for e in self.open if e[0] == index), None)
        if entry is not None:
            self.open.remove(entry)
        else:
            if len(self.open) >= self.open_au:
                _, done = self.open.pop(0)
                copied = self.au - min(done, self.au)
            entry = [index, 0]
        entry[1] += written
        self.open.append(entry)
        return copied


class FaultFS(fuse.Operations):
    use_ns = True

    def __init__(self, backing, eio_read, eio_write, delay_ms,
                 eio_write_limit=None, mbps=0.0,
                 fast_bytes=0, fast_mbps=0.0, stalls=(), slow_ranges=(),
                 page=0, real=None, fake="wrap", hide_cache=0, au=0,
                 cmd_ms=0.0, open_au=0):
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
        # The counterfeit (or genuine, real == size) medium and its cache.
        self.medium = Medium(self.fd, self.size,
                             self.size if real is None else real, fake)
        hides = hide_cache > 0 and self.medium.real < self.size
        self.held = HeldSectors(hide_cache) if hides else None
        self.data_lock = threading.Lock()
        self.geometry = Geometry(au, page, cmd_ms / 1000.0, open_au)

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
        extra = 0.0
        written = length
        if writing:
            length = self.charged(length, offset)
        elif offset is not None:
            extra = self.geometry.read_extra(offset, length)
        with self.state_lock:
            if writing and self.fast_left > 0:
                self.fast_left -= length
                per_byte = self.fast_per_byte
            elif writing and offset is not None:
                extra = self.geometry.gc_bytes(offset, written) * self.per_byte
            if offset is not None:
                for at in [a for a in self.stalls if offset <= a < offset + length]:
                    stall += self.stalls.pop(at)
        if stall:
            self.log("stall %.0f ms at offset %d" % (stall * 1000, offset))
        wait = self.delay + length * per_byte + stall + extra
        if offset is not None:
            for rng, seconds in self.slow_ranges:
                if touches([rng], offset, length):
                    wait += seconds
        if wait:
            time.sleep(wait)

    def beyond_real(self, offset, length):
        """The sectors of a range beyond the real size, or None."""
        end = offset + length
        if end <= self.medium.real:
            return None
        return (max(offset, self.medium.real) // SECTOR, (end - 1) // SECTOR)

    def fake_eio(self, op, offset, length):
        """Whether an ``eio`` fake fails this transfer: a write unless the
        cache hides the fraud, a read unless the cache holds every sector
        of it beyond the real size (the caller holds data_lock)."""
        sectors = self.beyond_real(offset, length)
        if self.medium.fake != "eio" or sectors is None:
            return False
        if op == "write":
            return self.held is None
        return self.held is None or not self.held.covers(*sectors)

    def refuse_fake(self, op, offset, length):
        with self.data_lock:
            refused = self.fake_eio(op, offset, length)
        if refused:
            self.log("EIO %s offset=%d len=%d (beyond real size %d)"
                     % (op, offset, length, self.medium.real))
            raise fuse.FuseOSError(errno.EIO)

    def view(self, offset, length):
        """What a read returns: the cache's copy of a sector, else the
        medium's (the caller holds data_lock)."""
        data = self.medium.read(offset, length)
        if self.held is None or not self.held.data:
            return data
        out = bytearray(data)
        end = offset + length
        for sector in range(offset // SECTOR, (end - 1) // SECTOR + 1):
            held = self.held.get(sector)
            if held is None:
                continue
            lo, hi = max(offset, sector * SECTOR), min(end, (sector + 1) * SECTOR)
            out[lo - offset:hi - offset] = held[lo - sector * SECTOR:hi - sector * SECTOR]
        return bytes(out)

    def store(self, offset, data):
        """Writes to the medium; a hiding cache keeps each sector as a read
        will now see it (the caller holds data_lock)."""
        if self.held is None:
            self.medium.write(offset, data)
            return
        lo = offset // SECTOR * SECTOR
        hi = -(-(offset + len(data)) // SECTOR) * SECTOR
        if (lo, hi) == (offset, offset + len(data)):
            after = data
        else:
            # A partial sector: what is there now, with the write on top.
            after = bytearray(self.view(lo, hi - lo))
            after[offset - lo:offset - lo + len(data)] = data
            after = bytes(after)
        self.medium.write(offset, data)
        for i in range(0, hi - lo, SECTOR):
            self.held.hold((lo + i) // SECTOR, after[i:i + SECTOR])

    def read(self, path, size, offset, fh):
        size = max(0, min(size, self.size - offset))
        if size:
            self.refuse_fake("read", offset, size)
        self.pause(size, offset)
        bad = touches(self.eio_read, offset, size)
        if bad:
            self.log("EIO read offset=%d len=%d (bad range %d..%d)"
                     % (offset, size, bad[0], bad[1]))
            raise fuse.FuseOSError(errno.EIO)
        if not size:
            return b""
        with self.data_lock:
            return self.view(offset, size)

    def write(self, path, data, offset, fh):
        if offset + len(data) <= self.size:
            self.refuse_fake("write", offset, len(data))
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
        with self.data_lock:
            self.store(offset, data)
        return len(data)

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


def check_args(ap, args):
    """Refuses option values the model has no meaning for."""
    if args.delay_ms < 0:
        ap.error("--delay-ms must be >= 0")
    if args.page < 0:
        ap.error("--page must be >= 0")
    if args.real is not None and (args.real <= 0 or args.real % SECTOR):
        ap.error("--real must be a positive multiple of 512")
    if args.hide_cache and args.real is None:
        ap.error("--hide-cache hides a fake: give --real too")
    if args.au < 0 or args.au % SECTOR or args.cmd_ms < 0 or args.open_au < 0:
        ap.error("--au must be whole sectors, --cmd-ms and --open-au >= 0")
    if args.au and args.page and args.au % args.page:
        ap.error("--au must be a multiple of --page")
    if args.open_au and not args.au:
        ap.error("--open-au needs --au")


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
    ap.add_argument("--real", type=lambda s: int(s, 0), default=None,
                    metavar="BYTES",
                    help="bytes that really exist (a counterfeit beyond)")
    ap.add_argument("--fake", choices=FAKE_KINDS, default="wrap",
                    help="what happens beyond --real")
    ap.add_argument("--hide-cache", type=lambda s: int(s, 0), default=0,
                    metavar="BYTES",
                    help="the last BYTES written read back by address")
    ap.add_argument("--au", type=lambda s: int(s, 0), default=0,
                    metavar="BYTES", help="allocation unit (erase block)")
    ap.add_argument("--cmd-ms", type=float, default=0.0, metavar="MS",
                    help="extra cost of a read across an AU boundary")
    ap.add_argument("--open-au", type=int, default=0, metavar="N",
                    help="AUs kept open for writing (0: no GC cost)")
    ap.add_argument("--exit-on-stdin-eof", action="store_true")
    args = ap.parse_args(argv)
    check_args(ap, args)

    ops = FaultFS(args.backing, args.eio_read, args.eio_write, args.delay_ms,
                  args.eio_write_limit, args.mbps, args.fast_bytes,
                  args.fast_mbps, args.stall_at, args.slow_range, args.page,
                  args.real, args.fake, args.hide_cache, args.au,
                  args.cmd_ms, args.open_au)
    if args.real is not None and args.real > ops.size:
        ap.error("--real %d is more than the backing file's %d bytes"
                 % (args.real, ops.size))
    ops.log("serving %s (%d bytes) at %s; eio_read=%s eio_write=%s "
            "delay_ms=%d" % (args.backing, ops.size, args.mountpoint,
                             args.eio_read, args.eio_write, args.delay_ms))
    if args.real is not None or args.au:
        ops.log("real=%d fake=%s hide_cache=%d au=%d cmd_ms=%g open_au=%d"
                % (ops.medium.real, args.fake, args.hide_cache, args.au,
                   args.cmd_ms, args.open_au))
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
