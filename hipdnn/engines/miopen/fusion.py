"""MIOpen fusion plans: build, compile (the applicability test), set arguments, execute."""

from __future__ import annotations

import ctypes
import re
from collections.abc import Sequence

from hipdnn.engines.miopen.descriptors import ConvDesc, Owned, Resources, TensorDesc
from hipdnn.engines.miopen.runtime import Call, CHandle, replay
from miopen_ctypes.enums import (
    miopenBatchNormMode_t,
    miopenConvFwdAlgorithm_t,
    miopenFusionDirection_t,
    miopenStatus_t,
)
from miopen_ctypes.errors import MIOpenStatusError
from miopen_ctypes.loader import MIOpenLibrary
from miopen_ctypes.types import (
    miopenFusionOpDescriptor_t,
    miopenFusionPlanDescriptor_t,
    miopenOperatorArgs_t,
)

__all__ = ["FUSION_DECLINED_STATUSES", "FUSION_DEFINITIVE_STATUSES", "ONE", "ZERO", "FusionPlan",
           "rechecks_stored_decline"]

_one, _zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
#: Addresses of host floats 1 and 0: MIOpen reads every alpha/beta as ``const float*``.
ONE, ZERO = ctypes.addressof(_one), ctypes.addressof(_zero)

#: Statuses of miopenCompileFusionPlan meaning "no fused kernel here" (fall back, no error):
#: no fusion solver applies (3, 6, 8), or the solver MIOpen picked cannot build its kernel on
#: this install (7: the real 3.4/3.5 Debian builds lack the assembly sources of the Winograd and
#: 1x1 fused solvers, "Failed to load kernel source", seen in the stubgpu lane).
FUSION_DECLINED_STATUSES = frozenset({
    miopenStatus_t.miopenStatusBadParm,
    miopenStatus_t.miopenStatusNotImplemented,
    miopenStatus_t.miopenStatusUnknownError,
    miopenStatus_t.miopenStatusUnsupportedOp,
})

#: Of those, MIOpen's definitive "no fused kernel for this plan" (no solver applies, not
#: implemented, a parameter the fused kernels refuse): the same install answers the same way
#: every time, so that answer may be kept (plan cache, persistent plan store).
#: miopenStatusUnknownError is not one: MIOpen returns it for a kernel that does not build on
#: this install, but also for a HIP error or any exception inside the compile, which may pass;
#: :meth:`FusionPlan.compile` asks once more, and only a second one declines.
FUSION_DEFINITIVE_STATUSES = frozenset({
    miopenStatus_t.miopenStatusBadParm,
    miopenStatus_t.miopenStatusNotImplemented,
    miopenStatus_t.miopenStatusUnsupportedOp,
})

_SPATIAL = miopenBatchNormMode_t.miopenBNSpatial

_DECLINED_NOTE = re.compile(r"^fusion plan not used: miopenCompileFusionPlan returned \w+ \((\d+)\)$")


def rechecks_stored_decline(status: object, notes: Sequence[str] = ()) -> bool:
    """Whether a stored "unfused" decision must ask miopenCompileFusionPlan again before it is
    applied: yes unless it came from one of MIOpen's definitive answers
    (:data:`FUSION_DEFINITIVE_STATUSES`). A decline after miopenStatusUnknownError (twice) is
    kept in the persistent plan store (so a later process needs no solution list), but it may
    have been a passing fault, so a later process asks the compile once more, and runs fused
    when it compiles now. ``status`` is the stored ``fusion_status``; an entry written before
    that field existed is read from its decline note (``declined_note``)."""
    if status is None:
        found = [int(m.group(1)) for n in notes if (m := _DECLINED_NOTE.match(str(n)))]
        if not found:
            return False  # no fusion compile declined it (a workaround, the NCHW-only rule)
        status = found[-1]
    if not isinstance(status, int) or isinstance(status, bool):
        return True  # a malformed value: asking again is always safe
    return status not in FUSION_DEFINITIVE_STATUSES


