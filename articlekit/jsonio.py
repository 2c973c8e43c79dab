"""JSON artifacts: full-precision floats, explicit non-finite values, atomic writes.

JSON has no NaN or infinity, so they are written as tagged objects
{"$float": "nan" | "inf" | "-inf"} and turned back into floats on reading.
Python's float repr is the shortest string that round-trips, so json's
default float formatting already keeps every bit.
"""

import json
import math
import os
import tempfile
from pathlib import Path

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
            raise ValueError(f"unknown {FLOAT_TAG} value {obj[FLOAT_TAG]!r}") from None
    return obj


def dumps(obj):
    return json.dumps(to_jsonable(obj), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def loads(text):
    return json.loads(text, object_hook=_decode_tagged)


def read_json(path):
    """Read an artifact, naming the file in the error when it is not JSON."""
    path = Path(path)
    try:
        return loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None


def write_text_atomic(path, text):
    """Write via a temporary file in the same folder and rename it into place,
    so a killed run leaves either the old file or the new one, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it 0600; give it a normal file's mode
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json(path, obj):
    write_text_atomic(path, dumps(obj))
