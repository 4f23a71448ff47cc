#include "hot/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "wire/wire.h"

namespace libra::hot {
namespace {

constexpr double kUnknownLinkBytesPerSecond = 10e9 / 8;  // 10 Gbit/s
constexpr double kFrameBytes = 42;  // UDP, IPv4 and Ethernet headers of a packet
constexpr size_t kFirstCandidate = 256;

// The share of epochs in which at least one of `workers` pushes a key that
// `pushes_per_epoch` pushes carry in all: each worker pushes it with
// probability pushes / workers (a worker pushes a key at most once a push).
double WrittenShare(double pushes_per_epoch, uint32_t workers) {
  const double per_worker = std::clamp(pushes_per_epoch / workers, 0.0, 1.0);
  return 1.0 - std::pow(1.0 - per_worker, workers);
}

std::string Describe(const CostPrediction& p) {
  char line[256];
  std::snprintf(line, sizeof line,
                "%zu keys: %.2f ms per epoch on the hot path against %.2f ms on the plain PS",
                p.keys, p.libra_seconds * 1e3, p.plain_seconds * 1e3);
  return line;
}

}  // namespace

CostPrediction PredictCost(const CostInput& input, const std::vector<KeySample>& ordered,
                           size_t keys) {
  const CostConstants& c = input.constants;
  const double rate =
      input.link_bytes_per_s > 0 ? input.link_bytes_per_s : kUnknownLinkBytesPerSecond;
  const double workers = input.num_workers;
  const double servers = input.num_servers;
  const uint32_t slots = std::max<uint32_t>(1, input.slots_per_packet);

  CostPrediction p;
  p.keys = keys;
  double pair_bytes = 0;     // key-value pairs pushed per epoch, in bytes, all workers
  double pair_values = 0;    // values pushed per epoch, all workers
  double worker_values = 0;  // hot values one worker pushes per epoch
  // Rows fill in order of heat, P cells a row (heat placement deals the
  // hottest values to the first rows). A row is written when any key with a
  // cell in it is pushed; the keys of a row are taken as independent.
  uint32_t cells_in_row = 0;
  double row_unwritten = 1;
  for (size_t i = 0; i < keys && i < ordered.size(); ++i) {
    const KeySample& k = ordered[i];
    const double written = WrittenShare(k.pushes_per_epoch, input.num_workers);
    p.values += k.value_len;
    p.written_values += written * k.value_len;
    pair_bytes += k.pushes_per_epoch * (c.key_value_bytes + 4.0 * (k.value_len - 1));
    pair_values += k.pushes_per_epoch * k.value_len;
    worker_values += std::min(1.0, k.pushes_per_epoch / workers) * k.value_len;
    for (uint32_t left = k.value_len; left > 0;) {
      const uint32_t here = std::min(left, slots - cells_in_row);
      row_unwritten *= 1.0 - written;
      cells_in_row += here;
      left -= here;
      if (cells_in_row == slots) {
        p.written_rows += 1.0 - row_unwritten;
        cells_in_row = 0;
        row_unwritten = 1;
      }
    }
  }
  if (cells_in_row > 0) p.written_rows += 1.0 - row_unwritten;

  // The plain PS: every push of a hot key goes to its server and comes back
  // with the pull, as key-value pairs; the servers share the keys.
  p.plain_server_bytes = 2 * pair_bytes / servers;
  p.plain_worker_bytes = 2 * pair_bytes / workers;
  const double plain_server_cpu = 2 * pair_values * c.plain_value_s / servers;
  p.plain_seconds =
      std::max(p.plain_server_bytes / rate + plain_server_cpu, p.plain_worker_bytes / rate);

  // Libra: DATA (and their ACKs) from each worker. The servers read the
  // written values with COLLECTs packed as DATA are (the RESULT answers with
  // the written ones), or by row when that takes fewer packets, and publish
  // them as UPDATE row blocks (each ACKed), which reach every worker as
  // REPLICAs.
  const double data_packets = worker_values / (slots * c.packing_utilisation);
  const double all_rows = std::ceil(static_cast<double>(p.values) / slots);
  p.collect_packets =
      std::min(p.written_values / (slots * c.packing_utilisation), all_rows) + servers;
  const double update_payload = wire::kMaxMessageBytes - wire::kHeaderBytes;
  p.update_packets = std::ceil((p.written_rows * wire::kRowBlockHeaderBytes +
                                p.written_values * wire::kValueBytes) /
                               update_payload) +
                     servers;
  const double collect_bytes = p.collect_packets * (wire::kHeaderBytes + kFrameBytes) +
                               p.written_values * (wire::kSlotBytes / c.packing_utilisation);
  const double result_bytes =
      p.collect_packets * (wire::kHeaderBytes + wire::kMaskBytes + kFrameBytes) +
      p.written_values * wire::kValueBytes;
  const double update_bytes =
      p.update_packets * (wire::kHeaderBytes + kFrameBytes) + p.written_values * wire::kValueBytes;
  p.libra_server_packets = 2 * (p.collect_packets + p.update_packets) / servers;
  p.libra_server_bytes = (collect_bytes + result_bytes + update_bytes) / servers;
  p.libra_worker_packets = 2 * data_packets + p.update_packets;
  p.libra_worker_bytes = data_packets * c.packet_bytes + update_bytes;
  p.libra_switch_packets =
      2 * workers * data_packets + 2 * p.collect_packets + p.update_packets * (2 + workers);
  if (keys == 0) return p;
  const double busiest =
      std::max({p.libra_server_bytes / rate, p.libra_worker_bytes / rate,
                p.libra_server_packets * c.host_packet_s, p.libra_worker_packets * c.host_packet_s,
                p.libra_switch_packets * c.switch_packet_s});
  p.libra_seconds = c.epoch_latency_s + busiest;
  return p;
}

CostChoice ChooseByCost(const CostInput& input) {
  CostChoice choice;
  choice.ordered = input.keys;
  std::stable_sort(choice.ordered.begin(), choice.ordered.end(),
                   [](const KeySample& a, const KeySample& b) {
                     return a.pushes_per_epoch > b.pushes_per_epoch;
                   });
  // The most keys that fit the switch.
  size_t fit = 0;
  uint64_t values = 0;
  while (fit < choice.ordered.size() &&
         values + choice.ordered[fit].value_len <= input.capacity_values) {
    values += choice.ordered[fit].value_len;
    ++fit;
  }
  std::vector<size_t> sizes = {0};
  for (size_t n = kFirstCandidate; n < fit; n *= 2) sizes.push_back(n);
  if (fit > 0) sizes.push_back(fit);

  for (size_t n : sizes) choice.candidates.push_back(PredictCost(input, choice.ordered, n));
  const CostPrediction* best = &choice.candidates.front();
  for (const CostPrediction& p : choice.candidates) {
    if (p.keys > 0 && p.saving_seconds() > best->saving_seconds() &&
        p.saving_seconds() > input.constants.min_saving * p.plain_seconds) {
      best = &p;
    }
  }
  choice.chosen = *best;
  if (choice.chosen.keys > 0) {
    choice.why = "the cost model chose " + Describe(choice.chosen);
  } else if (fit == 0) {
    choice.why = "no sampled key fits the switch";
  } else {
    // The candidate that came closest says why none paid.
    const CostPrediction* closest = &choice.candidates.back();
    for (const CostPrediction& p : choice.candidates) {
      if (p.keys > 0 && p.saving_seconds() > closest->saving_seconds()) closest = &p;
    }
    choice.why = "the cost model predicts no hot set pays: at best " + Describe(*closest);
  }
  return choice;
}

}  // namespace libra::hot
