#pragma once
// The CUDA backend's device side: runs a plan (steps.hpp) on the GPU with cuDNN (convolutions,
// softmax, pooling without padding, recurrent cells, activations, batch normalisation), cuBLAS
// (matrix products) and the kernels of kernels.hpp, launched over a grid. Include it in exactly
// one CUDA translation unit of a program (it defines memo::cuda::run_on_device) and link
// CUDA::cudart, CUDA::cublas and cuDNN (memo::cuda does).
//
// Every node's steps are followed by a synchronisation, so an error is the node's: a CUDA error is
// a verdict with CUDA's text; a sticky one (an illegal address, a kernel fault) is `fatal`, and the
// backend ends its worker (backend.hpp).
#define MEMO_CUDA_DEVICE_CODE 1

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "../progress.hpp"
#include "execute.hpp"

namespace memo::cuda {

namespace device_detail {

/// What a failed CUDA, cuDNN or cuBLAS call throws inside run_on_device.
struct failure {
    outcome::kind kind;
    std::string message;
};

/// Errors after which the CUDA context is unusable (CUDA's "sticky" errors).
inline bool sticky(cudaError_t e) {
    switch (e) {
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchFailure:
        case cudaErrorAssert:
        case cudaErrorHardwareStackError:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorInvalidAddressSpace:
        case cudaErrorInvalidPc:
        case cudaErrorLaunchTimeout:
        case cudaErrorECCUncorrectable: return true;
        default: return false;
    }
}

inline void check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return;
    const auto kind = sticky(e) ? outcome::kind::fatal : e == cudaErrorMemoryAllocation ? outcome::kind::memory : outcome::kind::error;
    if (!sticky(e)) (void)cudaGetLastError();  // clear it: the next call must not see it again
    throw failure{kind, std::string(what) + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")"};
}
inline void check(cudnnStatus_t s, const char* what) {
    if (s == CUDNN_STATUS_SUCCESS) return;
    if (const cudaError_t e = cudaGetLastError(); sticky(e)) check(e, what);  // a kernel fault behind cuDNN's status
    // cuDNN 9 groups its statuses by thousands: 3xxx says it has no engine for the case (a
    // limitation it states, not a failure), 1xxx that memory ran out.
    const int code = static_cast<int>(s);
    const auto kind = code / 1000 == 3 ? outcome::kind::unsupported : s == CUDNN_STATUS_ALLOC_FAILED ? outcome::kind::memory : outcome::kind::error;
    throw failure{kind, std::string(what) + ": " + cudnnGetErrorString(s)};
}
inline void check(cublasStatus_t s, const char* what) {
    if (s == CUBLAS_STATUS_SUCCESS) return;
    if (const cudaError_t e = cudaGetLastError(); sticky(e)) check(e, what);
    throw failure{s == CUBLAS_STATUS_ALLOC_FAILED ? outcome::kind::memory : outcome::kind::error, std::string(what) + ": " + cublasGetStatusString(s)};
}

/// Device memory that only grows.
struct pool_memory {
    void* p = nullptr;
    std::size_t bytes = 0;
    void* get(std::size_t want) {
        if (want <= bytes) return p;
        if (p) check(cudaFree(p), "cudaFree");
        p = nullptr;
        bytes = 0;
        check(cudaMalloc(&p, want), "cudaMalloc");
        bytes = want;
        return p;
    }
};

/// The process's stream, handles and memory, made at its first run: in a worker, after the fork.
struct context {
    cudaStream_t stream{};
    cudnnHandle_t dnn{};
    cublasHandle_t blas{};
    pool_memory slots, workspace, rnn_weights, scratch, dropout_states, lengths;

