"""Calls the real libMIOpen crashes in, and hipdnn.direct refusing them first.

Each getter of hipdnn.direct.UNSET_GUARDS is called on a descriptor that was created and never
set, by the real library (3.4.0 and 3.5.1) in a child process: it dies of SIGSEGV. The same call
through a :class:`hipdnn.direct.Session` is an :class:`UnsetDescriptorError` naming the call, the
parameter and the setter, and after the setter the call answers. Handle-free: no GPU needed.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hipdnn.direct import UNSET_GUARDS, Session, UnsetDescriptorError
from miopen_ctypes.enums import miopenActivationMode_t, miopenLRNMode_t, miopenPoolingMode_t
from miopen_ctypes.prototypes import PROTOTYPES

#: The child: the raw binding (no guard) calls ``argv[1]`` on a fresh descriptor of its kind.
_CHILD = r'''
import ctypes, sys
import miopen_ctypes
from miopen_ctypes.prototypes import PROTOTYPES
lib = miopen_ctypes.load()
name, kind = sys.argv[1], sys.argv[2]
desc = PROTOTYPES[f"miopenCreate{kind}Descriptor"].argtypes[0]._type_()
getattr(lib, f"miopenCreate{kind}Descriptor")(ctypes.byref(desc))
if name == "miopenSetRNNDescriptor_V2":  # an RNN keeping a dropout descriptor never set
    rnn = PROTOTYPES["miopenCreateRNNDescriptor"].argtypes[0]._type_()
    lib.miopenCreateRNNDescriptor(ctypes.byref(rnn))
    lib.miopenSetRNNDescriptor_V2(rnn, 16, 1, desc, 0, 0, 2, 1, 0, 1)
    lib.miopenDestroyRNNDescriptor(rnn)
    print("RETURNED", flush=True)
    sys.exit(0)
args = [desc]
for t in PROTOTYPES[name].argtypes[1:]:
    if isinstance(t, type) and issubclass(t, ctypes._Pointer):
        args.append(ctypes.cast((t._type_ * 16)(), t))  # room for any array out-parameter
    else:
        args.append(2)
print("CALLING", flush=True)
getattr(lib, name)(*args)
print("RETURNED", flush=True)
'''


def _child(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run the child under this process's loader (the live lane runs under the sysroot's)."""
    cmdline = Path(f"/proc/{os.getpid()}/cmdline").read_bytes().split(b"\0")
    prefix = ([a.decode() for a in cmdline[:3]]
              if len(cmdline) > 2 and cmdline[1] == b"--library-path" else [])
    root = str(Path(__file__).resolve().parents[2])
    boot = ("import os, site, sys\n"
            "for d in os.environ.get('HIPDNN_SITE_DIRS', '').split(os.pathsep):\n"
            "    d and site.addsitedir(d)\n"
            f"sys.path.insert(0, {root!r})\n")
    return subprocess.run([*prefix, os.path.realpath(sys.executable), "-c", boot + _CHILD, *argv],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("function", sorted(UNSET_GUARDS))
def test_the_real_library_crashes_and_the_session_refuses(live_library_path: str,
                                                          function: str) -> None:
    param, kind, setters = UNSET_GUARDS[function]
    proc = _child(function, kind)
    assert proc.returncode == -signal.SIGSEGV and "CALLING" in proc.stdout, (
        f"{function} on a fresh {kind} descriptor: exit {proc.returncode} (the guard is for a "
        f"crash; if the library stopped crashing, the guard can go)\n{proc.stdout}{proc.stderr[-800:]}")
    with Session() as s:
        desc = s.descriptor(kind)
        args: list[Any] = []
        for t in PROTOTYPES[function].argtypes[1:]:  # out-parameters with room for arrays
            pointer = isinstance(t, type) and issubclass(t, ctypes._Pointer)
            args.append(ctypes.cast((t._type_ * 16)(), t) if pointer else 2)
        with pytest.raises(UnsetDescriptorError) as info:
            s.call(function, desc, *args)
        message = str(info.value)
        assert function in message and repr(param) in message and setters[0] in message, message


def test_after_the_setter_the_getters_answer(live_library_path: str) -> None:
    """The guard tracks the set: the same descriptors answer once set through the session."""
    with Session() as s:
        pool = s.descriptor("Pooling")
        s.call("miopenSet2dPoolingDescriptor", pool, miopenPoolingMode_t.miopenPoolingMax, 3, 2, 1, 0, 2, 1)
        assert s.query("miopenGet2dPoolingDescriptor", pool) == (0, 3, 2, 1, 0, 2, 1)
        lrn = s.descriptor("LRN", "miopenSetLRNDescriptor", miopenLRNMode_t.miopenLRNCrossChannel,
                           5, 1e-4, 0.75, 2.0)
        mode, n, alpha, beta, k = s.query("miopenGetLRNDescriptor", lrn)
        assert (mode, n, beta, k) == (int(miopenLRNMode_t.miopenLRNCrossChannel), 5, 0.75, 2.0)
        assert abs(alpha - 1e-4) < 1e-12
        act = s.descriptor("Activation", "miopenSetActivationDescriptor",
                           miopenActivationMode_t.miopenActivationLEAKYRELU, 0.1, 0.0, 0.0)
        assert s.query("miopenGetActivationDescriptor", act)[0] == int(
            miopenActivationMode_t.miopenActivationLEAKYRELU)
        # a tensor descriptor is asked its rank, whoever made it: set (4-D) it answers
        t = s.tensor(np.zeros((2, 3, 4, 5), np.float32))
        assert s.query("miopenGet4dTensorDescriptor", t)[1:5] == (2, 3, 4, 5)


def test_rnn_keeping_an_unset_dropout_descriptor(live_library_path: str) -> None:
    """miopenSetRNNDescriptor_V2 given a dropout descriptor that was never set or restored: the
    real 3.4.0 and 3.5.1 return (no crash here, nor in the params/workspace/reserve size queries
    on the stub GPU): hipdnn.direct does not refuse it."""
    proc = _child("miopenSetRNNDescriptor_V2", "Dropout")
    assert proc.returncode == 0 and "RETURNED" in proc.stdout, proc.stderr[-800:]


def test_a_set_through_the_raw_library_counts(live_library_path: str) -> None:
    """Descriptors set through the session's library binding itself (``s.lib.<setter>``, the
    ctypes function ``s.lib.cfunc(setter)``), not Session.call: the guarded getters answer with
    what was set (before, UnsetDescriptorError refused them), and a fresh one is still refused."""
    with Session() as s:
        pool, lrn, act = s.descriptor("Pooling"), s.descriptor("LRN"), s.descriptor("Activation")
        s.lib.miopenSet2dPoolingDescriptor(pool, miopenPoolingMode_t.miopenPoolingMax, 3, 2, 1, 0, 2, 1)
        assert s.query("miopenGet2dPoolingDescriptor", pool) == (0, 3, 2, 1, 0, 2, 1)
        s.lib.cfunc("miopenSetLRNDescriptor")(lrn, miopenLRNMode_t.miopenLRNWithinChannel, 3, 1e-4, 0.75, 2.0)
        assert s.query("miopenGetLRNDescriptor", lrn)[:2] == (int(miopenLRNMode_t.miopenLRNWithinChannel), 3)
        s.lib.miopenSetActivationDescriptor(act, miopenActivationMode_t.miopenActivationTANH, 1.0, 2.0, 0.0)
        assert s.query("miopenGetActivationDescriptor", act) == (
            int(miopenActivationMode_t.miopenActivationTANH), 1.0, 2.0, 0.0)
        with pytest.raises(UnsetDescriptorError):
            s.query("miopenGet2dPoolingDescriptor", s.descriptor("Pooling"))
