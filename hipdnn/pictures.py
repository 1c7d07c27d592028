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
from typing import TYPE_CHECKING, Any

from hipdnn.shapes import layout_of
from hipdnn.types import DataType

if TYPE_CHECKING:
    from hipdnn.graph import Graph
    from hipdnn.nodes_base import Node
    from hipdnn.tensor import Tensor

__all__ = ["graph_html", "graph_svg", "graph_text", "tensor_kind", "tensor_summary"]

#: Node fill colours by engine name (after a build); others get the last one.
_ENGINE_COLOURS = {"MIOPEN_ENGINE": "#f4b183", "CPU_REFERENCE_ENGINE": "#a9d18e"}
_UNBUILT = "#dae3f3"
_KIND_STYLE = {  # fill, stroke, dash
    "input": ("#deebf7", "#2e75b6", ""),
    "output": ("#e2f0d9", "#548235", ""),
    "virtual": ("#f2f2f2", "#7f7f7f", "4,3"),
    "scalar": ("#fff2cc", "#bf9000", "2,2"),
}


def _producers(g: Graph) -> dict[int, tuple[Node, str]]:
    return {id(t): (n, p) for n in g.nodes for p, t in n.outputs.items() if t is not None}


def tensor_kind(g: Graph, t: Tensor, producers: dict[int, tuple[Node, str]] | None = None) -> str:
    """``"input"``, ``"output"``, ``"virtual"`` (an intermediate) or ``"scalar"`` (by value)."""
    producers = _producers(g) if producers is None else producers
    if t.is_pass_by_value:
        return "scalar"
    if id(t) in producers:
        return "virtual" if t.is_virtual else "output"
    return "input"


def _dtype(g: Graph, t: Tensor, producers: dict[int, tuple[Node, str]]) -> str:
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


def tensor_summary(g: Graph, t: Tensor,
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


def _ordered(g: Graph) -> list[Tensor]:
    seen: dict[int, Tensor] = {}
    for n in g.nodes:
        for t in (*n.inputs.values(), *n.outputs.values()):
            if t is not None:
                seen.setdefault(id(t), t)
    for t in g.all_tensors:
        seen.setdefault(id(t), t)
    return list(seen.values())


def _built(g: Graph) -> tuple[Any, dict[str, str | None]] | None:
    plans = g.plans
    if not plans:
        return None
    try:
        reasons = g.engine_reasons()
    except Exception:  # a picture never fails, e.g. on a closed graph
        reasons = {}
    return plans[0], reasons


def graph_text(g: Graph) -> str:
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

_CHAR_W, _LINE_H, _PAD, _GAP_X, _GAP_Y = 7.6, 15, 8, 28, 44


def _esc(s: object) -> str:
    return html.escape(str(s), quote=True)


def _box_size(lines: list[str]) -> tuple[float, float]:
    return (max(len(s) for s in lines) * _CHAR_W + 2 * _PAD, len(lines) * _LINE_H + 2 * _PAD - 2)


def graph_svg(g: Graph) -> str:
    """An SVG drawing of the graph, top to bottom: inputs, nodes, intermediates, outputs."""
    producers = _producers(g)
    tensors = _ordered(g)
    built = _built(g)
    # rank: inputs 0, a node 1 + max rank of its inputs, a produced tensor its node's rank + 1
    rank: dict[int, int] = {id(t): 0 for t in tensors if id(t) not in producers}
    for _ in range(len(g.nodes) + 1):  # nodes are in insertion order, which may not be topological
        for n in g.nodes:
            r = 1 + max((rank.get(id(t), 0) for t in n.inputs.values() if t is not None),
                        default=0)
            rank[id(n)] = r
            for t in n.outputs.values():
                if t is not None:
                    rank[id(t)] = r + 1
    boxes: list[tuple[int, object, list[str], str]] = []  # rank, item, lines, kind
    for t in tensors:
        kind = tensor_kind(g, t, producers)
        summary = tensor_summary(g, t, producers)
        name, _, rest = summary.partition(": ")
        boxes.append((rank.get(id(t), 0), t, [name, rest, kind], kind))
    for n in g.nodes:
        lines = [n.name, type(n).__name__]
        mode = n.attributes().get("mode")
        if mode:
            lines.append(str(mode))
        if built is not None:
            lines.append(f"runs on {built[0].engine.name}")
        boxes.append((rank[id(n)], n, lines, "node"))
    rows: dict[int, list[tuple[object, list[str], str]]] = {}
    for r, item, lines, kind in boxes:
        rows.setdefault(r, []).append((item, lines, kind))
    pos: dict[int, tuple[float, float, float, float]] = {}  # id -> x, y, w, h
    y = 20.0
    width = 0.0
    for r in sorted(rows):
        x = 20.0
        height = 0.0
        for item, lines, _kind in rows[r]:
            w, h = _box_size(lines)
            pos[id(item)] = (x, y, w, h)
            x += w + _GAP_X
            height = max(height, h)
        width = max(width, x)
        y += height + _GAP_Y
    caption: list[str] = []
    if built is not None:
        plan, reasons = built
        caption.append(f"plan {plan.name}: {plan.describe()}")
        caption += [f"not used: {e}: {why}" for e, why in reasons.items()
                    if e != plan.engine.name and why]
    else:
        caption.append("not built yet: build() to see which engine runs which nodes")
    wrapped = [c[i:i + 150] for c in caption for i in range(0, len(c), 150)]
    width = max(width, max(len(c) for c in wrapped) * 6.7 + 40)
    height = y + len(wrapped) * _LINE_H + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="12">',
           "<title>" + _esc(f"hipdnn graph {g.name}") + "</title>",
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#404040"/>'
           "</marker></defs>"]

    def edge(a: object, b: object, label: str) -> None:
        ax, ay, aw, ah = pos[id(a)]
        bx, by, bw, _ = pos[id(b)]
        x1, y1, x2, y2 = ax + aw / 2, ay + ah, bx + bw / 2, by
        out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                   f'stroke="#404040" marker-end="url(#arrow)"/>')
        out.append(f'<text x="{(x1 + x2) / 2 + 3:.1f}" y="{(y1 + y2) / 2:.1f}" fill="#7f7f7f" '
                   f'font-size="10">{_esc(label)}</text>')

    for n in g.nodes:
        for port, t in n.inputs.items():
            if t is not None:
                edge(t, n, port)
        for port, t in n.outputs.items():
            if t is not None:
                edge(n, t, port)
    for _r, item, lines, kind in boxes:
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
        for i, line in enumerate(lines):
            weight = ' font-weight="bold"' if i == 0 else ""
            out.append(f'<text x="{x + _PAD:.1f}" y="{y0 + _PAD + 11 + i * _LINE_H:.1f}"'
                       f'{weight}>{_esc(line)}</text>')
        out.append("</g>")
    for i, line in enumerate(wrapped):
        out.append(f'<text x="20" y="{y + i * _LINE_H:.1f}" font-size="10.5">{_esc(line)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def graph_html(g: Graph) -> str:
    """The SVG and a table of every tensor (the notebook display)."""
    producers = _producers(g)
    rows = "".join(
        f"<tr><td>{_esc(t.name)}</td><td>{_esc(tensor_kind(g, t, producers))}</td>"
        f"<td>{_esc(tensor_summary(g, t, producers).partition(': ')[2])}</td></tr>"
        for t in _ordered(g))
    return (f"<div>{graph_svg(g)}<table><tr><th>tensor</th><th>kind</th><th>type, dims, "
            f"layout</th></tr>{rows}</table></div>")
