// HotSender and HotCollector against a real `libra switchd` on loopback:
// N workers (threads of this process, each with its own HotSender) push hot
// gradients for several epochs, 1-2 HotCollectors collect and publish, and
// every sum must equal, bit for bit, a reference computed here with the
// switch's own fixed-point conversion; every worker's replica must then hold
// the published parameters. Also with injected loss, with two epochs in
// flight, and with the switch killed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "common/switchd_process.h"
#include "hot/placement.h"
#include "hotpath/controller/switch_control_client.h"
#include "hotpath/messages/written_keys.h"
#include "hotpath/server/fallback_aggregator.h"
#include "hotpath/server/hot_collector.h"
#include "hotpath/worker/hot_sender.h"
#include "net/udp_socket.h"
#include "wire/fixed_point.h"

namespace libra::hotpath {
namespace {

using namespace std::chrono_literals;
using hot::Key;

constexpr std::uint32_t kJobId = 21;
constexpr int kScale = 16;
constexpr std::uint32_t kArrays = 8;
constexpr std::uint32_t kCells = 64;
constexpr int kHotKeys = 150;

using libra::test_support::SwitchdProcess;

std::shared_ptr<const hot::HotSet> MakeHotSet() {
  std::vector<hot::HotKey> keys;
  for (int k = 0; k < kHotKeys; ++k) {
    keys.push_back({static_cast<Key>(7 * k + 3), 1 + static_cast<std::uint32_t>(k % 3 == 0),
                    static_cast<std::uint64_t>(1000 - k)});
  }
  return std::make_shared<const hot::HotSet>(
      hot::PlaceHotSet(keys, hot::SwitchLayout{kArrays, kCells, 2}, hot::HeatPlacement()));
}

// Keys range-partitioned over the servers, as the PS runtime does.
std::vector<std::vector<Key>> PartitionKeys(const hot::HotSet& set, int servers) {
  std::vector<Key> all;
  for (const hot::HotKey& key : set.keys()) all.push_back(key.key);
  std::sort(all.begin(), all.end());
  std::vector<std::vector<Key>> owned(servers);
  for (std::size_t i = 0; i < all.size(); ++i) owned[i * servers / all.size()].push_back(all[i]);
  return owned;
}

// One worker's hot push: a random subset of the hot keys, random gradients.
// `sparse`: only from the first half of each half of the hot set (in
// hot-set order, which fills rows in order), so that with two servers
// owning a half each, every server has rows no worker writes.
struct Push {
  std::vector<Key> keys;
  std::vector<float> vals;
};

Push MakePush(const hot::HotSet& set, std::mt19937_64& rng, bool sparse = false) {
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  Push push;
  for (std::size_t i = 0; i < set.keys().size(); ++i) {
    const hot::HotKey& key = set.keys()[i];
    if (sparse && i % (kHotKeys / 2) >= kHotKeys / 4) continue;
    if (rng() % 3 == 0) continue;
    push.keys.push_back(key.key);
    for (std::uint32_t v = 0; v < key.value_len; ++v) {
      push.vals.push_back(value(rng) * std::ldexp(1.0f, -static_cast<int>(rng() % 12)));
    }
  }
  return push;
}

// The switch's sum of one epoch, key -> fixed-point sum per value, for the
// keys some worker pushed (the only ones the switch returns).
std::map<Key, std::vector<std::int32_t>> ReferenceSums(const hot::HotSet& set,
                                                       const std::vector<Push>& pushes) {
  const dataplane::FixedPointCodec codec(kScale);
  std::map<Key, std::vector<std::int32_t>> fixed;
  for (const Push& push : pushes) {
    std::size_t position = 0;
    for (const Key key : push.keys) {
      auto& sums = fixed[key];
      sums.resize(set.keys()[set.Find(key)].value_len, 0);
      for (std::int32_t& sum : sums) {
        const auto addend = codec.ToFixed(std::bit_cast<std::uint32_t>(push.vals[position++]));
        sum = dataplane::SaturatingAdd(sum, addend.value).value;
      }
    }
  }
  return fixed;
}

// CollectedEpochs from the collectors' I/O threads, for the test thread.
class EpochInbox {
 public:
  void Put(CollectedEpoch epoch) {
    std::lock_guard lock(mutex_);
    epochs_.push_back(std::move(epoch));
    arrived_.notify_all();
  }
  // The next epoch delivered, or nullopt after `timeout`.
  std::optional<CollectedEpoch> Take(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!arrived_.wait_for(lock, timeout, [&] { return !epochs_.empty(); })) return std::nullopt;
    CollectedEpoch epoch = std::move(epochs_.front());
    epochs_.pop_front();
    return epoch;
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<CollectedEpoch> epochs_;
};

// A job of N HotSenders and M HotCollectors installed on a switchd.
struct Cluster {
  Cluster(SwitchdProcess& sw, int workers, int servers, RetryPolicy retry = {}, bool by_row = false,
          bool report_keys = false) {
    hot_set = MakeHotSet();
    owned = PartitionKeys(*hot_set, servers);
    if (by_row && servers > 1) {
      // Each server's keys in rows of their own, as the controller places them.
      std::vector<std::uint32_t> owner_of_key;
      for (const hot::HotKey& key : hot_set->keys()) {
        for (int s = 0; s < servers; ++s) {
          if (std::count(owned[s].begin(), owned[s].end(), key.key) != 0) {
            owner_of_key.push_back(static_cast<std::uint32_t>(s));
          }
        }
      }
      hot_set = std::make_shared<const hot::HotSet>(hot::PlaceHotSet(
          std::vector<hot::HotKey>(hot_set->keys().begin(), hot_set->keys().end()),
          hot_set->layout(),
          hot::BandedPlacement(owner_of_key, std::make_unique<hot::HeatPlacement>())));
    }
    inboxes.resize(servers);
    SwitchJob job;
    job.job_id = kJobId;
    job.token = "hotpath-test";
    job.cells_per_array = kCells;
    job.scale_bits = kScale;
    job.slots_per_packet = kArrays;
    std::map<Key, std::uint16_t> owner;
    for (int s = 0; s < servers; ++s) {
      for (const Key key : owned[s]) owner[key] = static_cast<std::uint16_t>(s);
    }
    std::vector<std::uint16_t> key_owners;
    for (const hot::HotKey& key : hot_set->keys()) key_owners.push_back(owner.at(key.key));
    published_once.assign(servers, false);
    for (int w = 0; w < workers; ++w) {
      HotSenderOptions options;
      options.key_owners = key_owners;
      options.job_id = kJobId;
      options.worker_id = static_cast<std::uint16_t>(w);
      options.switch_address = sw.data;
      options.retry = retry;
      options.replica_gap_timeout = 50ms;
      senders.push_back(std::make_unique<HotSender>(hot_set, options));
      job.workers.push_back(senders.back()->local());
    }
    for (int s = 0; s < servers; ++s) {
      HotCollectorOptions options;
      options.job_id = kJobId;
      options.server_id = static_cast<std::uint16_t>(s);
      options.switch_address = sw.data;
      options.num_workers = static_cast<std::uint32_t>(workers);
      options.scale_bits = kScale;
      options.retry = retry;
      options.collect_by_row = by_row;
      // Long enough that a missing report shows as every cell read.
      options.written_keys_grace = report_keys ? 2000ms : 0ms;
      collectors.push_back(std::make_unique<HotCollector>(
          hot_set, owned[s], options,
          [inbox = &inboxes[s]](CollectedEpoch epoch) { inbox->Put(std::move(epoch)); }));
      fallbacks.push_back(std::make_unique<FallbackAggregator>(
          hot_set, owned[s], static_cast<std::uint32_t>(workers), kScale));
      job.servers.push_back(collectors.back()->local());
    }
    control = std::make_unique<hotpath::SwitchControlClient>(sw.control);
    control->InstallJob(job);
    for (const hot::HotKey& key : hot_set->keys()) {
      params[key.key].assign(key.value_len, 0.01f * static_cast<float>(key.key));
    }
  }

