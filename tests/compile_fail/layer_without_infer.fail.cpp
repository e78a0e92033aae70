// A layer without a shape function is not a layer: building a registry of it must not compile.
// Twin: layer_without_infer.pass.cpp, the same with infer().
#include <memo/memo.hpp>

struct half_layer {
    static constexpr std::string_view name = "Half";
    static constexpr memo::family family = memo::family::act;
    static constexpr memo::rank_set ranks = memo::rank_set::between(2, 6);
    static std::span<const memo::param> params() { return {}; }
};

const memo::registry& r = memo::registry_of<memo::concat<memo::default_layers, memo::layer_list<half_layer>>>();
