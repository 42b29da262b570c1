"""Atomic file writes: nothing half-written is ever left under a final name.

Every writer goes to a temporary name in the destination's directory and renames it into
place, so an interrupted job leaves either the old file or nothing (Snakemake then reruns it).

Resumable work directories (RL checkpoints, verl's files) live outside a job's declared outputs,
so Snakemake does not delete them when it reruns the job: each carries a fingerprint of the
settings and inputs that made it (``prepare_work_dir``), and a job with another fingerprint
starts clean instead of resuming someone else's run.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from fgx.errors import InputError  # raised here for every reader and writer (fgx.io.InputError)


def _umask() -> int:
    """The process's file-mode creation mask (read, not changed, where /proc allows)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it, then put it back at once
    os.umask(mask)
    return mask


def _fsync(path: Path) -> None:
    """Flush ``path`` (a file, or a directory's entries) to the disk: a rename alone survives a kill, not a
    power loss, which can leave the new name pointing at a file whose data never reached the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:
        if not path.is_dir():  # some file systems cannot fsync a directory; a file must be flushed
            raise
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    for d, _, files in os.walk(root):
        for f in files:
            if not os.path.islink(os.path.join(d, f)):
                _fsync(Path(d, f))
        _fsync(Path(d))


# what a full or read-only disk raises: a message naming the output, not a traceback
_WRITE_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT}
_WRITE_TEXTS = ("Permission denied", "Read-only file system", "No space left", "Disk quota exceeded")


@contextlib.contextmanager
def named_write_errors(path: Path) -> Iterator[None]:
    """Turn a write that the disk refuses (read-only, full, no permission) into an InputError naming
    ``path`` and the fix (pyarrow's own errors carry no errno, only the text)."""
    try:
        yield
    except OSError as err:
        if err.errno not in _WRITE_ERRNOS and not any(t in str(err) for t in _WRITE_TEXTS):
            raise
        why = err.strerror or str(err)[:200]
        raise InputError(f"{path}: cannot write the output ({why}); make {path.parent} writable, free space on "
                         "its disk, or choose another output path") from None


def _temporary_name(path: Path, suffix: str) -> re.Pattern:
    """The names mkstemp / mkdtemp give the temporaries of ``path`` (``.NAME.`` + 8 characters of
    tempfile's alphabet + ``suffix``): a name fgx makes for ``path`` alone."""
    return re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}{re.escape(suffix)}")


# what a file system that cannot lock answers flock (some NFS and Lustre mounts)
_NO_LOCKS = {errno.ENOLCK, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL, errno.EBADF}


