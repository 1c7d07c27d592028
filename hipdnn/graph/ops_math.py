"""Element-wise math op builders with cudnn-frontend's names and argument names (``sqrt(input)``,
``div(a, b)``, ``max(input0, input1)``, ``binary_select(input0, input1, mask)``,
``tanh_backward(loss, input)``, ...): each is one :meth:`GraphOps.pointwise` node. No MIOpen seed
row has them, so CPU_REFERENCE_ENGINE runs them (MIOPEN_ENGINE declines the graph).

>>> import numpy as np, hipdnn as cudnn
>>> g = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
>>> x = g.tensor(dim=[1, 4, 1, 1], name="x")
>>> y = g.rsqrt(x).set_output(True)
>>> _ = g.build()
>>> out = np.empty((1, 4, 1, 1), np.float32)
>>> g.execute({x: np.array([1, 4, 16, 64], np.float32).reshape(1, 4, 1, 1), y: out})
>>> out.ravel().tolist()
[1.0, 0.5, 0.25, 0.125]
"""

from __future__ import annotations

from typing import Any

from hipdnn.core.types import DataType, PointwiseMode
from hipdnn.graph.ops import GraphOps
from hipdnn.ir.tensor import Tensor

__all__ = ["MathOps"]

M = PointwiseMode
NOT_SET = DataType.NOT_SET


