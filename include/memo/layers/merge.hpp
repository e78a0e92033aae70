#pragma once
// LMerg: Concatenate, Average, Maximum, Minimum, Add, Subtract, Multiply, Dot.
// Element-wise merges need equal shapes; Concatenate equal shapes but on its axis; Dot works
// over the last axis of two rank-2 or rank-3 tensors.
#include "common.hpp"

namespace memo::layers {

/// An element-wise merge of equal shapes; its tag gives the class name and how many inputs it takes.
template <class Tag>
struct elementwise_merge : layer_kind<family::merge, rank_set::between(2, 6)> {
    static constexpr std::string_view name = Tag::name;
    static constexpr arity_t arity = Tag::arity;
    static std::span<const param> params() { return {}; }
    static expected<shape> infer(inputs in, args) {
        for (std::size_t i = 1; i < in.size(); ++i)
            if (!(in[i] == in[0])) return fail("inputs have different shapes " + in[0].str() + " and " + in[i].str());
        return in[0];
    }
    /// one per element per input after the first
    static int64_t flops(const node_view& n) { return static_cast<int64_t>(n.in.size() - 1) * n.out.elements(); }
};

namespace tags {
template <class_name Name, int MaxInputs = 8>
struct merge {
    static constexpr std::string_view name = Name.view();
    static constexpr arity_t arity{2, MaxInputs};
};
}  // namespace tags

using average = elementwise_merge<tags::merge<"Average">>;
using maximum = elementwise_merge<tags::merge<"Maximum">>;
using minimum = elementwise_merge<tags::merge<"Minimum">>;
using add = elementwise_merge<tags::merge<"Add">>;
using subtract = elementwise_merge<tags::merge<"Subtract", 2>>;
using multiply = elementwise_merge<tags::merge<"Multiply">>;

struct concatenate : layer_kind<family::merge, rank_set::between(2, 6)> {
    static constexpr std::string_view name = "Concatenate";
    static constexpr arity_t arity{2, 8};
    static std::span<const param> params() {
        return built_once([] { return param_builder{}.add("axis", axes(), role::shape, int64_t{-1}); });
    }
    static expected<shape> infer(inputs in, args p) {
        const int axis = normal_axis(as_int(p[0]), in[0].rank());
        if (axis < 0) return fail("axis " + str_i(as_int(p[0])) + " is not an axis of " + in[0].str());
        shape out = in[0];
        for (std::size_t i = 1; i < in.size(); ++i) {
            if (in[i].rank() != out.rank()) return fail("inputs have different ranks");
            for (int d = 1; d < out.rank(); ++d)
                if (d != axis && in[i][d] != out[d]) return fail("inputs differ off the concatenation axis: " + in[0].str() + " and " + in[i].str());
            out[axis] += in[i][axis];
        }
        return out;
    }
};

struct dot : layer_kind<family::merge, rank_set::between(2, 3)> {
    static constexpr std::string_view name = "Dot";
    static constexpr arity_t arity{2, 2};
    static std::span<const param> params() {
        return built_once([] { return param_builder{}.add("axes", element_of({-1}), role::shape, int64_t{-1}).add("normalize", bools(), role::mode, false); });
    }
    static expected<shape> infer(inputs in, args) {
        const shape &a = in[0], &b = in[1];
        if (a.rank() != b.rank()) return fail("inputs have different ranks");
        if (a.back() != b.back()) return fail("last axes differ: " + a.str() + " and " + b.str());
        if (a.rank() == 2) return shape{a[0], 1};
        return shape{a[0], a[1], b[1]};
    }
    /// its products
    static int64_t flops(const node_view& n) { return n.in[0].back() * n.out.elements(); }
};

using merge_layers = layer_list<concatenate, average, maximum, minimum, add, subtract, multiply, dot>;

}  // namespace memo::layers
