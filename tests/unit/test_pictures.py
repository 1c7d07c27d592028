"""Graph pictures (hipdnn.ir.pictures): SVG/HTML of every seed row, stable text reprs, enum prints."""

from __future__ import annotations

import html
import itertools
import xml.etree.ElementTree as ET

import pytest
from test_serialize import SEED_ROWS

from hipdnn import DataType


def _build(g) -> None:  # type: ignore[no-untyped-def]
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans()
    g.check_support()
    g.build_plans()


@pytest.mark.parametrize("row", SEED_ROWS)
def test_svg_names_every_node_and_tensor_before_and_after_build(row: str) -> None:
    g = SEED_ROWS[row]()
    for built in (False, True):
        if built:
            _build(g)
        svg = g._repr_svg_()
        root = ET.fromstring(svg)  # well-formed XML
        assert root.tag.endswith("svg")
        texts = {(el.text or "") for el in root.iter() if el.tag.endswith("text")}
        for n in g.nodes:
            assert n.name in texts, (row, n.name)
            assert type(n).__name__ in texts
        for t in g.all_tensors:
            assert t.name in texts, (row, t.name)
        kinds = {el.get("class") for el in root.iter() if el.get("class")}
        assert "node" in kinds and "tensor input" in kinds and "tensor output" in kinds
        page = g._repr_html_()
        assert svg in page and all(html.escape(t.name) in page for t in g.all_tensors)
        plan = g.plans[0] if built else None
        if built:
            assert f"runs on {plan.engine.name}" in texts
            assert any(plan.describe()[:60] in x for x in texts)
        else:
            assert any("not built yet" in x for x in texts)


@pytest.mark.parametrize("row", SEED_ROWS)
def test_text_repr_is_the_same_before_and_after_build(row: str) -> None:
    g = SEED_ROWS[row]()
    before = repr(g)
    _build(g)
    after = repr(g)
    # the same text plus the plan, except node attributes validation fills in (a conv's
    # default stride/dilation and its groups, inferred from the channels) and the layout of a
    # tensor created without strides ("layout inferred" until validation picks it)
    def same(text: str) -> list[str]:
        return [x.split("] ")[0] for x in text.splitlines() if "{" not in x]

    assert same(after)[:len(same(before))] == same(before)
    assert after.split("\n  plan: ")[0].count("\n") == before.count("\n")
    assert "\n  plan: " in after
    assert "NOT_SET" not in before
    for t in g.all_tensors:  # outputs listed both times, with the dtype they end up with
        assert f"{t.name}: {t.data_type.name}" in after
    assert "  outputs:\n" in before
    assert "layout inferred" not in after


def test_long_node_repr_is_one_port_per_line() -> None:
    g = SEED_ROWS["bn_training_running"]()
    text = repr(g.nodes[0])
    assert max(len(line) for line in text.splitlines()) < 60
    assert "\n  in:\n    X='x'\n" in text and "NEXT_RUNNING_VARIANCE='bn::NEXT_RUNNING_VARIANCE')" in text
    short = repr(SEED_ROWS["conv_relu"]().nodes[1])
    assert "\n" not in short


def test_dtype_getter_returns_and_prints_the_enum() -> None:
    g = SEED_ROWS["conv_relu"]()
    dt = g.all_tensors[0].get_data_type()
    g.validate()
    dt = g.all_tensors[0].get_data_type()
    assert dt is DataType.FLOAT and str(dt) == "DataType.FLOAT" and f"{dt}" == "1"


def test_plan_repr_says_what_runs() -> None:
    g = SEED_ROWS["conv_relu"]()
    _build(g)
    text = repr(g.plans[0])
    assert "runs='numpy on the CPU, unfused, node by node: conv (ConvFpropNode), relu" in text


# ---------------------------------------------------------------- the drawing's geometry

def _rects(root: ET.Element) -> list[tuple[str, float, float, float, float]]:
    """(name in the box's first line, x, y, w, h) of every node and tensor box."""
    out = []
    for group in root.iter():
        if group.tag.split("}")[-1] != "g":
            continue
        rect = next(el for el in group if el.tag.endswith("rect"))
        name = next(el.text for el in group if el.tag.endswith("text"))
        out.append((name or "", *(float(rect.get(k, 0)) for k in ("x", "y", "width", "height"))))
    return out


def _crosses(p: tuple[float, float], q: tuple[float, float],
             box: tuple[float, float, float, float]) -> bool:
    """Whether segment p-q enters the interior of box (x, y, w, h), sampled finely."""
    x, y, w, h = box
    for i in range(201):
        t = i / 200
        px, py = p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t
        if x + 0.5 < px < x + w - 0.5 and y + 0.5 < py < y + h - 0.5:
            return True
    return False


def _label_boxes(root: ET.Element) -> list[tuple[str, float, float, float, float]]:
    out = []
    for el in root.iter():
        if el.tag.endswith("text") and el.get("class") == "port":
            w = len(el.text or "") * 6.1
            x, y = float(el.get("x", 0)), float(el.get("y", 0))
            out.append((el.text or "", x - w / 2, y - 8, w, 10))
    return out


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


@pytest.mark.parametrize("row", SEED_ROWS)
def test_no_edge_passes_under_a_box_and_no_labels_overlap(row: str) -> None:
    for built in (False, True):
        g = SEED_ROWS[row]()
        if built:
            _build(g)
        root = ET.fromstring(g._repr_svg_())
        boxes = _rects(root)
        edges = [el for el in root.iter() if el.tag.endswith("polyline")]
        assert len(edges) == sum(sum(t is not None for t in (*n.inputs.values(),
                                                               *n.outputs.values()))
                                 for n in g.nodes)
        for edge in edges:
            points = [tuple(map(float, pt.split(","))) for pt in edge.get("points", "").split()]
            for p, q in itertools.pairwise(points):
                for name, *box in boxes:
                    assert not _crosses(p, q, tuple(box)), (row, name, p, q)  # type: ignore[arg-type]
        labels = _label_boxes(root)
        assert len(labels) == len(edges)  # every edge carries its port's name
        for i, (a_name, *a) in enumerate(labels):
            for b_name, *b in labels[i + 1:]:
                assert not _overlap(tuple(a), tuple(b)), (row, a_name, b_name)  # type: ignore[arg-type]
            for name, *box in boxes:
                assert not _overlap(tuple(a), tuple(box)), (row, a_name, name)  # type: ignore[arg-type]


def test_a_wide_graph_scales_to_the_cell() -> None:
    g = SEED_ROWS["bn_training_running"]()
    root = ET.fromstring(g._repr_svg_())
    assert "max-width:100%" in (root.get("style") or "") and root.get("viewBox")
