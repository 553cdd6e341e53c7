"""The journal's fdatasync, started at once and waited for later: Linux AIO through ctypes.

The daemon must have an input's record on disk before anything derived from it leaves
(invariant 2), but nothing says the engine must wait for the disk before it works out
what the input means. A flush of one record takes 450-700 us on a table computer's
flash or a VM's disk, as long as everything else a card costs the daemon; run side by
side, the two overlap. A Python thread cannot do that well: the thread that would call
``fdatasync`` first needs the interpreter's lock, which the daemon holds while it works,
so the hand-offs eat most of the gain (measured: 821 against 831 us). The kernel can do
it instead. Linux AIO has an ``IOCB_CMD_FDSYNC`` request (Linux 4.18 and later): the
kernel flushes the file in a worker of its own while the daemon goes on, and
``io_getevents`` returns when the data is on disk, with the same error ``fdatasync``
would have given.

Sequence, for each record (see :class:`AioSync`)::

    os.write(fd, record)        # in the page cache
    sync.start(fd)              # io_submit(FDSYNC), then sched_yield(): the kernel's
                                # worker is queued on this CPU, and must start the
                                # flush now, not when the daemon next sleeps
    ... engine, messages, MQTT packets built but not sent ...
    sync.wait()                 # io_getevents: on disk (or OSError)
    ... packets go out ...

Measured on this project's 2-core test VM (ext4), 4 ms between records, 270 us of
Python work after each write: fdatasync then work 1001 us p50; AIO without the yield
1082 us (the worker waited for the CPU); AIO with the yield 760 us. A native thread
created per record to call fdatasync (no interpreter lock) was slower still: 1192 us.

Where Linux AIO is not there (another OS or architecture, a seccomp filter, an old
kernel or a file system without it), :func:`make_sync` gives :class:`InlineSync`, which
is plain ``fdatasync`` in :meth:`~InlineSync.start`; a first ``io_submit`` that the
kernel refuses for the file switches an :class:`AioSync` to that too, once, with a log
line. Nothing else changes: ``wait()`` raises what ``fdatasync`` would have raised.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import platform
import struct
import sys
from typing import Final, Protocol

log = logging.getLogger(__name__)

_datasync = getattr(os, "fdatasync", os.fsync)

IOCB_CMD_FDSYNC: Final = 3
_IOCB = struct.Struct("=QIIHhIQQqQII")  # struct iocb, 64 bytes, the same on every arch
_EVENT = struct.Struct("=QQqq")  # struct io_event: data, obj, res, res2
_GENERIC = (0, 1, 2, 4)
_ARM_EABI = (243, 244, 246, 245)
_SYSCALLS: Final[dict[tuple[str, int], tuple[int, int, int, int]]] = {
    # (machine, pointer size): io_setup, io_destroy, io_submit, io_getevents. The pointer
    # size tells a 32-bit process on a 64-bit kernel (a Raspberry Pi's 32-bit system says
    # "aarch64"), whose numbers are 32-bit ARM's: the generic table's 1 would be exit().
    ("x86_64", 8): (206, 207, 209, 208),
    ("aarch64", 8): _GENERIC,
    ("arm64", 8): _GENERIC,
    ("riscv64", 8): _GENERIC,
    ("loongarch64", 8): _GENERIC,
    ("aarch64", 4): _ARM_EABI,
    ("armv8l", 4): _ARM_EABI,
    ("armv7l", 4): _ARM_EABI,
    ("armv6l", 4): _ARM_EABI,
}
"""Where the numbers are known; elsewhere (i386, x32, big-endian, ...) syncs are inline."""
_FALLBACK_ERRORS: Final = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM})
"""What io_submit says when the kernel, a filter or the file system cannot do it."""


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


class AioSync:
    """One Linux AIO context with one ``IOCB_CMD_FDSYNC`` request at a time."""

    name: str = "linux-aio"

    def __init__(self) -> None:
        """Set up the context; OSError where Linux AIO cannot be had."""
        numbers = _SYSCALLS.get((platform.machine(), ctypes.sizeof(ctypes.c_void_p)))
        if sys.platform != "linux" or numbers is None or not hasattr(os, "sched_yield"):
            raise OSError(errno.ENOSYS, f"no Linux AIO on {platform.machine() or 'this system'}")
        self._setup, self._destroy, self._submit, self._getevents = numbers
        try:
            libc = ctypes.CDLL(None, use_errno=True)
        except OSError as exc:  # pragma: no cover - every Linux has a C library
            raise OSError(errno.ENOSYS, f"no C library: {exc}") from exc
        self._syscall = libc.syscall
        self._syscall.restype = ctypes.c_long
        self._ctx = ctypes.c_ulong(0)
        self._call(self._setup, ctypes.c_long(1), ctypes.byref(self._ctx))
        self._iocb = ctypes.create_string_buffer(_IOCB.size)
        self._iocbs = (ctypes.c_void_p * 1)(ctypes.addressof(self._iocb))
        self._event = ctypes.create_string_buffer(_EVENT.size)
        self._pending = False
        self._inline: InlineSync | None = None  # set when the kernel refused a request

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
        """False once the kernel refused a request and syncs are done inline."""
        return self._inline is None

    def start(self, fd: int) -> None:
        """Submit the flush of ``fd``'s data and let the kernel's worker begin it."""
        if self._inline is not None:
            self._inline.start(fd)
            return
        if self._pending:
            raise RuntimeError("a sync is already outstanding: wait() for it first")
        _IOCB.pack_into(self._iocb, 0, 0, 0, 0, IOCB_CMD_FDSYNC, 0, fd, 0, 0, 0, 0, 0, 0)
        try:
            submitted = self._call(self._submit, self._ctx, ctypes.c_long(1), self._iocbs)
        except OSError as exc:
            if exc.errno == errno.EAGAIN:  # no room in the kernel just now: this one inline
                _datasync(fd)
                return
            if exc.errno not in _FALLBACK_ERRORS:
                raise
            log.info("journal: Linux AIO cannot sync this file (%s): fdatasync inline",
                     exc.strerror)
            self._inline = InlineSync()
            self._inline.start(fd)
            return
        if submitted != 1:  # nothing queued, and no error: never wait for it
            _datasync(fd)
            return
        self._pending = True
        os.sched_yield()

    def wait(self) -> None:
        """Until the flush is done; OSError with the kernel's error if it failed."""
        if not self._pending:
            return
        try:
            self._call(self._getevents, self._ctx, ctypes.c_long(1), ctypes.c_long(1),
                       self._event, None)
        finally:
            # io_getevents fails only for a bad context or buffer: a bug, not the disk;
            # either way the request is not waited for twice.
            self._pending = False
        result = _EVENT.unpack(self._event.raw)[2]
        if result < 0:
            raise OSError(-result, os.strerror(-result))

    def close(self) -> None:
        """Wait for an outstanding flush (errors ignored) and destroy the context."""
        try:
            self.wait()
        except OSError as exc:
            log.warning("journal: the last fdatasync failed as the journal closed: %s", exc)
        if self._ctx.value:
            try:
                self._call(self._destroy, self._ctx)
            except OSError as exc:  # pragma: no cover - nothing to do about it
                log.warning("journal: io_destroy: %s", exc)
            self._ctx = ctypes.c_ulong(0)


def make_sync(*, overlap: bool = True) -> Sync:
    """An :class:`AioSync` if asked for and the system has Linux AIO, else :class:`InlineSync`."""
    if not overlap:
        return InlineSync()
    try:
        return AioSync()
    except OSError as exc:
        log.info("journal: no Linux AIO (%s): fdatasync inline", exc.strerror or exc)
        return InlineSync()