    context() {
        check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
        check(cudnnCreate(&dnn), "cudnnCreate");
        check(cudnnSetStream(dnn, stream), "cudnnSetStream");
        check(cublasCreate(&blas), "cublasCreate");
        check(cublasSetStream(blas, stream), "cublasSetStream");
        check(cublasSetMathMode(blas, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
    }
    static context& get() {
        static context c;
        return c;
    }
};

template <class F>
__global__ void each_kernel(index_t n, F f) {
    for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += static_cast<index_t>(blockDim.x) * gridDim.x) f(i);
}

/// Writes far outside anything allocated: the planted fault of the worker's tests.
__global__ void illegal_write(float* p) { p[threadIdx.x] = 1.0f; }

/// RAII for cuDNN's descriptors.
template <class D, cudnnStatus_t (*Make)(D*), cudnnStatus_t (*Free)(D)>
struct descriptor {
    D d{};
    descriptor() { check(Make(&d), "cudnnCreate descriptor"); }
    ~descriptor() { Free(d); }
    descriptor(const descriptor&) = delete;
    descriptor& operator=(const descriptor&) = delete;
    operator D() const { return d; }
};
using tensor_desc = descriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using filter_desc = descriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using conv_desc = descriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;
using pool_desc = descriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;
using rnn_desc = descriptor<cudnnRNNDescriptor_t, cudnnCreateRNNDescriptor, cudnnDestroyRNNDescriptor>;
using rnn_data_desc = descriptor<cudnnRNNDataDescriptor_t, cudnnCreateRNNDataDescriptor, cudnnDestroyRNNDataDescriptor>;
using dropout_desc = descriptor<cudnnDropoutDescriptor_t, cudnnCreateDropoutDescriptor, cudnnDestroyDropoutDescriptor>;

/// A packed NCHW-style descriptor of `dims`.
inline void set_packed(cudnnTensorDescriptor_t d, cudnnDataType_t t, const std::vector<int>& dims) {
    std::vector<int> strides(dims.size(), 1);
    for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
        strides[static_cast<std::size_t>(i)] = strides[static_cast<std::size_t>(i) + 1] * dims[static_cast<std::size_t>(i) + 1];
    check(cudnnSetTensorNdDescriptor(d, t, static_cast<int>(dims.size()), dims.data(), strides.data()), "cudnnSetTensorNdDescriptor");
}

/// The (B, C, s...) dims cuDNN is given for a window of n spatial axes: at least two (a 1-D
/// window is a 2-D one of height 1).
inline std::vector<int> nchw(index_t b, index_t c, const kernels::window& w, bool out) {
    std::vector<int> d{static_cast<int>(b), static_cast<int>(c)};
    if (w.n == 1) d.push_back(1);
    for (int i = 0; i < w.n; ++i) d.push_back(static_cast<int>(out ? w.out[i] : w.in[i]));
    return d;
}
inline std::vector<int> spatial(const kernels::window& w, const index_t* v, int fill) {
    std::vector<int> d;
    if (w.n == 1) d.push_back(fill);
    for (int i = 0; i < w.n; ++i) d.push_back(static_cast<int>(v[i]));
    return d;
}

/// T's names in cuDNN and cuBLAS. A is the arithmetic's type (float for the 16-bit types, whose
/// convolutions, products and cells accumulate in float): cuDNN's and cuBLAS's scaling factors
/// and compute types are A's.
template <class T>
struct types {
    static constexpr cudnnDataType_t dnn = std::is_same_v<T, double>          ? CUDNN_DATA_DOUBLE
                                           : std::is_same_v<T, __half>        ? CUDNN_DATA_HALF
                                           : std::is_same_v<T, __nv_bfloat16> ? CUDNN_DATA_BFLOAT16
                                                                              : CUDNN_DATA_FLOAT;
    static constexpr cudaDataType_t blas = std::is_same_v<T, double>          ? CUDA_R_64F
                                           : std::is_same_v<T, __half>        ? CUDA_R_16F
                                           : std::is_same_v<T, __nv_bfloat16> ? CUDA_R_16BF
                                                                              : CUDA_R_32F;
    static constexpr bool half = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
    static constexpr cudnnDataType_t compute = std::is_same_v<T, double> ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
};

template <class T, class A>
struct device_engine {
    static constexpr cudnnDataType_t data_type = types<T>::dnn;
    /// Plain FMA arithmetic for float and double (no TF32 unless asked); the 16-bit types on
    /// tensor cores, which accumulate in float. TF32 is tensor-op maths on float32 data; never
    /// CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, which may convert float32 to float16 (its range:
    /// a float32 LSTM fed 1e6 then ends in NaN).
    cudnnMathType_t math() const { return types<T>::half || p.tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH; }

    context& cx;
    const plan& p;
    const device_options& o;
    int node = 0;  // the node whose steps run

