#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <zmq.hpp>

#include "common/disconnect_monitor.h"
#include "ps/allocator_tuning.h"
#include "ps/internal/env.h"
#include "ps/internal/merge_by_key.h"
#include "ps/internal/slice_of_keys.h"
#include "ps/kv_app.h"
#include "ps/message_codec.h"
#include "ps/sarray.h"
#include "ps/zmq_transport.h"

namespace ps {
namespace {

TEST(SArray, CopiesShareMemory) {
  SArray<int> a(std::vector<int>{1, 2, 3});
  SArray<int> b = a;
  b[0] = 10;
  EXPECT_EQ(a[0], 10);
  EXPECT_EQ(a.ptr().use_count(), 2);
  SArray<int> c;
  c.CopyFrom(a);
  c[1] = 20;
  EXPECT_EQ(a[1], 2);
}

TEST(SArray, SegmentIsAViewThatKeepsTheMemory) {
  SArray<int> seg;
  {
    SArray<int> a{0, 1, 2, 3, 4, 5};
    seg = a.segment(2, 5);
  }
  ASSERT_EQ(seg.size(), 3u);
  EXPECT_EQ(seg[0], 2);
  EXPECT_EQ(seg.back(), 4);
}

TEST(SArray, ReinterpretsBytesWithoutCopy) {
  SArray<float> f{1.0f, 2.0f};
  SArray<char> bytes(f);
  EXPECT_EQ(bytes.size(), 2 * sizeof(float));
  EXPECT_EQ(static_cast<void*>(bytes.data()), static_cast<void*>(f.data()));
  SArray<float> back(bytes);
  EXPECT_EQ(back[1], 2.0f);
  SArray<char> odd(std::vector<char>{1, 2, 3});
  EXPECT_THROW(SArray<float>{odd}, Error);
}

TEST(SArray, GrowsAndAppends) {
  SArray<int> a;
  for (int i = 0; i < 100; ++i) a.push_back(i);
  a.append(SArray<int>{100, 101});
  EXPECT_EQ(a.size(), 102u);
  EXPECT_EQ(a.back(), 101);
  a.resize(3);
  EXPECT_EQ(a.size(), 3u);
  a.resize(5, 7);
  EXPECT_EQ(a[4], 7);
}

TEST(SArray, FindRange) {
  SArray<uint64_t> keys{1, 3, 5, 7, 9};
  Range r = FindRange<uint64_t>(keys, 3, 8);
  EXPECT_EQ(r.begin(), 1u);
  EXPECT_EQ(r.end(), 4u);
}

// What KVWorker::ServerOf returns for a JOIN's keys: each key's slice.
TEST(SliceOfEachKey, FindsEachKeysSliceWhateverOrderTheSlicerGivesThem) {
  using Sliced = std::vector<std::pair<bool, KVPairs<float>>>;
  const SArray<Key> keys{2, 4, 6, 8, 10, 12};
  // The default slicer's shape: runs of the keys, one per server.
  Sliced runs(3);
  runs[0].second.keys = SArray<Key>{2, 4};
  runs[2].second.keys = SArray<Key>{6, 8, 10, 12};
  EXPECT_EQ(internal::SliceOfEachKey(keys, runs), (std::vector<uint32_t>{0, 0, 2, 2, 2, 2}));
  // A slicer of its own: gaps, a slice that goes back, a key twice (the
  // first slice keeps it), keys that are not asked about, and one key in
  // no slice (server 0).
  Sliced scattered(3);
  scattered[0].second.keys = SArray<Key>{3, 8};
  scattered[1].second.keys = SArray<Key>{12, 4, 5, 6, 8};
  scattered[2].second.keys = SArray<Key>{2, 10, 1000};
  EXPECT_EQ(internal::SliceOfEachKey(keys, scattered), (std::vector<uint32_t>{2, 1, 1, 0, 2, 1}));
  EXPECT_TRUE(internal::SliceOfEachKey(SArray<Key>(), scattered).empty());
}

// A pull's answer split over servers and the hot path, merged back by key:
// parts with and without lens, an empty one, the hot part out of order,
// checked against a map of what each key holds.
TEST(MergeByKey, MergesThePartsOfAPullInKeyOrder) {
  std::mt19937 rng(3);
  for (int round = 0; round < 60; ++round) {
    std::map<Key, std::vector<float>> expected;
    std::vector<KVPairs<float>> parts(3);  // two servers' and the hot part
    const bool fixed = round % 2 == 0;     // LR-like: one value a key, no lens
    const bool first_empty = round % 5 == 1;
    float next = 1;
    for (Key key = 0; key < 300; ++key) {
      if (rng() % 3 == 0) continue;  // not pulled
      KVPairs<float>& part = parts[first_empty ? 1 + rng() % 2 : rng() % 3];
      const int len = fixed ? 1 : 1 + static_cast<int>(rng() % 3);
      part.keys.push_back(key);
      if (!fixed) part.lens.push_back(len);
      for (int v = 0; v < len; ++v) {
        part.vals.push_back(next);
        expected[key].push_back(next++);
      }
    }
    KVPairs<float> hot = parts.back();
    parts.pop_back();
    if (round % 3 == 2) {  // the hot part out of order, each key with its values
      KVPairs<float> reversed;
      for (size_t i = hot.keys.size(); i-- > 0;) {
        const Key key = hot.keys[i];
        reversed.keys.push_back(key);
        if (!fixed) reversed.lens.push_back(static_cast<int>(expected[key].size()));
        for (const float value : expected[key]) reversed.vals.push_back(value);
      }
      hot = reversed;
    }
    const KVPairs<float> merged = internal::MergeByKey(parts, hot);
    ASSERT_EQ(merged.keys.size(), expected.size()) << round;
    ASSERT_EQ(merged.lens.size(), expected.size()) << round;
    size_t i = 0, v = 0;
    for (const auto& key_vals : expected) {
      ASSERT_EQ(merged.keys[i], key_vals.first) << round;
      ASSERT_EQ(merged.lens[i], static_cast<int>(key_vals.second.size())) << round;
      for (const float value : key_vals.second) ASSERT_EQ(merged.vals[v++], value) << round;
      ++i;
    }
    ASSERT_EQ(v, merged.vals.size()) << round;
  }
}

TEST(MergeByKey, LengthsThatDoNotCoverTheValuesFailACheck) {
  KVPairs<float> server;
  server.keys = SArray<Key>(std::vector<Key>{1, 3});
  server.vals = SArray<float>(std::vector<float>{1, 2, 3});
  server.lens = SArray<int>(std::vector<int>{1, 1});  // three values, lens say two
  KVPairs<float> hot;
  hot.keys = SArray<Key>(std::vector<Key>{2});
  hot.vals = SArray<float>(std::vector<float>{4});
  EXPECT_THROW(internal::MergeByKey(std::vector<KVPairs<float>>{server}, hot), Error);
}

TEST(MessageCodec, RoundTrip) {
  Meta meta;
  meta.head = 3;
  meta.app_id = 1;
  meta.customer_id = 2;
  meta.timestamp = 77;
  meta.sender = 9;
  meta.recver = 8;
  meta.request = true;
  meta.pull = true;
  meta.num_merged = 4;
  meta.body = "hello";
  meta.data_type = {DataType::kUInt64, DataType::kFloat};
  meta.control.cmd = Control::ADD_NODE;
  Node n;
  n.role = Node::WORKER;
  n.id = 9;
  n.hostname = "127.0.0.1";
  n.port = 1234;
  meta.control.node.push_back(n);

  std::string bytes = EncodeMeta(meta);
  Meta out;
  ASSERT_TRUE(DecodeMeta(bytes.data(), bytes.size(), &out));
  EXPECT_EQ(out.head, 3);
  EXPECT_EQ(out.timestamp, 77);
  EXPECT_TRUE(out.request);
  EXPECT_FALSE(out.push);
  EXPECT_TRUE(out.pull);
  EXPECT_EQ(out.num_merged, 4);
  EXPECT_EQ(out.body, "hello");
  ASSERT_EQ(out.data_type.size(), 2u);
  EXPECT_EQ(out.data_type[1], DataType::kFloat);
  ASSERT_EQ(out.control.node.size(), 1u);
  EXPECT_EQ(out.control.node[0].hostname, "127.0.0.1");
  EXPECT_EQ(out.control.node[0].port, 1234);
}

TEST(MessageCodec, RejectsEveryTruncationAndBadMagic) {
  Meta meta;
  meta.body = "abc";
  meta.control.cmd = Control::ADD_NODE;
  meta.control.node.resize(2);
  std::string bytes = EncodeMeta(meta);
  Meta out;
  for (size_t len = 0; len < bytes.size(); ++len) {
    EXPECT_FALSE(DecodeMeta(bytes.data(), len, &out)) << len;
  }
  std::string extra = bytes + "x";
  EXPECT_FALSE(DecodeMeta(extra.data(), extra.size(), &out));
  std::string bad = bytes;
  bad[0] ^= 1;
  EXPECT_FALSE(DecodeMeta(bad.data(), bad.size(), &out));
  std::string bad_cmd = bytes;
  bad_cmd[4 + 7 * 4] = 99;  // control command out of range
  EXPECT_FALSE(DecodeMeta(bad_cmd.data(), bad_cmd.size(), &out));
}

TEST(Environment, ErrorsNameTheVariable) {
  Environment* env = Environment::Get();
  env->set("LIBRA_TEST_INT", "12x");
  try {
    env->RequiredInt("LIBRA_TEST_INT", 0, 100);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("LIBRA_TEST_INT"), std::string::npos);
  }
  try {
    env->RequiredString("LIBRA_TEST_SURELY_UNSET");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("LIBRA_TEST_SURELY_UNSET"), std::string::npos);
  }
  env->set("LIBRA_TEST_INT", "42");
  EXPECT_EQ(env->RequiredInt("LIBRA_TEST_INT", 0, 100), 42);
  EXPECT_EQ(env->IntOr("LIBRA_TEST_SURELY_UNSET", 5, 0, 10), 5);
}

