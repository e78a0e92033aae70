// Twin of domain_without_buckets.fail.cpp: the built-in domains convert.
#include <memo/memo.hpp>

memo::any_domain d = memo::in_range(1, 8);