@contextlib.contextmanager
def writer_lock(path: Path) -> Iterator[bool]:
    """Hold the lock of the writers of ``path`` while the block runs: ``.NAME.lock`` beside it, locked
    with flock. A second writer of the same path (a job run twice with ``--nolock``, a script run by hand
    beside the DAG) waits for the first, so two never write one output at once, and the temporaries a
    lock holder finds beside ``path`` are a dead writer's (:func:`remove_stale_temporaries`). The lock file
    goes when the block ends. Yields False, holding nothing, where the file system refuses locks."""
    import fcntl

    log = logging.getLogger(__name__)
    lock = path.with_name(f".{path.name}.lock")
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log.info("another writer of %s holds %s: waiting for it to finish", path, lock.name)
                fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as err:
            os.close(fd)
            if err.errno not in _NO_LOCKS:
                raise
            with contextlib.suppress(OSError):
                lock.unlink()
            log.info("%s: the file system refuses locks (%s): writing without one, and leaving any temporary "
                     "a killed writer left beside it", path, err.strerror)
            yield False
            return
        try:  # the lock file we locked is still the one at that name (the last holder deletes it)
            current = os.stat(lock, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            current = False
        if current:
            break
        os.close(fd)
    try:
        yield True
    finally:
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()  # before the lock is released: a writer waiting on this file then takes a new one
        os.close(fd)


def remove_stale_temporaries(path: Path, suffixes: Iterable[str]) -> list[Path]:
    """Delete the temporaries an earlier writer of ``path`` left beside it when it was killed outright
    (SIGKILL, a lost node: no ``finally`` runs). Called holding :func:`writer_lock`, so no live writer
    owns them; only names of the exact form the writers below make for this ``path`` go. Returns them."""
    patterns = [_temporary_name(path, s) for s in suffixes]
    stale = [p for p in path.parent.iterdir() if any(r.fullmatch(p.name) for r in patterns)]
    for p in stale:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
    if stale:
        logging.getLogger(__name__).info("removed %d temporary file(s) a killed writer of %s left: %s",
                                         len(stale), path, ", ".join(p.name for p in stale))
    return stale


@contextlib.contextmanager
def _sole_writer(path: Path, suffixes: tuple[str, ...]) -> Iterator[None]:
    """The writer of ``path`` for the block: its directory made, its lock held, a dead writer's temporaries gone."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(path) as locked:
        if locked:
            remove_stale_temporaries(path, suffixes)
        yield


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` if the block succeeds.

    The file is flushed to the disk before the rename, and the directory after it, so that ``path``
    after a power loss is the old file or the whole new one, never an empty "complete" one.
    The file gets the mode a plain ``open(path, "w")`` would give (0666 less the umask), not
    mkstemp's private 0600, so group members on a shared cluster can read the results.
    """
    path = Path(path)
    with named_write_errors(path), _sole_writer(path, (suffix or ".tmp",)):
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix or ".tmp", dir=path.parent)
        os.close(fd)
        tmp = Path(tmp)
        try:
            yield tmp
            if tmp.exists():
                tmp.chmod(0o666 & ~_umask())
                _fsync(tmp)
            os.replace(tmp, path)
            _fsync(path.parent)
        finally:
            if tmp.exists():
                tmp.unlink()


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory beside ``path``; it replaces ``path`` if the block succeeds
    (with the mode ``mkdir`` would give, 0777 less the umask, not mkdtemp's private 0700).

    Its files are flushed to the disk first. An existing ``path`` is renamed aside
    (``.NAME.XXXX.old``), the new directory renamed into place, and only then the old one deleted:
    a kill between the two renames leaves the old directory whole under the aside name (and the
    new one under ``.NAME.XXXX.tmp``), never a half-deleted one under ``path``."""
    path = Path(path)
    check_replaceable_dir(path)
    with named_write_errors(path), _sole_writer(path, (".tmp", ".old")):
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
        try:
            yield tmp
            tmp.chmod(0o777 & ~_umask())
            _fsync_tree(tmp)
            aside = None
            if path.exists():
                aside = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
                try:
                    os.replace(path, aside)  # onto the empty directory mkdtemp made: atomic, and the name is ours
                except BaseException:
                    aside.rmdir()
                    raise
            try:
                os.replace(tmp, path)
            except BaseException:
                if aside is not None:
                    os.replace(aside, path)  # put the old one back
                raise
            _fsync(path.parent)
            if aside is not None:
                shutil.rmtree(aside, ignore_errors=True)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)


def check_replaceable_dir(path: str | os.PathLike) -> None:
    """Refuse a directory output ``path`` that exists and is not what fgx writes there.

    fgx's directory outputs are model directories: flat, with a ``config.json``. One of those (or an
    empty directory) is replaced as a whole; anything else (a mistyped ``--out`` naming a user's
    directory) is an error, checked before the job's work starts so that nothing is lost."""
    path = Path(path)
    if not (path.exists() or path.is_symlink()):
        return
    entries = list(path.iterdir()) if path.is_dir() and not path.is_symlink() else None
    if entries is not None and (not entries or ((path / "config.json").is_file()
                                                and not any(e.is_dir() for e in entries))):
        return
    raise InputError(f"{path}: the output directory exists and is not a model directory fgx wrote (a flat "
                     "directory with config.json), so fgx will not replace it; choose another --out or delete it "
                     "yourself")


