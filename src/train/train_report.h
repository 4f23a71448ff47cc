// The human-readable side of a training report (the JSON that worker 0
// writes, see docs/training.md): a short summary table.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

namespace libra::train {

// Samples/s, bytes into and out of each server and worker, held-out log
// loss and AUC, wall time.
void PrintTrainSummary(std::ostream& out, const nlohmann::json& report);

}  // namespace libra::train
