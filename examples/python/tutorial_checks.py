"""What the six tutorial scripts share: plain tensors from NumPy inside a local mode, values back
as NumPy, and running a list of checks, each a function returning (actual, expected) whose expected
value was computed independently."""
import numpy as np

import tessera as ts


def plain(array):
    """A plain (not per-rank) float32 tensor, even inside a ts.LocalMode."""
    with ts.maybe_disable_local_mode():
        return ts.tensor(np.asarray(array, dtype=np.float32))


def value(t):
    """A dense tensor's values as a float64 NumPy array of its shape."""
    return np.array(t.tolist(), dtype=np.float64).reshape(t.shape)


def agree(actual, expected):
    """Equal, with NumPy arrays compared element by element (floats to float32's precision)."""
    if isinstance(actual, np.ndarray) or isinstance(expected, np.ndarray):
        actual, expected = np.asarray(actual), np.asarray(expected)
        if actual.shape != expected.shape:
            return False
        if np.issubdtype(actual.dtype, np.floating) or np.issubdtype(expected.dtype, np.floating):
            return bool(np.allclose(actual, expected, rtol=1e-5, atol=1e-5))
        return bool(np.array_equal(actual, expected))
    if isinstance(actual, (tuple, list)) and isinstance(expected, (tuple, list)):
        return len(actual) == len(expected) and all(agree(a, e) for a, e in zip(actual, expected))
    return actual == expected


def run(checks):
    """Runs every check, printing "ok" or "FAIL" with what it computed; 1 when any failed, else 0."""
    failures = 0
    for check in checks:
        actual, expected = check()
        ok = agree(actual, expected)
        failures += not ok
        text = repr(actual)
        shown = f": {text}" if len(text) <= 100 else ""  # arrays of values say little in a line
        print(f"{'ok  ' if ok else 'FAIL'} {check.__name__}{shown}" + ("" if ok else f" (expected {expected!r})"))
    return 1 if failures else 0
