#pragma once
// A tensor's value span (coverage/value_span.hpp): the classes of value it holds and its finite
// range, which a traced run keeps per node.
#include "../coverage/value_span.hpp"
#include "tensor.hpp"

namespace memo {

inline value_span span_of(const tensor& t) noexcept {
    value_span s;
    for (double x : t.data) s.add(x);
    return s;
}

}  // namespace memo
