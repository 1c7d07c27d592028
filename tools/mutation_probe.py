#!/usr/bin/env python3
"""A targeted mutation probe of MIOPEN_ENGINE's argument passing (run outside CI; slow).

Each mutant is one exact text substitution in one file of the package (the descriptor code, the
engine's rows, the pack resolution): a reversed axis order, a default where the graph's value
belongs, an off-by-one, a swapped pair. For each, a fresh copy of the working tree gets the
mutant, and a lane's tests run in it with ``-x``: the mutant is *killed* when a test fails,
*survived* when all pass. A mutant whose text is no longer in the file is an error (the list
must follow the code). Survivors and why each is equivalent (or which test kills it now) are
listed in docs/MUTATION.md.

    python tools/mutation_probe.py                         # every mutant, the main-lane selection
    python tools/mutation_probe.py --only bn_inference_epsilon_default conv_padding_reversed
    python tools/mutation_probe.py --lane amdkernels --only conv_padding_reversed -- -k arguments
    python tools/mutation_probe.py --list

``--lane main`` (default) runs ``python -m pytest <tests> -x -q`` with this interpreter; other
lanes run ``python tools/run_tests.py --lane <lane> -- -x -q <pytest args>`` in the copy (the
sysroots and caches are shared, see tools/run_tests.py). Exit status: 0 when every mutant was
killed, 1 when one survived, 2 on an error.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MUTANTS", "Mutant", "main"]

REPO = Path(__file__).resolve().parent.parent
MIOPEN = "hipdnn/engines/miopen"
#: The main lane's tests a mutant of MIOPEN_ENGINE must fail (the emulated device's seed rows,
#: calls, argument read-back, random geometry, pack layouts; the pack-signature units).
MAIN_TESTS = ("tests/emulated/test_miopen_engine_readback.py",
              "tests/emulated/test_miopen_engine_numerics.py",
              "tests/emulated/test_miopen_engine_calls.py",
              "tests/emulated/test_miopen_engine_pack_layouts.py",
              "tests/unit/test_packsig_torch.py",
              "tests/unit/test_execute_signatures.py")


@dataclass(frozen=True)
class Mutant:
    """One substitution: ``old`` (must occur exactly once in ``path``) becomes ``new``."""

    name: str
    path: str
    old: str
    new: str
    what: str


MUTANTS: tuple[Mutant, ...] = (
    # --- the three of issue 35
    Mutant("bn_inference_epsilon_default", f"{MIOPEN}/batchnorm.py",
           "scale, variance, eps = p.scale, p.variance, p.epsilon",
           "scale, variance, eps = p.scale, p.variance, DEFAULT_EPSILON",
           "BN inference passes MIOpen's default epsilon 1e-5 instead of the graph's"),
    Mutant("conv_padding_reversed", f"{MIOPEN}/descriptors.py",
           "lib.miopenInitConvolutionNdDescriptor(handle, n, arr(*padding), arr(*stride),",
           "lib.miopenInitConvolutionNdDescriptor(handle, n, arr(*padding[::-1]), arr(*stride),",
           "the convolution descriptor's per-axis padding in reverse order"),
    Mutant("conv_stride_dilation_reversed", f"{MIOPEN}/descriptors.py",
           "arr(*padding), arr(*stride),\n                                              arr(*dilation),",
           "arr(*padding), arr(*stride[::-1]),\n                                              arr(*dilation[::-1]),",
           "the convolution descriptor's per-axis stride and dilation in reverse order"),
    # --- descriptors
    Mutant("conv_stride_dilation_swapped", f"{MIOPEN}/descriptors.py",
           "arr(*padding), arr(*stride),\n                                              arr(*dilation),",
           "arr(*padding), arr(*dilation),\n                                              arr(*stride),",
           "stride passed as dilation and dilation as stride"),
    Mutant("conv_groups_dropped", f"{MIOPEN}/descriptors.py",
           "        if groups != 1:\n            lib.miopenSetConvolutionGroupCount(handle, int(groups))",
           "        if groups != 1:\n            pass",
           "the group count never set"),
    Mutant("tensor_strides_reversed", f"{MIOPEN}/descriptors.py",
           "lib.miopenSetTensorDescriptorV2(handle, miopen_dtype(dtype), n, arr(*self.dims),\n"
           "                                            arr(*self.strides))",
           "lib.miopenSetTensorDescriptorV2(handle, miopen_dtype(dtype), n, arr(*self.dims),\n"
           "                                            arr(*sorted(self.strides)))",
           "tensor strides sorted ascending (a channels-last tensor loses its layout)"),
    Mutant("activation_beta_as_alpha", f"{MIOPEN}/descriptors.py",
           "lib.miopenSetActivationDescriptor(handle, int(mode), float(alpha), float(beta), float(gamma))",
           "lib.miopenSetActivationDescriptor(handle, int(mode), float(alpha), float(alpha), float(gamma))",
           "the activation's beta (CLAMP's upper clip) replaced by alpha"),
    Mutant("nbytes_off_by_one", f"{MIOPEN}/descriptors.py",
           "span = 1 + sum((d - 1) * s for d, s in zip(self.dims, self.strides, strict=False))",
           "span = sum((d - 1) * s for d, s in zip(self.dims, self.strides, strict=False))",
           "a descriptor's byte span one element short"),
    # --- batchnorm rows
    Mutant("bn_training_epsilon_default", f"{MIOPEN}/batchnorm.py",
           "        eps = p.epsilon\n        mean, inv = p.mean, p.inv_variance",
           "        eps = DEFAULT_EPSILON\n        mean, inv = p.mean, p.inv_variance",
           "BN training passes 1e-5 instead of the graph's epsilon"),
    Mutant("bn_training_momentum_default", f"{MIOPEN}/batchnorm.py",
           "return p.next_running_mean, p.next_running_variance, p.momentum",
           "return p.next_running_mean, p.next_running_variance, 0.1",
           "BN training passes momentum 0.1 instead of the graph's"),
    Mutant("bn_derived_variance_eps_default", f"{MIOPEN}/batchnorm.py",
           'self.arena.at(ctx, "variance"), 0.0',
           'self.arena.at(ctx, "variance"), DEFAULT_EPSILON',
           "the inverse-variance form (scale folded, variance of ones) gets MIOpen's epsilon added"),
    Mutant("bn_backward_scale_bias_swapped", f"{MIOPEN}/batchnorm.py",
           "self.dx.raw, p.dx, q, q, q, q, p.scale, p.dscale, p.dbias,",
           "self.dx.raw, p.dx, q, q, q, q, p.scale, p.dbias, p.dscale,",
           "BN backward's dscale and dbias outputs swapped"),
    Mutant("bn_activation_desc_unused", f"{MIOPEN}/batchnorm.py",
           "(ctx.handle, self.act.raw, ONE, self.x.raw, y, ZERO, self.y.raw, p.y)",
           "(ctx.handle, self.act.raw, ONE, self.x.raw, y, ONE, self.y.raw, p.y)",
           "unfused activation after BN training with beta 1 (adds to the output's old values)"),
    # --- convolution rows
    Mutant("conv_packed_layout_ignored", f"{MIOPEN}/conv.py",
           "a, b, c = (res.add(TensorDesc(lib, dtype, dims, packed_strides(dims, layout)))",
           "a, b, c = (res.add(TensorDesc(lib, dtype, dims, packed_strides(dims)))",
           "convolution descriptors always NCHW-packed"),
    Mutant("conv_post_padding_used", f"{MIOPEN}/conv.py",
           "return list(node.pre_padding), list(node.stride), list(node.dilation), groups",
           "return list(node.post_padding), list(node.stride), list(node.dilation), groups",
           "post-padding passed for pre-padding (equal for every graph MIOPEN_ENGINE accepts)"),
    Mutant("conv_smallest_workspace_first", f"{MIOPEN}/conv.py",
           "sid, ws = next((s, w) for s, w in sols if w <= self.limit)",
           "sid, ws = min(((s, w) for s, w in sols if w <= self.limit), key=lambda sw: sw[1])",
           "immediate mode takes the solution with the smallest workspace, not MIOpen's first"),
    # --- activation mapping
    Mutant("clamp_bounds_swapped", f"{MIOPEN}/rules.py",
           "return Activation(int(M.miopenActivationCLAMP), alpha=lower, beta=upper,",
           "return Activation(int(M.miopenActivationCLAMP), alpha=upper, beta=lower,",
           "CLAMP's lower and upper bounds swapped"),
    Mutant("clippedrelu_as_relu", f"{MIOPEN}/rules.py",
           "return Activation(int(M.miopenActivationCLIPPEDRELU), alpha=upper, upper_clip=upper)",
           "return Activation(int(M.miopenActivationRELU), alpha=upper, upper_clip=upper)",
           "an upper clip alone mapped to plain RELU"),
    # --- pack resolution (variant pack -> pointers)
    Mutant("pack_input_flagged_output", f"{MIOPEN}/plan.py",
           "self._io.append((i, f.name, t.uid, t, t.uid in produced))",
           "self._io.append((i, f.name, t.uid, t, True))",
           "every staged tensor treated as an output (inputs copied back)"),
    Mutant("pack_output_not_copied_back", f"{MIOPEN}/plan.py",
           "self._io.append((i, f.name, t.uid, t, t.uid in produced))",
           "self._io.append((i, f.name, t.uid, t, False))",
           "no staged output copied back to the host"),
    Mutant("pack_scalar_from_graph_only", f"{MIOPEN}/plan.py",
           "t = None if t.value is None else float(t.value)",
           "t = None if t.value is None else float(t.value) + 1e-3",
           "a scalar baked into the graph off by 1e-3"),
)


def _copy_tree(dst: Path) -> None:
    """The working tree (tracked and untracked-but-not-ignored files) into ``dst``."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                           check=True, capture_output=True).stdout.split(b"\0")
    for raw in files:
        if not raw:
            continue
        rel = Path(raw.decode())
        src = REPO / rel
        if not src.is_file():
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst / rel)