PROVENANCE_KEY = b"fgx.settings"


def write_parquet(df, path: str | os.PathLike, settings: Any = None) -> None:
    """Write a pandas DataFrame to parquet atomically (no index column).

    ``settings`` (the job's resolved settings) is stored as JSON in the file's schema metadata,
    so every artifact carries the configuration that made it (see ``read_settings``).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    # pandas writes its strings as large_string; plain string, as `datasets` writes them, lets fgx's
    # files load together with upstream's in one `datasets.load_dataset("parquet", ...)` call
    table = table.cast(pa.schema([f.with_type(_plain_strings(f.type)) for f in table.schema],
                                 metadata=table.schema.metadata))
    if settings is not None:
        meta = dict(table.schema.metadata or {})
        meta[PROVENANCE_KEY] = json.dumps(settings, sort_keys=True, default=str).encode()
        table = table.replace_schema_metadata(meta)
    with atomic_path(path, suffix=".parquet") as tmp:
        pq.write_table(table, tmp)


def _plain_strings(t):
    import pyarrow as pa

    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_plain_strings(f.type)) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(t.value_field.with_type(_plain_strings(t.value_type)))
    return t


def read_settings(path: str | os.PathLike) -> dict | None:
    """The settings stored by ``write_parquet`` (None if the file has none)."""
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    blob = meta.get(PROVENANCE_KEY)
    return json.loads(blob) if blob else None


def write_json(obj: Any, path: str | os.PathLike) -> None:
    """Write JSON atomically, sorted keys, so equal content gives equal bytes."""
    with atomic_path(path, suffix=".json") as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def path_identity(path: str | os.PathLike) -> list:
    """A cheap identity of a file or model directory: its top-level files' names, sizes, mtimes."""
    p = Path(path)
    files = sorted(p.iterdir()) if p.is_dir() else [p]
    return [[f.name, f.stat().st_size, f.stat().st_mtime_ns] for f in files if f.is_file()]


def run_fingerprint(settings: Mapping, neutral: tuple[str, ...] = (), **inputs: Any) -> str:
    """Hash of the settings (less the ``neutral`` keys, which do not change what is computed) and of
    the inputs (paths by name and identity, other values as they are)."""
    blob = {"settings": {k: v for k, v in settings.items() if k not in neutral},
            "inputs": {k: [str(v), path_identity(v)] if isinstance(v, (str, os.PathLike)) and Path(v).exists()
                       else v for k, v in inputs.items()}}
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()[:16]


WORK_STAMP = "fingerprint.txt"  # fgx's marker in every work directory it makes: the run's fingerprint
_STAMP_TEXT = re.compile(r"[0-9a-f]{16}\n?")


def _stamp_of(work: Path) -> str | None:
    """The fingerprint in ``work``'s stamp if it is one fgx wrote (16 hex digits), else None."""
    try:
        with open(work / WORK_STAMP, "rb") as f:
            text = f.read(64).decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    return text.strip() if _STAMP_TEXT.fullmatch(text) else None


def is_work_dir(work: str | os.PathLike) -> bool:
    """Whether fgx provably made ``work``: it holds the stamp ``prepare_work_dir`` writes, or nothing
    but a stamp being written (a job killed right after making the directory)."""
    work = Path(work)
    if not work.is_dir() or work.is_symlink():
        return False
    if _stamp_of(work) is not None:
        return True
    return all(e.name.startswith(f".{WORK_STAMP}.") for e in work.iterdir())


def remove_work_dir(work: str | os.PathLike) -> None:
    """Delete the work directory ``work`` once the job's output is written, only if fgx made it."""
    if is_work_dir(work):
        shutil.rmtree(work, ignore_errors=True)
    elif Path(work).exists():
        logging.getLogger("fgx").warning("%s lacks fgx's %s: left in place", work, WORK_STAMP)