    template <class F>
    void each(index_t n, const F& f) {
        if (n <= 0) return;
        const int threads = 256;
        const index_t blocks = std::min<index_t>((n + threads - 1) / threads, 1 << 16);
        each_kernel<<<static_cast<unsigned>(blocks), threads, 0, cx.stream>>>(n, f);
        check(cudaGetLastError(), "kernel launch");
    }
    void copy(T* y, const T* x, index_t n) {
        if (n > 0) check(cudaMemcpyAsync(y, x, static_cast<std::size_t>(n) * sizeof(T), cudaMemcpyDeviceToDevice, cx.stream), "cudaMemcpyAsync");
    }

    /// The descriptors of a forward convolution from `from` to `to` (B, C, s...) with a filter
    /// (M, C / groups, k...), the window's strides and dilations and `pad` on every axis; cuDNN's
    /// own output dims are held against `to`.
    struct conv_descriptors {
        tensor_desc from, to;
        filter_desc filter;
        conv_desc conv;
        conv_descriptors(const device_engine& e, const std::vector<int>& from_dims, const std::vector<int>& to_dims, index_t m, index_t c, index_t groups,
                         const kernels::window& w, const index_t* pad) {
            set_packed(from, data_type, from_dims);
            set_packed(to, data_type, to_dims);
            std::vector<int> kd{static_cast<int>(m), static_cast<int>(c / groups)};
            for (int v : spatial(w, w.k, 1)) kd.push_back(v);
            check(cudnnSetFilterNdDescriptor(filter, data_type, CUDNN_TENSOR_NCHW, static_cast<int>(kd.size()), kd.data()), "cudnnSetFilterNdDescriptor");
            const auto pads = spatial(w, pad, 0), stride = spatial(w, w.stride, 1), dilation = spatial(w, w.dilation, 1);
            check(cudnnSetConvolutionNdDescriptor(conv, static_cast<int>(pads.size()), pads.data(), stride.data(), dilation.data(), CUDNN_CROSS_CORRELATION,
                                                  types<T>::compute),
                  "cudnnSetConvolutionNdDescriptor");
            check(cudnnSetConvolutionGroupCount(conv, static_cast<int>(groups)), "cudnnSetConvolutionGroupCount");
            check(cudnnSetConvolutionMathType(conv, e.math()), "cudnnSetConvolutionMathType");
            std::vector<int> got(kd.size());
            check(cudnnGetConvolutionNdForwardOutputDim(conv, from, filter, static_cast<int>(got.size()), got.data()), "cudnnGetConvolutionNdForwardOutputDim");
            if (got != to_dims) throw failure{outcome::kind::error, "cuDNN computes other convolution dims than the model's"};
        }
    };

    /// The first algorithm cuDNN's heuristics rank that works, else `fallback`.
    template <class Perf, class Algo>
    static Algo first_working(const Perf* perf, int found, Algo fallback) {
        for (int i = 0; i < found; ++i)
            if (perf[i].status == CUDNN_STATUS_SUCCESS) return perf[i].algo;
        return fallback;
    }

