// State coverage: PCA, the grid abstraction, the DTMC and DeepStellar's five criteria, checked on
// hand-built cases where every count is known, and on random ones for the invariants.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include <memo/rnn_state/criteria.hpp>

namespace test_rnn_state_state_test {

using memo::rnn_state::abstraction;
using memo::rnn_state::cell;
using memo::rnn_state::dtmc;
using memo::rnn_state::grid_options;
using memo::rnn_state::pca;
using memo::rnn_state::state_coverage;
using memo::rnn_state::trace;

namespace {

double normal(memo::rng& r) {
    const double u = 1.0 - r.unit(), v = r.unit();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
}

std::vector<double> uniform_vector(memo::rng& r, std::size_t d) {
    std::vector<double> x(d);
    for (auto& e : x) e = r.uniform_real(-1.0, 1.0);
    return x;
}

/// The cell of interval indices (i, j) with 8 bits a component.
cell at(int i, int j) { return static_cast<cell>(i) | static_cast<cell>(j) << 8; }

/// Axis-aligned 2-D states with zero mean: PCA keeps the coordinates, over [-2, 2] x [-1, 1].
abstraction plane(int intervals) { return abstraction::fitted({{-2, 0}, {2, 0}, {0, -1}, {0, 1}}, {.components = 2, .intervals = intervals, .bits = 8}); }

bool bit_identical(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() && std::memcmp(a.data(), b.data(), static_cast<std::size_t>(a.size()) * sizeof(double)) == 0;
}

double cosine(const Eigen::VectorXd& a, const Eigen::VectorXd& b) { return a.dot(b) / (a.norm() * b.norm()); }

}  // namespace

TEST(StatePca, RecoversAPlantedAxis) {
    memo::rng r(11);
    Eigen::VectorXd u(16);
    for (auto& e : u) e = normal(r);
    u.normalize();
    std::vector<std::vector<double>> rows(500, std::vector<double>(16));
    for (auto& x : rows) {
        const double t = 3.0 * normal(r);
        for (std::size_t j = 0; j < x.size(); ++j) x[j] = t * u(static_cast<Eigen::Index>(j)) + 0.01 * normal(r);
    }
    const auto p = pca::fit(rows, 3);
    ASSERT_EQ(p.axes.rows(), 3);
    ASSERT_EQ(p.axes.cols(), 16);
    EXPECT_GT(std::abs(cosine(p.axes.row(0).transpose(), u)), 0.999);
    EXPECT_NEAR(p.variance(0), 9.0, 1.5);
    EXPECT_LT(p.variance(1), 1e-3);
    EXPECT_GE(p.variance(1), p.variance(2));
    EXPECT_TRUE((p.axes * p.axes.transpose()).isIdentity(1e-12));
    for (Eigen::Index i = 0; i < p.axes.rows(); ++i) {
        Eigen::Index j = 0;
        p.axes.row(i).cwiseAbs().maxCoeff(&j);
        EXPECT_GT(p.axes(i, j), 0.0) << "axis " << i;
    }

    const auto q = pca::fit(rows, 3);
    EXPECT_TRUE(bit_identical(p.mean, q.mean));
    EXPECT_TRUE(bit_identical(p.axes, q.axes));
    EXPECT_TRUE(bit_identical(p.variance, q.variance));

    const auto c = p.project(rows[0]);
    ASSERT_EQ(c.size(), 3u);
    Eigen::VectorXd x0 = Eigen::Map<const Eigen::VectorXd>(rows[0].data(), 16) - p.mean;
    EXPECT_NEAR(c[0], p.axes.row(0).dot(x0), 1e-12);
}

TEST(StatePca, WideRowsUseTheGramMatrix) {
    memo::rng r(5);
    std::vector<std::vector<double>> rows(10);
    for (auto& x : rows) x = uniform_vector(r, 50);
    const auto p = pca::fit(rows, 3);

    Eigen::MatrixXd x(10, 50);
    for (Eigen::Index i = 0; i < 10; ++i) x.row(i) = Eigen::Map<const Eigen::RowVectorXd>(rows[static_cast<std::size_t>(i)].data(), 50);
    x.rowwise() -= x.colwise().mean();
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(x.transpose() * x / 10.0);
    EXPECT_GT(std::abs(cosine(p.axes.row(0).transpose(), es.eigenvectors().col(49))), 0.999);
    EXPECT_NEAR(p.variance(0), es.eigenvalues()(49), 1e-9);
    EXPECT_NEAR(p.variance(2), es.eigenvalues()(47), 1e-9);
    EXPECT_TRUE((p.axes * p.axes.transpose()).isIdentity(1e-9));
}

TEST(StatePca, CompletesAxesPastTheRank) {
    // Three centred points span two directions; the other three axes have no variance.
    const auto p = pca::fit({{1, 0, 0, 0, 0, 2}, {0, 1, 0, 0, 0, 0}, {0, 0, 1, 0, 3, 0}}, 5);
    EXPECT_TRUE((p.axes * p.axes.transpose()).isIdentity(1e-12));
    EXPECT_GT(p.variance(1), 0.0);
    EXPECT_EQ(p.variance(2), 0.0);
    EXPECT_EQ(p.variance(4), 0.0);
}

TEST(StatePca, RejectsBadInput) {
    EXPECT_THROW(pca::fit({}, 1), memo::error);
    EXPECT_THROW(pca::fit({{1, 2}, {3}}, 1), memo::error);
    EXPECT_THROW(pca::fit({{1, 2}, {3, 4}}, 0), memo::error);
    EXPECT_THROW(pca::fit({{1, 2}, {3, 4}}, 3), memo::error);
    const auto p = pca::fit({{1, 2}, {3, 5}}, 1);
    EXPECT_THROW(p.project(std::vector<double>{1, 2, 3}), memo::error);
}

TEST(StateAbstraction, EncodesHandValues) {
    const auto a = plane(4);  // component 0 over [-2, 2] in steps of 1, component 1 over [-1, 1] in steps of 0.5
    EXPECT_EQ(a.cells(), 16u);
    const auto enc = [&](double x, double y) { return a.encode(std::vector<double>{x, y}); };
    EXPECT_EQ(enc(0.3, -0.6), at(2, 0));                                      // (0.3 + 2) / 4 * 4 = 2.3; (-0.6 + 1) / 2 * 4 = 0.8
    EXPECT_EQ(enc(-1.5, 0.7), at(0, 3));                                      // 0.5; 3.4
    EXPECT_EQ(enc(2.0, 1.0), at(3, 3));                                       // the maximum falls in the last interval
    EXPECT_EQ(enc(-9.0, 9.0), at(0, 3));                                      // outside the range: the edge intervals
    EXPECT_EQ(enc(std::numeric_limits<double>::quiet_NaN(), 0.1), at(0, 0));  // NaN reaches every component
    EXPECT_EQ(a.decode(at(2, 3)), (std::vector<int>{2, 3}));
    EXPECT_EQ(a.distance(at(0, 3), at(2, 0)), 5);
    EXPECT_THROW((void)a.encode(std::vector<double>{1, 2, 3}), memo::error);

    // A component that never varies puts everything in interval 0.
    const auto flat = abstraction::fitted({{-1, 0}, {1, 0}}, {.components = 2, .intervals = 4, .bits = 8});
    EXPECT_EQ(flat.decode(flat.encode(std::vector<double>{0.6, 5.0}))[1], 0);
}

TEST(StateAbstraction, RejectsCellsThatDoNotFit) {
    try {
        (void)abstraction::fixed(1, {.components = 9, .intervals = 10, .bits = 8});
        FAIL() << "72 bits accepted";
    } catch (const memo::error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("64"), std::string::npos) << what;
        EXPECT_NE(what.find("72"), std::string::npos) << what;
    }
    EXPECT_THROW((void)abstraction::fixed(1, {.components = 3, .intervals = 257, .bits = 8}), memo::error);
    EXPECT_NO_THROW((void)abstraction::fixed(1, {.components = 3, .intervals = 256, .bits = 8}));
    EXPECT_THROW((void)abstraction::fixed(1, {.components = 0}), memo::error);
    EXPECT_THROW((void)abstraction::fixed(1, {.intervals = 0}), memo::error);
    EXPECT_THROW((void)abstraction::fixed(1, {.bits = 0}), memo::error);
    EXPECT_THROW((void)abstraction::fitted({{1, 2, 3, 4}}, {.components = 9, .intervals = 10, .bits = 8}), memo::error);
    // A full 64-bit grid would make dtmc::initial a cell.
    EXPECT_THROW((void)abstraction::fixed(1, {.components = 8, .intervals = 256, .bits = 8}), memo::error);
    EXPECT_NO_THROW((void)abstraction::fixed(1, {.components = 8, .intervals = 255, .bits = 8}));
    EXPECT_NO_THROW((void)abstraction::fixed(1, {.components = 1, .intervals = 10, .bits = 64}));
}