def prepare_work_dir(work: str | os.PathLike, fingerprint: str, others: Iterable = ()) -> Path:
    """Keep ``work`` if it was made for the same fingerprint (resume), else start it empty.

    Only a directory fgx made (``is_work_dir``) or an empty one is ever cleared: ``--work-dir`` is a
    free argument, and a mistyped one must not delete a user's files. ``others`` (the job's input and
    output paths) must not lie inside ``work``, which is deleted as a whole once the job ends.
    Returns the absolute path (commands that run with cwd=work need absolute paths)."""
    log = logging.getLogger("fgx")
    work = Path(work).resolve()
    for other in others:
        if not isinstance(other, (str, os.PathLike)):
            continue
        o = Path(other).resolve()
        if o == work or work in o.parents:
            raise InputError(f"{work}: the work directory holds {other}, a file of this job, and is deleted "
                             "when the job ends; pass a --work-dir of its own (the rules use results/work/...)")
    if work.exists() and (work.is_symlink() or not work.is_dir()):
        raise InputError(f"{work}: --work-dir is not a directory; pass a directory that fgx may create "
                         "and delete (the rules use results/work/...)")
    stamp = work / WORK_STAMP
    if work.exists() and _stamp_of(work) != fingerprint:
        if not is_work_dir(work):
            raise InputError(f"{work}: --work-dir exists and fgx did not make it (it holds no {WORK_STAMP} "
                             "written by fgx), so fgx will not delete it; pass a new or empty directory, or "
                             "remove this one yourself if nothing in it is needed")
        if _stamp_of(work) is not None:  # else empty: nothing to clear
            log.warning("work directory %s was made for other inputs or settings: starting clean", work)
            shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    if _stamp_of(work) is None:
        write_text(fingerprint + "\n", stamp)
    else:
        log.info("resuming in %s", work)
    return work


def writable_text(text: str) -> str:
    """``text`` as every writer (UTF-8 files, parquet, HTML) accepts it: unchanged when it encodes as
    UTF-8, else with the code points UTF-8 rejects (lone surrogates, as a model's JSON answer
    ``"\\ud800"`` decodes to) written as backslash escapes, showing what the model wrote."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def set_aside(path: str | os.PathLike, why: str) -> Path:
    """Rename resume state that does not load (``path``, inside a work directory) to ``corrupt-...``
    beside it and say so in the log: the rerun then recomputes it instead of crashing on it again."""
    path = Path(path)
    aside = path.with_name(f"corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{path.name}")
    os.replace(path, aside)
    logging.getLogger("fgx").warning("%s does not load (%s): moved aside to %s; recomputing it", path, why[:300],
                                     aside.name)
    return aside


def read_rows(path: str | os.PathLike, what: str, columns: tuple[str, ...] = ()):
    """Read the parquet ``path`` (a ``what``) with a clear error when it is missing, not parquet
    (truncated, empty), lacks one of ``columns``, or holds a column of fgx's own tables that is not what
    fgx writes there, in any row (:func:`fgx.inputs.check_table`)."""
    import pyarrow.parquet as pq

    from fgx.inputs import check_table

    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: {what} not found; run the rule that writes it (snakemake {p}) or fix the path")
    try:
        table = pq.read_table(p)
    except Exception as err:  # pyarrow raises several types for truncated or foreign files
        raise InputError(f"{p}: cannot read the {what} as parquet ({type(err).__name__}: {str(err)[:200]}); the "
                         "file is truncated or not parquet: delete it and rerun the rule that writes it") from None
    df = require_columns(table.to_pandas(), p, what, columns)
    check_table(table, p, what)
    return df


def require_columns(df, path: str | os.PathLike, what: str, columns: tuple[str, ...]):
    """``df`` (read from ``path``, a ``what``), or a clear error naming the ``columns`` it lacks."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        found = ", ".join(map(str, df.columns))
        raise InputError(f"{path}: column(s) {', '.join(missing)} missing from the {what} (found: {found}); "
                         "regenerate it with this version of fgx (delete it and rerun the rule that writes it)")
    return df
