"""Whether an array's stated shape may back a graph tensor, and the hint when it is a
permutation of the tensor's dims (standard library only).

An array that states its shape (numpy, torch, DLPack, ``__cuda_array_interface__``) backs a
tensor when its shape is the tensor's dims up to size-1 axes (read through the array's own
strides), or a regrouping of them that keeps memory order: its non-1 sizes are runs of the
tensor's non-1 dims merged (or split) in order, and the array viewed with the tensor's dims has
the tensor's strides (``(2, 3, 64)`` for a packed ``(2, 3, 8, 8)``; a flat one-block array of
the tensor's size for any dense tensor). Anything else is another tensor: an NHWC-shaped array
for NCHW dims, or a larger one, is refused (:func:`hipdnn.interop.buffers.check_against`) rather than
read from its data pointer.

>>> regrouped_strides((2, 3, 64), (192, 64, 1), (2, 3, 8, 8))
(192, 64, 8, 1)
>>> regrouped_strides((2, 8, 8, 4), (256, 32, 4, 1), (2, 4, 8, 8)) is None
True
>>> transposition((2, 8, 8, 4), (2, 4, 8, 8))
(0, 3, 1, 2)
"""

from __future__ import annotations

from collections.abc import Sequence

from hipdnn.core.shapes import LAYOUTS, layout_strides

__all__ = ["layout_named", "permutation_hint", "regrouped_strides", "transposition"]


def _groups(outer: Sequence[int], inner: Sequence[int]) -> list[tuple[int, int, int, int]] | None:
    """Runs ``(i0, i1, j0, j1)`` with ``prod(outer[i0:i1]) == prod(inner[j0:j1])`` covering both
    (all sizes > 1), each run one axis on at least one side; None when no such cover exists."""
    runs, i, j = [], 0, 0
    while i < len(outer) and j < len(inner):
        i0, j0, a, b = i, j, outer[i], inner[j]
        i, j = i + 1, j + 1
        while a != b:
            if a < b and i < len(outer):
                a, i = a * outer[i], i + 1
            elif b < a and j < len(inner):
                b, j = b * inner[j], j + 1
            else:
                return None
        if i - i0 > 1 and j - j0 > 1:
            return None  # a block of several axes on both sides: the sizes are regrouped across
        runs.append((i0, i, j0, j))
    return runs if i == len(outer) and j == len(inner) else None


def regrouped_strides(shape: Sequence[int], strides: Sequence[int],
                      dim: Sequence[int]) -> tuple[int, ...] | None:
    """Strides of the array ``(shape, strides)`` viewed with ``dim`` (0 on size-1 axes) when its
    non-1 sizes are ``dim``'s merged or split in order and the merged axes lie contiguously,
    so that the view is numpy's ``reshape`` without a copy; else None (zero-size included).

    >>> regrouped_strides((384,), (1,), (2, 3, 8, 8))
    (192, 64, 8, 1)
    >>> regrouped_strides((2, 3, 8, 8), (192, 1, 24, 3), (6, 64)) is None  # NHWC: no merge
    True
    """
    old = [(int(d), int(s)) for d, s in zip(shape, strides, strict=True) if d != 1]
    new = [i for i, d in enumerate(dim) if d != 1]
    sizes = [int(dim[i]) for i in new]
    if 0 in sizes or any(d == 0 for d, _ in old):
        return None
    runs = _groups([d for d, _ in old], sizes)
    if runs is None:
        return None
    out = [0] * len(dim)
    for i0, i1, j0, j1 in runs:
        for k in range(i0, i1 - 1):  # merged array axes must step over each other exactly
            if old[k][1] != old[k + 1][1] * old[k + 1][0]:
                return None
        step = old[i1 - 1][1]
        for j in range(j1 - 1, j0 - 1, -1):  # split: the array's innermost stride, scaled
            out[new[j]] = step
            step *= sizes[j]
    return tuple(out)


def transposition(shape: Sequence[int], dim: Sequence[int]) -> tuple[int, ...] | None:
    """Axes ``p`` with ``shape[p[j]] == dim[j]`` (``a.transpose(p)`` has ``dim``) when ``shape``
    is ``dim`` in another axis order, preferring the seed table's layouts (NHWC for a 4-d tensor
    whose H equals W); None when it is not a permutation (or is ``dim`` itself)."""
    shape, dim = tuple(int(d) for d in shape), tuple(int(d) for d in dim)
    if len(shape) != len(dim) or shape == dim or sorted(shape) != sorted(dim):
        return None
    for order in LAYOUTS.values():  # the array holds axis order[i] of the tensor at axis i
        if len(order) == len(dim) and shape == tuple(dim[a] for a in order):
            return tuple(order.index(j) for j in range(len(dim)))
    free = list(range(len(shape)))
    picks = []
    for d in dim:  # each tensor axis takes the first unused array axis of its size
        k = next(k for k in free if shape[k] == d)
        free.remove(k)
        picks.append(k)
    return tuple(picks)


def layout_named(dim: Sequence[int], stride: Sequence[int]) -> str | None:
    """The seed table's layout other than the channel-first one whose packed strides are
    ``stride`` (size-1 axes ignored), else None."""
    for name, order in LAYOUTS.items():
        if len(order) == len(dim) and order != tuple(range(len(dim))) and all(
                d == 1 or int(s) == w for d, s, w in zip(dim, stride,
                                                         layout_strides(dim, order), strict=True)):
            return name
    return None


#: How the dims of a tensor of each rank are ordered (the convolution/batchnorm convention).
_LOGICAL = {4: "(N, C, H, W)", 5: "(N, C, D, H, W)"}


def permutation_hint(shape: Sequence[int], strides: Sequence[int] | None, dim: Sequence[int],
                     stride: Sequence[int]) -> str:
    """'' unless ``shape`` is ``dim`` permuted; then how to pass the array: the transposed view
    (same memory) and the strides the graph tensor needs for it.

    >>> print(permutation_hint((2, 8, 8, 4), (256, 32, 4, 1), (2, 4, 8, 8), (256, 64, 8, 1)))
    ; its shape is the tensor's dims in NHWC order. Dims are logical (N, C, H, W) and the layout lives in the strides: pass the array as a.transpose(0, 3, 1, 2) (torch: t.permute(0, 3, 1, 2)), a view of the same memory with strides (256, 1, 32, 4), and give the tensor those strides: stride=hipdnn.packed_strides((2, 4, 8, 8), "NHWC")
    """
    axes = transposition(shape, dim)
    if axes is None:
        return ""
    args = ", ".join(str(a) for a in axes)
    view = None if strides is None else tuple(int(strides[a]) for a in axes)
    named = None if view is None else layout_named(dim, view)
    order = next((n for n, o in LAYOUTS.items() if len(o) == len(dim)
                  and tuple(shape) == tuple(int(dim[a]) for a in o)), None)
    what = f"in {order} order" if order else "permuted"
    logical = _LOGICAL.get(len(dim), "in the graph's axis order")
    text = (f"; its shape is the tensor's dims {what}. Dims are logical {logical} and the "
            f"layout lives in the strides: pass the array as a.transpose({args}) (torch: "
            f"t.permute({args}))")
    if view is None:
        return text
    text += f", a view of the same memory with strides {view}"
    if all(d == 1 or int(s) == v for d, s, v in zip(dim, stride, view, strict=True)):
        return text + " (the tensor's own)"
    spelled = (f"stride=hipdnn.packed_strides({tuple(int(d) for d in dim)}, \"{named}\")"
               if named else f"stride={view}")
    return text + f", and give the tensor those strides: {spelled}"
