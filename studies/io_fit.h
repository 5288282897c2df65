#pragma once
/// Log-log least-squares fits of a traffic figure against a parameter: y ≈ c·x^e, fitted as
/// log y = log c + e·log x by linear least squares (Eigen), with the coefficient of determination.

#include <cstddef>
#include <vector>

namespace memwall {

/// The fitted power law y ≈ coefficient · x^exponent.
struct PowerFit {
  double exponent = 0;  ///< slope of log y against log x
  double coefficient = 0;  ///< exp(intercept)
  double r_squared = 0;  ///< 1 − SSres/SStot in log space (1 when every log y is equal)
  std::size_t points = 0;  ///< number of (x, y) pairs fitted
};

/// Fits y ≈ c·x^e. Throws UsageError when the sizes differ, fewer than two distinct x are given,
/// or any x or y is not positive (a logarithm is needed).
PowerFit fit_power_law(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace memwall
