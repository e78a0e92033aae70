#pragma once
// memo's search: the engine's (engine/search.hpp, Algorithm 2) over memo's Keras models, whose
// operators see MEMO's context (mutation/context.hpp: the registry, the coverage, the limits).
//
//   memo::search<memo::model, memo::mutation::memo_operators, memo::memo_coverage, memo::mh_selector>
//       s(seeds, memo::memo_coverage(reg), memo::mh_selector(0.05), 7);
//   for (int i = 0; i < 1000; ++i) s.step();
#include "../coverage/coverage.hpp"
#include "../engine/search.hpp"
#include "../mutation/context.hpp"
#include "../mutation/operators.hpp"

namespace memo {

template <class Model, class Ops, class Coverage, selector Selector, class Context = mutation::context>
using search = basic_search<Model, Ops, Coverage, Selector, Context>;

}  // namespace memo
