#pragma once
// The communicator over MPI (MPI_COMM_WORLD): what `mpirun -np N memo-fuzz run --mpi` runs on.
// The only memo header that includes <mpi.h>; code that includes it links MPI (CMake:
// set(MPI_CXX_SKIP_MPICXX ON), find_package(MPI COMPONENTS CXX) and MPI::MPI_CXX).
//
//   memo::cluster::mpi_session mpi;  // MPI_Init ... MPI_Finalize
//   memo::cluster::mpi_communicator world;
//   memo::cluster::exchange x(world);
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1  // the C API only: Open MPI's C++ bindings need a library of their own
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "../engine/error.hpp"
#include "communicator.hpp"

namespace memo::cluster {

/// MPI_Init and MPI_Finalize, once per process.
class mpi_session {
public:
    mpi_session() {
        int ready = 0;
        MPI_Initialized(&ready);
        if (!ready) MPI_Init(nullptr, nullptr), owned_ = true;
    }
    ~mpi_session() {
        int done = 0;
        MPI_Finalized(&done);
        if (owned_ && !done) MPI_Finalize();
    }
    mpi_session(const mpi_session&) = delete;
    mpi_session& operator=(const mpi_session&) = delete;

    /// Takes every rank down (a rank that fails cannot leave the others waiting in a collective).
    [[noreturn]] static void abort(int code) {
        std::fflush(stdout), std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, code);
        std::abort();
    }

private:
    bool owned_ = false;
};

class mpi_communicator final : public communicator {
public:
    explicit mpi_communicator(MPI_Comm comm = MPI_COMM_WORLD) : comm_(comm) {
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
    }
    int rank() const override { return rank_; }
    int size() const override { return size_; }

    void bitwise_or(std::vector<std::uint64_t>& words) override {
        check(MPI_Allreduce(MPI_IN_PLACE, words.data(), count(words.size()), MPI_UINT64_T, MPI_BOR, comm_), "MPI_Allreduce");
    }
    void sum(std::vector<std::uint64_t>& values) override {
        check(MPI_Allreduce(MPI_IN_PLACE, values.data(), count(values.size()), MPI_UINT64_T, MPI_SUM, comm_), "MPI_Allreduce");
    }
    std::vector<std::string> all_gather(const std::string& bytes) override {
        int n = count(bytes.size());
        std::vector<int> sizes(static_cast<std::size_t>(size_));
        check(MPI_Allgather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm_), "MPI_Allgather");
        const auto offsets = offsets_of(sizes);
        std::string all(static_cast<std::size_t>(offsets.back() + sizes.back()), '\0');
        check(MPI_Allgatherv(bytes.data(), n, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, comm_), "MPI_Allgatherv");
        return split(all, sizes, offsets);
    }
    std::vector<std::string> gather(const std::string& bytes) override {
        int n = count(bytes.size());
        std::vector<int> sizes(static_cast<std::size_t>(size_));
        check(MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, comm_), "MPI_Gather");
        std::vector<int> offsets(sizes.size(), 0);
        std::string all;
        if (rank_ == 0) {
            offsets = offsets_of(sizes);
            all.assign(static_cast<std::size_t>(offsets.back() + sizes.back()), '\0');
        }
        check(MPI_Gatherv(bytes.data(), n, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0, comm_), "MPI_Gatherv");
        return rank_ == 0 ? split(all, sizes, offsets) : std::vector<std::string>{};
    }

private:
    static int count(std::size_t n) {
        if (n > 0x7fffffff) throw error("an MPI message of " + std::to_string(n) + " bytes is over MPI's 2 GiB count");
        return static_cast<int>(n);
    }
    static void check(int rc, const char* what) {
        if (rc != MPI_SUCCESS) throw error(std::string(what) + " failed (MPI error " + std::to_string(rc) + ")");
    }
    static std::vector<int> offsets_of(const std::vector<int>& sizes) {
        std::vector<int> o(sizes.size(), 0);
        for (std::size_t i = 1; i < sizes.size(); ++i) o[i] = o[i - 1] + sizes[i - 1];
        return o;
    }
    static std::vector<std::string> split(const std::string& all, const std::vector<int>& sizes, const std::vector<int>& offsets) {
        std::vector<std::string> r;
        for (std::size_t i = 0; i < sizes.size(); ++i) r.push_back(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(sizes[i])));
        return r;
    }
    MPI_Comm comm_;
    int rank_ = 0, size_ = 1;
};

}  // namespace memo::cluster
