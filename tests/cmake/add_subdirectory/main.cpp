#include <memo/memo.hpp>

static_assert(sizeof(memo::shape) > 0);

int main() { return 0; }