TEST(StateAbstraction, FixedGridIsSeededAndSpreads) {
    const auto a = abstraction::fixed(42), b = abstraction::fixed(42), c = abstraction::fixed(43);
    memo::rng r(3);
    std::vector<cell> seen;
    int differ = 0;
    for (int i = 0; i < 200; ++i) {
        const auto h = uniform_vector(r, 32);
        const cell x = a.encode(h);
        EXPECT_EQ(x, b.encode(h));
        differ += x != c.encode(h);
        seen.push_back(x);
        for (int v : a.decode(x)) EXPECT_TRUE(v >= 0 && v < 10);
    }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    EXPECT_GE(seen.size(), 20u);
    EXPECT_GT(differ, 0);

    // Any state length in one abstraction; a state's cell does not depend on what came before.
    const auto short_state = uniform_vector(r, 5), long_state = uniform_vector(r, 700);
    const cell s = a.encode(short_state), l = a.encode(long_state);
    EXPECT_EQ(b.encode(long_state), l);
    EXPECT_EQ(b.encode(short_state), s);
    EXPECT_THROW((void)a.encode(std::vector<double>{}), memo::error);
}

TEST(StateDtmc, HandBuiltChain) {
    const cell A = at(0, 0), B = at(1, 0), C = at(1, 1);
    dtmc m;
    m.add({A, B, A, C});
    m.add({A, B, B});
    m.add({});
    EXPECT_EQ(m.states(), 3u);
    EXPECT_EQ(m.transitions(), 5u);  // initial->A, A->B, B->A, A->C, B->B
    EXPECT_EQ(m.frequency(A), 3u);
    EXPECT_EQ(m.frequency(B), 3u);
    EXPECT_EQ(m.frequency(C), 1u);
    EXPECT_EQ(m.frequency(at(3, 3)), 0u);
    EXPECT_EQ(m.count(dtmc::initial, A), 2u);
    EXPECT_EQ(m.count(A, B), 2u);
    EXPECT_EQ(m.count(B, B), 1u);
    EXPECT_EQ(m.count(C, A), 0u);
    EXPECT_EQ(m.total_visits(), 7u);
    EXPECT_EQ(m.total_transitions(), 7u);
    EXPECT_DOUBLE_EQ(m.probability(dtmc::initial, A), 1.0);
    EXPECT_DOUBLE_EQ(m.probability(A, B), 2.0 / 3.0);
    EXPECT_DOUBLE_EQ(m.probability(A, C), 1.0 / 3.0);
    EXPECT_DOUBLE_EQ(m.probability(B, A), 0.5);
    EXPECT_EQ(m.probability(C, A), 0.0);  // C has no way out
    EXPECT_EQ(m.state_list(), (std::vector<cell>{A, B, C}));
    const std::vector<memo::rnn_state::transition> edges{{A, B}, {A, C}, {B, A}, {B, B}, {dtmc::initial, A}};
    EXPECT_EQ(m.transition_list(), edges);

    auto from = m.state_list();
    from.push_back(dtmc::initial);
    for (cell s : from) {
        double sum = 0;
        for (const auto& [f, t] : m.transition_list())
            if (f == s) sum += m.probability(f, t);
        EXPECT_NEAR(sum, s == C ? 0.0 : 1.0, 1e-12) << s;
    }

    // Neighbours in the 4 x 4 grid: (0,1) (2,0) (2,1) (1,2).
    const auto a = plane(4);
    EXPECT_EQ(m.boundary(a, 1), (std::vector<cell>{at(2, 0), at(0, 1), at(2, 1), at(1, 2)}));

    state_coverage cov(m, a);
    EXPECT_EQ(cov.add({A, C, at(2, 1)}), 6u);
    const auto v = cov.values();
    EXPECT_EQ(v.basic_state.covered, 2u);
    EXPECT_EQ(v.basic_state.total, 3u);
    EXPECT_EQ(v.weighted_state.covered, 4u);  // A 3 + C 1
    EXPECT_EQ(v.weighted_state.total, 7u);
    EXPECT_EQ(v.boundary.covered, 1u);
    EXPECT_EQ(v.boundary.total, 4u);
    EXPECT_EQ(v.basic_transition.covered, 2u);  // initial->A, A->C
    EXPECT_EQ(v.basic_transition.total, 5u);
    EXPECT_EQ(v.weighted_transition.covered, 3u);
    EXPECT_EQ(v.weighted_transition.total, 7u);
    EXPECT_DOUBLE_EQ(v.basic_state.ratio(), 2.0 / 3.0);
    EXPECT_EQ(memo::rnn_state::criterion_value{}.ratio(), 0.0);
    EXPECT_EQ(cov.seen_states(), 3u);
    EXPECT_EQ(cov.seen_transitions(), 3u);
}

