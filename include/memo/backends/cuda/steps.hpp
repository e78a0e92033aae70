#pragma once
// What the CUDA backend runs: a model lowered to a list of steps over numbered slots. A slot is a
// tensor: a node's output, an intermediate (a layout change, a padded input) or a constant (a
// weight, already in the layout its step wants). Steps name slots, never pointers, so a plan is
// made once on the host (plan.hpp) and run by either engine: the device's (device.cuh: cuDNN,
// cuBLAS and the kernels of kernels.hpp) or the host's (host.hpp: the same kernels in a loop,
// with stand-ins for cuDNN's and cuBLAS's operations).
//
// This header and kernels.hpp use the standard library alone: the translation unit nvcc compiles
// includes them and nothing else of memo.
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "kernels.hpp"

namespace memo::cuda {

using kernels::index_t;

/// y[i] = x[map.source(i)], or fill outside x.
struct gather_step {
    int x, y;
    kernels::gather_map map;
    double fill = 0;
};
/// x placed into y at `offset` along `axis` (one input of a Concatenate).
struct place_step {
    int x, y;
    kernels::shape in, out;
    int axis;
    index_t offset;
};
/// y = x, element for element (a reshape, an identity layer).
struct copy_step {
    int x, y;
};
/// y = f(x + bias), the bias along an axis (none: bias = -1).
struct unary_step {
    int x, y;
    kernels::unary_fn f;
    double p0 = 0, p1 = 0, p2 = 0;
    int bias = -1;
    index_t bias_len = 1, bias_inner = 1;
};
/// y = f(a, b).
struct binary_step {
    int a, b, y;
    kernels::binary_fn f;
    double p = 0;
};
/// Every stride-th element of y set to value.
struct inject_step {
    int y;
    index_t stride;
    double value;
};
/// Max or average pooling of a channels-first tensor of `planes` (B * C) planes.
struct pool_step {
    int x, y;
    kernels::window w;
    index_t planes;
    bool max;
};
/// Each plane of a channels-first tensor reduced to one value (global pooling).
struct reduce_step {
    int x, y;
    index_t planes, plane;
    bool max;
};
/// A convolution of a channels-first tensor (B, C, s...) with a kernel (M, C / groups, k...),
/// symmetric zero padding: cuDNN's on the device.
struct conv_step {
    int x, kernel, y;
    kernels::window w;
    index_t batch, channels, filters, groups;
};
/// The full transposed convolution of a channels-first tensor (B, C, s...) with a kernel
/// (C, M, k...): w.in is the input's spatial dims, w.out the full output's (no padding, no
/// cropping: a gather after it cuts Keras' output out of it). cuDNN's backward-data convolution.
struct conv_transpose_step {
    int x, kernel, y;
    kernels::window w;
    index_t batch, channels, filters;
};
/// The recurrent cells cuDNN has.
enum class rnn_cell : unsigned char { lstm, gru, rnn_tanh, rnn_relu };
inline constexpr int rnn_gates(rnn_cell c) { return c == rnn_cell::lstm ? 4 : c == rnn_cell::gru ? 3 : 1; }
/// One recurrent layer over a batch-major sequence (B, T, F), initial states zero. `weights`: per
/// linear layer in cuDNN's order (the gates' input matrices, then their recurrent ones) a
/// (units, F) or (units, units) row-major matrix; `biases`: per linear layer `units` values.
/// cuDNN's gates: LSTM i, f, g, o; GRU r, z, h (its h with the reset gate after the recurrent
/// product, Keras' reset_after). y: the sequence (B, T, units), or the last step's (B, units).
/// Bidirectional: the backward direction's weights and biases follow the forward's, it reads the
/// sequence from its end, and y is always the sequence (B, T, 2 units), each step's forward state
/// then the backward one's at that input step (cuDNN's layout).
struct rnn_step {
    int x, weights, biases, y;
    rnn_cell cell;
    index_t batch, steps, features, units;
    bool sequences;
    bool bidirectional = false;
};
/// Softmax along an axis (`count` rows): cuDNN's on the device.
struct softmax_step {
    int x, y;
    kernels::rows r;
    index_t count;
};
/// Inference batch normalisation along an axis (each statistic -1 when absent).
struct batch_norm_step {
    int x, y, gamma, beta, mean, var;
    index_t len, inner;
    double eps;
};
/// Layer normalisation along an axis (`count` rows).
struct layer_norm_step {
    int x, y, gamma, beta;
    kernels::rows r;
    index_t count;
    double eps;
};
/// PReLU with its alpha slot.
struct prelu_step {
    int x, alpha, y;
    kernels::gather_map at;
};
/// y (M, N) = a (M, K) times b (K, N), row-major, `batch` times over consecutive matrices; with
/// `b_transposed`, b is (N, K) and y = a b^T (Keras' Dot). cuBLAS on the device.
struct matmul_step {
    int a, b, y;
    index_t m, k, n;
    index_t batch = 1;
    bool b_transposed = false;
};
/// Each row of `len` consecutive values divided by its L2 norm (at least 1e-6): Keras' Dot's
/// normalize.
struct l2_normalize_step {
    int x, y;
    index_t len, count;
};
/// LocallyConnected1D/2D on a channels-last tensor: a valid convolution with a kernel of its own
/// per output position (kernels::locally_connected).
struct local_step {
    int x, kernel, y;
    kernels::window w;
    index_t batch, channels, filters;
    bool channel_major;  // the kernel's feature axis: channel-major (channels_first) or tap-major
};
/// One step of a ConvLSTM's cell (kernels::conv_lstm_cell): from the gate sums zx and zh (zh and
/// c -1 at the first step) and the bias, the next state h and cell c, channels-first (B, F, P).
struct conv_lstm_step {
    int zx, zh, bias, c, h_out, c_out;
    index_t batch, filters, positions;
    kernels::unary_fn act, ract;
    double act_p = 0, ract_p = 0;
};
/// Bilinear resizing of two adjacent axes (TF2's tf.image.resize, half-pixel centres).
struct bilinear_step {
    int x, y;
    kernels::shape in, out;
    int axis;  // the first of the two
};

using step =
    std::variant<gather_step, place_step, copy_step, unary_step, binary_step, inject_step, pool_step, reduce_step, conv_step, conv_transpose_step, rnn_step,
                 softmax_step, batch_norm_step, layer_norm_step, prelu_step, matmul_step, l2_normalize_step, local_step, bilinear_step, conv_lstm_step>;

/// The element types a plan runs in (float for the arithmetic of the 16-bit ones).
enum class element : unsigned char { float16, bfloat16, float32, float64 };

/// A tensor of the plan: its element count, and its values when it is a constant.
struct slot {
    index_t count = 0;
    std::vector<double> constant;  // a weight's values (count of them); empty for computed slots
    bool is_constant = false;
};

/// A model as steps. `input_slots[k]` receives the k-th tensor handed to the run (the model's
/// inputs, or in a forced run every node's forced tensor); node i's output is `node_slots[i]`.
struct plan {
    std::vector<slot> slots;
    std::vector<step> steps;
    std::vector<std::size_t> node_end;  // steps [node_end[i - 1], node_end[i]) compute node i
    std::vector<int> input_slots;
    std::vector<int> node_slots;
    std::vector<std::string> node_names;  // "node 3 (Conv2D)", for messages
    element type = element::float32;      // what every slot holds and the kernels compute in
    bool tf32 = false;                    // TF32 tensor-core maths allowed in cuDNN and cuBLAS
};

/// What running a plan gives: the values of the slots asked for, or why there are none.
struct outcome {
    enum class kind : unsigned char {
        ok,
        error,        // an operation failed (a CUDA, cuDNN or cuBLAS status): the device is still usable
        memory,       // the device is out of memory
        fatal,        // a sticky CUDA error (an illegal address, a kernel fault): the process must end
        unsupported,  // the library says it has no implementation of the case (cuDNN's NOT_SUPPORTED)
    };
    kind status = kind::ok;
    std::string message;
    int node = -1;  // the node that failed, when known
    std::vector<std::vector<double>> values;
};

/// How the device runs a plan.
struct device_options {
    int plant_illegal_address_at = -1;  // a node after which a kernel writes out of bounds (tests)
};

/// Runs a plan on the GPU: inputs[k] fills plan.input_slots[k]; the result holds the values of
/// `wanted` slots. Defined in device.cuh, which one CUDA translation unit of the program includes.
outcome run_on_device(const plan& p, std::span<const std::vector<double>* const> inputs, std::span<const int> wanted, const device_options& o);

}  // namespace memo::cuda