class FusionPlan:
    """A vertical fusion plan with its ops and operator args, owned by a plan's resources."""

    def __init__(self, lib: MIOpenLibrary, res: Resources, input_desc: TensorDesc) -> None:
        self.lib = lib
        self._res = Resources()  # the plan and its args; handed to ``res`` once compiled
        plan = miopenFusionPlanDescriptor_t()
        lib.miopenCreateFusionPlan(ctypes.byref(plan), miopenFusionDirection_t.miopenVerticalFusion,
                                   input_desc.handle)
        self.plan = self._res.add(Owned(lib, plan, "miopenDestroyFusionPlan"))
        self.args: Owned | None = None
        self.ops: list[CHandle] = []
        self.workspace_size = 0
        #: The miopenCompileFusionPlan error when :meth:`compile` returned False.
        self.declined: BaseException | None = None
        #: The first attempt's miopenStatusUnknownError when the compile was asked twice.
        self.retried: BaseException | None = None
        self._outer = res

    def _op(self, create: str, *args: object) -> CHandle:
        op = miopenFusionOpDescriptor_t()
        getattr(self.lib, create)(self.plan.handle, ctypes.byref(op), *args)
        self.ops.append(op)  # destroyed with the plan
        return op

    def conv_forward(self, conv: ConvDesc, w_desc: TensorDesc) -> CHandle:
        """miopenCreateOpConvForward."""
        return self._op("miopenCreateOpConvForward", conv.handle, w_desc.handle)

    def bias_forward(self, b_desc: TensorDesc) -> CHandle:
        """miopenCreateOpBiasForward."""
        return self._op("miopenCreateOpBiasForward", b_desc.handle)

    def activation_forward(self, mode: int) -> CHandle:
        """miopenCreateOpActivationForward."""
        return self._op("miopenCreateOpActivationForward", int(mode))

    def activation_backward(self, mode: int) -> CHandle:
        """miopenCreateOpActivationBackward."""
        return self._op("miopenCreateOpActivationBackward", int(mode))

    def batchnorm_forward(self, running: bool) -> CHandle:
        """miopenCreateOpBatchNormForward (spatial, training)."""
        return self._op("miopenCreateOpBatchNormForward", _SPATIAL, bool(running))

    def batchnorm_backward(self) -> CHandle:
        """miopenCreateOpBatchNormBackward (spatial)."""
        return self._op("miopenCreateOpBatchNormBackward", _SPATIAL)

    def compile(self, handle: CHandle, *, with_conv: bool = False, attempts: int = 2) -> bool:
        """miopenCompileFusionPlan; False (plan freed) when MIOpen has no fused kernel for it
        (``declined`` then holds the compile's error). A miopenStatusUnknownError is asked up to
        ``attempts`` times (1: a stored decline being checked again, see
        :func:`rechecks_stored_decline`)."""

        lib = self.lib
        for attempt in range(1, attempts + 1):
            try:
                lib.miopenCompileFusionPlan(handle, self.plan.handle)
                break
            except MIOpenStatusError as exc:
                if exc.status in FUSION_DECLINED_STATUSES and (
                        attempt == attempts or exc.status in FUSION_DEFINITIVE_STATUSES):
                    self._res.close()
                    self.declined = exc
                    return False
                if exc.status not in FUSION_DECLINED_STATUSES:
                    self._res.close()
                    raise
                # miopenStatusUnknownError: the install's fused kernel does not build (it fails
                # the same way again), or a passing failure inside the compile: asked once
                # more, so a passing one decides nothing (and is never kept)
                self.retried = exc
        try:
            if with_conv and lib.capabilities.has("miopenExecuteFusionPlan_v2"):
                size = ctypes.c_size_t()
                lib.miopenFusionPlanGetWorkSpaceSize(
                    handle, self.plan.handle, ctypes.byref(size),
                    miopenConvFwdAlgorithm_t.miopenConvolutionFwdAlgoDirect)
                self.workspace_size = int(size.value)
            args = miopenOperatorArgs_t()
            lib.miopenCreateOperatorArgs(ctypes.byref(args))
            self.args = self._res.add(Owned(lib, args, "miopenDestroyOperatorArgs"))
        except BaseException:
            self._res.close()
            raise
        self._outer.add(self._res)
        return True

    @property
    def declined_status(self) -> int | None:
        """The miopenCompileFusionPlan status that declined the plan (None: not declined)."""
        status = getattr(self.declined, "status", None)
        return None if status is None else int(status)

    def declined_note(self) -> str:
        """Why the plan was not used: ``fusion plan not used: miopenCompileFusionPlan returned
        miopenStatusUnsupportedOp (8)`` (for a plan whose :meth:`compile` returned False)."""
        status = getattr(self.declined, "status", None)
        name = miopenStatus_t(status).name if status in set(miopenStatus_t) else "status"
        return f"fusion plan not used: miopenCompileFusionPlan returned {name} ({status})"

    def execute_call(self, handle: CHandle, in_desc: TensorDesc, x: int, out_desc: TensorDesc,
                     y: int, ws: int) -> Call:
        """The call :meth:`execute` makes, as ``(C name, arguments)``."""
        assert self.args is not None
        if self.lib.capabilities.has("miopenExecuteFusionPlan_v2"):
            return ("miopenExecuteFusionPlan_v2",
                    (handle, self.plan.raw, in_desc.raw, x, out_desc.raw, y, self.args.raw,
                     ws if self.workspace_size else None, self.workspace_size))
        return ("miopenExecuteFusionPlan",
                (handle, self.plan.raw, in_desc.raw, x, out_desc.raw, y, self.args.raw))

    def execute(self, handle: CHandle, in_desc: TensorDesc, x: int, out_desc: TensorDesc, y: int,
                ws: int) -> None:
        """miopenExecuteFusionPlan_v2 (with exactly the queried workspace) or miopenExecuteFusionPlan."""
        replay(self.lib, [self.execute_call(handle, in_desc, x, out_desc, y, ws)])