// A node's receiving socket is reachable by anyone: a frame over
// PS_MAX_MESSAGE_BYTES is dropped unread and its sender disconnected (it
// used to be buffered whatever its size), and the node goes on receiving.
TEST(ZmqTransport, AFrameOverTheCapIsDroppedAndItsSenderDisconnected) {
  Environment::Get()->set("PS_MAX_MESSAGE_BYTES", "65536");
  ZmqTransport transport(/*local=*/false);
  Node me;
  me.hostname = "127.0.0.1";
  const int port = transport.Bind(me);
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(port);

  zmq::context_t context(1);
  zmq::socket_t big(context, zmq::socket_type::dealer);
  big.set(zmq::sockopt::linger, 0);
  libra::test_support::DisconnectMonitor monitor(context, big, "big");
  big.connect(endpoint);
  Message msg;
  msg.meta.recver = 1;
  msg.meta.app_id = 7;
  const std::string header = EncodeMeta(msg.meta);
  const std::string huge(65537, 'x');
  big.send(zmq::buffer(huge), zmq::send_flags::none);
  EXPECT_TRUE(monitor.Disconnected()) << "a frame over the cap was read";

  // A message within the cap still arrives.
  zmq::socket_t small(context, zmq::socket_type::dealer);
  small.set(zmq::sockopt::linger, 0);
  small.connect(endpoint);
  small.send(zmq::buffer(header), zmq::send_flags::none);
  Message received;
  EXPECT_GT(transport.RecvMsg(&received), 0);
  EXPECT_EQ(received.meta.app_id, 7);
  transport.Stop();
  Environment::Get()->set("PS_MAX_MESSAGE_BYTES", "");
}

