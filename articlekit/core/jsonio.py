"""JSON artifacts: full-precision floats, explicit non-finite values, atomic writes.

JSON has no NaN or infinity, so they are written as tagged objects
{"$float": "nan" | "inf" | "-inf"} and turned back into floats on reading.
Python's float repr is the shortest string that round-trips, so json's
default float formatting already keeps every bit. Reading is as strict as
writing: a bare NaN or Infinity (which Python's json accepts by default) is
refused with its file and line, so a hand-edited artifact cannot print
"nan" in the article.

Writes name the file and the space it needs when the disk is full, and
leave no temporary file behind; one left by a killed writer is removed by
the next write of the same file.
"""

import errno
import json
import math
import os
import re
import shutil
import tempfile
from pathlib import Path

from articlekit.core.errors import ArticlekitError
from articlekit.core.workfiles import owner_tag, remove_stale

FLOAT_TAG = "$float"
_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def to_jsonable(obj):
    """Plain-JSON copy of obj: NumPy scalars and arrays become Python
    numbers and lists, non-finite floats become tagged objects."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if hasattr(obj, "tolist"):  # NumPy array or scalar
        return to_jsonable(obj.tolist())
    if isinstance(obj, bool) or obj is None or isinstance(obj, (int, str)):
        return obj
    if isinstance(obj, float):
        if math.isnan(obj):
            return {FLOAT_TAG: "nan"}
        if math.isinf(obj):
            return {FLOAT_TAG: "inf" if obj > 0 else "-inf"}
        return obj
    raise TypeError(f"cannot store {type(obj).__name__} in a JSON artifact: {obj!r}")


def _decode_tagged(obj):
    if len(obj) == 1 and FLOAT_TAG in obj:
        try:
            return _NONFINITE[obj[FLOAT_TAG]]
        except KeyError:
            raise ArticlekitError(f"unknown {FLOAT_TAG} value {obj[FLOAT_TAG]!r}") from None
    return obj


def dumps(obj):
    return json.dumps(to_jsonable(obj), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


class NonStandardJSON(ValueError):
    pass


def _refuse_constant(name):
    raise NonStandardJSON(name)


# A JSON string, or a bare constant outside one: finds where NaN stands.
_BARE_CONSTANT = re.compile(r'"(?:\\.|[^"\\])*"|(-?Infinity|NaN)')


def loads(text):
    """Parse standard JSON (no bare NaN/Infinity) and decode tagged floats."""
    try:
        return json.loads(text, object_hook=_decode_tagged, parse_constant=_refuse_constant)
    except NonStandardJSON as exc:
        at = next((m.start(1) for m in _BARE_CONSTANT.finditer(text) if m.group(1)), 0)
        tag = "-inf" if str(exc).startswith("-") else "inf" if "Infinity" in str(exc) else "nan"
        raise json.JSONDecodeError(
            f"bare {exc} is not JSON; an artifact writes it as {{\"{FLOAT_TAG}\": \"{tag}\"}}", text, at
        ) from None


def read_json(path):
    """Read an artifact, naming the file in the error when it is not JSON."""
    path = Path(path)
    return parse_json(path.read_text(encoding="utf-8"), path)


def parse_json(text, path):
    """The JSON text read from path, naming the file, line and column in the
    error when it is not JSON."""
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        raise ArticlekitError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None


class DiskFull(OSError):
    """No space left to write an output: which file, how much it needs."""

    def __init__(self, path, needed=None):
        """needed: the bytes the write needs, or None when unknown (a tool
        wrote it): then the size of the file it replaces, if any, is named."""
        folder = Path(path).parent
        free = shutil.disk_usage(folder if folder.exists() else ".").free
        if needed is None and Path(path).exists():
            needs = f"about {_size(Path(path).stat().st_size)} (its last version's size)"
        else:
            needs = _size(needed) if needed is not None else "more than that"
        super().__init__(
            errno.ENOSPC,
            f"no space left on the device to write {path}: it needs {needs}, "
            f"{_size(free)} is free there; free some space and run the build again",
        )

    def __str__(self):
        return self.strerror  # a sentence, without "[Errno 28]" in front


def _size(n):
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


def write_text_atomic(path, text):
    """Write text as UTF-8 via write_bytes_atomic."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path, data):
    """Write via a temporary file in the same folder and rename it into place,
    so a killed run leaves either the old file or the new one, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{owner_tag()}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; give it a normal file's mode
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            raise DiskFull(path, len(data)) from None
        raise


def remove_stale_temporaries(path):
    """Remove the .NAME.TAG.*.tmp files beside path that a killed writer left
    (its process is gone); a live writer's file is kept."""
    remove_stale(Path(path).parent, f".{Path(path).name}.", ".")


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json(path, obj):
    write_text_atomic(path, dumps(obj))
