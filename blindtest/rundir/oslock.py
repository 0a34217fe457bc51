"""The one place a file lock is taken: an advisory lock on an open descriptor that the OS
releases when the process ends (a kill -9 never leaves a stale lock).

POSIX (Linux, macOS): ``fcntl.flock`` on the whole file. Windows: ``msvcrt.locking`` on one
byte far past anything the lock file holds, so other processes can still read the holder's
PID at its start (Windows byte locks are mandatory: a locked byte cannot be read).
:mod:`blindtest.rundir.locking` builds the run and picks-file locks on these two calls.
"""

from __future__ import annotations

import errno
import os
import sys

#: Where the Windows lock sits: past the "PID label" line the holder writes at the start.
_WINDOWS_LOCK_OFFSET = 1 << 20


def try_lock(fd: int) -> bool:
    """Take an exclusive lock on ``fd`` without waiting: True when taken, False when another
    process holds it. Any other failure is the ``OSError`` the OS gave."""
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError as error:
            if error.errno in (errno.EACCES, errno.EDEADLOCK):
                return False
            raise
        finally:
            os.lseek(fd, 0, os.SEEK_SET)
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def unlock(fd: int) -> None:
    """Let go of a lock ``try_lock`` took. Closing ``fd`` lets go as well; Windows asks for
    the release first."""
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)