class MathOps(GraphOps):
    """Named element-wise math ops of :class:`hipdnn.Graph`: each one :meth:`GraphOps.pointwise
    <hipdnn.graph.ops.GraphOps.pointwise>` node."""

    # -- unary -----------------------------------------------------------------------------------
    def sqrt(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """Square root (SQRT).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.SQRT, input, compute_data_type=compute_data_type, name=name)

    def rsqrt(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """1 / sqrt(input) (RSQRT).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.RSQRT, input, compute_data_type=compute_data_type, name=name)

    def reciprocal(self, input: Tensor, *, compute_data_type: Any = NOT_SET,
                   name: str = "") -> Tensor:
        """1 / input (RECIPROCAL).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.RECIPROCAL, input, compute_data_type=compute_data_type,
                              name=name)

    def exp(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """e ** input (EXP).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.EXP, input, compute_data_type=compute_data_type, name=name)

    def log(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """Natural logarithm (LOG).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.LOG, input, compute_data_type=compute_data_type, name=name)

    def neg(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """-input (NEG).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.NEG, input, compute_data_type=compute_data_type, name=name)

    def abs(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """|input| (ABS).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.ABS, input, compute_data_type=compute_data_type, name=name)

    def ceil(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """Round up (CEIL).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.CEIL, input, compute_data_type=compute_data_type, name=name)

    def floor(self, input: Tensor, *, compute_data_type: Any = NOT_SET,
              name: str = "") -> Tensor:
        """Round down (FLOOR).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.FLOOR, input, compute_data_type=compute_data_type, name=name)

    def sin(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """Sine (SIN).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.SIN, input, compute_data_type=compute_data_type, name=name)

    def tan(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """Tangent (TAN).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.TAN, input, compute_data_type=compute_data_type, name=name)

    def tanh(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """Hyperbolic tangent (TANH_FWD).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.TANH_FWD, input, compute_data_type=compute_data_type, name=name)

    def sigmoid(self, input: Tensor, *, compute_data_type: Any = NOT_SET,
                name: str = "") -> Tensor:
        """1 / (1 + e ** -input) (SIGMOID_FWD).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.SIGMOID_FWD, input, compute_data_type=compute_data_type,
                              name=name)

    # -- binary and ternary ----------------------------------------------------------------------
    def div(self, a: Tensor, b: Tensor, *, compute_data_type: Any = NOT_SET,
            name: str = "") -> Tensor:
        """a / b (DIV).

        Parameters
        ----------
        a : Tensor
            The first operand (IN_0).
        b : Tensor
            The second operand (IN_1); broadcast where its dims are 1.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.DIV, a, b, compute_data_type=compute_data_type, name=name)

    def add_square(self, a: Tensor, b: Tensor, *, compute_data_type: Any = NOT_SET,
                   name: str = "") -> Tensor:
        """a + b * b (ADD_SQUARE).

        Parameters
        ----------
        a : Tensor
            The first operand (IN_0).
        b : Tensor
            The second operand (IN_1); broadcast where its dims are 1.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.ADD_SQUARE, a, b, compute_data_type=compute_data_type,
                              name=name)

    def max(self, input0: Tensor, input1: Tensor, *, compute_data_type: Any = NOT_SET,
            name: str = "") -> Tensor:
        """Element-wise maximum (MAX).

        Parameters
        ----------
        input0 : Tensor
            The first operand (IN_0).
        input1 : Tensor
            The second operand (IN_1); broadcast where its dims are 1.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.MAX, input0, input1, compute_data_type=compute_data_type,
                              name=name)

    def min(self, input0: Tensor, input1: Tensor, *, compute_data_type: Any = NOT_SET,
            name: str = "") -> Tensor:
        """Element-wise minimum (MIN).

        Parameters
        ----------
        input0 : Tensor
            The first operand (IN_0).
        input1 : Tensor
            The second operand (IN_1); broadcast where its dims are 1.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.MIN, input0, input1, compute_data_type=compute_data_type,
                              name=name)

    def binary_select(self, input0: Tensor, input1: Tensor, mask: Tensor, *,
                      compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """``input0`` where ``mask`` is non-zero (true), else ``input1`` (BINARY_SELECT).

        Parameters
        ----------
        input0 : Tensor
            The first operand (IN_0).
        input1 : Tensor
            The second operand (IN_1); broadcast where its dims are 1.
        mask : Tensor
            The selector (IN_2): where it is true, ``input0``, else ``input1``.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.BINARY_SELECT, input0, input1, mask,
                              compute_data_type=compute_data_type, name=name)

    def tanh_backward(self, loss: Tensor, input: Tensor, *, compute_data_type: Any = NOT_SET,
                      name: str = "") -> Tensor:
        """loss * (1 - tanh(input) ** 2) (TANH_BWD).

        Parameters
        ----------
        loss : Tensor
            The gradient of the loss with respect to the op's output (DY).
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.TANH_BWD, loss, input, compute_data_type=compute_data_type,
                              name=name)

    def sigmoid_backward(self, loss: Tensor, input: Tensor, *,
                         compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """loss * sigmoid(input) * (1 - sigmoid(input)) (SIGMOID_BWD).

        Parameters
        ----------
        loss : Tensor
            The gradient of the loss with respect to the op's output (DY).
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.SIGMOID_BWD, loss, input, compute_data_type=compute_data_type,
                              name=name)

    def gen_index(self, input: Tensor, axis: int, *, compute_data_type: Any = NOT_SET,
                  name: str = "") -> Tensor:
        """Each element's index along ``axis`` of ``input``'s dims (GEN_INDEX); set the
        output's data type (e.g. INT32) as in cudnn-frontend.

        Parameters
        ----------
        input : Tensor
            The input tensor.
        axis : int
            The axis whose index each element gets.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.GEN_INDEX, input, axis=axis,
                              compute_data_type=compute_data_type, name=name)

    # -- activations and their backward (cudnn-frontend's names; alpha/beta at cuDNN's 1.0) -----
    def erf(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """The error function (ERF).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.ERF, input, compute_data_type=compute_data_type, name=name)

    def elu(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """input if > 0, else e ** input - 1 (ELU_FWD, alpha 1).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.ELU_FWD, input, compute_data_type=compute_data_type, name=name)

    def elu_backward(self, loss: Tensor, input: Tensor, *, compute_data_type: Any = NOT_SET,
                     name: str = "") -> Tensor:
        """loss where input > 0, else loss * e ** input (ELU_BWD, alpha 1).

        Parameters
        ----------
        loss : Tensor
            The gradient of the loss with respect to the op's output (DY).
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.ELU_BWD, loss, input, compute_data_type=compute_data_type,
                              name=name)

    def gelu(self, input: Tensor, *, compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """input * (1 + erf(input / sqrt(2))) / 2 (GELU_FWD).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.GELU_FWD, input, compute_data_type=compute_data_type, name=name)

    def gelu_backward(self, loss: Tensor, input: Tensor, *, compute_data_type: Any = NOT_SET,
                      name: str = "") -> Tensor:
        """loss * d gelu / d input (GELU_BWD).

        Parameters
        ----------
        loss : Tensor
            The gradient of the loss with respect to the op's output (DY).
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.GELU_BWD, loss, input, compute_data_type=compute_data_type,
                              name=name)

    def gelu_approx_tanh(self, input: Tensor, *, compute_data_type: Any = NOT_SET,
                         name: str = "") -> Tensor:
        """GELU's tanh approximation (GELU_APPROX_TANH_FWD).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.GELU_APPROX_TANH_FWD, input,
                              compute_data_type=compute_data_type, name=name)

    def gelu_approx_tanh_backward(self, loss: Tensor, input: Tensor, *,
                                  compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """loss * the derivative of GELU's tanh approximation (GELU_APPROX_TANH_BWD).

        Parameters
        ----------
        loss : Tensor
            The gradient of the loss with respect to the op's output (DY).
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.GELU_APPROX_TANH_BWD, loss, input,
                              compute_data_type=compute_data_type, name=name)

    def softplus(self, input: Tensor, *, compute_data_type: Any = NOT_SET,
                 name: str = "") -> Tensor:
        """log(1 + e ** input) (SOFTPLUS_FWD, beta 1).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.SOFTPLUS_FWD, input, compute_data_type=compute_data_type,
                              name=name)

    def softplus_backward(self, loss: Tensor, input: Tensor, *,
                          compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """loss * sigmoid(input) (SOFTPLUS_BWD, beta 1).

        Parameters
        ----------
        loss : Tensor
            The gradient of the loss with respect to the op's output (DY).
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.SOFTPLUS_BWD, loss, input, compute_data_type=compute_data_type,
                              name=name)

    def swish(self, input: Tensor, swish_beta: float | None = None, *,
              compute_data_type: Any = NOT_SET, name: str = "") -> Tensor:
        """input * sigmoid(swish_beta * input) (SWISH_FWD; beta 1 when None: SiLU).

        Parameters
        ----------
        input : Tensor
            The input tensor.
        swish_beta : float, optional
            The beta of x * sigmoid(beta * x) (default 1).
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.SWISH_FWD, input, swish_beta=swish_beta,
                              compute_data_type=compute_data_type, name=name)

    def swish_backward(self, loss: Tensor, input: Tensor, *, compute_data_type: Any = NOT_SET,
                       swish_beta: float | None = None, name: str = "") -> Tensor:
        """loss * d swish / d input (SWISH_BWD; beta 1 when None).

        Parameters
        ----------
        loss : Tensor
            The gradient of the loss with respect to the op's output (DY).
        input : Tensor
            The input tensor.
        compute_data_type : DataType, optional
            The node's compute type (default: the graph's ``compute_data_type``).
        swish_beta : float, optional
            The beta of x * sigmoid(beta * x) (default 1).
        name : str, optional
            The node's name (default ``"<op>_<n>"``: the op or its pointwise mode in lower case and
            a number); output tensors are named ``"<name>::<PORT>"``.

        Returns
        -------
        Tensor
            The output (virtual until ``set_output(True)``).

        Raises
        ------
        ValidationError
            An argument of the wrong type or value (the message names the node and the port).
        """
        return self.pointwise(M.SWISH_BWD, loss, input, swish_beta=swish_beta,
                              compute_data_type=compute_data_type, name=name)
