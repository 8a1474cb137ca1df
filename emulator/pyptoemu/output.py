"""Writing result files: atomically, never through a symlink, with OS errors as user errors.

Each file is written to a temporary file beside it and renamed over the target: a killed run leaves
either the previous file or the complete new one, never half a ``.npy`` or trace. The rename
replaces a symlink planted at the target instead of writing where it points. An OS error (an
unwritable directory, a target that is a directory) becomes :class:`OutputError` (exit code 2).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np

from pyptoemu.errors import OutputError


def file_mode() -> int:
    """What ``open()`` would give a new file under the current umask (mkstemp makes it 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomic(path: str | os.PathLike, write: Callable[[IO[bytes]], Any]) -> Path:
    """Call ``write`` on a temporary file in ``path``'s directory, then rename it to ``path``."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir() and not target.is_symlink():
            raise IsADirectoryError(21, "is a directory")
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as e:
        raise OutputError(f"cannot write {target}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, file_mode())
        os.replace(tmp, target)
    except OSError as e:
        _discard(tmp)
        raise OutputError(f"cannot write {target}: {e.strerror or e}") from None
    except BaseException:
        _discard(tmp)
        raise
    return target


def _discard(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


def write_npy(path: str | os.PathLike, array: np.ndarray) -> Path:
    return write_atomic(path, lambda f: np.save(f, array, allow_pickle=False))


def write_json(path: str | os.PathLike, doc: Any) -> Path:
    return write_atomic(path, lambda f: f.write(json.dumps(doc, separators=(",", ":")).encode()))


def write_text(path: str | os.PathLike, text: str) -> Path:
    return write_atomic(path, lambda f: f.write(text.encode()))


def remove_stale(paths: list[Path]) -> list[Path]:
    """Remove regular files left by an earlier run (not symlinks: those are unlinked, not followed)."""
    removed = []
    for p in paths:
        try:
            if p.is_symlink() or p.is_file():
                p.unlink()
                removed.append(p)
        except OSError as e:
            raise OutputError(f"cannot remove the previous run's {p}: {e.strerror or e}") from None
    return removed


__all__ = ["file_mode", "remove_stale", "write_atomic", "write_json", "write_npy", "write_text"]
