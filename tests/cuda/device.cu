// The CUDA backend's device side for memo-cuda-tests, compiled by nvcc.
#include <memo/backends/cuda/device.cuh>
