"""Shape arithmetic shared by the graph API, the engines and the tests (standard library only)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "LAYOUTS",
    "conv_output_dims",
    "layout_of",
    "layout_order",
    "layout_strides",
    "layouts_of",
    "overlap_free",
    "packed_strides",
]

#: Dimension orders (as permutations of the logical N,C,(D),H,W axes) that the seed table names.
LAYOUTS: dict[str, tuple[int, ...]] = {
    "NCHW": (0, 1, 2, 3),
    "NHWC": (0, 2, 3, 1),
    "NCDHW": (0, 1, 2, 3, 4),
    "NDHWC": (0, 2, 3, 4, 1),
}


def conv_output_dims(
    x_dim: Sequence[int],
    w_dim: Sequence[int],
    pre_padding: Sequence[int],
    post_padding: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
) -> tuple[int, ...]:
    """Output dims (N, K, spatial...) of a cross-correlation; spatial sizes may come out < 1.

    >>> conv_output_dims([2, 3, 8, 8], [4, 3, 3, 3], [1, 1], [1, 1], [1, 1], [1, 1])
    (2, 4, 8, 8)
    """
    spatial = []
    for i in range(len(x_dim) - 2):
        eff_k = dilation[i] * (w_dim[i + 2] - 1) + 1
        span = x_dim[i + 2] + pre_padding[i] + post_padding[i] - eff_k
        spatial.append(span // stride[i] + 1)
    return (int(x_dim[0]), int(w_dim[0]), *spatial)


def layout_strides(dim: Sequence[int], order: Sequence[int]) -> tuple[int, ...]:
    """Packed strides for logical ``dim`` stored in memory in axis ``order`` (outermost first)."""
    strides = [0] * len(dim)
    step = 1
    for axis in reversed(order):
        strides[axis] = step
        step *= int(dim[axis])
    return tuple(strides)


def packed_strides(dim: Sequence[int], layout: str | None = None) -> tuple[int, ...]:
    """Packed strides for ``dim``: channel-first by default, or the named layout (e.g. "NHWC")."""
    if layout is None:
        return layout_strides(dim, range(len(dim)))
    order = LAYOUTS.get(layout)
    if order is None or len(order) != len(dim):
        raise ValueError(f"layout {layout!r} does not fit a {len(dim)}-d tensor; known: {sorted(LAYOUTS)}")
    return layout_strides(dim, order)


def layouts_of(dim: Sequence[int], stride: Sequence[int]) -> tuple[str, ...]:
    """The seed-table layouts whose packed strides equal ``stride`` on the axes of size > 1.

    A size-1 axis's stride is never used to address an element, so a dense tensor with one
    (``C == 1``, or ``N == 1`` with any N stride) may be several layouts at once. The layout
    whose strides match exactly, size-1 axes included, comes first; then the others in
    :data:`LAYOUTS` order (channel-first first).

    >>> layouts_of([2, 1, 4, 4], [16, 1, 4, 1]), layouts_of([1, 3, 4, 4], [7, 1, 12, 3])
    (('NHWC', 'NCHW'), ('NHWC',))
    """
    exact, loose = [], []
    for name, order in LAYOUTS.items():
        if len(order) != len(dim):
            continue
        packed = layout_strides(dim, order)
        if tuple(int(s) for s in stride) == packed:
            exact.append(name)
        elif all(int(d) == 1 or int(s) == p for d, s, p in zip(dim, stride, packed, strict=True)):
            loose.append(name)
    return (*exact, *loose)


def layout_of(dim: Sequence[int], stride: Sequence[int]) -> str | None:
    """The seed-table layout of a dense tensor (see :func:`layouts_of`; an exact match first,
    then channel-first), else None.

    >>> layout_of([2, 3, 4, 4], [48, 1, 12, 3]), layout_of([1, 3, 4, 4], [0, 16, 4, 1])
    ('NHWC', 'NCHW')
    """
    found = layouts_of(dim, stride)
    return found[0] if found else None


def layout_order(dim: Sequence[int], stride: Sequence[int]) -> tuple[int, ...]:
    """Axes of ``dim`` from outermost to innermost as ``stride`` lays them out: a seed layout's
    order when the tensor is dense in one (see :func:`layout_of`), else by decreasing stride
    with the axes of size 1, whose strides mean nothing, where channel-first order puts them.

    >>> layout_order([1, 1, 5, 5], [25, 1, 5, 1]), layout_order([2, 3, 4], [1, 8, 2])
    ((0, 2, 3, 1), (1, 2, 0))
    """
    name = layout_of(dim, stride)
    if name is not None:
        return LAYOUTS[name]
    n = len(dim)
    ranked = sorted((a for a in range(n) if dim[a] != 1), key=lambda a: (-stride[a], a))
    order: list[int] = []
    for a in ranked:  # each size-1 axis goes before the first larger axis that follows it
        order.extend(u for u in range(a) if dim[u] == 1 and u not in order)
        order.append(a)
    order.extend(u for u in range(n) if u not in order)
    return tuple(order)


def overlap_free(dim: Sequence[int], stride: Sequence[int]) -> bool:
    """True when no two elements of ``dim`` laid out by ``stride`` share a memory element.

    Size-1 axes are ignored (their stride is never used). The others, sorted by stride, must
    each step at least over the whole extent the smaller-stride axes span, so a stride of 0
    (broadcast) or repeated strides overlap. Interleaved layouts that happen not to collide
    (e.g. dim (2, 3) with stride (3, 2)) are refused too: no engine lays tensors out that way.
    A negative stride (a reversed view, ``a[..., ::-1]``) only walks its axis backwards: the
    test uses its size.

    >>> overlap_free([2, 3, 4, 4], [48, 1, 12, 3]), overlap_free([2, 3, 4, 4], [1, 1, 1, 1])
    (True, False)
    >>> overlap_free([1, 3, 1, 1], [0, 1, 0, 0]), overlap_free([4, 5], [0, 1])
    (True, False)
    >>> overlap_free([2, 3], [3, -1]), overlap_free([2, 3], [-2, 1])
    (True, False)
    """
    extent = 1  # elements spanned by the axes checked so far
    for d, s in sorted(((int(d), abs(int(s))) for d, s in zip(dim, stride, strict=True)
                        if d != 1), key=lambda ds: ds[1]):
        if d == 0:
            return True  # no elements at all
        if s < extent:
            return False
        extent += (d - 1) * s
    return True
