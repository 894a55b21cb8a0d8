"""Crash-safe file I/O.

Writers never leave a half-written file where a reader looks: data goes to a temp
file in the same directory, is fsynced, then renamed (or linked, for files that must
never be replaced) into place, and the directory is fsynced. Readers turn every way
a file can be bad into ``UnreadableFile`` with a reason a person understands.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from pathlib import Path

from runeconsole.core.errors import UnreadableFile, refused
from runeconsole.core.pids import pid_alive

TYPE_CHECKING = False  # typing itself is not imported: the hook starts faster
if TYPE_CHECKING:
    from typing import Any

MAX_READ_BYTES = 8 * 1024 * 1024
TEMP_SUFFIX = ".tmp"


def _temp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}{TEMP_SUFFIX}")


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_temp(path: Path, data: bytes, mode: int) -> Path:
    tmp = _temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    return tmp


def atomic_write_bytes(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a mix.
    A full disk or a read-only file system raises ``WriteFailed`` with the old file as it
    was and no temp file left."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _write_temp(path, data, mode)
        try:
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _fsync_dir(path.parent)
    except OSError as exc:
        raise refused(path, exc) from None


def create_exclusive(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Create ``path`` complete in one step; raise ``FileExistsError`` if it exists.

    ``os.link`` fails rather than replace, so an answer or a signal written once can
    never be overwritten, and readers never see it half-written.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _write_temp(path, data, mode)
        try:
            os.link(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        _fsync_dir(path.parent)
    except OSError as exc:  # FileExistsError as it is; a full disk as WriteFailed
        raise refused(path, exc) from None


def dump_json(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def atomic_write_json(path: Path, obj: Any, mode: int = 0o644) -> None:
    atomic_write_bytes(path, dump_json(obj), mode)


def read_bytes(
    path: Path | str,
    limit: int = MAX_READ_BYTES,
    *,
    follow_symlinks: bool = True,
    pipes: bool = False,
) -> bytes:
    """The whole of a regular file. Non-blocking open: a FIFO planted where a state file
    belongs is refused instead of hanging the reader. ``pipes`` is for a file the user
    named (``--body-file <(…)``): then a pipe is read to its end."""
    return read_bytes_and_stat(path, limit, follow_symlinks=follow_symlinks, pipes=pipes)[0]


def read_bytes_and_stat(
    path: Path | str,
    limit: int = MAX_READ_BYTES,
    *,
    follow_symlinks: bool = True,
    pipes: bool = False,
) -> tuple[bytes, os.stat_result]:
    """``read_bytes``, and the file's ``stat`` as it was opened (before its read): of the
    very file read, where a ``stat`` of its path could meet another that replaced it."""
    flags = os.O_RDONLY | os.O_CLOEXEC | (0 if pipes else os.O_NONBLOCK)
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise UnreadableFile(path, "file is missing") from None
    except PermissionError:
        raise UnreadableFile(path, "permission denied") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise UnreadableFile(path, "a symbolic link (not followed)") from None
        raise UnreadableFile(path, exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UnreadableFile(path, "is a directory, not a file")
        if not stat.S_ISREG(info.st_mode) and not (pipes and stat.S_ISFIFO(info.st_mode)):
            raise UnreadableFile(path, "not a regular file (a pipe, socket or device?)")
        # Size first: a bounded read of `limit` bytes would allocate `limit` every time.
        if info.st_size > limit:
            raise UnreadableFile(path, f"larger than {limit} bytes")
        chunks, size, want = [], 0, info.st_size + 1
        while size <= limit:  # a file still growing is read to its end, or to the limit
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            if len(chunk) < want and stat.S_ISREG(info.st_mode):
                break  # a short read of a regular file is its end: no second read to learn it
            size, want = size + len(chunk), 65536
        data = b"".join(chunks)
    except OSError as exc:
        raise UnreadableFile(path, exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UnreadableFile(path, f"larger than {limit} bytes")
    return data, info


def parse_json_object(path: Path | str, data: bytes) -> dict[str, Any]:
    if not data.strip():
        raise UnreadableFile(path, "empty file (half-written?)")
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")  # a BOM, as json.loads allows
        obj = _DECODER.decode(text)
    except UnicodeDecodeError:
        raise UnreadableFile(path, "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise UnreadableFile(
            path, f"not valid JSON ({exc.msg}; line {exc.lineno} column {exc.colno})"
        ) from None
    except RecursionError:
        raise UnreadableFile(path, "JSON nested too deeply") from None
    except ValueError as exc:  # NaN / Infinity: Python accepts them, other readers do not
        raise UnreadableFile(path, f"not valid JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise UnreadableFile(path, f"expected a JSON object, found {type(obj).__name__}")
    return obj


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


_DECODER = json.JSONDecoder(parse_constant=_no_constants)  # one for every read: it is hot


def read_json_object(path: Path | str) -> dict[str, Any]:
    """Read a JSON object, or raise ``UnreadableFile`` saying why not.

    A state file that is itself a symbolic link is not followed: a link planted where one
    belongs would show a file from outside the project as if it were ours. (A linked
    directory on the way is the writers' concern: they refuse to write through it.)"""
    return parse_json_object(path, read_bytes(path, follow_symlinks=False))


def is_temp_name(name: str) -> bool:
    """Writers' in-flight temp files, which readers skip."""
    return name.startswith(".")


def remove_orphan_temp(directory: Path | str, name: str) -> bool:
    """Delete a temp file left by a writer that was killed mid-write (its pid is gone)."""
    parts = name.split(".")
    if not name.startswith(".") or not name.endswith(TEMP_SUFFIX) or len(parts) < 4:
        return False
    try:
        pid = int(parts[-3])
    except ValueError:
        return False
    if pid == os.getpid() or pid_alive(pid):
        return False
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(directory, name))
    return True


def unwritable(root: Path) -> str | None:
    """Why nothing can be written under ``root`` (``None``: it can): a read-only file
    system, or no permission on the deepest of its state directories that exists."""
    try:
        read_only = os.statvfs(root).f_flag & os.ST_RDONLY
    except OSError as exc:
        return f"{root}: {exc.strerror or exc}"
    if read_only:
        return f"{root} is on a read-only file system"
    for directory in (root / ".claude" / "state", root / ".claude", root):
        if directory.is_dir():
            if not os.access(directory, os.W_OK | os.X_OK):
                return f"no permission to write in {directory}"
            return None
    return None