  // Collects epoch `epoch` on every server, checks the sums of the pushed
  // keys against the reference bit for bit (the fixed-point sums the
  // RESULTs carried, and their float32), and against what the server
  // would have summed itself with the switch down (FallbackAggregator: the
  // same keys, lengths, bits and flags), applies SGD and publishes the
  // new values: the changed ones, or every owned one in a server's first
  // epoch (as the PS runtime does).
  void CollectCheckPublish(std::uint32_t epoch, const std::vector<Push>& pushes) {
    const auto reference = ReferenceSums(*hot_set, pushes);
    const dataplane::FixedPointCodec codec(kScale);
    for (std::size_t s = 0; s < collectors.size(); ++s) {
      std::optional<CollectedEpoch> collected = inboxes[s].Take(10s);
      ASSERT_TRUE(collected.has_value()) << "server " << s << " epoch " << epoch;
      ASSERT_EQ(collected->status, HotPathStatus::kOk);
      ASSERT_EQ(collected->epoch, epoch);
      EXPECT_EQ(collected->num_merged, senders.size());
      EXPECT_TRUE(collected->saturated_keys.empty());
      std::vector<Key> pushed;
      for (const Key key : owned[s]) {
        if (reference.count(key) != 0) pushed.push_back(key);
      }
      ASSERT_EQ(collected->keys, pushed);
      ASSERT_EQ(collected->lens.size(), collected->keys.size());
      std::size_t position = 0;
      for (std::size_t i = 0; i < collected->keys.size(); ++i) {
        const Key key = collected->keys[i];
        const auto& expected = reference.at(key);
        ASSERT_EQ(collected->lens[i], static_cast<int>(expected.size()));
        for (std::size_t v = 0; v < expected.size(); ++v, ++position) {
          ASSERT_EQ(collected->fixed[position], expected[v])
              << "epoch " << epoch << " key " << key << " value " << v;
          ASSERT_EQ(std::bit_cast<std::uint32_t>(collected->vals[position]),
                    codec.ToFloatBits(expected[v]))
              << "epoch " << epoch << " key " << key << " value " << v;
          params[key][v] -= 0.5f * collected->vals[position];
        }
      }
      std::optional<CollectedEpoch> summed_here;
      for (std::size_t w = 0; w < pushes.size(); ++w) {
        std::vector<Key> keys;
        std::vector<float> vals;
        std::size_t position = 0;
        for (const Key key : pushes[w].keys) {
          const std::uint32_t len = hot_set->keys()[hot_set->Find(key)].value_len;
          if (std::count(owned[s].begin(), owned[s].end(), key) != 0) {
            keys.push_back(key);
            vals.insert(vals.end(), pushes[w].vals.begin() + position,
                        pushes[w].vals.begin() + position + len);
          }
          position += len;
        }
        std::string error;
        summed_here = fallbacks[s]->Add(epoch, static_cast<std::uint32_t>(w), keys, vals, &error);
        EXPECT_EQ(error, "");
      }
      ASSERT_TRUE(summed_here.has_value()) << "server " << s << " epoch " << epoch;
      EXPECT_EQ(summed_here->epoch, epoch);
      EXPECT_EQ(summed_here->num_merged, collected->num_merged);
      EXPECT_EQ(summed_here->keys, collected->keys);
      EXPECT_EQ(summed_here->lens, collected->lens);
      EXPECT_EQ(summed_here->saturated_keys, collected->saturated_keys);
      ASSERT_EQ(summed_here->vals.size(), collected->vals.size());
      for (std::size_t v = 0; v < collected->vals.size(); ++v) {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(summed_here->vals[v]),
                  std::bit_cast<std::uint32_t>(collected->vals[v]))
            << "server " << s << " epoch " << epoch << " value " << v;
      }
      // The collector gives each key's hot-set entry, and the server
      // publishes by them.
      const std::vector<hot::HotSet::Entry> entries = hot_set->LookupAll(collected->keys);
      ASSERT_EQ(collected->entries.size(), entries.size());
      for (std::size_t i = 0; i < entries.size(); ++i) {
        ASSERT_EQ(collected->entries[i].index, entries[i].index);
        ASSERT_EQ(collected->entries[i].value_len, entries[i].value_len);
      }
      const std::vector<Key>& keys = published_once[s] ? collected->keys : owned[s];
      std::vector<float> new_values;
      for (const Key key : keys) {
        new_values.insert(new_values.end(), params[key].begin(), params[key].end());
      }
      if (published_once[s]) {
        collectors[s]->PublishUpdate(epoch, keys, new_values, collected->entries);
      } else {
        collectors[s]->PublishUpdate(epoch, keys, new_values);
      }
      published_once[s] = true;
    }
    // What a server answers a repair with: every value as of this epoch.
    std::lock_guard lock(published_mutex);
    auto& [keys, values] = published[epoch];
    for (const hot::HotKey& key : hot_set->keys()) {
      keys.push_back(key.key);
      values.insert(values.end(), params[key.key].begin(), params[key.key].end());
    }
  }

