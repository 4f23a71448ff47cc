#include "hot/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "wire/wire.h"

namespace libra::hot {
namespace {

constexpr double kUnknownLinkBytesPerSecond = 10e9 / 8;  // 10 Gbit/s
constexpr double kFrameBytes = 42;  // UDP, IPv4 and Ethernet headers of a packet
constexpr size_t kFirstCandidate = 256;
constexpr double kKeyBytes = 8;    // a key on the plain path
constexpr double kFloatBytes = 4;  // a value on the plain path

// x to the n by squaring: ChooseByCost asks this of every key of every
// candidate set (~100k times), where std::pow took a tenth of the
// controller's choice.
double PowerOf(double x, uint32_t n) {
  double result = 1;
  for (; n > 0; n >>= 1, x *= x) {
    if (n & 1) result *= x;
  }
  return result;
}

// The share of epochs in which at least one of `workers` pushes a key that
// `pushes_per_epoch` pushes carry in all: each worker pushes it with
// probability pushes / workers (a worker pushes a key at most once a push).
double WrittenShare(double pushes_per_epoch, uint32_t workers) {
  const double per_worker = std::clamp(pushes_per_epoch / workers, 0.0, 1.0);
  return 1.0 - PowerOf(1.0 - per_worker, workers);
}

// Key-value pairs on the plain path per epoch, all workers: `pushes` pushes
// of a key (one per key a worker pushes), `values` values in them. Each is
// pushed (key and values), asked for by the pull (key) and answered (the
// values alone: the answer's keys are the request's).
struct PlainTraffic {
  double pushes = 0;
  double values = 0;
  void Add(double more_pushes, double more_values) {
    pushes += more_pushes;
    values += more_values;
  }
  double PushBytes() const { return pushes * kKeyBytes + values * kFloatBytes; }
  double PullRequestBytes() const { return pushes * kKeyBytes; }
  double PullAnswerBytes() const { return values * kFloatBytes; }
  double Bytes() const { return PushBytes() + PullRequestBytes() + PullAnswerBytes(); }
  // A server's CPU for its share of the pushes and pulls.
  double ServerCpu(const CostConstants& c, double servers) const {
    return 2 * values * c.plain_value_s / servers;
  }
};

// The bytes per epoch on each direction of a server's and a worker's link
// (links are full duplex: the busiest direction of the busiest link sets
// the time). The keys are taken as spread evenly over servers and workers.
struct LinkLoads {
  double server_in = 0, server_out = 0, worker_in = 0, worker_out = 0;
  void AddPairs(const PlainTraffic& pairs, double workers, double servers) {
    server_in += (pairs.PushBytes() + pairs.PullRequestBytes()) / servers;
    server_out += pairs.PullAnswerBytes() / servers;
    worker_out += (pairs.PushBytes() + pairs.PullRequestBytes()) / workers;
    worker_in += pairs.PullAnswerBytes() / workers;
  }
  double Seconds(double rate) const {
    return std::max({server_in, server_out, worker_in, worker_out}) / rate;
  }
};

// With every host and the switch on `shared_cores` cores: the CPU of all
// their hot packets in an epoch, spread over those cores (0 when each has
// its own CPU). The plain path's own CPU is left out on both sides: this
// bounds what the hot path adds, which is what a busy machine makes the
// limit.
double SharedCpuSeconds(const CostInput& input, const CostPrediction& p) {
  if (input.shared_cores <= 0) return 0;
  const CostConstants& c = input.constants;
  const double host_packets =
      p.libra_server_packets * input.num_servers + p.libra_worker_packets * input.num_workers;
  return (host_packets * c.host_packet_s + p.libra_switch_packets * c.switch_packet_s) /
         input.shared_cores;
}

// The hot path's fixed latency per epoch. Each step of its chain (FIN ->
// READY -> COLLECT -> RESULT -> UPDATE -> REPLICA) wakes another process;
// on shared cores with more nodes than cores each waits its turn, so the
// chain stretches with the number of processes per core.
double EpochLatency(const CostInput& input) {
  const double latency = input.constants.epoch_latency_s;
  if (input.shared_cores <= 0) return latency;
  const double processes = input.num_workers + input.num_servers + 1.0;  // and the switch
  return latency * std::max(1.0, processes / input.shared_cores);
}

// The keys, most pushed first (the controller hands them over nearly always
// in this order already).
std::vector<KeySample> OrderedByPushes(const std::vector<KeySample>& keys) {
  std::vector<KeySample> ordered = keys;
  const auto hotter = [](const KeySample& a, const KeySample& b) {
    return a.pushes_per_epoch > b.pushes_per_epoch;
  };
  if (!std::is_sorted(ordered.begin(), ordered.end(), hotter)) {
    std::stable_sort(ordered.begin(), ordered.end(), hotter);
  }
  return ordered;
}

}  // namespace

std::string DescribePrediction(const CostPrediction& p) {
  char line[256];
  std::snprintf(line, sizeof line,
                "%zu keys: %.2f ms per epoch with the hot path against %.2f ms on the plain PS "
                "(%.2fx)",
                p.keys, p.libra_seconds * 1e3, p.plain_seconds * 1e3, p.predicted_speedup());
  std::string out = line;
  if (p.plain_seconds != p.predicted_plain_seconds) {
    std::snprintf(line, sizeof line, "; the plain epoch as measured (%.2f ms predicted)",
                  p.predicted_plain_seconds * 1e3);
    out += line;
  }
  return out;
}

nlohmann::json PredictionJson(const CostPrediction& p) {
  return {{"keys", p.keys},
          {"values", p.values},
          {"written_values_per_epoch", p.written_values},
          {"written_rows_per_epoch", p.written_rows},
          {"row_reads_per_epoch", p.row_reads},
          {"collect_packets_per_epoch", p.collect_packets},
          {"update_packets_per_epoch", p.update_packets},
          {"plain_server_bytes_per_epoch", p.plain_server_bytes},
          {"libra_server_bytes_per_epoch", p.libra_server_bytes},
          {"plain_worker_bytes_per_epoch", p.plain_worker_bytes},
          {"libra_worker_bytes_per_epoch", p.libra_worker_bytes},
          {"libra_server_packets_per_epoch", p.libra_server_packets},
          {"libra_worker_packets_per_epoch", p.libra_worker_packets},
          {"libra_switch_packets_per_epoch", p.libra_switch_packets},
          {"plain_seconds_per_epoch", p.plain_seconds},
          {"predicted_plain_seconds_per_epoch", p.predicted_plain_seconds},
          {"unmodelled_seconds_per_epoch", p.unmodelled_seconds},
          {"libra_seconds_per_epoch", p.libra_seconds},
          {"link_seconds_per_epoch", p.libra_link_seconds},
          {"cpu_seconds_per_epoch", p.libra_cpu_seconds},
          {"shared_cpu_seconds_per_epoch", p.libra_shared_cpu_seconds},
          {"latency_seconds_per_epoch", p.latency_seconds},
          {"speedup", p.predicted_speedup()}};
}

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
  double worker_values = 0;  // hot values one worker pushes per epoch
  // Rows fill in order of heat, P cells a row (heat placement deals the
  // hottest values to the first rows). A row is written when any key with a
  // cell in it is pushed; the keys of a row are taken as independent. A
  // server reads a row whole when at least half its cells are written, and
  // packs the written cells of the others (HotCollector's plan).
  uint32_t cells_in_row = 0;
  double row_unwritten = 1;
  double row_written_cells = 0;
  double packed_values = 0;  // written values read by packed COLLECTs
  auto close_row = [&] {
    p.written_rows += 1.0 - row_unwritten;
    if (2 * row_written_cells >= slots) {
      p.row_reads += 1.0 - row_unwritten;
    } else {
      packed_values += row_written_cells;
    }
    cells_in_row = 0;
    row_unwritten = 1;
    row_written_cells = 0;
  };
  PlainTraffic hot_pairs;  // what the set's keys cost as key-value pairs
  for (size_t i = 0; i < keys && i < ordered.size(); ++i) {
    const KeySample& k = ordered[i];
    const double written = WrittenShare(k.pushes_per_epoch, input.num_workers);
    p.values += k.value_len;
    p.written_values += written * k.value_len;
    hot_pairs.Add(k.pushes_per_epoch, k.pushes_per_epoch * k.value_len);
    worker_values += std::min(1.0, k.pushes_per_epoch / workers) * k.value_len;
    for (uint32_t left = k.value_len; left > 0;) {
      const uint32_t here = std::min(left, slots - cells_in_row);
      row_unwritten *= 1.0 - written;
      row_written_cells += written * here;
      cells_in_row += here;
      left -= here;
      if (cells_in_row == slots) close_row();
    }
  }
  if (cells_in_row > 0) close_row();
  // Every other key stays on the servers on both paths.
  PlainTraffic cold;
  cold.Add(input.other_pushes_per_epoch, input.other_values_per_epoch);
  for (size_t i = keys; i < ordered.size(); ++i) {
    cold.Add(ordered[i].pushes_per_epoch, ordered[i].pushes_per_epoch * ordered[i].value_len);
  }