#if defined(__SANITIZE_ADDRESS__)
TEST(AllocatorTuning, DoesNothingUnderTheSanitizersAllocator) {
  EXPECT_FALSE(TuneAllocatorForLargeMessages());
}
#else
// Minor page faults taken while filling a fresh `bytes`-byte block, after
// one block of that size was filled and freed.
long FaultsRefillingAFreedBlock(size_t bytes) {
  auto fill = [bytes]() {
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    char* block = static_cast<char*>(std::malloc(bytes));
    std::memset(block, 1, bytes);
    asm volatile("" : : "r"(block) : "memory");  // keep the fill
    std::free(block);
    getrusage(RUSAGE_SELF, &after);
    return after.ru_minflt - before.ru_minflt;
  };
  fill();
  return fill();
}

// In a child process: the tuning is for the whole process and stays.
TEST(AllocatorTuning, ALargeFreedBlockIsReusedWithoutPageFaults) {
  EXPECT_EXIT(
      {
        if (!TuneAllocatorForLargeMessages()) std::_Exit(2);
        const long faults = FaultsRefillingAFreedBlock(96 << 20);  // 24,576 pages of 4 KiB
        std::_Exit(faults < 256 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}
#endif

TEST(AllocatorTuning, IsSwitchedOffByTheEnvironment) {
  EXPECT_EXIT(
      {
        Environment::Get()->set("LIBRA_MALLOC_TUNING", "0");
        std::_Exit(TuneAllocatorForLargeMessages() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace ps
