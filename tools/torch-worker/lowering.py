"""memo's layers in PyTorch: one plain function per Keras layer class, over torch and
torch.nn.functional, with the meanings memo's reference interpreter gives them (Keras 2.8's). The
worker (worker.py) runs them eagerly and, whole models, compiled by torch.compile; a reproducer
script can call the same functions one line per layer.

A function takes the layer's input tensors positionally, its weights by their Keras names
("kernel", "bias", "forward_recurrent_kernel", ...) and its parameters by their Keras config names
as keywords; apply() picks, from a layer's config, the parameters the function names. Everything
is in the node's dtype already.

Layouts: Keras tensors are channels_last and its weights have Keras' layouts; the functions below
permute them into PyTorch's channels-first tensors and (out, in, k...) kernels and back. TF's
"same" padding may be asymmetric (the extra pad goes after), which PyTorch's symmetric padding
arguments cannot say, so such inputs are padded explicitly first. Where PyTorch has a fused
operator with Keras' semantics (convolutions, pools, LSTM/GRU/RNN, batch and layer norm,
upsampling) it is used, so that a disagreement with the reference points at one of its kernels.
This is the same lowering as memo's libtorch backend (include/memo/backends/torch/backend.hpp)."""
from __future__ import annotations

import functools
import inspect
import math

import torch
import torch.nn.functional as F
from torch import Tensor


class Declined(Exception):
    """What this lowering cannot say in PyTorch: the model is declined, never a bug."""


# ----------------------------------------------------------------------------------------------
# Layouts, padding and activations
# ----------------------------------------------------------------------------------------------


def to_cf(x: Tensor, first: bool) -> Tensor:
    """Keras' channels_last (B, s..., C) as PyTorch's (B, C, s...); channels_first stays."""
    return x if first else x.permute(0, x.dim() - 1, *range(1, x.dim() - 1))


def from_cf(x: Tensor, first: bool) -> Tensor:
    """PyTorch's (B, C, s...) back as Keras' channels_last (B, s..., C); channels_first stays."""
    return x if first else x.permute(0, *range(2, x.dim()), 1)


def keras_kernel(w: Tensor) -> Tensor:
    """Keras' kernel (k..., a, b) as PyTorch's (b, a, k...): conv (k..., in, out) -> (out, in, k...),
    conv_transpose (k..., out, in) -> (in, out, k...)."""
    n = w.dim() - 2
    return w.permute(n + 1, n, *range(n)).contiguous()


def grouped_kernel(w: Tensor) -> Tensor:
    """Keras' depthwise kernel (k..., in, dm) as a grouped convolution's (in * dm, 1, k...): output
    channel c * dm + m is input channel c's m-th filter, as Keras orders them."""
    n = w.dim() - 2
    return w.permute(n, n + 1, *range(n)).reshape(w.shape[n] * w.shape[n + 1], 1, *w.shape[:n]).contiguous()


def flat(values) -> list[int]:
    """A Keras list of ints or of (before, after) pairs, flat: ((1, 2), (3, 4)) -> [1, 2, 3, 4]."""
    if isinstance(values, (list, tuple)):
        return [v for item in values for v in flat(item)]
    return [int(values)]


def ntuple(value, n: int) -> list[int]:
    """A Keras int-or-tuple parameter as n ints (Keras takes 3 for (3, 3))."""
    values = flat(value)
    return values * n if len(values) == 1 else values


def normal_axis(axis, rank: int) -> int:
    """A Keras axis (negative from the end; built layers write it as a list) as 0..rank-1."""
    a = flat(axis)[0]
    return a + rank if a < 0 else a


def activate(x: Tensor, name: str | None, softmax_dim: int = -1) -> Tensor:
    """Keras' activation `name` (None and linear: the identity). Keras' softmax is over the last
    axis of the tensor it sees; `softmax_dim` says where that axis is in x."""
    if name == "relu":
        return torch.relu(x)
    if name == "tanh":
        return torch.tanh(x)
    if name == "sigmoid":
        return torch.sigmoid(x)
    if name == "hard_sigmoid":  # Keras 2's, not PyTorch's x / 6 + 1 / 2
        return torch.clamp(x * 0.2 + 0.5, 0.0, 1.0)
    if name == "elu":
        return F.elu(x)
    if name == "selu":
        return F.selu(x)
    if name == "softplus":
        # PyTorch's softplus returns x past `threshold` (20 by default: an absolute error of 2e-9,
        # far above float64's precision); TF switches at -log(eps) - 2, about 34 in float64.
        return F.softplus(x, beta=1.0, threshold=40.0 if x.dtype == torch.float64 else 20.0)
    if name == "softsign":
        return x / (x.abs() + 1.0)
    if name == "exponential":
        return torch.exp(x)
    if name == "softmax":
        return torch.softmax(x, softmax_dim)
    if name in (None, "linear"):
        return x
    raise Declined("no activation %r" % name)


