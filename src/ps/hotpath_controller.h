// The controller, in the scheduler: waits for the JOIN of every node, decides
// the hot set (from LIBRA_HOT_SET, or from the workers' sampled key counts),
// places it, picks the fixed-point scale, installs the job on the switch and
// answers every JOIN with the INSTALL. If anything fails (no switch, a bad
// file, nothing sampled) the answer says so and the job stays on the plain
// parameter server: Libra never stops a job that PS-lite would run.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hotpath_config.h"
#include "hotpath_messages.h"
#include "ps/simple_app.h"

namespace ps::hotpath {

class Controller {
 public:
  Controller(const HotPathConfig& config, int num_workers, int num_servers);

  // A JOIN arrived (SimpleApp request handle): answers all once all are in.
  void OnJoin(const SimpleData& request, SimpleApp* app);
  // Removes the job from the switch if one was installed.
  void Stop();

  // The scale F for N workers whose values reach `max_abs`: N * max_abs *
  // 2^F stays 16x below the int32 limit, F in [0, 24]; 16 if nothing is known.
  static int ChooseScaleBits(uint32_t num_workers, float max_abs);

 private:
  Install Decide();
  // The hot set of the sampled counts, and the server that owns each key.
  // With several servers, the hot set re-placed so that each server owns
  // whole rows (BandedPlacement) and reads them with one COLLECT per row;
  // the given set when there is one server or the bands do not fit.
  std::shared_ptr<const libra::hot::HotSet> BandByServer(
      std::shared_ptr<const libra::hot::HotSet> hot_set, const std::vector<uint32_t>& owners) const;
  std::shared_ptr<const libra::hot::HotSet> ChooseFromSamples(std::vector<uint32_t>* owners,
                                                              std::string* why);

  const HotPathConfig config_;
  const int num_workers_;
  const int num_servers_;
  std::mutex mu_;
  std::vector<std::pair<SimpleData, JoinRequest>> joins_;
  bool installed_ = false;
};

}  // namespace ps::hotpath
