#pragma once
// A variant: a model with a metamorphic relation spliced in (relations.hpp makes them), which a
// correct library runs to the model's own outputs. What a metamorphic verdict carries as evidence.
#include <array>
#include <string_view>
#include <vector>

#include "../core/model.hpp"

namespace memo::metamorphic {

enum class relation : unsigned char { squared_difference, stop_gradient, triangle, reverse_triangle };
inline constexpr std::string_view relation_names[] = {"squared-difference", "stop-gradient", "triangle", "reverse-triangle"};
inline constexpr std::array all_relations = {relation::squared_difference, relation::stop_gradient, relation::triangle, relation::reverse_triangle};
constexpr std::string_view name_of(relation r) noexcept { return relation_names[static_cast<int>(r)]; }
/// The relation a name stands for; false when it names none.
constexpr bool relation_from(std::string_view s, relation& out) noexcept {
    for (std::size_t k = 0; k < std::size(relation_names); ++k)
        if (relation_names[k] == s) {
            out = static_cast<relation>(k);
            return true;
        }
    return false;
}

struct variant {
    model m;
    relation rel{};
    int output = 0;         // which of the model's outputs carries g * F(x)
    int first_new = 0;      // the first node that is not the model's own
    std::vector<int> gate;  // the gate's nodes in order, then the product and the sum
};

}  // namespace memo::metamorphic