def _command(lane: str, pytest_args: list[str]) -> list[str]:
    if lane == "main":
        return [sys.executable, "-m", "pytest", *(pytest_args or MAIN_TESTS), "-x", "-q",
                "-p", "no:cacheprovider"]
    return [sys.executable, "tools/run_tests.py", "--no-build-sysroots", "--lane", lane, "--",
            "-x", "-q", "-p", "no:cacheprovider", *pytest_args]


def run(mutants: list[Mutant], lane: str, pytest_args: list[str], timeout: float) -> int:
    """Apply each mutant to a copy, run the lane; print a table; 0 if all were killed."""
    results: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="mutation-probe-") as tmp:
        work = Path(tmp)
        _copy_tree(work)
        for m in mutants:
            target = work / m.path
            original = target.read_text(encoding="utf-8")
            if original.count(m.old) != 1:
                results.append((m.name, "error", f"text found {original.count(m.old)} times in {m.path}"))
                continue
            target.write_text(original.replace(m.old, m.new), encoding="utf-8")
            cmd = _command(lane, pytest_args)
            start = time.monotonic()
            try:
                proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=timeout,
                                      env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
                tail = [ln for ln in proc.stdout.splitlines() if ln.strip()][-1:] or [""]
                outcome = "survived" if proc.returncode == 0 else "killed"
                failed = [ln.split(" ", 1)[1].split(" - ")[0] for ln in proc.stdout.splitlines()
                          if ln.startswith("FAILED ")]
                detail = f"{time.monotonic() - start:.0f}s; {failed[0] if failed else tail[0]}"
            except subprocess.TimeoutExpired:
                outcome, detail = "timeout", f"over {timeout:.0f}s"
            finally:
                target.write_text(original, encoding="utf-8")
            results.append((m.name, outcome, detail))
            print(f"{m.name:36} {outcome:9} {detail}", flush=True)
    killed = sum(r[1] == "killed" for r in results)
    survived = [r[0] for r in results if r[1] == "survived"]
    errors = [r for r in results if r[1] in ("error", "timeout")]
    print(f"\nlane {lane}: {len(results)} mutants, {killed} killed, {len(survived)} survived"
          + (f" ({', '.join(survived)})" if survived else "") + (f", {len(errors)} errors" if errors else ""))
    for name, outcome, detail in errors:
        print(f"  {name}: {outcome}: {detail}")
    return 2 if errors else (1 if survived else 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lane", default="main", help="main (default), stubgpu, amdkernels, ...")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these mutants only")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per mutant")
    parser.add_argument("pytest_args", nargs="*", help="after --: pytest arguments (main: the tests)")
    args = parser.parse_args(argv)
    by_name = {m.name: m for m in MUTANTS}
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:36} {m.path}: {m.what}")
        return 0
    unknown = [n for n in args.only or () if n not in by_name]
    if unknown:
        parser.error(f"unknown mutants {unknown}; --list shows them")
    chosen = [by_name[n] for n in args.only] if args.only else list(MUTANTS)
    return run(chosen, args.lane, args.pytest_args, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
