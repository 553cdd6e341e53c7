"""The journal's fdatasync, started at once and waited for later: io_uring through ctypes.

The daemon must have an input's record on disk before anything derived from it leaves
(invariant 2). Nothing says the engine must wait for the disk before it works out what
the input means. A flush of one record takes 450-750 us on a table computer's flash or a
VM's disk, about as long as everything else a card costs the daemon. Run side by side, the
two overlap.

A Python thread cannot overlap them well. The thread that would call ``fdatasync`` first
needs the interpreter's lock, which the daemon holds while it works, so the hand-offs eat
most of the gain (measured: 821 against 831 us). The kernel can do it instead. An
io_uring ``IORING_OP_FSYNC`` request with ``IORING_FSYNC_DATASYNC`` (Linux 5.1 and later)
is run by a kernel worker thread, which the scheduler puts on a free CPU, while the daemon
goes on. ``io_uring_enter`` waiting for its completion returns when the data is on disk,
with the same error ``fdatasync`` would have given.

Sequence, for each record (see :class:`UringSync`)::

    os.write(fd, record)        # in the page cache
    sync.start(fd)              # one FSYNC request submitted: the flush starts
    ... engine, messages, MQTT packets built but not sent ...
    sync.wait()                 # its completion: on disk (or OSError)
    ... packets go out ...

Measured on this project's 2-core test VM (ext4), with 4 ms between records and 280 us of
Python work after each write (p50; in brackets, with both cores kept busy by two other
processes):

    fdatasync, then the work                         1022 us   (868 us)
    io_uring                                          787 us   (890 us)
    Linux AIO (IOCB_CMD_FDSYNC)                      1106 us   (2044 us)
    Linux AIO, then sched_yield()                     761 us   (3976 us)
    a native thread per record calling fdatasync     1192 us

Linux AIO runs the flush in a kernel worker queued on the submitting CPU. That worker
waits until the daemon sleeps, unless the daemon yields the CPU to it, and a yield hands
the CPU to any busy process as well. io_uring's worker starts on a free CPU, and under
load it does no worse than fdatasync.

Where io_uring is not there (another OS, an old kernel, ``kernel.io_uring_disabled``, a
seccomp filter), :func:`make_sync` gives :class:`InlineSync`, which is plain
``fdatasync`` in :meth:`~InlineSync.start`. A file that the kernel cannot flush this way
(EINVAL) switches a :class:`UringSync` to that too, once, with a log line. Nothing else
changes: ``wait()`` raises what ``fdatasync`` would have raised.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import mmap
import os
import platform
import struct
import sys
from typing import Final, Protocol

log = logging.getLogger(__name__)

_datasync = getattr(os, "fdatasync", os.fsync)

IO_URING_SETUP: Final = 425
IO_URING_ENTER: Final = 426
"""The same numbers on every architecture that has them (Linux 5.1 unified new syscalls),
except alpha and mips, which are not in :data:`_MACHINES`."""
_MACHINES: Final = frozenset(
    {"x86_64", "i686", "i386", "aarch64", "arm64", "armv6l", "armv7l", "armv8l",
     "riscv64", "loongarch64"}
)
IORING_OP_FSYNC: Final = 3
IORING_FSYNC_DATASYNC: Final = 1
IORING_ENTER_GETEVENTS: Final = 1
IORING_FEAT_SINGLE_MMAP: Final = 1
IORING_OFF_SQ_RING: Final = 0
IORING_OFF_CQ_RING: Final = 0x8000000
IORING_OFF_SQES: Final = 0x10000000
ENTRIES: Final = 2
"""Ring size: one request is ever in flight."""

_PARAMS = struct.Struct("=10I8IQ8IQ")  # struct io_uring_params, 120 bytes
_SQE = struct.Struct("=BBHiQQIIQHHiQQ")  # struct io_uring_sqe, 64 bytes
_CQE = struct.Struct("=QiI")  # struct io_uring_cqe: user_data, res, flags
_U32 = struct.Struct("=I")
_FALLBACK_ERRORS: Final = frozenset({errno.EINVAL, errno.EOPNOTSUPP})
"""What a completion says when the file cannot be flushed this way: fdatasync it is."""


class Sync(Protocol):
    """Starts a file's fdatasync and waits for it; at most one outstanding."""

    name: str
    """How it syncs, for logs and benchmarks."""

    def start(self, fd: int) -> None:
        """Start flushing ``fd``'s data; OSError if that fails at once."""
        ...

    def wait(self) -> None:
        """Until the flush started last is done (at once if none); OSError if it failed."""
        ...

    def close(self) -> None:
        """Wait for what is outstanding (errors ignored) and release what it holds."""
        ...