TEST(StateDtmc, BoundaryFollowsTheLattice) {
    const auto a = abstraction::fixed(0, {.components = 3, .intervals = 10, .bits = 8});
    const cell middle = 5 | 5 << 8 | 5 << 16, corner = 0;
    EXPECT_EQ(a.within(middle, 1).size(), 6u);
    EXPECT_EQ(a.within(middle, 2).size(), 24u);
    EXPECT_EQ(a.within(corner, 1).size(), 3u);
    for (cell c : a.within(middle, 2)) EXPECT_TRUE(a.distance(c, middle) >= 1 && a.distance(c, middle) <= 2);

    dtmc m;
    m.add({middle});
    EXPECT_EQ(m.boundary(a, 1).size(), 6u);
    EXPECT_EQ(m.boundary(a, 2).size(), 24u);
    dtmc k;
    k.add({corner});
    EXPECT_EQ(k.boundary(a, 1).size(), 3u);
    // Two neighbouring states: each is outside the other's boundary.
    k.add({corner, 1});
    EXPECT_EQ(k.boundary(a, 1).size(), 5u);  // (0,1,0) (0,0,1) (2,0,0) (1,1,0) (1,0,1)
}

TEST(StateCoverage, ProfilingTracesCoverTheirProfile) {
    memo::rng r(9);
    std::vector<std::vector<std::vector<double>>> runs(20);
    std::vector<std::vector<double>> all;
    for (auto& run : runs) {
        auto h = uniform_vector(r, 8);
        for (int step = 0; step < 15; ++step) {
            for (auto& e : h) e = std::tanh(e + 0.5 * normal(r));
            run.push_back(h);
            all.push_back(h);
        }
    }
    const auto a = abstraction::fitted(all);
    dtmc profile;
    std::vector<trace> traces;
    for (const auto& run : runs) {
        trace t;
        for (const auto& h : run) t.push_back(a.encode(h));
        profile.add(t);
        traces.push_back(t);
    }
    state_coverage cov(profile, a);
    for (const auto& t : traces) cov.add(t);
    const auto v = cov.values();
    EXPECT_EQ(v.basic_state.ratio(), 1.0);
    EXPECT_EQ(v.basic_transition.ratio(), 1.0);
    EXPECT_EQ(v.weighted_state.ratio(), 1.0);
    EXPECT_EQ(v.weighted_transition.ratio(), 1.0);
    EXPECT_GT(v.boundary.total, 0u);
    EXPECT_EQ(v.boundary.covered, 0u);
    EXPECT_EQ(cov.seen_states(), profile.states());
    EXPECT_EQ(cov.seen_transitions(), profile.transitions());
}