  // The plain PS: every push of a key goes to its server and comes back
  // with the pull, as key-value pairs; the servers share the keys.
  PlainTraffic all = cold;
  all.Add(hot_pairs.pushes, hot_pairs.values);
  p.plain_server_bytes = hot_pairs.Bytes() / servers;
  p.plain_worker_bytes = hot_pairs.Bytes() / workers;
  LinkLoads plain;
  plain.AddPairs(all, workers, servers);
  p.predicted_plain_seconds = plain.Seconds(rate) + all.ServerCpu(c, servers);
  p.plain_seconds = p.predicted_plain_seconds;
  if (input.measured_plain_epoch_s > 0) {
    p.plain_seconds = input.measured_plain_epoch_s;
    p.unmodelled_seconds = std::max(0.0, p.plain_seconds - p.predicted_plain_seconds);
  }

  // Libra: DATA (and their ACKs) from each worker. The servers read the
  // rows mostly written with one COLLECT of one slot each and the other
  // written values with COLLECTs packed as DATA are (a RESULT answers with
  // the written ones), or every row when that takes fewer packets, and
  // publish them as UPDATE row blocks (each ACKed), which reach every worker
  // as REPLICAs. The cold keys' pairs share the same links.
  const double data_packets = worker_values / (slots * c.packing_utilisation);
  const double all_rows = std::ceil(static_cast<double>(p.values) / slots);
  const double packed_collects = packed_values / (slots * c.packing_utilisation);
  p.collect_packets = std::min(p.row_reads + packed_collects, all_rows) + servers;
  // Each server's stream ends in a partial packet, and its LAST goes out
  // twice (HotCollectorOptions::tail_copies): about half a packet's values
  // again per server.
  const double update_payload = wire::kMaxMessageBytes - wire::kHeaderBytes;
  const double tail_copy_values =
      std::min(p.written_values, servers * update_payload / 2 / wire::kValueBytes);
  p.update_packets = std::ceil((p.written_rows * wire::kRowBlockHeaderBytes +
                                p.written_values * wire::kValueBytes) /
                               update_payload) +
                     2 * servers;
  const double ack_bytes = wire::kHeaderBytes + kFrameBytes;
  const double collect_bytes = p.collect_packets * (wire::kHeaderBytes + kFrameBytes) +
                               p.row_reads * wire::kSlotBytes +
                               packed_values * (wire::kSlotBytes / c.packing_utilisation);
  const double result_bytes =
      p.collect_packets * (wire::kHeaderBytes + wire::kMaskBytes + kFrameBytes) +
      p.written_values * wire::kValueBytes;
  const double update_bytes = p.update_packets * (wire::kHeaderBytes + kFrameBytes) +
                              (p.written_values + tail_copy_values) * wire::kValueBytes;
  p.libra_server_packets = 2 * (p.collect_packets + p.update_packets) / servers;
  p.libra_server_bytes = (collect_bytes + result_bytes + update_bytes) / servers;
  p.libra_worker_packets = 2 * data_packets + p.update_packets;
  p.libra_worker_bytes = data_packets * c.packet_bytes + update_bytes;
  p.libra_switch_packets =
      2 * workers * data_packets + 2 * p.collect_packets + p.update_packets * (2 + workers);
  if (keys == 0) {
    p.libra_seconds = p.plain_seconds;
    return p;
  }
  LinkLoads libra;
  libra.AddPairs(cold, workers, servers);
  libra.server_in += (result_bytes + p.update_packets * ack_bytes) / servers;
  libra.server_out += (collect_bytes + update_bytes) / servers;
  libra.worker_out += data_packets * c.packet_bytes;
  libra.worker_in += data_packets * ack_bytes + update_bytes;
  p.libra_link_seconds = libra.Seconds(rate) + cold.ServerCpu(c, servers);
  p.libra_cpu_seconds =
      std::max({p.libra_server_packets * c.host_packet_s, p.libra_worker_packets * c.host_packet_s,
                p.libra_switch_packets * c.switch_packet_s});
  p.libra_shared_cpu_seconds = SharedCpuSeconds(input, p);
  const double cpu = std::max(p.libra_cpu_seconds, p.libra_shared_cpu_seconds);
  const double busiest =
      std::max(p.libra_link_seconds, cpu) + c.serial_share * std::min(p.libra_link_seconds, cpu);
  p.latency_seconds = EpochLatency(input);
  p.libra_seconds = p.unmodelled_seconds + p.latency_seconds + busiest;
  return p;
}

