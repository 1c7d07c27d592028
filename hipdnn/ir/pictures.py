"""Pictures of a graph: the text repr, an SVG drawing and the notebook HTML (pure Python).

:func:`graph_text` is ``repr(graph)``: the inputs, the outputs and the nodes with each tensor's
dims, layout and data type, the same before and after ``build()`` (a data type the graph fills
in at validation is shown as it will be, marked ``(default)``; node attributes that validation
fills in, such as a convolution's default stride, appear once filled); a built graph adds
which plan runs and why every other engine was not used. :func:`graph_svg` draws the same
graph (inputs, virtual intermediates, outputs and scalars in their own styles; after a build the
nodes in the colour of the engine that runs them, with the plan's description); it is
``Graph._repr_svg_`` and, with the tensor table, ``Graph._repr_html_``. No graphviz needed.
"""

from __future__ import annotations

import html
import itertools
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from hipdnn.core.shapes import layout_of
from hipdnn.core.types import DataType
from hipdnn.ir.graph_data import GraphData

if TYPE_CHECKING:
    from hipdnn.ir.nodes.base import Node
    from hipdnn.ir.tensor import Tensor

__all__ = ["PicturedGraph", "graph_html", "graph_svg", "graph_text", "tensor_kind", "tensor_summary"]


class PicturedGraph(GraphData, Protocol):
    """What the pictures read of a graph besides its data: the built plans and the engines'
    answers (:class:`hipdnn.Graph` is one)."""

    @property
    def plans(self) -> Sequence[Any]: ...

    def engine_reasons(self) -> dict[str, str | None]: ...


#: Node fill colours by engine name (after a build); others get the last one.
_ENGINE_COLOURS = {"MIOPEN_ENGINE": "#f4b183", "CPU_REFERENCE_ENGINE": "#a9d18e"}
_UNBUILT = "#dae3f3"
_KIND_STYLE = {  # fill, stroke, dash
    "input": ("#deebf7", "#2e75b6", ""),
    "output": ("#e2f0d9", "#548235", ""),
    "virtual": ("#f2f2f2", "#7f7f7f", "4,3"),
    "scalar": ("#fff2cc", "#bf9000", "2,2"),
}


def _producers(g: PicturedGraph) -> dict[int, tuple[Node, str]]:
    return {id(t): (n, p) for n in g.nodes for p, t in n.outputs.items() if t is not None}


def tensor_kind(g: PicturedGraph, t: Tensor, producers: dict[int, tuple[Node, str]] | None = None) -> str:
    """``"input"``, ``"output"``, ``"virtual"`` (an intermediate) or ``"scalar"`` (by value)."""
    producers = _producers(g) if producers is None else producers
    if t.is_pass_by_value:
        return "scalar"
    if id(t) in producers:
        return "virtual" if t.is_virtual else "output"
    return "input"


def _dtype(g: PicturedGraph, t: Tensor, producers: dict[int, tuple[Node, str]]) -> str:
    """The tensor's data type, or the one validation will give it (see ``validation``)."""
    if t.data_type != DataType.NOT_SET and not getattr(t, "_dtype_inferred", False):
        return t.data_type.name
    if t.is_pass_by_value:
        dt = DataType.FLOAT
    elif id(t) in producers and producers[id(t)][0].default_output_type(
            producers[id(t)][1]) is not None:
        dt = producers[id(t)][0].default_output_type(producers[id(t)][1])  # type: ignore[assignment]
    elif t.is_virtual:
        inter = g.intermediate_data_type
        dt = inter if inter != DataType.NOT_SET else DataType.FLOAT
    else:
        dt = g.io_data_type
    return f"{DataType(dt).name} (default)"


def tensor_summary(g: PicturedGraph, t: Tensor,
                   producers: dict[int, tuple[Node, str]] | None = None) -> str:
    """``x: FLOAT [2, 3, 6, 6] NCHW`` (or the strides when they are no seed layout)."""
    producers = _producers(g) if producers is None else producers
    if t.is_pass_by_value:
        value = "" if t.value is None else f" = {t.value!r}"
        return f"{t.name}: {_dtype(g, t, producers)} scalar{value}"
    dim = list(t.dim) if t.dim is not None else "[?]"
    if t.dim is None:
        layout = ""
    elif t.stride is None:
        layout = " layout inferred"
    else:
        name = layout_of(t.dim, t.stride)
        layout = f" {name}" if name else f" stride {list(t.stride)}"
    return f"{t.name}: {_dtype(g, t, producers)} {dim}{layout}"


def _ordered(g: PicturedGraph) -> list[Tensor]:
    seen: dict[int, Tensor] = {}
    for n in g.nodes:
        for t in (*n.inputs.values(), *n.outputs.values()):
            if t is not None:
                seen.setdefault(id(t), t)
    for t in g.all_tensors:
        seen.setdefault(id(t), t)
    return list(seen.values())


