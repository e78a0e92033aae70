// Twin of layer_without_infer.fail.cpp: with infer() the user's layer joins the registry.
#include <memo/memo.hpp>

struct half_layer {
    static constexpr std::string_view name = "Half";
    static constexpr memo::family family = memo::family::act;
    static constexpr memo::rank_set ranks = memo::rank_set::between(2, 6);
    static std::span<const memo::param> params() { return {}; }
    static memo::expected<memo::shape> infer(memo::inputs in, memo::args) { return in[0]; }
};

const memo::registry& r = memo::registry_of<memo::concat<memo::default_layers, memo::layer_list<half_layer>>>();
