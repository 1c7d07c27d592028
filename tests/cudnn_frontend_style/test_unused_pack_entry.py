"""A variant pack may hold a tensor of the graph that no node uses, as cuDNN allows:
cudnn-frontend's own test_instancenorm.py passes its backward graph an unused epsilon. The entry
is ignored (nothing reads or writes it); a tensor of another graph is still refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import hipdnn as cudnn
from hipdnn import VariantPackError


def _graph() -> tuple[cudnn.Graph, object, object, object]:
    g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT, compute_data_type=cudnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[2, 3, 4, 4], stride=[48, 16, 4, 1], data_type=cudnn.data_type.FLOAT)
    unused = g.tensor(name="epsilon_bwd", dim=[1, 1, 1, 1], stride=[1, 1, 1, 1],
                      data_type=cudnn.data_type.FLOAT, is_pass_by_value=True)
    y = g.relu(input=x, name="relu")
    y.set_output(True)
    g.build([cudnn.heur_mode.A])
    return g, x, unused, y


def test_an_unused_tensor_of_the_graph_is_ignored() -> None:
    g, x, unused, y = _graph()
    xs = torch.randn(2, 3, 4, 4)
    ys = torch.full((2, 3, 4, 4), -7.0)
    eps = torch.full((1, 1, 1, 1), 1e-5)
    g.execute({x: xs, y: ys, unused: eps})
    torch.testing.assert_close(ys, torch.relu(xs))
    assert eps.item() == pytest.approx(1e-5)
    ys.fill_(-7.0)
    g.execute({x: xs, y: ys, unused: eps})  # the remembered binding too
    torch.testing.assert_close(ys, torch.relu(xs))


def test_a_tensor_of_another_graph_is_still_refused() -> None:
    g, x, _, y = _graph()
    other = cudnn.pygraph()
    stranger = other.tensor(name="stranger", dim=[1, 1, 1, 1], stride=[1, 1, 1, 1])
    with pytest.raises(VariantPackError, match="another graph"):
        g.execute({x: np.ones((2, 3, 4, 4), np.float32), y: np.empty((2, 3, 4, 4), np.float32),
                   stranger: np.ones((1, 1, 1, 1), np.float32)})
