#include "wire/pipeline_profile.h"

#include <algorithm>

#include "wire/fixed_point.h"
#include "wire/wire.h"

namespace libra::dataplane {
namespace {

// Every register cell is a pair of 32-bit halves (epoch tag, payload).
constexpr int kPairBits = 64;
constexpr int kBanks = 2;  // epoch parity

void Require(bool ok, std::string problem, FitReport& report) {
  if (!ok) report.problems.push_back(std::move(problem));
}

}  // namespace

PipelineProfile PipelineProfile::Tofino1() {
  PipelineProfile p;
  p.name = "tofino1";
  p.stages = 12;
  p.register_arrays_per_stage = 4;
  p.register_bits_per_stage = 48ull * 128 * 1024;
  p.first_value_stage = 3;
  p.max_slots_per_packet = 32;
  // The PHV holds 4 Kbit; leave room for Ethernet/IP/UDP and metadata.
  p.max_packet_bytes = 320;
  p.max_workers = 256;
  p.max_servers = 64;
  p.dedup_window = 64;
  return p;
}

std::optional<PipelineProfile> PipelineProfile::ByName(std::string_view name) {
  if (name == "tofino1") return Tofino1();
  return std::nullopt;
}

FitReport PlaceRegisters(const PipelineProfile& profile, const JobShape& job) {
  FitReport report;
  const std::string p = std::to_string(job.slots_per_packet);
  Require(job.workers >= 1 && job.workers <= profile.max_workers,
          "workers must be in [1, " + std::to_string(profile.max_workers) + "]", report);
  Require(job.servers >= 1 && job.servers <= profile.max_servers,
          "servers must be in [1, " + std::to_string(profile.max_servers) + "]", report);
  Require(job.slots_per_packet >= 1 && job.slots_per_packet <= profile.max_slots_per_packet &&
              job.slots_per_packet <= static_cast<int>(wire::kMaxSlots),
          "slots per packet must be in [1, " + std::to_string(profile.max_slots_per_packet) +
              "], got " + p,
          report);
  Require(wire::EncodedSize(std::max(job.slots_per_packet, 0)) <=
              static_cast<std::size_t>(profile.max_packet_bytes),
          "a packet of " + p + " slots exceeds the parser budget of " +
              std::to_string(profile.max_packet_bytes) + " bytes",
          report);
  Require(job.cells_per_array >= 1 && job.cells_per_array <= wire::kSlotIndexMask,
          "cells per array must be in [1, 2^30)", report);
  Require(job.scale_bits >= FixedPointCodec::kMinScaleBits &&
              job.scale_bits <= FixedPointCodec::kMaxScaleBits,
          "scale bits F must be in [0, 30]", report);
  if (!report.problems.empty()) return report;

  const auto workers = static_cast<std::uint64_t>(job.workers);
  report.arrays.push_back({std::string(kDedupArray), 0,
                           workers * static_cast<std::uint64_t>(profile.dedup_window), kPairBits});
  report.arrays.push_back({std::string(kDataCountArray), 1, workers * kBanks, kPairBits});
  report.arrays.push_back({std::string(kFinSeenArray), 2, workers, kPairBits});
  report.arrays.push_back({std::string(kFinCountArray), 3, kBanks, kPairBits});

  std::vector<int> arrays_in_stage(static_cast<std::size_t>(std::max(profile.stages, 0)), 0);
  for (const auto& a : report.arrays) {
    if (a.stage < profile.stages) ++arrays_in_stage[static_cast<std::size_t>(a.stage)];
  }
  int stage = profile.first_value_stage;
  for (int j = 0; j < job.slots_per_packet; ++j) {
    while (stage < profile.stages &&
           arrays_in_stage[static_cast<std::size_t>(stage)] >= profile.register_arrays_per_stage) {
      ++stage;
    }
    if (stage >= profile.stages) {
      report.problems.push_back("no stateful ALU left for value array " + std::to_string(j) + ": " +
                                p + " slots need more than " + std::to_string(profile.stages) +
                                " stages");
      return report;
    }
    ++arrays_in_stage[static_cast<std::size_t>(stage)];
    report.arrays.push_back({std::string(kValueArrayPrefix) + std::to_string(j), stage,
                             std::uint64_t{job.cells_per_array} * kBanks, kPairBits});
  }

  std::vector<std::uint64_t> bits_in_stage(arrays_in_stage.size(), 0);
  for (const auto& a : report.arrays) {
    bits_in_stage[static_cast<std::size_t>(a.stage)] += a.bits();
    report.register_bits_used += a.bits();
  }
  report.register_bits_budget =
      profile.register_bits_per_stage * static_cast<std::uint64_t>(profile.stages);
  for (std::size_t s = 0; s < bits_in_stage.size(); ++s) {
    Require(bits_in_stage[s] <= profile.register_bits_per_stage,
            "stage " + std::to_string(s) + " needs " + std::to_string(bits_in_stage[s]) +
                " register bits, budget " + std::to_string(profile.register_bits_per_stage),
            report);
  }
  report.fits = report.problems.empty();
  return report;
}

}  // namespace libra::dataplane