  // What the PS runtime's worker sends each server with its push
  // (WRITTEN_KEYS): the server's keys that `push` writes, by their position
  // among the server's keys in ascending order.
  void ReportWrittenKeys(std::uint32_t epoch, int worker, const Push& push) {
    for (std::size_t s = 0; s < collectors.size(); ++s) {
      std::vector<Key> sorted = owned[s];
      std::sort(sorted.begin(), sorted.end());
      std::vector<std::uint32_t> positions;
      for (const Key key : push.keys) {
        const auto at = std::lower_bound(sorted.begin(), sorted.end(), key);
        if (at != sorted.end() && *at == key) {
          positions.push_back(static_cast<std::uint32_t>(at - sorted.begin()));
        }
      }
      std::sort(positions.begin(), positions.end());
      collectors[s]->AddWrittenKeys(
          epoch, static_cast<std::uint32_t>(worker),
          EncodeKeySet(positions, static_cast<std::uint32_t>(sorted.size())));
    }
  }

  // Reads all hot keys from a worker's replica at its last pushed epoch,
  // repairing a gap from the published values (as the integration will do
  // over ZeroMQ) when a REPLICA was lost. Returns the values.
  std::vector<float> PullAll(int worker, std::uint32_t epoch, int* repairs,
                             std::chrono::milliseconds timeout = 2s) {
    std::vector<Key> keys;
    for (const hot::HotKey& key : hot_set->keys()) keys.push_back(key.key);
    std::vector<float> vals;
    std::vector<int> lens;
    for (int attempt = 0; attempt < 20; ++attempt) {
      if (senders[worker]->Pull(keys, &vals, &lens, timeout) == HotPathStatus::kOk) return vals;
      std::lock_guard lock(published_mutex);
      const auto it = published.find(epoch);
      if (it == published.end() || it->second.first.size() != keys.size()) continue;
      senders[worker]->RepairReplica(epoch, it->second.first, it->second.second);
      ++*repairs;
    }
    ADD_FAILURE() << "worker " << worker << " never reached epoch " << epoch;
    return vals;
  }

