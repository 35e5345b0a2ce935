"""File access confined to one task's folder, safe against symlink and hard-link tricks and against races.

Every path is walked one component at a time from an open directory descriptor (``openat`` with ``O_NOFOLLOW``),
the way ``openat2(RESOLVE_BENEATH)`` would: a symlink is read and resolved by us, inside the task's folder (an
absolute target counts from the task's root in a container-style sandbox, and is refused otherwise), ``..`` never
climbs above the task's root, and a symlink swapped in between our check and our open makes the open fail and the
walk start again instead of being followed. Files are refused when they are not regular files (a FIFO would block a
read forever) or, where the backend's commands could have hard-linked them from outside, when they have more than
one link. Writes go to a new file renamed over the old name, so they never write through a link. Reads are bounded.

Over 400 lines for one job: the walker and the read, list and write operations built on it share one descriptor
discipline, and splitting them would spread that discipline over files.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from hermes_envs.errors import PathEscapeError, SandboxError

__all__ = ["FileTooLargeError", "TaskFiles", "UnsafeFileError"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_MAX_LINKS = 40
_RETRIES = 8


class UnsafeFileError(SandboxError, PermissionError):
    """A file the file tools refuse: not a regular file (FIFO, socket, device), or hard-linked elsewhere."""


class FileTooLargeError(SandboxError, ValueError):
    """A file (or content to write) is larger than the sandbox allows for this operation."""


class _Raced(Exception):
    """A component changed between our check and our open: walk again."""


def _kind(mode: int) -> str:
    for test, word in (
        (stat.S_ISFIFO, "FIFO (named pipe)"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return word
    return "special file"


class _Walk:
    """The result of walking a path: the open directory chain, the final name (None: the directory itself)."""

    def __init__(self, fds: list[int], name: str | None, parts: list[str]):
        self.fds = fds
        self.name = name
        self.parts = parts  # the resolved path, as components below the task's root

    @property
    def dir_fd(self) -> int:
        return self.fds[-1]

    def close(self) -> None:
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []

    def __enter__(self) -> _Walk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TaskFiles:
    """Reads and writes below ``tree`` (the task's root folder); relative paths start at ``workdir``.

    ``container_paths``: absolute paths (and absolute symlink targets) resolve inside ``tree`` as in a container;
    otherwise only absolute paths under ``tree`` itself are accepted. ``links_confined()`` tells whether the
    task's commands could have hard-linked files from outside (False: files with several links are refused).
    """

    def __init__(
        self,
        tree: Path,
        workdir: Path,
        *,
        container_paths: bool,
        links_confined: Callable[[], bool] = lambda: False,
    ):
        self.tree = Path(os.path.realpath(tree))
        self.workdir = Path(os.path.realpath(workdir))
        self.wd_parts = list(self.workdir.relative_to(self.tree).parts)
        self.container_paths = container_paths
        self.links_confined = links_confined

    # ------------------------------------------------------------------ paths
    def _escape(self, raw: str, resolved: str, how: str = "") -> PathEscapeError:
        return PathEscapeError(
            f"path {raw!r} resolves to {resolved!r} {how}which is outside this task's working directory "
            f"{str(self.workdir)!r}; access refused. Fix: use a path relative to the working directory "
            f"(e.g. 'out.txt' or 'src/main.py'), or an absolute path under {str(self.workdir)!r}.".replace(
                "  ", " "
            )
        )

    def _under_tree(self, absolute: str) -> list[str] | None:
        tree = str(self.tree)
        if absolute == tree or absolute.startswith(tree + "/"):
            return [p for p in absolute[len(tree) :].split("/") if p]
        return None

    def _parts(self, raw: str) -> list[str]:
        if raw == "~" or raw.startswith("~/"):
            parts = [*self.wd_parts, *raw[2:].split("/")]
        elif not raw.startswith("/"):
            parts = [*self.wd_parts, *raw.split("/")]
        else:
            inside = self._under_tree(os.path.normpath(raw))
            if inside is not None:
                return inside
            if self.container_paths:
                return raw.split("/")
            raise self._escape(raw, os.path.normpath(raw))
        if (
            not self.container_paths
        ):  # ``..`` that climbs out on paper is refused even where folders are missing
            depth = 0
            for part in parts:
                depth += -1 if part == ".." else 0 if part in ("", ".") else 1
                if depth < 0:
                    raise self._escape(raw, os.path.normpath(os.path.join(str(self.tree), *parts)))
        return parts

    def display(self, parts: list[str]) -> str:
        """How a resolved path is shown: relative to the working directory, else absolute in the task's root."""
        n = len(self.wd_parts)
        if parts[:n] == self.wd_parts:
            return "/".join(parts[n:]) or "."
        if self.container_paths:
            return "/" + "/".join(parts)
        return os.path.relpath(os.path.join(str(self.tree), *parts), self.workdir)

    def host_path(self, parts: list[str]) -> Path:
        return self.tree.joinpath(*parts)

    def walk(
        self, raw: str | os.PathLike[str], *, create_dirs: bool = False, follow_last: bool = True
    ) -> _Walk:
        """Resolve ``raw`` safely; the caller closes the result. Missing final components are allowed.
        ``follow_last=False``: a symlink as the last component is the result itself (to remove it), not followed."""
        text = os.fspath(raw)
        if not isinstance(text, str):
            raise TypeError(f"path should be a str; got {type(text).__name__}.")
        if "\x00" in text:
            raise ValueError("path should not contain NUL bytes.")
        parts = self._parts(text)
        for _ in range(_RETRIES):
            try:
                return self._walk(text, parts, create_dirs, follow_last)
            except _Raced:
                continue
        raise SandboxError(f"path {text!r} kept changing while it was opened; try again.")

    def _walk(self, raw: str, parts: list[str], create_dirs: bool, follow_last: bool = True) -> _Walk:
        fds = [os.open(self.tree, _DIR_FLAGS)]
        logical: list[str] = []
        todo = [p for p in parts if p not in ("", ".")]
        links = 0
        try:
            while todo:
                name = todo.pop(0)
                if name in ("", "."):
                    continue
                if name == "..":
                    if len(fds) == 1:
                        if self.container_paths:
                            continue  # as in a container: /.. is /
                        raise self._escape(raw, os.path.normpath(os.path.join(str(self.tree), "..", *todo)))
                    os.close(fds.pop())
                    logical.pop()
                    continue
                last = not todo
                try:
                    st = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
                except FileNotFoundError:
                    if last:
                        return _Walk(fds, name, [*logical, name])
                    if not create_dirs:
                        raise FileNotFoundError(
                            f"no file or folder {raw!r} in the task's working directory {str(self.workdir)!r}."
                        ) from None
                    try:
                        os.mkdir(name, 0o777, dir_fd=fds[-1])
                    except FileExistsError:
                        raise _Raced from None
                    st = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode) and (follow_last or not last):
                    links += 1
                    if links > _MAX_LINKS:
                        raise SandboxError(f"path {raw!r} goes through more than {_MAX_LINKS} symlinks.")
                    try:
                        target = os.readlink(name, dir_fd=fds[-1])
                    except OSError as exc:  # no longer a symlink (swapped back): walk again
                        if exc.errno in (errno.EINVAL, errno.ENOENT):
                            raise _Raced from None
                        raise
                    if target.startswith("/"):
                        inside = self._under_tree(os.path.normpath(target))
                        if inside is None:
                            if not self.container_paths:
                                raise self._escape(raw, target, "through a symlink ")
                            inside = target.split("/")
                        for fd in fds[1:]:
                            os.close(fd)
                        del fds[1:]
                        logical = []
                        todo = [*inside, *todo]
                    else:
                        todo = [*target.split("/"), *todo]
                    continue
                if last:
                    return _Walk(fds, name, [*logical, name])
                if not stat.S_ISDIR(st.st_mode):
                    raise NotADirectoryError(f"{raw!r}: {'/'.join([*logical, name])!r} is not a folder.")
                try:
                    fds.append(os.open(name, _DIR_FLAGS, dir_fd=fds[-1]))
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                        raise _Raced from None
                    raise
                logical.append(name)
            return _Walk(fds, None, logical)
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise

    def resolve(self, raw: str | os.PathLike[str]) -> Path:
        """The host path ``raw`` resolves to (it need not exist)."""
        with self.walk(raw) as w:
            return self.host_path(w.parts)

    # ------------------------------------------------------------------ reading
    def _open_file(self, w: _Walk, raw: str) -> tuple[int, os.stat_result]:
        if w.name is None:
            raise IsADirectoryError(f"{raw!r} is a directory, not a file.")
        try:
            fd = os.open(w.name, _READ_FLAGS, dir_fd=w.dir_fd)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"no file {raw!r} in the task's working directory {str(self.workdir)!r}."
            ) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # swapped for a symlink after the walk
                raise _Raced from None
            raise
        st = os.fstat(fd)
        try:
            self._check_regular(raw, st)
        except BaseException:
            os.close(fd)
            raise
        return fd, st

    def _check_regular(self, raw: str, st: os.stat_result, *, writing: bool = False) -> None:
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(f"{raw!r} is a directory, not a file.")
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFileError(
                f"{raw!r} should be a regular file; got a {_kind(st.st_mode)}, which the file tools do not open "
                "(it could block forever). Fix: use the terminal tool for it."
            )
        if st.st_nlink > 1 and (writing or not self.links_confined()):
            raise UnsafeFileError(
                f"{raw!r} should have one name; got a file with {st.st_nlink} hard links, one of which may be "
                "outside the task's folder, so the file tools refuse it. Fix: copy it to a new file first "
                "(cp --no-preserve=links) and use the copy."
            )

    def read(
        self,
        raw: str | os.PathLike[str],
        limit: int | None = None,
        *,
        whole_max: int | None = None,
        tail: bool = False,
    ) -> tuple[bytes, int]:
        """(at most ``limit`` bytes of the file, its size). Never blocks on a FIFO; never reads past ``limit``.

        ``whole_max``: a file larger than this raises FileTooLargeError before anything is read. ``tail``: the last
        ``limit`` bytes instead of the first."""
        text = os.fspath(raw)
        for _ in range(_RETRIES):
            with self.walk(text) as w:
                try:
                    fd, st = self._open_file(w, text)
                except _Raced:
                    continue
            try:
                if whole_max is not None and st.st_size > whole_max:
                    raise FileTooLargeError(
                        f"{text!r} should be at most {whole_max} bytes to be read whole; got {st.st_size}. "
                        "Fix: read a part of it (head -c, tail -c in the terminal), or raise max_file_size_mb."
                    )
                os.set_blocking(fd, True)
                want = st.st_size if limit is None else min(limit, st.st_size)
                if tail and want < st.st_size:
                    os.lseek(fd, st.st_size - want, os.SEEK_SET)
                chunks, got = [], 0
                while got < want:
                    data = os.read(fd, min(want - got, 1 << 20))
                    if not data:
                        break
                    chunks.append(data)
                    got += len(data)
                return b"".join(chunks), st.st_size
            finally:
                os.close(fd)
        raise SandboxError(f"path {text!r} kept changing while it was opened; try again.")

    def open_fifo(self, raw: str | os.PathLike[str]) -> int:
        """A descriptor for writing into the FIFO ``raw`` (non-blocking: OSError ENXIO when nobody reads it).
        Anything but a FIFO (a symlink swapped in, a regular file) raises UnsafeFileError."""
        text = os.fspath(raw)
        with self.walk(text) as w:
            if w.name is None:
                raise IsADirectoryError(f"{text!r} is a directory, not a FIFO.")
            fd = os.open(w.name, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=w.dir_fd)
        st = os.fstat(fd)
        if not stat.S_ISFIFO(st.st_mode):
            os.close(fd)
            raise UnsafeFileError(f"{text!r} should be the process's input FIFO; got another kind of file.")
        return fd

    def remove(self, raw: str | os.PathLike[str]) -> bool:
        """Remove the file, link or folder tree ``raw`` (never following a link out: a symlink itself is removed).
        False when there was nothing."""
        text = os.fspath(raw)
        with self.walk(text, follow_last=False) as w:
            if w.name is None:
                raise IsADirectoryError(f"{text!r} is the task's folder or one above a name; give a name.")
            try:
                st = os.stat(w.name, dir_fd=w.dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                return False
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(w.name, dir_fd=w.dir_fd)
                return True
            _remove_below(w.dir_fd, w.name)
            return True

    def is_dir(self, raw: str | os.PathLike[str]) -> bool:
        with self.walk(raw) as w:
            if w.name is None:
                return True
            try:
                st = os.stat(w.name, dir_fd=w.dir_fd, follow_symlinks=False)
            except FileNotFoundError:
                return False
            return stat.S_ISDIR(st.st_mode)

    def files(
        self,
        raw: str | os.PathLike[str],
        *,
        skip_dirs: frozenset[str] = frozenset(),
        max_bytes: int | None = None,
    ) -> Iterator[tuple[list[str], bytes]]:
        """(resolved parts, content) of every regular single-link file under ``raw`` (a folder or a file), sorted.

        Symlinks are never followed; FIFOs, devices, multiply-linked files and files over ``max_bytes`` are skipped.
        """
        text = os.fspath(raw)
        with self.walk(text) as w:
            if w.name is None:
                top, base = os.dup(w.dir_fd), list(w.parts)
            else:
                try:
                    st = os.stat(w.name, dir_fd=w.dir_fd, follow_symlinks=False)
                except FileNotFoundError:
                    raise FileNotFoundError(
                        f"no file or folder {text!r} in the task's working directory {str(self.workdir)!r}."
                    ) from None
                if not stat.S_ISDIR(st.st_mode):
                    data = self._read_member(w.dir_fd, w.name, max_bytes)
                    if data is not None:
                        yield list(w.parts), data
                    return
                top, base = os.open(w.name, _DIR_FLAGS, dir_fd=w.dir_fd), list(w.parts)
        try:
            for dirpath, dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=top):
                dirnames[:] = sorted(d for d in dirnames if d not in skip_dirs)
                rel = [p for p in dirpath.split("/") if p not in ("", ".")]
                for name in sorted(filenames):
                    data = self._read_member(dir_fd, name, max_bytes)
                    if data is not None:
                        yield [*base, *rel, name], data
        finally:
            os.close(top)

    def _read_member(self, dir_fd: int, name: str, max_bytes: int | None) -> bytes | None:
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except OSError:
            return None  # a symlink (never followed), gone, or unreadable
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or (st.st_nlink > 1 and not self.links_confined()):
                return None
            if max_bytes is not None and st.st_size > max_bytes:
                return None
            os.set_blocking(fd, True)
            chunks, got = [], 0
            while got < st.st_size:
                data = os.read(fd, min(st.st_size - got, 1 << 20))
                if not data:
                    break
                chunks.append(data)
                got += len(data)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def symlinks(self, raw: str | os.PathLike[str]) -> Iterator[tuple[list[str], str]]:
        """(parts relative to ``raw``, target) of every symlink below the folder ``raw`` (never followed)."""
        with self.walk(raw) as w:
            top = os.dup(w.dir_fd) if w.name is None else os.open(w.name, _DIR_FLAGS, dir_fd=w.dir_fd)
        try:
            for dirpath, dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=top):
                rel = [p for p in dirpath.split("/") if p not in ("", ".")]
                for name in [*dirnames, *filenames]:
                    try:
                        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                        if stat.S_ISLNK(st.st_mode):
                            yield [*rel, name], os.readlink(name, dir_fd=dir_fd)
                    except OSError:
                        continue
        finally:
            os.close(top)

    # ------------------------------------------------------------------ writing
    def write(self, raw: str | os.PathLike[str], data: bytes, *, max_bytes: int | None = None) -> list[str]:
        """Replace (or create) the file ``raw`` with ``data``; parent folders are made. Returns the resolved parts."""
        text = os.fspath(raw)
        if max_bytes is not None and len(data) > max_bytes:
            raise FileTooLargeError(
                f"content for {text!r} should be at most {max_bytes} bytes (the sandbox's max_file_size_mb); "
                f"got {len(data)}. Fix: write less, or raise max_file_size_mb."
            )
        for _ in range(_RETRIES):
            with self.walk(text, create_dirs=True) as w:
                if w.name is None:
                    raise IsADirectoryError(f"{text!r} is a directory; give a file path.")
                try:
                    st = os.stat(w.name, dir_fd=w.dir_fd, follow_symlinks=False)
                except FileNotFoundError:
                    st = None
                if st is not None and stat.S_ISLNK(st.st_mode):
                    continue  # swapped for a symlink after the walk: walk again (and follow it inside)
                mode = 0o644
                if st is not None:
                    self._check_regular(text, st, writing=True)
                    mode = stat.S_IMODE(st.st_mode)
                self._replace(w.dir_fd, w.name, data, mode)
                return w.parts
        raise SandboxError(f"path {text!r} kept changing while it was written; try again.")

    @staticmethod
    def _replace(dir_fd: int, name: str, data: bytes, mode: int) -> None:
        tmp = f".{name[:200]}.hermes-{secrets.token_hex(4)}"
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd
        )
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fchmod(fd, mode)
            finally:
                os.close(fd)
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
            raise

    def mkdir(self, raw: str | os.PathLike[str]) -> list[str]:
        """Make the folder ``raw`` (and its parents) inside the task's tree; returns its resolved parts."""
        text = os.fspath(raw)
        with self.walk(text, create_dirs=True) as w:
            if w.name is not None:
                try:
                    os.mkdir(w.name, 0o777, dir_fd=w.dir_fd)
                except FileExistsError:
                    if not self.is_dir(text):
                        raise NotADirectoryError(f"{text!r} exists and is not a folder.") from None
            return w.parts


def _remove_below(dir_fd: int, name: str) -> None:
    """rm -r of the folder ``name`` in ``dir_fd``, by descriptors only (a symlink inside is unlinked, not followed)."""
    fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    try:
        for entry in os.listdir(fd):
            st = os.stat(entry, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                _remove_below(fd, entry)
            else:
                os.unlink(entry, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dir_fd)