def window_padding(padding: str, size: int, reach: int, stride: int) -> tuple[int, int]:
    """TF's padding of one axis, (before, after): "same" pads (out - 1) * stride + reach - size in
    all, with out = ceil(size / stride) and the odd element after; "causal" pads reach - 1 before."""
    if padding == "causal":
        return reach - 1, 0
    if padding != "same":
        return 0, 0
    out = (size + stride - 1) // stride
    total = max((out - 1) * stride + reach - size, 0)
    return total // 2, total - total // 2


def tf_padding(sizes, kernel, strides, dilation, padding: str) -> tuple[list[int], list[int]]:
    """TF's padding, before and after, of each spatial axis."""
    before, after = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilation):
        b, a = window_padding(padding, int(size), (k - 1) * d + 1, s)
        before.append(b)
        after.append(a)
    return before, after


def pad_spatial(x: Tensor, before, after, fill: float = 0.0) -> Tensor:
    """Pads the spatial axes (2...) of a channels-first tensor; negative amounts crop."""
    pads = []
    for b, a in zip(reversed(before), reversed(after)):
        pads += [b, a]
    return F.pad(x, pads, value=fill)


# ----------------------------------------------------------------------------------------------
# Convolutions
# ----------------------------------------------------------------------------------------------

CONV = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}


def keras_conv(x: Tensor, w: Tensor, b: Tensor | None, strides, dilation, padding: str, groups: int = 1) -> Tensor:
    """A Keras convolution of a channels-first tensor with a PyTorch kernel (out, in / groups, k...):
    PyTorch's own "same" where it applies (stride 1, where it pads as TF does), its symmetric
    padding argument where TF's padding is symmetric, explicit zero padding otherwise."""
    k = list(w.shape[2:])
    conv = CONV[x.dim()]
    if padding == "same" and all(s == 1 for s in strides):
        return conv(x, w, b, strides, "same", dilation, groups)
    before, after = tf_padding(x.shape[2:], k, strides, dilation, padding)
    if before == after:
        return conv(x, w, b, strides, before, dilation, groups)
    return conv(pad_spatial(x, before, after), w, b, strides, 0, dilation, groups)


def conv(x, kernel, bias=None, *, strides, padding, data_format, dilation_rate, activation) -> Tensor:
    """Conv1D, Conv2D, Conv3D."""
    n = kernel.dim() - 2
    first = data_format == "channels_first"
    y = keras_conv(to_cf(x, first), keras_kernel(kernel), bias, ntuple(strides, n), ntuple(dilation_rate, n), padding)
    return activate(from_cf(y, first), activation)


def separable_conv(x, depthwise_kernel, pointwise_kernel, bias=None, *, strides, padding, data_format, dilation_rate, activation) -> Tensor:
    """SeparableConv1D/2D: a grouped (depthwise) convolution with the layer's strides, padding and
    dilation, then a 1x1 convolution with the bias."""
    n = depthwise_kernel.dim() - 2
    first = data_format == "channels_first"
    x = to_cf(x, first)
    depth = keras_conv(x, grouped_kernel(depthwise_kernel), None, ntuple(strides, n), ntuple(dilation_rate, n), padding, x.shape[1])
    y = CONV[x.dim()](depth, keras_kernel(pointwise_kernel), bias)
    return activate(from_cf(y, first), activation)


def depthwise_conv(x, depthwise_kernel, bias=None, *, strides, padding, data_format, dilation_rate, activation) -> Tensor:
    """DepthwiseConv1D/2D: a grouped convolution, one group per input channel."""
    n = depthwise_kernel.dim() - 2
    first = data_format == "channels_first"
    x = to_cf(x, first)
    y = keras_conv(x, grouped_kernel(depthwise_kernel), bias, ntuple(strides, n), ntuple(dilation_rate, n), padding, x.shape[1])
    return activate(from_cf(y, first), activation)


def deconv_length(size: int, kernel: int, padding: str, output_padding, stride: int, dilation: int) -> int:
    """Keras' conv_utils.deconv_output_length."""
    k = (kernel - 1) * dilation + 1
    if output_padding is None:
        return size * stride + max(k - stride, 0) if padding == "valid" else size * stride
    pad = k // 2 if padding == "same" else 0
    return (size - 1) * stride + k - 2 * pad + output_padding


