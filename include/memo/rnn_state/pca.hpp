#pragma once
// Principal component analysis of recurrent hidden states, the first step of DeepStellar's
// abstraction. Axes carry a fixed sign and are solved deterministically, so profiling the same
// states twice gives the same grid, and the same cells.
#include <Eigen/Dense>
#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "../engine/error.hpp"

namespace memo::rnn_state {

/// Principal components of a set of vectors, with a fixed sign convention so that fits are reproducible.
struct pca {
    Eigen::VectorXd mean;      ///< d: the mean of the rows
    Eigen::MatrixXd axes;      ///< k x d: unit rows by decreasing variance, each with its largest-magnitude entry positive
    Eigen::VectorXd variance;  ///< k: the variance along each axis (the covariance's eigenvalues)

    /// Fits k components to `rows` (covariance normalised by n). Throws memo::error on no rows,
    /// rows of different lengths, or k outside [1, d].
    static pca fit(const std::vector<std::vector<double>>& rows, int k) {
        if (rows.empty()) throw error("PCA needs at least one row");
        const std::size_t d = rows[0].size();
        for (std::size_t i = 1; i < rows.size(); ++i)
            if (rows[i].size() != d)
                throw error("PCA row " + std::to_string(i) + " has " + std::to_string(rows[i].size()) + " values; row 0 has " + std::to_string(d));
        if (k < 1 || static_cast<std::size_t>(k) > d)
            throw error("PCA to " + std::to_string(k) + " components of rows of " + std::to_string(d) + " values: need 1 to " + std::to_string(d));

        const auto n = static_cast<Eigen::Index>(rows.size()), dim = static_cast<Eigen::Index>(d);
        Eigen::MatrixXd x(n, dim);
        for (Eigen::Index i = 0; i < n; ++i) x.row(i) = Eigen::Map<const Eigen::RowVectorXd>(rows[static_cast<std::size_t>(i)].data(), dim);
        pca p;
        p.mean = x.colwise().mean().transpose();
        x.rowwise() -= p.mean.transpose();
        p.axes.setZero(k, dim);
        p.variance.setZero(k);

        Eigen::Index r = 0;
        if (n >= dim) {
            const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(x.transpose() * x / static_cast<double>(n));
            for (; r < k; ++r) {  // eigenvalues come in increasing order
                p.axes.row(r) = es.eigenvectors().col(dim - 1 - r).transpose();
                p.variance(r) = std::max(0.0, es.eigenvalues()(dim - 1 - r));
            }
        } else {
            // Wide states: the n x n Gram matrix has the covariance's nonzero eigenvalues, and maps
            // each eigenvector v to the axis x^T v, at a cost in n rather than d.
            const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(x * x.transpose() / static_cast<double>(n));
            const double tiny = es.eigenvalues()(n - 1) * static_cast<double>(n) * std::numeric_limits<double>::epsilon();
            for (; r < std::min<Eigen::Index>(k, n) && es.eigenvalues()(n - 1 - r) > tiny; ++r) {
                p.axes.row(r) = (x.transpose() * es.eigenvectors().col(n - 1 - r)).normalized().transpose();
                p.variance(r) = es.eigenvalues()(n - 1 - r);
            }
        }
        // Past the rank of the centred rows the variance is zero and any orthonormal completion
        // will do: take the standard basis vector least explained so far, so the choice is fixed.
        for (; r < k; ++r) {
            const auto done = p.axes.topRows(r);
            const Eigen::MatrixXd rest = Eigen::MatrixXd::Identity(dim, dim) - done.transpose() * done;
            Eigen::Index j = 0;
            rest.colwise().squaredNorm().maxCoeff(&j);
            Eigen::VectorXd u = rest.col(j);
            u -= done.transpose() * (done * u);  // a second pass restores orthogonality lost to rounding
            p.axes.row(r) = u.normalized().transpose();
        }
        for (Eigen::Index i = 0; i < k; ++i) {
            Eigen::Index j = 0;
            p.axes.row(i).cwiseAbs().maxCoeff(&j);  // the first of equal maxima
            if (p.axes(i, j) < 0) p.axes.row(i) *= -1.0;
        }
        return p;
    }

    /// The k coordinates of x - mean along the axes; throws memo::error when x is not d long.
    std::vector<double> project(std::span<const double> x) const {
        if (x.size() != static_cast<std::size_t>(mean.size()))
            throw error("PCA of " + std::to_string(mean.size()) + "-value rows cannot project a vector of " + std::to_string(x.size()));
        const Eigen::VectorXd c = axes * (Eigen::Map<const Eigen::VectorXd>(x.data(), mean.size()) - mean);
        return {c.data(), c.data() + c.size()};
    }
};

}  // namespace memo::rnn_state