  void ExpectReplicaHoldsParams(const std::vector<float>& vals) {
    std::size_t position = 0;
    for (const hot::HotKey& key : hot_set->keys()) {
      for (const float expected : params.at(key.key)) {
        ASSERT_LT(position, vals.size());
        ASSERT_EQ(std::bit_cast<std::uint32_t>(vals[position++]),
                  std::bit_cast<std::uint32_t>(expected))
            << "key " << key.key;
      }
    }
  }

  std::shared_ptr<const hot::HotSet> hot_set;
  std::vector<std::vector<Key>> owned;
  std::deque<EpochInbox> inboxes;
  std::vector<std::unique_ptr<HotSender>> senders;
  std::vector<std::unique_ptr<HotCollector>> collectors;
  std::vector<std::unique_ptr<FallbackAggregator>> fallbacks;  // per server
  std::unique_ptr<hotpath::SwitchControlClient> control;
  std::map<Key, std::vector<float>> params;  // the servers' model
  std::vector<bool> published_once;          // per server
  std::mutex published_mutex;
  std::map<std::uint32_t, std::pair<std::vector<Key>, std::vector<float>>> published;
};

// A collector may poll before the job is installed (dropped as no_job), and
// a worker's FIN that came behind a DATA lost on the way in counts more DATA
// than the switch saw (fin_count_mismatch: the worker sends it again once
// the resent DATA is ACKed, so at most one per lost DATA); nothing else may
// be dropped.
void ExpectNoDropsOnceInstalled(const nlohmann::json& counters) {
  const std::uint64_t mismatches = counters["drops"]["fin_count_mismatch"];
  EXPECT_LE(mismatches, counters["io"]["ingress_loss_injected"].get<std::uint64_t>())
      << counters.dump();
  EXPECT_EQ(counters["drops_total"].get<std::uint64_t>(),
            counters["drops"]["no_job"].get<std::uint64_t>() + mismatches)
      << counters.dump();
}

struct Shape {
  int workers;
  int servers;
  double drop_rate;
  bool by_row = false;       // servers COLLECT whole rows of their own
  bool report_keys = false;  // workers push sparsely and report their keys
};

class HotPathSwitchdTest : public ::testing::TestWithParam<Shape> {};

TEST_P(HotPathSwitchdTest, EpochsAggregateBitForBitAndReplicate) {
  const Shape shape = GetParam();
  std::vector<std::string> flags;
  if (shape.drop_rate > 0) {
    flags = {"--drop-rate", std::to_string(shape.drop_rate), "--drop-seed", "7"};
  }
  SwitchdProcess sw(flags);
  Cluster cluster(sw, shape.workers, shape.servers, RetryPolicy{}, shape.by_row, shape.report_keys);
  for (const auto& collector : cluster.collectors) {
    EXPECT_EQ(collector->collects_by_row(), shape.by_row);
  }
  std::mt19937_64 rng(99 + shape.workers);
  constexpr int kEpochs = 4;
  int repairs = 0;
  std::mutex repairs_mutex;
  for (std::uint32_t epoch = 0; epoch < kEpochs; ++epoch) {
    std::vector<Push> pushes;
    for (int w = 0; w < shape.workers; ++w) {
      pushes.push_back(MakePush(*cluster.hot_set, rng, shape.report_keys));
      if (shape.report_keys) cluster.ReportWrittenKeys(epoch, w, pushes.back());
    }
    std::vector<std::vector<float>> pulled(shape.workers);
    std::vector<std::thread> workers;
    for (int w = 0; w < shape.workers; ++w) {
      workers.emplace_back([&, w] {
        const auto done = cluster.senders[w]->Push(epoch, pushes[w].keys, pushes[w].vals);
        EXPECT_EQ(done.get(), HotPathStatus::kOk) << "worker " << w << " epoch " << epoch;
        int worker_repairs = 0;
        pulled[w] = cluster.PullAll(w, epoch, &worker_repairs, shape.drop_rate > 0 ? 300ms : 2s);
        std::lock_guard lock(repairs_mutex);
        repairs += worker_repairs;
      });
    }
    cluster.CollectCheckPublish(epoch, pushes);
    for (auto& worker : workers) worker.join();
    if (HasFatalFailure()) return;
    for (int w = 0; w < shape.workers; ++w) cluster.ExpectReplicaHoldsParams(pulled[w]);
  }

  for (const auto& sender : cluster.senders) {
    const HotSenderCounters counters = sender->counters();
    EXPECT_EQ(counters.epochs_acked, kEpochs);
    EXPECT_EQ(counters.epochs_failed, 0u);
    EXPECT_GT(counters.data_packets, 0u);
    EXPECT_EQ(counters.fin_packets, kEpochs);
    EXPECT_GT(counters.bytes_sent, 0u);
  }
  for (const auto& collector : cluster.collectors) {
    const HotCollectorCounters counters = collector->counters();
    if (shape.report_keys) {
      // Only the written cells were asked for, in fewer COLLECTs than
      // reading everything takes, and the sums are exact.
      EXPECT_EQ(counters.epochs_by_written_keys, kEpochs);
      EXPECT_GT(counters.packets_saved, 0u);
      EXPECT_EQ(counters.epochs_without_key_reports, 0u);
      EXPECT_EQ(counters.key_reports, std::uint64_t{kEpochs} * shape.workers);
      // The workers' union fills most of the rows it touches: by row, those
      // are read whole.
      if (shape.by_row) {
        EXPECT_GT(counters.row_collect_packets, 0u);
      } else {
        EXPECT_EQ(counters.row_collect_packets, 0u);
      }
    } else {
      EXPECT_EQ(counters.epochs_by_written_keys, 0u);
      EXPECT_EQ(counters.packets_saved, 0u);
    }
  }
  const nlohmann::json switch_counters = cluster.control->Counters();
  EXPECT_EQ(switch_counters["events"]["epochs_ready"], kEpochs);
  ExpectNoDropsOnceInstalled(switch_counters);
  if (shape.drop_rate == 0) {
    // Without loss every REPLICA arrives. (Retransmissions and suspected
    // gaps are not asserted: on a loaded machine a 5 ms timeout can expire.)
    EXPECT_EQ(repairs, 0);
  } else {
    std::uint64_t retransmissions = 0;
    for (const auto& sender : cluster.senders)
      retransmissions += sender->counters().retransmissions;
    for (const auto& collector : cluster.collectors) {
      retransmissions += collector->counters().retransmissions;
    }
    EXPECT_GT(retransmissions, 0u);
    EXPECT_GT(switch_counters["io"]["ingress_loss_injected"].get<int>(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, HotPathSwitchdTest,
    ::testing::Values(Shape{2, 1, 0.0}, Shape{3, 2, 0.0}, Shape{4, 2, 0.0}, Shape{3, 2, 0.05},
                      Shape{4, 2, 0.2}, Shape{2, 1, 0.0, true}, Shape{3, 2, 0.0, true},
                      Shape{4, 2, 0.2, true}, Shape{3, 2, 0.0, true, true},
                      Shape{4, 2, 0.2, true, true}, Shape{3, 2, 0.0, false, true},
                      Shape{4, 2, 0.2, false, true}),
    [](const auto& info) {
      return std::to_string(info.param.workers) + "Workers" + std::to_string(info.param.servers) +
             "Servers" +
             (info.param.drop_rate > 0
                  ? "Loss" + std::to_string(int(info.param.drop_rate * 100)) + "Percent"
                  : "Clean") +
             (info.param.by_row ? "ByRow" : "") + (info.param.report_keys ? "WrittenKeysOnly" : "");
    });

// A worker whose report of written keys never comes costs the grace and a
// read of every cell, never a value: the sums are still exact.
TEST(HotPathSwitchd, AMissingKeyReportMeansEveryCellIsRead) {
  SwitchdProcess sw;
  Cluster cluster(sw, 2, 1, RetryPolicy{}, /*by_row=*/true, /*report_keys=*/true);
  std::mt19937_64 rng(5);
  const std::vector<Push> pushes = {MakePush(*cluster.hot_set, rng, true),
                                    MakePush(*cluster.hot_set, rng, true)};
  cluster.ReportWrittenKeys(0, 0, pushes[0]);  // worker 1 does not report
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w) {
    workers.emplace_back([&, w] {
      EXPECT_EQ(cluster.senders[w]->Push(0, pushes[w].keys, pushes[w].vals).get(),
                HotPathStatus::kOk);
    });
  }
  cluster.CollectCheckPublish(0, pushes);
  for (auto& worker : workers) worker.join();
  const HotCollectorCounters counters = cluster.collectors[0]->counters();
  EXPECT_EQ(counters.key_reports, 1u);
  EXPECT_EQ(counters.epochs_by_written_keys, 0u);
  EXPECT_EQ(counters.packets_saved, 0u);
  EXPECT_EQ(counters.epochs_without_key_reports, 1u);
  // A report for an epoch already collected, or a malformed one, is ignored.
  cluster.ReportWrittenKeys(0, 1, pushes[1]);
  std::vector<std::uint8_t> wrong_size(1000, 0xff);
  wrong_size[0] = kKeySetBitmap;
  cluster.collectors[0]->AddWrittenKeys(1, 0, wrong_size);
  EXPECT_EQ(cluster.collectors[0]->counters().key_reports_ignored, 2u);
}

// Two epochs in flight: every worker pushes epochs 0, 1 and 2 at once.
// Epochs 0 and 1 fill the two banks; epoch 2 must wait until epoch 0 is
// released (here: committed by hand), or it would overwrite epoch 0's bank
// before the servers read it.
TEST(HotPathSwitchd, TwoEpochsInFlightAndTheThirdWaitsForABank) {
  SwitchdProcess sw;
  constexpr int kWorkers = 3;
  Cluster cluster(sw, kWorkers, 2);
  std::mt19937_64 rng(5);
  std::vector<std::vector<Push>> pushes(3);
  std::vector<std::vector<std::shared_future<HotPathStatus>>> done(3);
  for (std::uint32_t epoch = 0; epoch < 3; ++epoch) {
    for (int w = 0; w < kWorkers; ++w) {
      pushes[epoch].push_back(MakePush(*cluster.hot_set, rng));
      done[epoch].push_back(
          cluster.senders[w]->Push(epoch, pushes[epoch][w].keys, pushes[epoch][w].vals));
    }
  }
  for (std::uint32_t epoch = 0; epoch < 2; ++epoch) {
    for (auto& future : done[epoch]) EXPECT_EQ(future.get(), HotPathStatus::kOk);
  }
  // Both epochs are in the switch at once; the servers collect both.
  cluster.CollectCheckPublish(0, pushes[0]);
  cluster.CollectCheckPublish(1, pushes[1]);
  if (HasFatalFailure()) return;
  // Epoch 2 starts only once its bank (epoch 0's) is released; the replica
  // of epoch 0 releases it (or Commit would), and then it goes through.
  for (auto& future : done[2]) {
    ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(future.get(), HotPathStatus::kOk);
  }
  cluster.CollectCheckPublish(2, pushes[2]);
  int repairs = 0;
  for (int w = 0; w < kWorkers; ++w)
    cluster.ExpectReplicaHoldsParams(cluster.PullAll(w, 2, &repairs));
  EXPECT_EQ(repairs, 0);
  const nlohmann::json counters = cluster.control->Counters();
  EXPECT_EQ(counters["events"]["epochs_ready"], 3);
  ExpectNoDropsOnceInstalled(counters);
}

TEST(HotPathSwitchd, AThirdEpochWaitsUntilTheFirstIsCommitted) {
  SwitchdProcess sw;
  constexpr int kWorkers = 2;
  Cluster cluster(sw, kWorkers, 1);
  std::mt19937_64 rng(6);
  std::vector<std::vector<std::shared_future<HotPathStatus>>> done(3);
  for (std::uint32_t epoch = 0; epoch < 3; ++epoch) {
    for (int w = 0; w < kWorkers; ++w) {
      const Push push = MakePush(*cluster.hot_set, rng);
      done[epoch].push_back(cluster.senders[w]->Push(epoch, push.keys, push.vals));
    }
  }
  for (std::uint32_t epoch = 0; epoch < 2; ++epoch) {
    for (auto& future : done[epoch]) EXPECT_EQ(future.get(), HotPathStatus::kOk);
  }
  // Nobody publishes or commits epoch 0: epoch 2 has no bank to go to.
  EXPECT_EQ(done[2][0].wait_for(200ms), std::future_status::timeout);
  ASSERT_TRUE(cluster.senders[0]->Retained(0).has_value());
  for (auto& sender : cluster.senders) sender->Commit(0);
  EXPECT_FALSE(cluster.senders[0]->Retained(0).has_value());
  ASSERT_TRUE(cluster.senders[0]->Retained(1).has_value());
  for (auto& future : done[2]) EXPECT_EQ(future.get(), HotPathStatus::kOk);
}

// The switch process dies: the sender says so within its retry budget
// instead of waiting forever, and keeps the epoch's values for the fallback.
TEST(HotPathSwitchd, ADeadSwitchIsReportedInBoundedTime) {
  SwitchdProcess sw;
  RetryPolicy retry;
  retry.initial_timeout = 2ms;
  retry.max_timeout = 20ms;
  retry.max_retries = 8;
  Cluster cluster(sw, 1, 1, retry);
  HotSender& sender = *cluster.senders[0];
  std::mutex mutex;
  std::vector<std::uint32_t> reported;
  sender.OnSwitchUnresponsive([&](std::uint32_t epoch) {
    std::lock_guard lock(mutex);
    reported.push_back(epoch);
  });
  std::mt19937_64 rng(8);
  const Push first = MakePush(*cluster.hot_set, rng);
  EXPECT_EQ(sender.Push(0, first.keys, first.vals).get(), HotPathStatus::kOk);

  EXPECT_EQ(sw.Stop(SIGKILL), 128 + SIGKILL);
  const Push second = MakePush(*cluster.hot_set, rng);
  const std::uint64_t timeouts_before = sender.counters().timeouts;
  const auto done = sender.Push(1, second.keys, second.vals);
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready) << "the sender hangs";
  EXPECT_EQ(done.get(), HotPathStatus::kSwitchUnresponsive);
  // Not before the retry budget ran out: 8 retries, the ninth expiry gives
  // up (the times on the sender's clock: HotSenderLoss.ASilentSwitch...).
  EXPECT_EQ(sender.counters().timeouts - timeouts_before, 9u);
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(reported, std::vector<std::uint32_t>{1});
  }
  const std::optional<RetainedPush> kept = sender.Retained(1);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->keys, second.keys);
  EXPECT_EQ(kept->vals, second.vals);
  // Later pushes fail at once; their values are kept too.
  EXPECT_EQ(sender.Push(2, first.keys, first.vals).get(), HotPathStatus::kSwitchUnresponsive);
  EXPECT_TRUE(sender.Retained(2).has_value());
  EXPECT_EQ(sender.counters().epochs_failed, 2u);
  EXPECT_GT(sender.counters().timeouts, 0u);
}

