// The CUDA backend's device side (cuDNN, cuBLAS and memo's kernels), compiled by nvcc.
#include <memo/backends/cuda/device.cuh>
