#pragma once
// The processes of one campaign spread over many machines, as the exchange (exchange.hpp) sees
// them: a rank and a size, and the four collective operations it needs. cluster/mpi.hpp implements
// it with MPI; any other transport (a test's threads, say) can too. Every operation is collective:
// each rank calls it, in the same order, or the job hangs.
#include <cstdint>
#include <string>
#include <vector>

namespace memo::cluster {

class communicator {
public:
    virtual ~communicator() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    /// Every rank's `words`, or-ed bit by bit; the result replaces `words` on every rank.
    virtual void bitwise_or(std::vector<std::uint64_t>& words) = 0;
    /// Every rank's `values`, summed element by element; the result replaces `values` on every rank.
    virtual void sum(std::vector<std::uint64_t>& values) = 0;
    /// Every rank's `bytes`, in rank order, on every rank.
    virtual std::vector<std::string> all_gather(const std::string& bytes) = 0;
    /// Every rank's `bytes`, in rank order, on rank 0 (other ranks get an empty vector).
    virtual std::vector<std::string> gather(const std::string& bytes) = 0;
};

}  // namespace memo::cluster
