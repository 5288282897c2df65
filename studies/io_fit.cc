#include "studies/io_fit.h"

#include <cmath>
#include <set>
#include <string>

#include <Eigen/Dense>

#include "sim/core/error.h"

namespace memwall {

PowerFit fit_power_law(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw UsageError("power-law fit: x and y differ in length");
  std::set<double> distinct(x.begin(), x.end());
  if (distinct.size() < 2) {
    throw UsageError("power-law fit: needs at least two distinct x values, got " +
                     std::to_string(distinct.size()));
  }
  const auto n = static_cast<Eigen::Index>(x.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double xi = x[static_cast<std::size_t>(i)];
    const double yi = y[static_cast<std::size_t>(i)];
    if (!(xi > 0) || !(yi > 0)) {
      throw UsageError("power-law fit: every value must be positive (got x = " +
                       std::to_string(xi) + ", y = " + std::to_string(yi) + ")");
    }
    a(i, 0) = 1.0;
    a(i, 1) = std::log(xi);
    b(i) = std::log(yi);
  }
  const Eigen::Vector2d coef = a.colPivHouseholderQr().solve(b);
  const Eigen::VectorXd residual = b - a * coef;
  const double mean = b.mean();
  const double ss_tot = (b.array() - mean).square().sum();
  const double ss_res = residual.squaredNorm();
  PowerFit fit;
  fit.exponent = coef(1);
  fit.coefficient = std::exp(coef(0));
  fit.r_squared = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
  fit.points = x.size();
  return fit;
}

}  // namespace memwall
