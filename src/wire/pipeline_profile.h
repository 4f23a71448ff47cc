// The resource budget of a Tofino-class pipeline, and the check that a job's
// register arrays fit it. The switch program places its arrays with
// PlaceRegisters; the same placement reports memory used against the budget.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace libra::dataplane {

struct PipelineProfile {
  std::string name;
  int stages = 0;
  // One stateful ALU per register array: at most this many arrays per stage.
  int register_arrays_per_stage = 0;
  // SRAM a stage can give to register arrays.
  std::uint64_t register_bits_per_stage = 0;
  // The first stage a gradient register may sit in: the stages before it
  // convert float32 to fixed point.
  int first_value_stage = 0;
  int max_slots_per_packet = 0;  // P: value slots (= value register arrays) per packet
  int max_packet_bytes = 0;      // bytes of Libra header + slots the parser may extract
  int max_workers = 0;
  int max_servers = 0;
  // Per worker: at most this many DATA packets may be un-ACKed (sender
  // window); the switch's dedup registers hold this many sequence numbers.
  int dedup_window = 0;

  // Intel Tofino-1, one pipe: 12 MAU stages, 4 stateful ALUs per stage, 80
  // SRAM blocks of 128 Kbit per stage of which 48 are given to registers.
  static PipelineProfile Tofino1();
  // Looks a profile up by name ("tofino1"); nullopt when unknown.
  static std::optional<PipelineProfile> ByName(std::string_view name);
};

// What a job asks of the pipeline.
struct JobShape {
  int workers = 0;
  int servers = 0;
  std::uint32_t cells_per_array = 0;  // hot cells in use in each value array
  int slots_per_packet = 0;           // P
  int scale_bits = 0;                 // F
};

struct RegisterArrayPlacement {
  std::string name;
  int stage = 0;
  std::uint64_t entries = 0;
  int entry_bits = 0;
  std::uint64_t bits() const { return entries * static_cast<std::uint64_t>(entry_bits); }
};

struct FitReport {
  bool fits = false;
  std::vector<std::string> problems;  // empty when it fits
  std::vector<RegisterArrayPlacement> arrays;
  std::uint64_t register_bits_used = 0;
  std::uint64_t register_bits_budget = 0;
  double register_share() const {
    return register_bits_budget == 0 ? 0.0
                                     : static_cast<double>(register_bits_used) /
                                           static_cast<double>(register_bits_budget);
  }
};

// Names of the bookkeeping arrays (one per stage from stage 0, in this order)
// and the prefix of value array j ("value_j").
inline constexpr std::string_view kDedupArray = "dedup_window";
inline constexpr std::string_view kDataCountArray = "data_count";
inline constexpr std::string_view kFinSeenArray = "fin_seen";
inline constexpr std::string_view kFinCountArray = "fin_count";
inline constexpr std::string_view kValueArrayPrefix = "value_";

// Places every register array of the job and checks the profile's limits.
FitReport PlaceRegisters(const PipelineProfile& profile, const JobShape& job);

}  // namespace libra::dataplane
