// Twin of kernel_missing.fail.cpp: the same kernels, which now say why they do not run Softmax.
#include <functional>

#include <memo/core/kernels.hpp>
#include <memo/layers/all.hpp>

struct tiny_kernels {
    static int run(memo::layers::relu, int x) { return x; }
    static constexpr std::string_view unsupported(memo::layers::softmax) { return "no exponential on this device"; }
};

const auto table = memo::kernel_table<tiny_kernels, std::function<int(int)>>(memo::layer_list<memo::layers::relu, memo::layers::softmax>{});
