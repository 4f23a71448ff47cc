#include "hot/hot_switch_layout.h"

#include <algorithm>
#include <stdexcept>

#include "wire/fixed_point.h"
#include "wire/pipeline_profile.h"

namespace libra::hot {
namespace {

dataplane::FitReport Fit(const dataplane::PipelineProfile& profile, int workers,
                         uint32_t num_arrays, uint32_t cells_per_array) {
  dataplane::JobShape job;
  job.workers = workers;
  job.servers = 1;  // servers own no register memory
  job.cells_per_array = cells_per_array;
  job.slots_per_packet = static_cast<int>(num_arrays);
  job.scale_bits = dataplane::FixedPointCodec::kMinScaleBits;  // F does not change the layout
  return dataplane::PlaceRegisters(profile, job);
}

}  // namespace

SwitchLayout SwitchLayoutFor(const dataplane::PipelineProfile& profile, int workers) {
  SwitchLayout layout;
  layout.num_arrays = static_cast<uint32_t>(std::max(profile.max_slots_per_packet, 0));
  layout.num_banks = 2;  // the pipeline keeps two banks (epoch parity)
  const auto fits = [&](uint32_t cells) {
    return Fit(profile, workers, layout.num_arrays, cells).fits;
  };
  const dataplane::FitReport smallest = Fit(profile, workers, layout.num_arrays, 1);
  if (!smallest.fits) {
    throw std::invalid_argument(
        "no hot-value layout fits pipeline " + profile.name + ": " +
        (smallest.problems.empty() ? std::string("no value slots") : smallest.problems.front()));
  }
  // Register memory used grows with the cells, so the cells that fit are a
  // prefix of [1, 2^30): search for its end.
  uint32_t low = 1, high = uint32_t{1} << 30;  // fits(low), !fits(high)
  while (high - low > 1) {
    const uint32_t middle = low + (high - low) / 2;
    (fits(middle) ? low : high) = middle;
  }
  layout.cells_per_array = low;
  return layout;
}

std::vector<std::string> LayoutProblems(const SwitchLayout& layout,
                                        const dataplane::PipelineProfile& profile, int workers) {
  std::vector<std::string> problems;
  if (layout.num_banks != 2) {
    problems.push_back("the pipeline keeps 2 register banks, the layout asks for " +
                       std::to_string(layout.num_banks));
  }
  const dataplane::FitReport fit = Fit(profile, workers, layout.num_arrays, layout.cells_per_array);
  problems.insert(problems.end(), fit.problems.begin(), fit.problems.end());
  return problems;
}

}  // namespace libra::hot
