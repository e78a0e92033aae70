#pragma once
// The pipe protocol between a campaign and its worker processes: length-prefixed frames holding a
// run request (the model as JSON, the inputs, the options) or a run result. Little-endian, native
// doubles: both ends are the same binary on the same machine.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "../io/json.hpp"
#include "backend.hpp"

namespace memo::wire {

class writer {
public:
    template <class T>
    void pod(T x) {
        const auto* p = reinterpret_cast<const char*>(&x);
        buf_.append(p, sizeof x);
    }
    void str(std::string_view s) {
        pod<std::uint64_t>(s.size());
        buf_.append(s);
    }
    void tensors(std::span<const tensor> ts) {
        pod<std::uint32_t>(static_cast<std::uint32_t>(ts.size()));
        for (const auto& t : ts) {
            pod<std::uint8_t>(static_cast<std::uint8_t>(t.type));
            pod<std::uint32_t>(static_cast<std::uint32_t>(t.dims.size()));
            for (auto d : t.dims) pod<std::int64_t>(d);
            pod<std::uint64_t>(t.data.size());
            buf_.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(double));
        }
    }
    std::string& bytes() noexcept { return buf_; }

private:
    std::string buf_;
};

class reader {
public:
    explicit reader(std::string_view b) : b_(b) {}
    template <class T>
    T pod() {
        T x{};
        need(sizeof x);
        std::memcpy(&x, b_.data() + at_, sizeof x);
        at_ += sizeof x;
        return x;
    }
    std::string str() {
        const auto n = pod<std::uint64_t>();
        need(n);
        std::string s(b_.substr(at_, n));
        at_ += n;
        return s;
    }
    std::vector<tensor> tensors() {
        std::vector<tensor> ts(pod<std::uint32_t>());
        for (auto& t : ts) {
            t.type = static_cast<dtype>(pod<std::uint8_t>());
            t.dims.resize(pod<std::uint32_t>());
            for (auto& d : t.dims) d = pod<std::int64_t>();
            const auto n = pod<std::uint64_t>();
            need(n * sizeof(double));
            t.data.resize(n);
            std::memcpy(t.data.data(), b_.data() + at_, n * sizeof(double));
            at_ += n * sizeof(double);
        }
        return ts;
    }

private:
    void need(std::size_t n) const {
        if (at_ + n > b_.size()) throw error("truncated worker frame");
    }
    std::string_view b_;
    std::size_t at_ = 0;
};

/// A run request, as the worker decodes it.
struct request {
    model m;
    std::vector<tensor> inputs, forced;
    run_options options;
};

inline std::string encode_request(const model& m, std::span<const tensor> inputs, const run_options& o) {
    writer w;
    w.pod<std::uint8_t>(o.every_node);
    w.pod<std::uint8_t>(o.digest_nodes);
    w.pod<std::int8_t>(o.precision ? static_cast<std::int8_t>(*o.precision) : std::int8_t{-1});
    w.str(io::model_to_json(m).dump());
    w.tensors(inputs);
    w.tensors(o.forced);
    return std::move(w.bytes());
}

inline request decode_request(std::string_view bytes, const registry& reg) {
    reader r(bytes);
    request q;
    q.options.every_node = r.pod<std::uint8_t>() != 0;
    q.options.digest_nodes = r.pod<std::uint8_t>() != 0;
    if (const auto p = r.pod<std::int8_t>(); p >= 0) q.options.precision = static_cast<dtype>(p);
    q.m = io::model_from_json(io::json::parse(r.str()), reg, "worker request");
    q.inputs = r.tensors();
    q.forced = r.tensors();
    q.options.forced = q.forced;
    return q;
}

inline std::string encode_result(const run_result& x) {
    writer w;
    w.pod<std::uint8_t>(static_cast<std::uint8_t>(x.status));
    w.str(x.message);
    w.pod<std::int32_t>(x.signal);
    w.pod<std::int32_t>(x.node);
    w.pod<double>(x.ms);
    w.pod<double>(x.cpu_ms);
    w.pod<std::int64_t>(x.peak_kb);
    w.pod<std::int64_t>(x.start_kb);
    w.tensors(x.outputs);
    w.pod<std::uint64_t>(x.node_digests.size());
    for (const auto& d : x.node_digests) {
        w.pod<std::uint64_t>(d.hash);
        w.pod<double>(d.abs_sum);
    }
    w.pod<std::uint64_t>(x.node_spans.size());
    for (const auto& v : x.node_spans) {
        w.pod<double>(v.lo);
        w.pod<double>(v.hi);
        w.pod<std::uint8_t>(v.classes);
    }
    return std::move(w.bytes());
}

inline run_result decode_result(std::string_view bytes) {
    reader r(bytes);
    run_result x;
    x.status = static_cast<run_status>(r.pod<std::uint8_t>());
    x.message = r.str();
    x.signal = r.pod<std::int32_t>();
    x.node = r.pod<std::int32_t>();
    x.ms = r.pod<double>();
    x.cpu_ms = r.pod<double>();
    x.peak_kb = r.pod<std::int64_t>();
    x.start_kb = r.pod<std::int64_t>();
    x.outputs = r.tensors();
    x.node_digests.resize(r.pod<std::uint64_t>());
    for (auto& d : x.node_digests) {
        d.hash = r.pod<std::uint64_t>();
        d.abs_sum = r.pod<double>();
    }
    x.node_spans.resize(r.pod<std::uint64_t>());
    for (auto& v : x.node_spans) {
        v.lo = r.pod<double>();
        v.hi = r.pod<double>();
        v.classes = r.pod<std::uint8_t>();
    }
    return x;
}

}  // namespace memo::wire