TEST(StateCoverage, GainMatchesAddAndRestoreRoundTrips) {
    const cell A = at(0, 0), B = at(1, 0), C = at(1, 1), D = at(3, 3);
    dtmc m;
    m.add({A, B, C});
    const auto a = plane(4);
    state_coverage cov(m, a);

    const trace t{A, A, A, B, A, B};  // states A, B; transitions initial->A, A->A, A->B, B->A
    EXPECT_EQ(cov.gain(t), 6u);
    EXPECT_EQ(cov.add(t), 6u);
    EXPECT_EQ(cov.gain(t), 0u);
    EXPECT_EQ(cov.add(t), 0u);
    const trace u{A, B, C, D, D};  // new: C, D, B->C, C->D, D->D
    EXPECT_EQ(cov.gain(u), 5u);
    EXPECT_EQ(cov.add(u), 5u);

    state_coverage back(m, a);
    back.restore(cov.seen_state_list(), cov.seen_transition_list());
    EXPECT_EQ(back.values(), cov.values());
    EXPECT_EQ(back.seen_state_list(), cov.seen_state_list());
    EXPECT_EQ(back.seen_transition_list(), cov.seen_transition_list());
    EXPECT_EQ(back.profile().states(), 3u);

    back.restore({}, {});
    EXPECT_EQ(back.values(), state_coverage(m, a).values());
    EXPECT_EQ(back.seen_states(), 0u);
}

}  // namespace test_rnn_state_state_test