class InlineSync:
    """``fdatasync`` in :meth:`start`, as plain as it gets; :meth:`wait` has nothing to do."""

    name: str = "inline"

    def start(self, fd: int) -> None:
        """fdatasync(fd)."""
        _datasync(fd)

    def wait(self) -> None:
        """Nothing: the flush was done in :meth:`start`."""

    def close(self) -> None:
        """Nothing to release."""


class UringSync:
    """One small io_uring with one ``IORING_OP_FSYNC`` (data only) request at a time."""

    name: str = "io_uring"

    def __init__(self) -> None:
        """Set up the ring; OSError where io_uring cannot be had."""
        if sys.platform != "linux" or platform.machine() not in _MACHINES:
            raise OSError(errno.ENOSYS, f"no io_uring on {platform.machine() or 'this system'}")
        libc = ctypes.CDLL(None, use_errno=True)
        self._syscall = libc.syscall
        self._syscall.restype = ctypes.c_long
        self._pending = False
        self._fd = -1  # the file of the request in flight (for the fallback)
        self._sqe = b""  # the request for self._fd, made once per file
        self._submit_args: tuple[object, ...] = ()
        self._wait_args: tuple[object, ...] = ()
        self._inline: InlineSync | None = None  # set when the kernel refused a file
        self._maps: list[mmap.mmap] = []
        params = ctypes.create_string_buffer(_PARAMS.size)
        self._ring = self._call(IO_URING_SETUP, ctypes.c_long(ENTRIES), params)
        try:
            self._map_rings(_PARAMS.unpack(params.raw))
        except BaseException:
            self.close()
            raise
        ring, none, zero = ctypes.c_int(self._ring), ctypes.c_uint(0), ctypes.c_size_t(0)
        # io_uring_enter(ring, to_submit, min_complete, flags, NULL, 0)
        self._submit_args = (ring, ctypes.c_uint(1), none, none, None, zero)
        self._wait_args = (ring, none, ctypes.c_uint(1),
                           ctypes.c_uint(IORING_ENTER_GETEVENTS), None, zero)

    def _map_rings(self, p: tuple[int, ...]) -> None:
        sq_entries, cq_entries, features = p[0], p[1], p[5]
        _, sq_tail, sq_mask, _, _, _, sq_array, _, _ = p[10:19]  # the kernel moves the head
        cq_head, cq_tail, cq_mask, _, _, cqes, _, _, _ = p[19:28]
        sq_size = sq_array + sq_entries * 4
        cq_size = cqes + cq_entries * _CQE.size
        rw = mmap.PROT_READ | mmap.PROT_WRITE
        if features & IORING_FEAT_SINGLE_MMAP:
            sq = cq = self._map(max(sq_size, cq_size), IORING_OFF_SQ_RING, rw)
        else:  # before Linux 5.4
            sq = self._map(sq_size, IORING_OFF_SQ_RING, rw)
            cq = self._map(cq_size, IORING_OFF_CQ_RING, rw)
        self._sqes = self._map(sq_entries * _SQE.size, IORING_OFF_SQES, rw)
        self._sq, self._cq = sq, cq
        self._sq_tail = sq_tail
        self._sq_mask = _U32.unpack_from(sq, sq_mask)[0]
        for index in range(sq_entries):  # slot i always holds SQE i: set once
            _U32.pack_into(sq, sq_array + 4 * index, index)
        self._cq_head, self._cq_tail, self._cqes = cq_head, cq_tail, cqes
        self._cq_mask = _U32.unpack_from(cq, cq_mask)[0]

    def _map(self, size: int, offset: int, prot: int) -> mmap.mmap:
        region = mmap.mmap(self._ring, size, mmap.MAP_SHARED, prot, offset=offset)
        self._maps.append(region)
        return region

    def _call(self, number: int, *args: object) -> int:
        """syscall(number, *args), retried on EINTR; OSError on failure."""
        while True:
            result = int(self._syscall(ctypes.c_long(number), *args))
            if result >= 0:
                return result
            code = ctypes.get_errno()
            if code != errno.EINTR:
                raise OSError(code, os.strerror(code))

    @property
    def active(self) -> bool:
        """False once the kernel refused a file and syncs are done inline."""
        return self._inline is None

    def start(self, fd: int) -> None:
        """Submit the flush of ``fd``'s data; the kernel's worker begins it at once."""
        if self._inline is not None:
            self._inline.start(fd)
            return
        if self._pending:
            raise RuntimeError("a sync is already outstanding: wait() for it first")
        if fd != self._fd or not self._sqe:
            self._sqe = _SQE.pack(IORING_OP_FSYNC, 0, 0, fd, 0, 0, 0, IORING_FSYNC_DATASYNC,
                                  0, 0, 0, 0, 0, 0)
        tail = _U32.unpack_from(self._sq, self._sq_tail)[0]
        at = (tail & self._sq_mask) * _SQE.size
        self._sqes[at : at + _SQE.size] = self._sqe
        _U32.pack_into(self._sq, self._sq_tail, (tail + 1) & 0xFFFFFFFF)
        self._fd = fd
        submitted = self._call(IO_URING_ENTER, *self._submit_args)
        if submitted != 1:  # the kernel took nothing, and said no error: never wait for it
            _U32.pack_into(self._sq, self._sq_tail, tail)
            _datasync(fd)
            return
        self._pending = True

    def wait(self) -> None:
        """Until the flush is done; OSError with the kernel's error if it failed."""
        if not self._pending:
            return
        self._pending = False
        while True:
            # Entering with GETEVENTS each time also orders our reads after the kernel's
            # writes of the completion (no memory barrier needed here).
            self._call(IO_URING_ENTER, *self._wait_args)
            head = _U32.unpack_from(self._cq, self._cq_head)[0]
            if head != _U32.unpack_from(self._cq, self._cq_tail)[0]:
                break
        result = _CQE.unpack_from(self._cq, self._cqes + (head & self._cq_mask) * _CQE.size)[1]
        _U32.pack_into(self._cq, self._cq_head, (head + 1) & 0xFFFFFFFF)
        if result >= 0:
            return
        if -result in _FALLBACK_ERRORS:
            log.info("journal: io_uring cannot sync this file (%s): fdatasync inline",
                     os.strerror(-result))
            self._inline = InlineSync()
            self._inline.start(self._fd)  # raises what fdatasync says of the file
            return
        raise OSError(-result, os.strerror(-result))

    def close(self) -> None:
        """Wait for an outstanding flush (errors ignored) and release the ring."""
        try:
            self.wait()
        except OSError as exc:
            log.warning("journal: the last fdatasync failed as the journal closed: %s", exc)
        for region in self._maps:
            region.close()
        self._maps = []
        if self._ring >= 0:
            os.close(self._ring)
            self._ring = -1


def make_sync(*, overlap: bool = True) -> Sync:
    """A :class:`UringSync` if asked for and the system has io_uring, else :class:`InlineSync`."""
    if not overlap:
        return InlineSync()
    try:
        return UringSync()
    except OSError as exc:
        log.info("journal: no io_uring (%s): fdatasync inline", exc.strerror or exc)
        return InlineSync()