CostPrediction PredictWholeSet(const CostInput& input) {
  const std::vector<KeySample> ordered = OrderedByPushes(input.keys);
  return PredictCost(input, ordered, ordered.size());
}

namespace {

// The least that moving values from the servers to the hot path can leave
// of an epoch's busiest term, whichever keys move. Of the V values pushed an
// epoch, a set takes some a off the servers: the servers still step V - a
// (PlainTraffic::ServerCpu, part of the link term), and the a hot values
// cross the switch in at least a / (P x packing) DATA packets (a key is in
// a worker's push once, so each worker's DATA carry its own pushes of it),
// each received and ACKed by the switch and sent and ACKed by its worker
// (part of the CPU term; the COLLECTs, RESULTs and UPDATEs only add to it).
// The busiest term is at least the larger of the two, k2 (V - a) and k1 a,
// which is least where they meet: k1 k2 V / (k1 + k2).
double LeastBusiestTerm(const CostInput& input) {
  const CostConstants& c = input.constants;
  double values = input.other_values_per_epoch;
  for (const KeySample& k : input.keys) values += k.pushes_per_epoch * k.value_len;
  const double per_value_packets =
      2.0 / (std::max<uint32_t>(1, input.slots_per_packet) * c.packing_utilisation);
  // Per hot value: the switch's packets, one worker's share of its own
  // (spread over the workers), and, on shared cores, both together.
  double k1 =
      per_value_packets *
      std::max(c.switch_packet_s, c.host_packet_s / std::max<uint32_t>(1, input.num_workers));
  if (input.shared_cores > 0) {
    k1 = std::max(k1,
                  per_value_packets * (c.host_packet_s + c.switch_packet_s) / input.shared_cores);
  }
  const double k2 = 2 * c.plain_value_s / std::max<uint32_t>(1, input.num_servers);
  if (k1 + k2 <= 0) return 0;
  return k1 * k2 * std::max(0.0, values) / (k1 + k2);
}

}  // namespace