def _built(g: PicturedGraph) -> tuple[Any, dict[str, str | None]] | None:
    plans = g.plans
    if not plans:
        return None
    try:
        reasons = g.engine_reasons()
    except Exception:  # a picture never fails, e.g. on a closed graph
        reasons = {}
    return plans[0], reasons


def graph_text(g: PicturedGraph) -> str:
    """``repr(graph)``: see the module docstring."""
    producers = _producers(g)
    tensors = _ordered(g)
    lines = [f"Graph({g.name!r}, io={g.io_data_type.name}, "
             f"intermediate={g.intermediate_data_type.name}, "
             f"compute={g.compute_data_type.name}, {len(g.nodes)} node(s))"]
    for kind, title in (("input", "inputs"), ("scalar", "scalars"), ("output", "outputs"),
                        ("virtual", "intermediates")):
        chosen = [t for t in tensors if tensor_kind(g, t, producers) == kind]
        if chosen:
            lines.append(f"  {title}:")
            lines += [f"    {tensor_summary(g, t, producers)}" for t in chosen]
    lines.append("  nodes:")
    lines += ["    " + repr(n).replace("\n", "\n    ") for n in g.nodes]
    built = _built(g)
    if built is not None:
        plan, reasons = built
        lines.append(f"  plan: {plan.name} on {plan.engine.name}: {plan.describe()}")
        for engine, why in reasons.items():
            if engine != plan.engine.name and why:
                lines.append(f"  not used: {engine}: {why}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- SVG
#
# A layered drawing: every box sits in a row (its rank); an edge that spans several rows gets a
# slot in each row it crosses, as wide as a box gap, so it runs between boxes, never under one.
# Edges leave and enter boxes at ports spread along the box side (a node is widened until its
# port labels fit side by side), and each label sits on its edge's last, vertical stretch with
# a white halo; so no two labels share a place. The drawing scales down to a notebook cell.

_CHAR_W, _LINE_H, _PAD, _GAP_X, _GAP_Y = 7.6, 15, 8, 28, 58
_LABEL_W = 6.1  # width of a 10 px monospace character
_STUB = 16.0  # the vertical last (or first) stretch of an edge at a port, where its label sits
_SLOT_W = 14.0  # the width a passing edge takes in a row it crosses


def _esc(s: object) -> str:
    return html.escape(str(s), quote=True)


def _label_w(label: str) -> float:
    return len(label) * _LABEL_W + 8


def _box_size(lines: list[str], in_ports: list[str], out_ports: list[str]) -> tuple[float, float]:
    w = max(max(len(s) for s in lines) * _CHAR_W + 2 * _PAD,
            sum(_label_w(p) for p in in_ports), sum(_label_w(p) for p in out_ports))
    return w, len(lines) * _LINE_H + 2 * _PAD - 2


class _Edge:
    """One drawn edge: from ``src`` (its ``out_port`` label, or None) to ``dst``
    (``in_port`` label, or None); ``via`` the slot items of the rows it crosses."""

    def __init__(self, src: object, dst: object, label: str, at_dst: bool) -> None:
        self.src, self.dst, self.label, self.at_dst = src, dst, label, at_dst
        self.via: list[object] = []


class _Slot:
    """The place an edge takes in a row it passes through."""


def _ranks(g: PicturedGraph, tensors: list[Tensor], producers: dict[int, tuple[Node, str]]
           ) -> dict[int, int]:
    """Row of every tensor and node: a node one below its lowest input, a produced tensor one
    below its node, a graph input one above its first consumer (so its edges stay short)."""
    rank: dict[int, int] = {id(t): 0 for t in tensors if id(t) not in producers}
    for _ in range(len(g.nodes) + 1):  # nodes are in insertion order, which may not be topological
        for n in g.nodes:
            r = 1 + max((rank.get(id(t), 0) for t in n.inputs.values() if t is not None),
                        default=0)
            rank[id(n)] = r
            for t in n.outputs.values():
                if t is not None:
                    rank[id(t)] = r + 1
    for t in tensors:
        if id(t) in producers:
            continue
        consumers = [rank[id(n)] for n in g.nodes
                     if any(u is t for u in n.inputs.values())]
        if consumers:
            rank[id(t)] = min(consumers) - 1
    return rank


def _order_rows(rows: dict[int, list[object]], edges: list[_Edge], rank: dict[int, int]) -> None:
    """Reorder each row by the mean position of its neighbours in the row above, then below
    (two sweeps), which removes most crossings in graphs of this size."""
    neighbours: dict[int, list[object]] = {}
    for e in edges:
        chain = [e.src, *e.via, e.dst]
        for a, b in itertools.pairwise(chain):
            neighbours.setdefault(id(a), []).append(b)
            neighbours.setdefault(id(b), []).append(a)
    for sweep in (1, -1, 1):
        keys = sorted(rows) if sweep == 1 else sorted(rows, reverse=True)
        for r in keys:
            other = rows.get(r - sweep)
            if not other:
                continue
            where = {id(item): i for i, item in enumerate(other)}

            def centre(item: object, i: int, where: dict[int, int] = where) -> tuple[float, int]:
                near = [where[id(x)] for x in neighbours.get(id(item), ()) if id(x) in where]
                return (sum(near) / len(near) if near else float(i), i)

            rows[r] = [item for _, item in sorted(
                ((centre(item, i), item) for i, item in enumerate(rows[r])),
                key=lambda pair: pair[0])]


def graph_svg(g: PicturedGraph) -> str:
    """An SVG drawing of the graph, top to bottom: inputs, nodes, intermediates, outputs."""
    producers = _producers(g)
    tensors = _ordered(g)
    built = _built(g)
    rank = _ranks(g, tensors, producers)
    lines_of: dict[int, list[str]] = {}
    kind_of: dict[int, str] = {}
    items: list[object] = []
    for t in tensors:
        kind = tensor_kind(g, t, producers)
        name, _, rest = tensor_summary(g, t, producers).partition(": ")
        lines_of[id(t)], kind_of[id(t)] = [name, rest, kind], kind
        items.append(t)
    for n in g.nodes:
        lines = [n.name, type(n).__name__]
        mode = n.attributes().get("mode")
        if mode:
            lines.append(str(mode))
        if built is not None:
            lines.append(f"runs on {built[0].engine.name}")
        lines_of[id(n)], kind_of[id(n)] = lines, "node"
        items.append(n)
    edges = [_Edge(t, n, port, True) for n in g.nodes for port, t in n.inputs.items()
             if t is not None]
    edges += [_Edge(n, t, port, False) for n in g.nodes for port, t in n.outputs.items()
              if t is not None]
    rows: dict[int, list[object]] = {}
    for item in items:
        rows.setdefault(rank[id(item)], []).append(item)
    for e in edges:
        for r in range(rank[id(e.src)] + 1, rank[id(e.dst)]):
            slot = _Slot()
            rank[id(slot)] = r
            e.via.append(slot)
            rows.setdefault(r, []).append(slot)
    _order_rows(rows, edges, rank)

    ports_in: dict[int, list[_Edge]] = {}
    ports_out: dict[int, list[_Edge]] = {}
    for e in edges:
        (ports_in if e.at_dst else ports_out).setdefault(id(e.dst if e.at_dst else e.src),
                                                         []).append(e)
    size: dict[int, tuple[float, float]] = {}
    for row in rows.values():
        for item in row:
            size[id(item)] = (_SLOT_W, 0.0) if isinstance(item, _Slot) else _box_size(
                lines_of[id(item)], [e.label for e in ports_in.get(id(item), ())],
                [e.label for e in ports_out.get(id(item), ())])
    above: dict[int, list[object]] = {}  # each item's neighbours in the row above
    for e in edges:
        chain = [e.src, *e.via, e.dst]
        for a, b in itertools.pairwise(chain):
            above.setdefault(id(b), []).append(a)
    pos: dict[int, tuple[float, float, float, float]] = {}  # id -> x, y, w, h
    y = 20.0
    width = 0.0
    row_boxes: dict[int, tuple[float, float]] = {}
    for r in sorted(rows):
        # each box under the mean of what feeds it (rows above are placed), then pushed right
        # just enough to keep the gap to its left neighbour
        x = 20.0
        height = 0.0
        for item in rows[r]:
            w, h = size[id(item)]
            feeds = [pos[id(a)] for a in above.get(id(item), ()) if id(a) in pos]
            want = (sum(fx + fw / 2 for fx, _, fw, _ in feeds) / len(feeds) - w / 2
                    if feeds else x)
            left = max(want, x)
            pos[id(item)] = (left, y, w, h)
            x = left + w + _GAP_X
            height = max(height, h)
        row_boxes[r] = (y, height)
        width = max(width, x)
        y += height + _GAP_Y
    for r, (top, height) in row_boxes.items():  # a passing edge runs through its whole row
        for item in rows[r]:
            if isinstance(item, _Slot):
                x0, _, w, _ = pos[id(item)]
                pos[id(item)] = (x0, top, w, height)

    def centre_x(item: object) -> float:
        x0, _, w, _ = pos[id(item)]
        return x0 + w / 2

    def spread(item: object, port_edges: list[_Edge], incoming: bool) -> dict[int, float]:
        """x of each edge's port on ``item``'s side: ordered by where the edge comes from (or
        goes to), each port as wide as its label."""
        x0, _, w, _ = pos[id(item)]

        def far_x(e: _Edge) -> float:
            if incoming:
                return centre_x(e.via[-1] if e.via else e.src)
            return centre_x(e.via[0] if e.via else e.dst)

        chosen = sorted(port_edges, key=far_x)
        at = x0 + (w - sum(_label_w(e.label) for e in chosen)) / 2
        out: dict[int, float] = {}
        for e in chosen:
            out[id(e)] = at + _label_w(e.label) / 2
            at += _label_w(e.label)
        return out

    port_x: dict[int, float] = {}
    for item in items:
        if kind_of[id(item)] == "node":
            port_x.update(spread(item, ports_in.get(id(item), []), True))
            port_x.update(spread(item, ports_out.get(id(item), []), False))

    caption: list[str] = []
    if built is not None:
        plan, reasons = built
        caption.append(f"plan {plan.name}: {plan.describe()}")
        caption += [f"not used: {e}: {why}" for e, why in reasons.items()
                    if e != plan.engine.name and why]
    else:
        caption.append("not built yet: build() to see which engine runs which nodes")
    wrapped = [part for c in caption for part in textwrap.wrap(c, 150, break_on_hyphens=False)]
    width = max(width, max(len(c) for c in wrapped) * 6.7 + 40)
    height = y + len(wrapped) * _LINE_H + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" style="max-width:100%;height:auto" '
           'font-family="monospace" font-size="12">',
           "<title>" + _esc(f"hipdnn graph {g.name}") + "</title>",
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#404040"/>'
           "</marker></defs>"]

    labels: list[str] = []
    for e in edges:
        sx, sy, sw, sh = pos[id(e.src)]
        dx, dy, dw, _ = pos[id(e.dst)]
        start = (sx + sw / 2 if e.at_dst else port_x[id(e)], sy + sh)
        end = (port_x[id(e)] if e.at_dst else dx + dw / 2, dy)
        points = [start]
        if not e.at_dst:
            points.append((start[0], start[1] + _STUB))
        for passing in e.via:  # straight down through each row it crosses
            cx = centre_x(passing)
            _, top, _, h = pos[id(passing)]
            points += [(cx, top), (cx, top + h)]
        if e.at_dst:
            points.append((end[0], end[1] - _STUB))
        points.append(end)
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        out.append(f'<polyline class="edge" points="{path}" fill="none" stroke="#404040" '
                   f'marker-end="url(#arrow)"/>')
        lx, ly = (end[0], end[1] - 4) if e.at_dst else (start[0], start[1] + 12)
        labels.append(f'<text class="port" x="{lx:.1f}" y="{ly:.1f}" text-anchor="middle" '
                      f'fill="#595959" font-size="10" stroke="#ffffff" stroke-width="3" '
                      f'paint-order="stroke">{_esc(e.label)}</text>')
    for item in items:
        kind = kind_of[id(item)]
        x, y0, w, h = pos[id(item)]
        if kind == "node":
            engine = built[0].engine.name if built is not None else None
            fill = _ENGINE_COLOURS.get(engine or "", "#c9c9ff") if engine else _UNBUILT
            out.append(f'<g class="node"><rect x="{x:.1f}" y="{y0:.1f}" width="{w:.1f}" '
                       f'height="{h:.1f}" rx="2" fill="{fill}" stroke="#203864" '
                       f'stroke-width="1.5"/>')
        else:
            fill, stroke, dash = _KIND_STYLE[kind]
            dashed = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<g class="tensor {kind}"><rect x="{x:.1f}" y="{y0:.1f}" '
                       f'width="{w:.1f}" height="{h:.1f}" rx="9" fill="{fill}" '
                       f'stroke="{stroke}"{dashed}/>')
        for i, line in enumerate(lines_of[id(item)]):
            weight = ' font-weight="bold"' if i == 0 else ""
            out.append(f'<text x="{x + _PAD:.1f}" y="{y0 + _PAD + 11 + i * _LINE_H:.1f}"'
                       f'{weight}>{_esc(line)}</text>')
        out.append("</g>")
    out += labels  # last, so boxes and edges never cover them
    for i, line in enumerate(wrapped):
        out.append(f'<text x="20" y="{y + i * _LINE_H:.1f}" font-size="10.5">{_esc(line)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def graph_html(g: PicturedGraph) -> str:
    """The SVG and a table of every tensor (the notebook display)."""
    producers = _producers(g)
    rows = "".join(
        f"<tr><td>{_esc(t.name)}</td><td>{_esc(tensor_kind(g, t, producers))}</td>"
        f"<td>{_esc(tensor_summary(g, t, producers).partition(': ')[2])}</td></tr>"
        for t in _ordered(g))
    return (f"<div>{graph_svg(g)}<table><tr><th>tensor</th><th>kind</th><th>type, dims, "
            f"layout</th></tr>{rows}</table></div>")