    void conv(const conv_step& s, const T* x, const T* k, T* y) {
        if (s.batch * s.filters * s.w.out_count() == 0) return;
        const conv_descriptors d(*this, nchw(s.batch, s.channels, s.w, false), nchw(s.batch, s.filters, s.w, true), s.filters, s.channels, s.groups, s.w,
                                 s.w.pad);
        cudnnConvolutionFwdAlgoPerf_t perf[8];
        int found = 0;
        check(cudnnGetConvolutionForwardAlgorithm_v7(cx.dnn, d.from, d.filter, d.conv, d.to, 8, &found, perf), "cudnnGetConvolutionForwardAlgorithm_v7");
        const auto algo = first_working(perf, found, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
        std::size_t bytes = 0;
        check(cudnnGetConvolutionForwardWorkspaceSize(cx.dnn, d.from, d.filter, d.conv, d.to, algo, &bytes), "cudnnGetConvolutionForwardWorkspaceSize");
        void* ws = bytes ? cx.workspace.get(bytes) : nullptr;
        const A one = 1, zero = 0;
        check(cudnnConvolutionForward(cx.dnn, &one, d.from, x, d.filter, k, d.conv, algo, ws, bytes, &zero, d.to, y), "cudnnConvolutionForward");
    }

    /// The full transposed convolution: the backward-data pass of the forward convolution from
    /// y's shape to x's (filter (C_in, C_out, k...), no padding).
    void conv_transpose(const conv_transpose_step& s, const T* x, const T* k, T* y) {
        if (s.batch * s.filters * s.w.out_count() == 0) return;
        const index_t none[3] = {0, 0, 0};
        const conv_descriptors d(*this, nchw(s.batch, s.filters, s.w, true), nchw(s.batch, s.channels, s.w, false), s.channels, s.filters, 1, s.w, none);
        cudnnConvolutionBwdDataAlgoPerf_t perf[8];
        int found = 0;
        check(cudnnGetConvolutionBackwardDataAlgorithm_v7(cx.dnn, d.filter, d.to, d.conv, d.from, 8, &found, perf),
              "cudnnGetConvolutionBackwardDataAlgorithm_v7");
        const auto algo = first_working(perf, found, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
        std::size_t bytes = 0;
        check(cudnnGetConvolutionBackwardDataWorkspaceSize(cx.dnn, d.filter, d.to, d.conv, d.from, algo, &bytes),
              "cudnnGetConvolutionBackwardDataWorkspaceSize");
        void* ws = bytes ? cx.workspace.get(bytes) : nullptr;
        const A one = 1, zero = 0;
        check(cudnnConvolutionBackwardData(cx.dnn, &one, d.filter, k, d.to, x, d.conv, algo, ws, bytes, &zero, d.from, y), "cudnnConvolutionBackwardData");
    }

    /// One layer of cuDNN's RNN (the v8 API), one or two directions: the plan's per-gate matrices
    /// and biases copied to where cudnnGetRNNWeightParams says each lives in the weight space.
    void rnn(const rnn_step& s, const T* x, const T* w, const T* b, T* y) {
        if (s.batch == 0 || s.steps == 0) return;
        const int B = static_cast<int>(s.batch), steps = static_cast<int>(s.steps), F = static_cast<int>(s.features), u = static_cast<int>(s.units);
        const int dirs = s.bidirectional ? 2 : 1;
        const bool whole = s.sequences || s.bidirectional;  // y is the sequence (else the last state)
        dropout_desc dd;
        std::size_t states = 0;
        check(cudnnDropoutGetStatesSize(cx.dnn, &states), "cudnnDropoutGetStatesSize");
        check(cudnnSetDropoutDescriptor(dd, cx.dnn, 0.0f, states ? cx.dropout_states.get(states) : nullptr, states, 0), "cudnnSetDropoutDescriptor");
        const cudnnRNNMode_t mode = s.cell == rnn_cell::lstm       ? CUDNN_LSTM
                                    : s.cell == rnn_cell::gru      ? CUDNN_GRU
                                    : s.cell == rnn_cell::rnn_tanh ? CUDNN_RNN_TANH
                                                                   : CUDNN_RNN_RELU;
        rnn_desc rd;
        check(cudnnSetRNNDescriptor_v8(rd, CUDNN_RNN_ALGO_STANDARD, mode, CUDNN_RNN_DOUBLE_BIAS, s.bidirectional ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                       CUDNN_LINEAR_INPUT, data_type, types<T>::compute, math(), F, u, u, 1, dd, CUDNN_RNN_PADDED_IO_ENABLED),
              "cudnnSetRNNDescriptor_v8");
        std::vector<int> lengths(static_cast<std::size_t>(B), steps);
        rnn_data_desc xd, yd;
        T fill = T(0.0);
        check(cudnnSetRNNDataDescriptor(xd, data_type, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, steps, B, F, lengths.data(), &fill),
              "cudnnSetRNNDataDescriptor");
        check(cudnnSetRNNDataDescriptor(yd, data_type, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED, steps, B, dirs * u, lengths.data(), &fill),
              "cudnnSetRNNDataDescriptor");
        tensor_desc hd;
        set_packed(hd, data_type, {dirs, B, u});
        std::size_t wbytes = 0;
        check(cudnnGetRNNWeightSpaceSize(cx.dnn, rd, &wbytes), "cudnnGetRNNWeightSpaceSize");
        void* space = cx.rnn_weights.get(wbytes);
        check(cudaMemsetAsync(space, 0, wbytes, cx.stream), "cudaMemsetAsync");
        const int gates = rnn_gates(s.cell);
        for (int dir = 0; dir < dirs; ++dir)
            for (int id = 0; id < 2 * gates; ++id) {
                tensor_desc md, bd;
                void *m = nullptr, *bias = nullptr;
                check(cudnnGetRNNWeightParams(cx.dnn, rd, dir, wbytes, space, id, md, &m, bd, &bias), "cudnnGetRNNWeightParams");
                const index_t cols = id < gates ? s.features : s.units;
                const index_t at = dir * gates * s.units * (s.features + s.units) +
                                   (id < gates ? id * s.units * s.features : gates * s.units * s.features + (id - gates) * s.units * s.units);
                if (m) copy(static_cast<T*>(m), w + at, s.units * cols);
                if (bias) copy(static_cast<T*>(bias), b + (dir * 2 * gates + id) * s.units, s.units);
            }
        int* dev_lengths = static_cast<int*>(cx.lengths.get(lengths.size() * sizeof(int)));
        check(cudaMemcpyAsync(dev_lengths, lengths.data(), lengths.size() * sizeof(int), cudaMemcpyHostToDevice, cx.stream), "cudaMemcpyAsync");
        std::size_t work = 0, reserve = 0;
        check(cudnnGetRNNTempSpaceSizes(cx.dnn, rd, CUDNN_FWD_MODE_INFERENCE, xd, &work, &reserve), "cudnnGetRNNTempSpaceSizes");
        void* ws = work ? cx.workspace.get(work) : nullptr;
        T* seq = whole ? y : static_cast<T*>(cx.scratch.get(static_cast<std::size_t>(s.batch * s.steps * s.units) * sizeof(T)));
        check(cudnnRNNForward(cx.dnn, rd, CUDNN_FWD_MODE_INFERENCE, dev_lengths, xd, x, yd, seq, hd, nullptr, whole ? nullptr : y,
                              s.cell == rnn_cell::lstm ? static_cast<cudnnTensorDescriptor_t>(hd) : nullptr, nullptr, nullptr, wbytes, space, work, ws, 0,
                              nullptr),
              "cudnnRNNForward");
        check(cudaStreamSynchronize(cx.stream), "cudaStreamSynchronize");  // `lengths` and `fill` live on this frame
    }

    void softmax(const softmax_step& s, const T* x, T* y) {
        if (s.count * s.r.len == 0) return;
        tensor_desc d;
        set_packed(d, data_type, {static_cast<int>(s.count / s.r.inner), static_cast<int>(s.r.len), static_cast<int>(s.r.inner), 1});
        const A one = 1, zero = 0;
        check(cudnnSoftmaxForward(cx.dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, d, x, &zero, d, y), "cudnnSoftmaxForward");
    }

    /// Row-major y (M, N) = a (M, K) b (K, N), as column-major y^T = b^T a^T; with b (N, K)
    /// transposed, b read transposed. `batch` products of consecutive matrices in one call.
    void matmul(const matmul_step& s, const T* a, const T* b, T* y) {
        if (s.batch == 0 || s.m == 0 || s.n == 0) return;
        if (s.k == 0) {
            check(cudaMemsetAsync(y, 0, static_cast<std::size_t>(s.batch * s.m * s.n) * sizeof(T), cx.stream), "cudaMemsetAsync");
            return;
        }
        const A one = 1, zero = 0;
        const auto m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
        const cublasComputeType_t compute = std::is_same_v<T, double> ? CUBLAS_COMPUTE_64F
                                            : types<T>::half          ? CUBLAS_COMPUTE_32F
                                            : p.tf32                  ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                      : CUBLAS_COMPUTE_32F_PEDANTIC;
        const auto t = types<T>::blas;
        const auto op_b = s.b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
        const int ldb = s.b_transposed ? k : n;
        if (s.batch == 1)
            check(cublasGemmEx(cx.blas, op_b, CUBLAS_OP_N, n, m, k, &one, b, t, ldb, a, t, k, &zero, y, t, n, compute, CUBLAS_GEMM_DEFAULT), "cublasGemmEx");
        else
            check(cublasGemmStridedBatchedEx(cx.blas, op_b, CUBLAS_OP_N, n, m, k, &one, b, t, ldb, s.k * s.n, a, t, k, s.m * s.k, &zero, y, t, n, s.m * s.n,
                                             static_cast<int>(s.batch), compute, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmStridedBatchedEx");
    }

    /// cuDNN's activations where it has Keras' function (relu, tanh, sigmoid, elu) in float32,
    /// float64 and float16; a bias is added first by the kernel of ours, into y, and the
    /// activation then runs in place. The kernel of ours otherwise.
    bool activation(const unary_step& s, const kernels::unary<T, A>& f) {
        cudnnActivationMode_t mode;
        double coef = 0;
        switch (s.f) {
            case kernels::unary_fn::relu: mode = CUDNN_ACTIVATION_RELU; break;
            case kernels::unary_fn::tanh: mode = CUDNN_ACTIVATION_TANH; break;
            case kernels::unary_fn::sigmoid: mode = CUDNN_ACTIVATION_SIGMOID; break;
            case kernels::unary_fn::elu: mode = CUDNN_ACTIVATION_ELU, coef = static_cast<double>(f.p0); break;
            default: return false;
        }
        if (std::is_same_v<T, __nv_bfloat16>) return false;
        const index_t n = p.slots[static_cast<std::size_t>(s.y)].count;
        if (n == 0) return true;
        if (n > (index_t{1} << 30)) return false;
        const T* x = f.x;
        if (f.bias) {
            auto add = f;
            add.f = kernels::unary_fn::identity;
            each(n, add);
            x = f.y;
        }
        descriptor<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor, cudnnDestroyActivationDescriptor> ad;
        check(cudnnSetActivationDescriptor(ad, mode, CUDNN_PROPAGATE_NAN, coef), "cudnnSetActivationDescriptor");
        tensor_desc d;
        set_packed(d, data_type, {1, static_cast<int>(n), 1, 1});
        const A one = 1, zero = 0;
        check(cudnnActivationForward(cx.dnn, ad, &one, d, x, &zero, d, f.y), "cudnnActivationForward");
        return true;
    }

    /// cuDNN's inference batch normalisation (spatial: one statistic per channel of (outer, len,
    /// inner)) in float32 and float64 when every statistic is given; the kernel of ours otherwise
    /// (the 16-bit types, whose statistics cuDNN takes in float).
    bool batch_norm(const batch_norm_step& s, const kernels::batch_norm<T, A>& f) {
        if (types<T>::half || !f.gamma || !f.beta || !f.mean || !f.var || static_cast<double>(f.eps) < CUDNN_BN_MIN_EPSILON) return false;
        const index_t n = p.slots[static_cast<std::size_t>(s.y)].count;
        if (n == 0) return true;
        if (s.len * s.inner == 0 || n > (index_t{1} << 30)) return false;
        tensor_desc xd, bd;
        set_packed(xd, data_type, {static_cast<int>(n / (s.len * s.inner)), static_cast<int>(s.len), static_cast<int>(s.inner), 1});
        set_packed(bd, data_type, {1, static_cast<int>(s.len), 1, 1});
        const A one = 1, zero = 0;
        check(cudnnBatchNormalizationForwardInference(cx.dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd, f.x, xd, f.y, bd, f.gamma, f.beta, f.mean, f.var,
                                                      static_cast<double>(f.eps)),
              "cudnnBatchNormalizationForwardInference");
        return true;
    }

    /// cuDNN's pooling where every window lies inside the input (no padding before or after, so
    /// that what a padded window means is not in question, and cuDNN takes no window larger than
    /// its input); the kernel of ours otherwise.
    bool pool(const pool_step& s, const T* x, T* y) {
        for (int i = 0; i < s.w.n; ++i)
            if (s.w.pad[i] != 0 || (s.w.out[i] - 1) * s.w.stride[i] + s.w.k[i] > s.w.in[i]) return false;
        if (s.planes * s.w.out_count() == 0) return true;
        tensor_desc xd, yd;
        pool_desc pd;
        set_packed(xd, data_type, nchw(1, s.planes, s.w, false));
        set_packed(yd, data_type, nchw(1, s.planes, s.w, true));
        const auto window = spatial(s.w, s.w.k, 1), pad = spatial(s.w, s.w.pad, 0), stride = spatial(s.w, s.w.stride, 1);
        check(cudnnSetPoolingNdDescriptor(pd, s.max ? CUDNN_POOLING_MAX : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, CUDNN_PROPAGATE_NAN,
                                          static_cast<int>(window.size()), window.data(), pad.data(), stride.data()),
              "cudnnSetPoolingNdDescriptor");
        std::vector<int> got(window.size() + 2);
        check(cudnnGetPoolingNdForwardOutputDim(pd, xd, static_cast<int>(got.size()), got.data()), "cudnnGetPoolingNdForwardOutputDim");
        if (got != nchw(1, s.planes, s.w, true)) return false;
        const A one = 1, zero = 0;
        check(cudnnPoolingForward(cx.dnn, pd, &one, xd, x, &zero, yd, y), "cudnnPoolingForward");
        return true;
    }

    /// After node i's steps: wait for them, so that an error is node i's.
    void node_done(std::size_t i) {
        node = static_cast<int>(i);
        if (o.plant_illegal_address_at == node) {
            illegal_write<<<1, 32, 0, cx.stream>>>(reinterpret_cast<float*>(~std::uintptr_t{0} << 16));  // far above any mapping
        }
        check(cudaStreamSynchronize(cx.stream), "cudaStreamSynchronize");
        node = static_cast<int>(i) + 1;
        progress::at_node(node);
    }
};

template <class T, class A>
outcome run_as(const plan& p, std::span<const std::vector<double>* const> inputs, std::span<const int> wanted, const device_options& o) {
    outcome r;
    device_engine<T, A>* engine = nullptr;
    try {
        context& cx = context::get();
        if (inputs.size() != p.input_slots.size())
            throw failure{outcome::kind::error,
                          "the plan takes " + std::to_string(p.input_slots.size()) + " inputs, the run gives " + std::to_string(inputs.size())};
        // One block of device memory for every slot, each 256-byte aligned.
        std::vector<std::size_t> offset(p.slots.size());
        std::size_t total = 0;
        for (std::size_t s = 0; s < p.slots.size(); ++s) {
            offset[s] = total;
            total += (static_cast<std::size_t>(p.slots[s].count) * sizeof(T) + 255) / 256 * 256;
        }
        char* base = static_cast<char*>(cx.slots.get(std::max<std::size_t>(total, 256)));
        auto at = [&](int s) { return reinterpret_cast<T*>(base + offset[static_cast<std::size_t>(s)]); };
        // Constants and inputs go up, each from a host copy of its own in T (what a run holds on
        // the host is what it is given, however large the slots it computes).
        std::vector<std::vector<T>> staged;
        auto stage = [&](int s, const std::vector<double>& v) {
            if (static_cast<index_t>(v.size()) != p.slots[static_cast<std::size_t>(s)].count)
                throw failure{outcome::kind::error, "a tensor of " + std::to_string(v.size()) + " elements for a slot of " +
                                                        std::to_string(p.slots[static_cast<std::size_t>(s)].count)};
            auto& h = staged.emplace_back(v.size());
            std::transform(v.begin(), v.end(), h.begin(), [](double d) { return static_cast<T>(static_cast<A>(d)); });
            if (!h.empty()) check(cudaMemcpyAsync(at(s), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, cx.stream), "cudaMemcpyAsync to the device");
        };
        for (std::size_t s = 0; s < p.slots.size(); ++s)
            if (p.slots[s].is_constant) stage(static_cast<int>(s), p.slots[s].constant);
        for (std::size_t k = 0; k < inputs.size(); ++k) stage(p.input_slots[k], *inputs[k]);
        check(cudaStreamSynchronize(cx.stream), "cudaStreamSynchronize");  // the host copies live until here
        device_engine<T, A> e{cx, p, o};
        engine = &e;
        progress::at_node(0);
        execute<T, A>(p, e, at);
        engine = nullptr;
        for (int s : wanted) {
            const auto n = static_cast<std::size_t>(p.slots[static_cast<std::size_t>(s)].count);
            std::vector<T> back(n);
            if (n) check(cudaMemcpyAsync(back.data(), at(s), n * sizeof(T), cudaMemcpyDeviceToHost, cx.stream), "cudaMemcpyAsync to the host");
            check(cudaStreamSynchronize(cx.stream), "cudaStreamSynchronize");
            auto& v = r.values.emplace_back();
            for (const T& x : back) v.push_back(widen<T, A>(x));
        }
        progress::at_node(-1);
    } catch (const failure& f) {
        r.status = f.kind;
        r.message = f.message;
        r.node = engine ? engine->node : -1;
        r.values.clear();
    }
    return r;
}

}  // namespace device_detail

outcome run_on_device(const plan& p, std::span<const std::vector<double>* const> inputs, std::span<const int> wanted, const device_options& o) {
    switch (p.type) {
        case element::float16: return device_detail::run_as<__half, float>(p, inputs, wanted, o);
        case element::bfloat16: return device_detail::run_as<__nv_bfloat16, float>(p, inputs, wanted, o);
        case element::float32: return device_detail::run_as<float, float>(p, inputs, wanted, o);
        case element::float64: break;
    }
    return device_detail::run_as<double, double>(p, inputs, wanted, o);
}

}  // namespace memo::cuda