std::optional<CostChoice> NoSetCanPay(const CostInput& input) {
  CostChoice choice;
  choice.chosen = PredictCost(input, input.keys, 0);
  const CostPrediction& plain = choice.chosen;
  const double balance = LeastBusiestTerm(input);
  const double floor = plain.unmodelled_seconds + EpochLatency(input) + balance;
  if (plain.plain_seconds - floor > input.constants.min_saving * plain.plain_seconds) {
    return std::nullopt;
  }
  choice.candidates = {plain};
  char line[320];
  std::snprintf(line, sizeof line,
                "the cost model predicts no hot set pays: any set's epoch is at least %.2f ms "
                "(the hot path's fixed latency %.2f ms, %.2f ms of the plain epoch the model "
                "does not see, and at least %.2f ms of servers' steps and hot packets) against "
                "%.2f ms on the plain PS",
                floor * 1e3, EpochLatency(input) * 1e3, plain.unmodelled_seconds * 1e3,
                balance * 1e3, plain.plain_seconds * 1e3);
  choice.why = line;
  return choice;
}

CostChoice ChooseByCost(const CostInput& input) {
  CostChoice choice;
  choice.ordered = OrderedByPushes(input.keys);
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
  const CostConstants& c = input.constants;
  auto pays = [&](const CostPrediction& p) {
    return p.keys > 0 && p.saving_seconds() > c.min_saving * p.plain_seconds;
  };
  const CostPrediction* best = &choice.candidates.front();
  for (const CostPrediction& p : choice.candidates) {
    if (pays(p) && p.saving_seconds() > best->saving_seconds()) best = &p;
  }
  // The smallest that pays nearly as much (candidates are by size).
  for (const CostPrediction& p : choice.candidates) {
    if (pays(p) &&
        p.saving_seconds() >= best->saving_seconds() - c.prefer_smaller_within * p.plain_seconds) {
      best = &p;
      break;
    }
  }
  choice.chosen = *best;
  if (choice.chosen.keys > 0) {
    choice.why = "the cost model chose " + DescribePrediction(choice.chosen);
  } else if (fit == 0) {
    choice.why = "no sampled key fits the switch";
  } else {
    // The candidate that came closest says why none paid.
    const CostPrediction* closest = &choice.candidates.back();
    for (const CostPrediction& p : choice.candidates) {
      if (p.keys > 0 && p.saving_seconds() > closest->saving_seconds()) closest = &p;
    }
    choice.why = "the cost model predicts no hot set pays: at best " + DescribePrediction(*closest);
  }
  return choice;
}

}  // namespace libra::hot