def conv_transpose(x, kernel, bias=None, *, strides, padding, output_padding, data_format, dilation_rate, activation) -> Tensor:
    """Conv2DTranspose, Conv3DTranspose. TF places input i, tap j at output i * s + j * d - pad_before,
    where pad_before is what a forward "same" convolution from the output size to the input size
    would pad. PyTorch says the same with padding = pad_before and output_padding = the rest at
    the end, when that is in its range [0, max(stride, dilation)); otherwise the full transpose
    is cropped or zero-extended to the output size and the bias added after."""
    n = kernel.dim() - 2
    first = data_format == "channels_first"
    x = to_cf(x, first)
    w = keras_kernel(kernel)
    s, d, k = ntuple(strides, n), ntuple(dilation_rate, n), list(kernel.shape[:n])
    extras = [None] * n if output_padding is None else ntuple(output_padding, n)
    pad, extra, full, out = [], [], [], []
    direct = True
    for i in range(n):
        size = x.shape[2 + i]
        out.append(deconv_length(size, k[i], padding, extras[i], s[i], d[i]))
        full.append((size - 1) * s[i] + (k[i] - 1) * d[i] + 1)
        pad.append(max(0, full[i] - out[i]) // 2 if padding == "same" else 0)
        extra.append(out[i] - (full[i] - 2 * pad[i]))
        direct = direct and 0 <= extra[i] < max(s[i], d[i])
    transpose = F.conv_transpose2d if n == 2 else F.conv_transpose3d
    if direct:
        y = transpose(x, w, bias, s, pad, extra, 1, d)
    else:
        y = pad_spatial(transpose(x, w, None, s, 0, 0, 1, d), [-p for p in pad], [out[i] - full[i] + pad[i] for i in range(n)])
        if bias is not None:
            y = y + bias.reshape(1, -1, *[1] * n)
    return activate(from_cf(y, first), activation)


# ----------------------------------------------------------------------------------------------
# Pools
# ----------------------------------------------------------------------------------------------

MAX_POOL = {3: F.max_pool1d, 4: F.max_pool2d, 5: F.max_pool3d}
AVG_POOL = {3: F.avg_pool1d, 4: F.avg_pool2d, 5: F.avg_pool3d}


def pool(x: Tensor, pool_size, strides, padding: str, data_format: str, is_max: bool) -> Tensor:
    """Max and average pooling. Keras' "same" average divides by the count of non-padded elements:
    PyTorch's count_include_pad=False where the padding is symmetric; otherwise the pooled sum
    over the zero-padded input divided by the pooled count of real elements."""
    n = x.dim() - 2
    first = data_format == "channels_first"
    x = to_cf(x, first)
    k = ntuple(pool_size, n)
    s = k if strides is None else ntuple(strides, n)
    before, after = tf_padding(x.shape[2:], k, s, [1] * n, padding)
    # PyTorch's avg_pool3d (not 1d or 2d) rejects an input smaller than the window even when the
    # padding covers it: pad explicitly then.
    fits = all(x.shape[2 + i] >= k[i] for i in range(n))
    if before == after and (is_max or n < 3 or fits):
        if is_max:
            y = MAX_POOL[x.dim()](x, k, s, before)
        else:
            y = AVG_POOL[x.dim()](x, k, s, before, False, False)
    elif is_max:
        y = MAX_POOL[x.dim()](pad_spatial(x, before, after, -math.inf), k, s, 0)
    else:
        total = AVG_POOL[x.dim()](pad_spatial(x, before, after), k, s, 0, False, True)
        count = AVG_POOL[x.dim()](pad_spatial(torch.ones_like(x), before, after), k, s, 0, False, True)
        y = total / count
    return from_cf(y, first)


def max_pool(x, *, pool_size, strides, padding, data_format) -> Tensor:
    """MaxPooling1D/2D/3D."""
    return pool(x, pool_size, strides, padding, data_format, True)


def average_pool(x, *, pool_size, strides, padding, data_format) -> Tensor:
    """AveragePooling1D/2D/3D."""
    return pool(x, pool_size, strides, padding, data_format, False)


ADAPTIVE_MAX = {3: F.adaptive_max_pool1d, 4: F.adaptive_max_pool2d, 5: F.adaptive_max_pool3d}
ADAPTIVE_AVG = {3: F.adaptive_avg_pool1d, 4: F.adaptive_avg_pool2d, 5: F.adaptive_avg_pool3d}


def global_pool(x: Tensor, data_format: str, keepdims: bool, is_max: bool) -> Tensor:
    """Global pooling through PyTorch's adaptive pools to one cell."""
    first = data_format == "channels_first"
    x = to_cf(x, first)
    y = (ADAPTIVE_MAX if is_max else ADAPTIVE_AVG)[x.dim()](x, 1)
    return from_cf(y, first) if keepdims else y.reshape(x.shape[0], x.shape[1])


def global_max_pool(x, *, data_format, keepdims) -> Tensor:
    """GlobalMaxPooling1D/2D/3D."""
    return global_pool(x, data_format, keepdims, True)


def global_average_pool(x, *, data_format, keepdims) -> Tensor:
    """GlobalAveragePooling1D/2D/3D."""
    return global_pool(x, data_format, keepdims, False)


# ----------------------------------------------------------------------------------------------
# Recurrent
# ----------------------------------------------------------------------------------------------


def gru_gates(w: Tensor) -> Tensor:
    """Keras' GRU gates z, r, h along the last axis, in PyTorch's order r, z, n."""
    z, r, h = w.chunk(3, -1)
    return torch.cat([r, z, h], -1)


def recurrent(x, kernel, recurrent_kernel, bias, units, activation, recurrent_activation, return_sequences, go_backwards, gates, reset_after=False) -> Tensor:
    """LSTM (4 gates), GRU (3) and SimpleRNN (1). PyTorch's fused torch.lstm, torch.gru and
    torch.rnn_tanh/rnn_relu where Keras' activations are theirs (GRU: reset_after only); a loop of
    Keras' cell in torch ops otherwise. go_backwards reverses the input, and the output sequence
    stays in processing order, as Keras leaves it."""
    if go_backwards:
        x = x.flip(1)
    batch, steps = x.shape[0], x.shape[1]
    act, rec = activation, recurrent_activation
    h0 = torch.zeros(1, batch, units, dtype=x.dtype)

    def finish(y):
        return y if return_sequences else y[:, steps - 1]

    has_bias = bias is not None
    if gates == 4 and act == "tanh" and rec == "sigmoid":  # Keras' gates i, f, c, o are PyTorch's i, f, g, o
        params = [kernel.t(), recurrent_kernel.t()] + ([bias, torch.zeros_like(bias)] if has_bias else [])
        return finish(torch.lstm(x, (h0, h0), params, has_bias, 1, 0.0, False, False, True)[0])
    if gates == 3 and act == "tanh" and rec == "sigmoid" and reset_after:
        params = [gru_gates(kernel).t(), gru_gates(recurrent_kernel).t()] + ([gru_gates(bias[0]), gru_gates(bias[1])] if has_bias else [])
        return finish(torch.gru(x, h0, params, has_bias, 1, 0.0, False, False, True)[0])
    if gates == 1 and act in ("tanh", "relu"):
        params = [kernel.t(), recurrent_kernel.t()] + ([bias, torch.zeros_like(bias)] if has_bias else [])
        rnn = torch.rnn_tanh if act == "tanh" else torch.rnn_relu
        return finish(rnn(x, h0, params, has_bias, 1, 0.0, False, False, True)[0])

    input_bias = recurrent_bias = None
    if has_bias:
        input_bias = bias[0] if reset_after else bias
        recurrent_bias = bias[1] if reset_after else None
    xw = torch.matmul(x, kernel)
    if input_bias is not None:
        xw = xw + input_bias
    h = torch.zeros(batch, units, dtype=x.dtype)
    cell = h
    hs = []
    for t in range(steps):
        xt = xw[:, t]
        if gates == 4:
            z = (xt + torch.matmul(h, recurrent_kernel)).chunk(4, -1)
            i, f, o = activate(z[0], rec), activate(z[1], rec), activate(z[3], rec)
            cell = f * cell + i * activate(z[2], act)
            h = o * activate(cell, act)
        elif gates == 3:
            xz = xt.chunk(3, -1)
            if reset_after:
                hu = torch.matmul(h, recurrent_kernel)
                if recurrent_bias is not None:
                    hu = hu + recurrent_bias
                hz = hu.chunk(3, -1)
                z = activate(xz[0] + hz[0], rec)
                r = activate(xz[1] + hz[1], rec)
                hh = activate(xz[2] + r * hz[2], act)
            else:
                u = recurrent_kernel.chunk(3, -1)
                z = activate(xz[0] + torch.matmul(h, u[0]), rec)
                r = activate(xz[1] + torch.matmul(h, u[1]), rec)
                hh = activate(xz[2] + torch.matmul(r * h, u[2]), act)
            h = z * h + (1.0 - z) * hh
        else:
            h = activate(xt + torch.matmul(h, recurrent_kernel), act)
        if return_sequences:
            hs.append(h)
    return torch.stack(hs, 1) if return_sequences else h


def lstm(x, kernel, recurrent_kernel, bias=None, *, units, activation, recurrent_activation, return_sequences, go_backwards) -> Tensor:
    """LSTM (return_state's extra outputs are not memo's; stateful starts from zeros, as one call does)."""
    return recurrent(x, kernel, recurrent_kernel, bias, units, activation, recurrent_activation, return_sequences, go_backwards, 4)


def gru(x, kernel, recurrent_kernel, bias=None, *, units, activation, recurrent_activation, return_sequences, go_backwards, reset_after) -> Tensor:
    """GRU."""
    return recurrent(x, kernel, recurrent_kernel, bias, units, activation, recurrent_activation, return_sequences, go_backwards, 3, reset_after)


def simple_rnn(x, kernel, recurrent_kernel, bias=None, *, units, activation, return_sequences, go_backwards) -> Tensor:
    """SimpleRNN."""
    return recurrent(x, kernel, recurrent_kernel, bias, units, activation, None, return_sequences, go_backwards, 1)


def bidirectional(x, forward_kernel, forward_recurrent_kernel, forward_bias, backward_kernel, backward_recurrent_kernel, backward_bias, *,
                  units, return_sequences, merge_mode) -> Tensor:
    """Bidirectional(LSTM) with Keras' LSTM defaults: one bidirectional torch.lstm. PyTorch re-aligns
    the backward sequence with the input, as Keras does; the last outputs are the final states."""
    params = []
    for kernel, recurrent_kernel, bias in ((forward_kernel, forward_recurrent_kernel, forward_bias), (backward_kernel, backward_recurrent_kernel, backward_bias)):
        params += [kernel.t(), recurrent_kernel.t(), bias, torch.zeros_like(bias)]
    h0 = torch.zeros(2, x.shape[0], units, dtype=x.dtype)
    y, hn, _ = torch.lstm(x, (h0, h0), params, True, 1, 0.0, False, True, True)
    if return_sequences:
        f, b = y[..., :units], y[..., units:]
    else:
        f, b = hn[0], hn[1]
    if merge_mode == "concat":
        return torch.cat([f, b], -1)
    if merge_mode == "sum":
        return f + b
    if merge_mode == "mul":
        return f * b
    if merge_mode == "ave":
        return (f + b) / 2.0
    return f  # merge_mode=None: the node's one output is the forward direction


def time_distributed(x) -> Tensor:
    """TimeDistributed(ReLU): ReLU on every time step."""
    return torch.relu(x)


def conv_lstm(x, kernel, recurrent_kernel, bias=None, *, strides, padding, data_format, dilation_rate, activation, recurrent_activation,
              return_sequences, go_backwards) -> Tensor:
    """ConvLSTM1D/2D/3D: Keras' cell over time with PyTorch convolutions; the input convolution has
    the layer's strides, padding and dilation, the recurrent one "same" with stride 1 and no
    dilation."""
    n = kernel.dim() - 2
    first = data_format == "channels_first"
    if go_backwards:
        x = x.flip(1)
    s, d, one = ntuple(strides, n), ntuple(dilation_rate, n), [1] * n
    W, U = keras_kernel(kernel), keras_kernel(recurrent_kernel)
    softmax_dim = -1 if first else 1  # Keras' last axis, seen channels-first
    h = cell = None
    hs = []
    for t in range(x.shape[1]):
        z = keras_conv(to_cf(x[:, t], first), W, bias, s, d, padding)
        if h is None:
            h = cell = torch.zeros_like(z[:, : z.shape[1] // 4])
        g = (z + keras_conv(h, U, None, one, one, "same")).chunk(4, 1)
        i, f, o = (activate(g[k], recurrent_activation, softmax_dim) for k in (0, 1, 3))
        cell = f * cell + i * activate(g[2], activation, softmax_dim)
        h = o * activate(cell, activation, softmax_dim)
        if return_sequences:
            hs.append(from_cf(h, first))
    return torch.stack(hs, 1) if return_sequences else from_cf(h, first)


# ----------------------------------------------------------------------------------------------
# Normalisation and activations
# ----------------------------------------------------------------------------------------------


def batch_norm(x, moving_mean, moving_variance, gamma=None, beta=None, *, axis, epsilon) -> Tensor:
    """BatchNormalization at inference: the moving statistics."""
    a = normal_axis(axis, x.dim())
    y = F.batch_norm(x.movedim(a, 1), moving_mean, moving_variance, gamma, beta, False, 0.0, epsilon)
    return y.movedim(1, a)


def layer_norm(x, gamma=None, beta=None, *, axis, epsilon) -> Tensor:
    """LayerNormalization over one axis."""
    a = normal_axis(axis, x.dim())
    x = x.movedim(a, -1)
    return F.layer_norm(x, (x.shape[-1],), gamma, beta, epsilon).movedim(-1, a)


def relu(x, *, max_value, negative_slope, threshold) -> Tensor:
    """Keras 3's ReLU(max_value, negative_slope, threshold): where(x > threshold, x, 0) (NaN and
    -inf give 0; F.threshold would keep a NaN), clipped to [0, max_value], minus
    negative_slope * relu(threshold - x)."""
    if max_value is None and threshold == 0.0:
        return torch.relu(x) if negative_slope == 0.0 else F.leaky_relu(x, negative_slope)
    y = torch.relu(x) if threshold == 0.0 else torch.where(x > threshold, x, torch.zeros((), dtype=x.dtype))
    if max_value is not None:
        y = torch.clamp(y, 0.0, max_value)
    if negative_slope != 0.0:
        y = y - negative_slope * torch.relu(threshold - x)
    return y


def softmax(x, *, axis) -> Tensor:
    """Softmax over one axis."""
    return torch.softmax(x, normal_axis(axis, x.dim()))


def leaky_relu(x, *, alpha) -> Tensor:
    """LeakyReLU."""
    return F.leaky_relu(x, alpha)


def prelu(x, alpha) -> Tensor:
    """PReLU: relu(x) - alpha * relu(-x), alpha over the sample axes (shared axes of size 1).
    PyTorch's prelu takes only one alpha per channel, so this is the formula."""
    return torch.relu(x) - alpha.unsqueeze(0) * torch.relu(-x)


def elu(x, *, alpha) -> Tensor:
    """ELU."""
    return F.elu(x, alpha)


def thresholded_relu(x, *, theta) -> Tensor:
    """Keras: x * cast(x > theta), so -inf gives NaN (-inf * 0), where F.threshold gives 0."""
    return x * (x > theta).to(x.dtype)


def activation(x, *, activation) -> Tensor:
    """Activation."""
    return activate(x, activation)


# ----------------------------------------------------------------------------------------------
# Core, reshaping and merges
# ----------------------------------------------------------------------------------------------


def dense(x, kernel, bias=None, *, activation) -> Tensor:
    """Dense over the last axis."""
    return activate(F.linear(x, kernel.t(), bias), activation)


def flatten(x, *, data_format) -> Tensor:
    """Keras' Flatten: a channels_first input is moved to channels_last before flattening."""
    y = from_cf(x, False) if data_format == "channels_first" and x.dim() > 2 else x
    return y.reshape(x.shape[0], -1)


def repeat_vector(x, *, n) -> Tensor:
    """RepeatVector: (B, F) -> (B, n, F)."""
    return x.unsqueeze(1).repeat(1, n, 1)


def permute(x, *, dims) -> Tensor:
    """Permute of the sample axes (Keras counts them from 1)."""
    return x.permute(0, *dims)


def border(x: Tensor, amounts, data_format: str, sign: int) -> Tensor:
    """Cropping (-1) and ZeroPadding (+1): (before, after) per spatial axis, through F.pad
    (negative amounts crop)."""
    n = x.dim() - 2
    first = n > 1 and data_format == "channels_first"
    a = ntuple(amounts, 2 * n)
    before = [sign * a[2 * i] for i in range(n)]
    after = [sign * a[2 * i + 1] for i in range(n)]
    return from_cf(pad_spatial(to_cf(x, first), before, after), first)


def cropping(x, *, cropping, data_format="channels_last") -> Tensor:
    """Cropping1D/2D/3D (Cropping1D has no data_format)."""
    return border(x, cropping, data_format, -1)


def zero_padding(x, *, padding, data_format="channels_last") -> Tensor:
    """ZeroPadding1D/2D/3D (ZeroPadding1D has no data_format)."""
    return border(x, padding, data_format, +1)


def upsampling(x, *, size, data_format="channels_last", interpolation="nearest") -> Tensor:
    """UpSampling1D/2D/3D: PyTorch's half-pixel nearest ("nearest-exact", which for an integer
    factor repeats each element, as Keras does; the legacy "nearest" picks the wrong source for
    some factors) and UpSampling2D's bilinear, TF's half-pixel centres."""
    n = x.dim() - 2
    first = n > 1 and data_format == "channels_first"
    x = to_cf(x, first)
    out = [x.shape[2 + i] * s for i, s in enumerate(ntuple(size, n))]
    if interpolation == "bilinear":
        y = F.interpolate(x, size=out, mode="bilinear", align_corners=False)
    else:
        y = F.interpolate(x, size=out, mode="nearest-exact")
    return from_cf(y, first)


def local(x, kernel, bias=None, *, kernel_size, strides, data_format, activation) -> Tensor:
    """LocallyConnected1D/2D: patches by unfold, in Keras' flatten order ((k..., C) channels_last,
    (C, k...) channels_first), times each position's kernel by bmm. Keras adds the bias
    (out..., F) with backend.bias_add, which for channels_first reshapes it (no transpose) to
    (F, out...)."""
    n = x.dim() - 2
    first = data_format == "channels_first"
    k, s = ntuple(kernel_size, n), ntuple(strides, n)
    filters = kernel.shape[-1]
    axis0 = 2 if first else 1
    p = x
    for i in range(n):
        p = p.unfold(axis0 + i, k[i], s[i])  # (B, [C,] out..., [C,] k...)
    out = [p.shape[axis0 + i] for i in range(n)]
    channel = 1 if first else n + 1
    perm = [0] + [axis0 + i for i in range(n)] + ([channel] if first else []) + [n + 2 + i for i in range(n)] + ([] if first else [channel])
    batch = x.shape[0]
    p = p.permute(perm).reshape(batch, math.prod(out), -1)
    y = torch.bmm(p.transpose(0, 1), kernel).transpose(0, 1)  # (B, P, F)
    y = y.reshape(batch, *out, filters)
    if first:
        y = to_cf(y, False)
    if bias is not None:
        y = y + (bias.reshape(1, filters, *out) if first else bias.reshape(1, *out, filters))
    return activate(y, activation)


def reshape(x, *, target_shape) -> Tensor:
    """Reshape of the sample axes."""
    return x.reshape(x.shape[0], *flat(target_shape))


def concatenate(*xs, axis) -> Tensor:
    """Concatenate along one axis."""
    return torch.cat(xs, normal_axis(axis, xs[0].dim()))


# Keras' merges fold their inputs left to right.
def add(*xs) -> Tensor:
    """Add."""
    return functools.reduce(lambda a, b: a + b, xs)


def subtract(a, b) -> Tensor:
    """Subtract."""
    return a - b


def multiply(*xs) -> Tensor:
    """Multiply."""
    return functools.reduce(lambda a, b: a * b, xs)


def average(*xs) -> Tensor:
    """Average: the left-to-right sum over the count."""
    return functools.reduce(lambda a, b: a + b, xs) / float(len(xs))


def maximum(*xs) -> Tensor:
    """Maximum."""
    return functools.reduce(torch.maximum, xs)


def minimum(*xs) -> Tensor:
    """Minimum."""
    return functools.reduce(torch.minimum, xs)


def dot(a, b, *, axes, normalize) -> Tensor:
    """Keras' Dot over the last axes of two rank-2 or rank-3 tensors, with optional L2
    normalisation (tf.math.l2_normalize: x * rsqrt(max(sum(x^2), 1e-12)))."""
    if normalize:
        a = a * torch.rsqrt(torch.clamp_min((a * a).sum(-1, keepdim=True), 1e-12))
        b = b * torch.rsqrt(torch.clamp_min((b * b).sum(-1, keepdim=True), 1e-12))
    if a.dim() == 2:
        return torch.bmm(a.unsqueeze(1), b.unsqueeze(2)).reshape(a.shape[0], 1)
    return torch.bmm(a, b.transpose(1, 2))


# ----------------------------------------------------------------------------------------------
# memo's own layers: element-wise functions and the adapters its mutations insert
# ----------------------------------------------------------------------------------------------


def identity(x) -> Tensor:
    """The regularisation layers (Dropout, GaussianNoise, ...): the identity at inference."""
    return x


def abs_(x) -> Tensor:
    """Abs."""
    return torch.abs(x)


def square(x) -> Tensor:
    """Square: x * x."""
    return torch.mul(x, x)


def stop_gradient(x) -> Tensor:
    """StopGradient: a copy of its own."""
    return x.detach().clone()


def scale_shift(x, *, scale, shift) -> Tensor:
    """ScaleShift: the product is rounded to the dtype before the shift is added."""
    return torch.add(torch.mul(x, scale), shift)


def custom_scale(a, b, *, scale) -> Tensor:
    """CustomScaleLayer: a + b * scale."""
    return torch.add(a, b, alpha=scale)


def custom_cast(x) -> Tensor:
    """CustomCastLayer: the input arrives in the node's dtype, the target dtype."""
    return x


def custom_expand(x, *, axis) -> Tensor:
    """CustomExpandLayer: a new axis of size 1."""
    return x.unsqueeze(axis)


def custom_drop_dim(x, *, axis) -> Tensor:
    """CustomDropDimLayer: index 0 along the axis, which goes."""
    return x.select(axis, 0)


def custom_pad(x, *, padding, constant_values) -> Tensor:
    """CustomPadLayer: (before, after) for each non-batch axis, filled with constant_values."""
    a = flat(padding)
    pads = []
    for d in range(x.dim() - 1, 0, -1):
        pads += [a[2 * (d - 1)], a[2 * (d - 1) + 1]]
    return F.pad(x, pads, value=float(constant_values or 0.0))


def custom_crop(x, *, cropping) -> Tensor:
    """CustomCropLayer: (before, after) off each non-batch axis."""
    a = flat(cropping)
    pads = []
    for d in range(x.dim() - 1, 0, -1):
        pads += [-a[2 * (d - 1)], -a[2 * (d - 1) + 1]]
    return F.pad(x, pads)


def custom_inject(x, *, value, stride) -> Tensor:
    """CustomInjectLayer: NaN, inf or -inf at every stride-th element (row-major), from the first."""
    fill = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[value]
    y = x.clone(memory_format=torch.contiguous_format)
    y.view(-1)[:: max(1, int(stride))] = fill
    return y


# ----------------------------------------------------------------------------------------------
# The lowering of each class, and how a layer's config reaches its function
# ----------------------------------------------------------------------------------------------

LAYERS = {
    "Dense": dense,
    "Activation": activation,
    "CustomScaleLayer": custom_scale,
    "Reshape": reshape,
    "CustomExpandLayer": custom_expand,
    "CustomDropDimLayer": custom_drop_dim,
    "CustomPadLayer": custom_pad,
    "CustomCropLayer": custom_crop,
    "CustomCastLayer": custom_cast,
    "CustomInjectLayer": custom_inject,
    "Abs": abs_,
    "Square": square,
    "StopGradient": stop_gradient,
    "ScaleShift": scale_shift,
    **{name: identity for name in ("Dropout", "GaussianDropout", "GaussianNoise", "ActivityRegularization", "AlphaDropout", "SpatialDropout1D",
                                   "SpatialDropout2D", "SpatialDropout3D")},
    "Conv1D": conv,
    "Conv2D": conv,
    "Conv3D": conv,
    "SeparableConv1D": separable_conv,
    "SeparableConv2D": separable_conv,
    "DepthwiseConv1D": depthwise_conv,
    "DepthwiseConv2D": depthwise_conv,
    "Conv2DTranspose": conv_transpose,
    "Conv3DTranspose": conv_transpose,
    "MaxPooling1D": max_pool,
    "MaxPooling2D": max_pool,
    "MaxPooling3D": max_pool,
    "AveragePooling1D": average_pool,
    "AveragePooling2D": average_pool,
    "AveragePooling3D": average_pool,
    "GlobalMaxPooling1D": global_max_pool,
    "GlobalMaxPooling2D": global_max_pool,
    "GlobalMaxPooling3D": global_max_pool,
    "GlobalAveragePooling1D": global_average_pool,
    "GlobalAveragePooling2D": global_average_pool,
    "GlobalAveragePooling3D": global_average_pool,
    "LSTM": lstm,
    "GRU": gru,
    "SimpleRNN": simple_rnn,
    "Bidirectional": bidirectional,
    "TimeDistributed": time_distributed,
    "ConvLSTM1D": conv_lstm,
    "ConvLSTM2D": conv_lstm,
    "ConvLSTM3D": conv_lstm,
    "BatchNormalization": batch_norm,
    "LayerNormalization": layer_norm,
    "ReLU": relu,
    "Softmax": softmax,
    "LeakyReLU": leaky_relu,
    "PReLU": prelu,
    "ELU": elu,
    "ThresholdedReLU": thresholded_relu,
    "Flatten": flatten,
    "RepeatVector": repeat_vector,
    "Permute": permute,
    "Cropping1D": cropping,
    "Cropping2D": cropping,
    "Cropping3D": cropping,
    "ZeroPadding1D": zero_padding,
    "ZeroPadding2D": zero_padding,
    "ZeroPadding3D": zero_padding,
    "UpSampling1D": upsampling,
    "UpSampling2D": upsampling,
    "UpSampling3D": upsampling,
    "Concatenate": concatenate,
    "Add": add,
    "Subtract": subtract,
    "Multiply": multiply,
    "Average": average,
    "Maximum": maximum,
    "Minimum": minimum,
    "Dot": dot,
    "LocallyConnected1D": local,
    "LocallyConnected2D": local,
}


@functools.cache
def keywords(f) -> tuple[str, ...]:
    """The parameters a layer function takes from the layer's config."""
    return tuple(p.name for p in inspect.signature(f).parameters.values() if p.kind == p.KEYWORD_ONLY)


def parameters(class_name: str, config: dict) -> dict:
    """The config values the class's function takes, by name. A wrapper's (Bidirectional's) own
    config and its wrapped layer's are one: memo writes the wrapper's parameters to the one and
    the wrapped layer's to the other."""
    f = LAYERS.get(class_name)
    if f is None:
        raise Declined("memo's PyTorch lowering has no layer %s" % class_name)
    inner = config.get("layer", {}).get("config", {}) if isinstance(config.get("layer"), dict) else {}
    both = {**inner, **config}
    return {k: both[k] for k in keywords(f) if k in both}


def apply(class_name: str, inputs: list[Tensor], weights: dict[str, Tensor], params: dict) -> Tensor:
    """One layer of class `class_name` on its inputs, with its weights (by Keras name) and the
    parameters parameters() picked from its config."""
    return LAYERS[class_name](*inputs, **weights, **params)
