// A backend's kernels that lack a layer of the list they are gathered for must not compile: the
// error names the layer and the kernels (core/kernels.hpp). Twin: kernel_missing.pass.cpp, where
// the kernels say why they do not run it.
// memo-expect-error: a layer of the list has no kernel in this backend
#include <functional>

#include <memo/core/kernels.hpp>
#include <memo/layers/all.hpp>

struct tiny_kernels {
    static int run(memo::layers::relu, int x) { return x; }
};

const auto table = memo::kernel_table<tiny_kernels, std::function<int(int)>>(memo::layer_list<memo::layers::relu, memo::layers::softmax>{});