TEST(HotPathSwitchd, AProbeIsAnsweredByALiveSwitchAndNotByADeadOne) {
  SwitchdProcess sw;
  Cluster cluster(sw, 1, 1, RetryPolicy{});
  HotSender& sender = *cluster.senders[0];
  EXPECT_TRUE(sender.ProbeSwitch(2s));
  EXPECT_TRUE(sender.ProbeSwitch(2s));  // a second probe gets its own answer
  EXPECT_EQ(sw.Stop(SIGKILL), 128 + SIGKILL);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(sender.ProbeSwitch(300ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
}

TEST(HotPathSwitchd, BadPushesAreRefusedWithoutHarm) {
  SwitchdProcess sw;
  Cluster cluster(sw, 1, 1);
  HotSender& sender = *cluster.senders[0];
  const std::vector<Key> cold = {1};  // hot keys are 3, 10, 17, ...
  EXPECT_THROW(sender.Push(0, cold, std::vector<float>{1.0f}), std::invalid_argument);
  const std::vector<Key> hot_key = {10};
  EXPECT_THROW(sender.Push(5, hot_key, std::vector<float>{1.0f, 2.0f}), std::invalid_argument);
  EXPECT_EQ(sender.Push(5, hot_key, std::vector<float>{1.0f}).get(), HotPathStatus::kOk);
  EXPECT_THROW(sender.Push(7, hot_key, std::vector<float>{1.0f}), std::invalid_argument);
  std::vector<float> vals;
  EXPECT_THROW(sender.Pull(cold, &vals, nullptr, 1ms), std::invalid_argument);
  EXPECT_EQ(sender.Pull(hot_key, &vals, nullptr, 1ms), HotPathStatus::kTimeout);
  // Entries given with the keys: one per key, none cold.
  EXPECT_THROW(sender.Pull(hot_key, std::vector<hot::HotSet::Entry>{}, &vals, nullptr, 1ms),
               std::invalid_argument);
  EXPECT_THROW(sender.Pull(hot_key, std::vector<hot::HotSet::Entry>{hot::HotSet::Entry{}}, &vals,
                           nullptr, 1ms),
               std::invalid_argument);
  EXPECT_EQ(sender.Pull(hot_key, cluster.hot_set->LookupAll(hot_key), &vals, nullptr, 1ms),
            HotPathStatus::kTimeout);
  EXPECT_THROW(cluster.collectors[0]->PublishUpdate(5, std::vector<Key>{10, 10},
                                                    std::vector<float>{1.0f, 1.0f}),
               std::invalid_argument);  // a key twice
  EXPECT_THROW(cluster.collectors[0]->PublishUpdate(5, cold, std::vector<float>{1.0f}),
               std::invalid_argument);  // not a hot key
}

// A server publishes only its own hot keys: another server's is refused,
// alone or among its own.
TEST(HotPathSwitchd, AServerCannotPublishAnotherServersKeys) {
  SwitchdProcess sw;
  Cluster cluster(sw, 1, 2);
  ASSERT_FALSE(cluster.owned[0].empty());
  ASSERT_FALSE(cluster.owned[1].empty());
  // Values of the right count, so that only the owner is wrong.
  const auto values_of = [&](const std::vector<Key>& keys) {
    std::size_t count = 0;
    for (const Key key : keys) count += cluster.hot_set->Lookup(key).value_len;
    return std::vector<float>(count, 1.0f);
  };
  const std::vector<Key> own = {cluster.owned[0].front()};
  const std::vector<Key> others = {cluster.owned[1].front()};
  const std::vector<Key> mixed = {own[0], others[0]};
  EXPECT_THROW(cluster.collectors[0]->PublishUpdate(0, others, values_of(others)),
               std::invalid_argument);
  EXPECT_THROW(cluster.collectors[0]->PublishUpdate(0, mixed, values_of(mixed)),
               std::invalid_argument);
  EXPECT_NO_THROW(cluster.collectors[0]->PublishUpdate(0, own, values_of(own)));
}

// Junk, other jobs' datagrams and this job's from another address than the
// switch's, at the engines' sockets, are counted and dropped; the engines
// carry on.
TEST(HotPathSwitchd, MalformedAndForeignDatagramsAreCountedAndDropped) {
  SwitchdProcess sw;
  Cluster cluster(sw, 1, 1);
  net::UdpSocket intruder(UdpEndpoint{0x7f000001, 0});
  const std::uint8_t junk[5] = {1, 2, 3, 4, 5};
  wire::Header foreign;
  foreign.type = wire::MessageType::kAck;
  foreign.job_id = kJobId + 1;
  std::array<std::uint8_t, wire::kHeaderBytes> foreign_bytes;
  wire::Encode(foreign, {}, foreign_bytes);
  for (const UdpEndpoint to : {cluster.senders[0]->local(), cluster.collectors[0]->local()}) {
    ASSERT_TRUE(intruder.SendTo(junk, to));
    ASSERT_TRUE(intruder.SendTo(foreign_bytes, to));
  }
  // Well formed and of this job, but not from the switch: a READY of epoch 0
  // to the server, a FIN's ACK of epoch 0 to the worker. Dropped and counted.
  wire::Header not_the_switch;
  not_the_switch.job_id = kJobId;
  not_the_switch.type = wire::MessageType::kReady;
  std::array<std::uint8_t, wire::kHeaderBytes> not_the_switch_bytes;
  wire::Encode(not_the_switch, {}, not_the_switch_bytes);
  ASSERT_TRUE(intruder.SendTo(not_the_switch_bytes, cluster.collectors[0]->local()));
  not_the_switch.type = wire::MessageType::kAck;
  not_the_switch.flags = wire::kFlagFin;
  wire::Encode(not_the_switch, {}, not_the_switch_bytes);
  ASSERT_TRUE(intruder.SendTo(not_the_switch_bytes, cluster.senders[0]->local()));
  std::mt19937_64 rng(3);
  const Push push = MakePush(*cluster.hot_set, rng);
  ASSERT_EQ(cluster.senders[0]->Push(0, push.keys, push.vals).get(), HotPathStatus::kOk);
  cluster.CollectCheckPublish(0, {push});
  EXPECT_EQ(cluster.senders[0]->counters().malformed_packets, 1u);
  EXPECT_EQ(cluster.senders[0]->counters().ignored_packets, 1u);
  EXPECT_EQ(cluster.collectors[0]->counters().malformed_packets, 1u);
  EXPECT_EQ(cluster.collectors[0]->counters().ignored_packets, 1u);
  EXPECT_EQ(cluster.senders[0]->counters().foreign_packets, 1u);
  EXPECT_EQ(cluster.collectors[0]->counters().foreign_packets, 1u);
  EXPECT_EQ(cluster.collectors[0]->counters().ready_received, 1u);  // the switch's
}

}  // namespace
}  // namespace libra::hotpath
