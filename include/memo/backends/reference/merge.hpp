#pragma once
// Reference kernels: (in progress).
#include "array.hpp"

namespace memo::reference {

template <class T>
void register_merge(kernel_table<T>&) {}

}  // namespace memo::reference
