// Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<name>/)
// with the real encoders, so that every seed is an input the system really
// produces, plus a few edge cases per target. Usage: make_fuzz_seeds DIR
// (DIR is tests/fuzz/corpus; the directories must exist). Rerun it when a
// format changes; inputs the fuzzers found live beside these seeds.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_hot_fixture.h"
#include "fuzz_records.h"
#include "hotpath/hot_packets.h"
#include "hotpath_messages.h"
#include "libra/hot_set.h"
#include "libra/switch_job.h"
#include "libra/wire.h"
#include "message_codec.h"
#include "train/dataset_cache.h"
#include "train/text_parsers.h"

namespace {

using namespace libra;
using Bytes = std::vector<std::uint8_t>;

std::string dir;

void Save(const std::string& target, const std::string& name, const Bytes& bytes) {
  std::ofstream out(dir + "/" + target + "/" + name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}
void Save(const std::string& target, const std::string& name, const std::string& text) {
  Save(target, name, Bytes(text.begin(), text.end()));
}
Bytes ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The packets PackHotValues makes for the fixture's keys, as `type`.
std::vector<Bytes> Packets(wire::MessageType type, std::uint16_t node, std::uint32_t epoch,
                           bool with_values, std::uint16_t flags = 0) {
  const auto hot_set = fuzz::FuzzHotSet();
  hot::LayoutAwarePacker packer(hot_set->layout().num_arrays);
  const auto keys = fuzz::FuzzHotKeys();
  const auto values = fuzz::FuzzHotValues();
  wire::Header header;
  header.type = type;
  header.job_id = fuzz::kFuzzJobId;
  header.node_id = node;
  header.epoch = epoch;
  header.flags = flags;
  const auto first = hotpath::CheckHotValues(*hot_set, keys, values, {});
  const auto packed = hotpath::PackHotValues(
      *hot_set, packer, header, keys, first,
      with_values ? std::span<const float>(values) : std::span<const float>());
  std::vector<Bytes> out;
  for (const auto& p : packed.packets) out.emplace_back(p.view().begin(), p.view().end());
  return out;
}

Bytes Header(wire::MessageType type, std::uint16_t node, std::uint32_t epoch, std::uint32_t seq,
             std::uint16_t flags = 0) {
  wire::Header h;
  h.type = type;
  h.job_id = fuzz::kFuzzJobId;
  h.node_id = node;
  h.epoch = epoch;
  h.seq = seq;
  h.flags = flags;
  Bytes out(wire::kHeaderBytes);
  wire::Encode(h, {}, out);
  return out;
}

Bytes Records(const std::vector<Bytes>& datagrams, std::uint8_t first = 0, bool lead = false) {
  Bytes out;
  if (lead) out.push_back(first);
  for (const Bytes& d : datagrams) fuzz::AppendRecord(out, d);
  return out;
}

void HotPathSeeds() {
  const auto replica0 = Packets(wire::MessageType::kReplica, 0, 0, true);
  const auto replica1 = Packets(wire::MessageType::kReplica, 0, 1, true);
  Save("hot_replica", "replica_epoch0", Records(replica0));
  Save("hot_replica", "replica_two_epochs_stale",
       Records({replica0[0], replica1[0], replica0[1], replica0[0], replica1[1]}));
  Bytes unknown_cell = replica0[0];
  unknown_cell[wire::kHeaderBytes + 3] = 6;  // array 0, cell 6: no value lives there
  Bytes truncated = replica0[1];
  truncated.pop_back();
  Bytes bad_version = replica0[0];
  bad_version[0] = 2;
  Save("hot_replica", "replica_edges", Records({unknown_cell, truncated, bad_version, {}}));
  Save("hot_replica", "replica_epoch_max",
       Records(Packets(wire::MessageType::kReplica, 0, 0xffffffffu, true)));

  const auto ack = [](std::uint32_t seq, std::uint16_t flags = 0) {
    return Header(wire::MessageType::kAck, fuzz::kFuzzWorkerId, 0, seq, flags);
  };
  const auto results = Packets(wire::MessageType::kResult, fuzz::kFuzzServerId, 0, true);
  const Bytes ready = Header(wire::MessageType::kReady, fuzz::kFuzzServerId, 0, 0);
  Save("hotpath_receive", "push_acks_fin",
       Records({ack(0), ack(1), ack(1, wire::kFlagDuplicate), ack(2, wire::kFlagFin)}, 1, true));
  Save("hotpath_receive", "ready_results",
       Records({ready, results[0], results[0], results[1]}, 0, true));
  Save("hotpath_receive", "not_ready_then_result",
       Records({Packets(wire::MessageType::kResult, fuzz::kFuzzServerId, 0, false,
                        wire::kFlagNotReady)[0],
                results[1], results[0]},
               0, true));
  Save("hotpath_receive", "replicas_and_junk",
       Records({replica0[0], replica0[1], replica1[0], unknown_cell, truncated, bad_version}, 1,
               true));
}

void CodecSeeds() {
  ps::Meta data;
  data.head = 0;
  data.app_id = 0;
  data.customer_id = 0;
  data.timestamp = 42;
  data.sender = 9;
  data.recver = 8;
  data.request = true;
  data.push = true;
  data.num_merged = 2;
  data.data_type = {ps::DataType::kUInt64, ps::DataType::kFloat, ps::DataType::kInt32};
  const std::string header = ps::EncodeMeta(data);
  const Bytes identity = {0, 1, 2, 3, 4};
  Save("message_codec", "push_frames",
       Records({identity, Bytes(header.begin(), header.end()), Bytes(16, 1), Bytes(32, 2),
                Bytes(8, 3)}));
  Save("message_codec", "push_header", header);

  ps::Meta control;
  control.control.cmd = ps::Control::ADD_NODE;
  for (int i = 0; i < 3; ++i) {
    ps::Node node;
    node.role = static_cast<ps::Node::Role>(i);
    node.id = i + 1;
    node.hostname = "host-" + std::to_string(i);
    node.port = 9000 + i;
    control.control.node.push_back(node);
  }
  const std::string add_node = ps::EncodeMeta(control);
  Save("message_codec", "add_node_frames",
       Records({identity, Bytes(add_node.begin(), add_node.end())}));
  ps::Meta abort_meta;
  abort_meta.control.cmd = ps::Control::ABORT;
  abort_meta.body = "worker 3 exited with status 1";
  Save("message_codec", "abort_header", ps::EncodeMeta(abort_meta));
  Save("message_codec", "truncated_header", header.substr(0, header.size() / 2));
}

void ControlMessageSeeds() {
  ps::hotpath::JoinRequest join;
  join.rank = 2;
  join.address = {0x7f000001, 4000};
  join.max_abs_value = 3.5f;
  join.counts = {{10, 1, 99, 0}, {11, 2, 50, 1}};
  Save("hotpath_messages", "join", std::string(1, '\0') + ps::hotpath::Encode(join));
  ps::hotpath::Install install;
  install.enabled = true;
  install.job_id = 7;
  install.first_epoch = 3;
  install.num_workers = 2;
  install.scale_bits = 16;
  install.hot_set = fuzz::FuzzHotSet();
  install.owners = {0, 1, 0, 1, 0};
  Save("hotpath_messages", "install", "\x01" + ps::hotpath::Encode(install));
  install.owners.clear();
  Save("hotpath_messages", "install_no_owners", "\x01" + ps::hotpath::Encode(install));
  ps::hotpath::Install plain;
  plain.reason = "no key is hot enough";
  Save("hotpath_messages", "install_disabled", "\x01" + ps::hotpath::Encode(plain));
  ps::hotpath::Repair repair;
  repair.epoch = 5;
  repair.keys = {10, 13};
  repair.vals = {1, 4, 5, 6};
  Save("hotpath_messages", "repair", "\x02" + ps::hotpath::Encode(repair));
  Save("hotpath_messages", "repair_empty", "\x02" + ps::hotpath::Encode(ps::hotpath::Repair{}));
}

void SwitchdSeeds() {
  SwitchJob job;
  job.job_id = 7;
  job.token = "t0k3n";
  job.workers = {{0x7f000001, 1000}, {0x7f000001, 1001}};
  job.servers = {{0x7f000001, 2000}};
  job.cells_per_array = 16;
  job.slots_per_packet = 8;
  const nlohmann::json install = {{"op", "install_job"}, {"job", ToJson(job)}};
  const nlohmann::json remove = {{"op", "remove_job"}, {"job_id", 7}, {"token", "t0k3n"}};
  Save("control_handler", "install_counters_remove",
       install.dump() + "\n{\"op\":\"counters\"}\n{\"op\":\"probe\"}\n" + remove.dump() + "\n");
  Save("control_handler", "install_wrong_token",
       install.dump() + "\n" +
           nlohmann::json{{"op", "remove_job"}, {"job_id", 7}, {"token", "nope"}}.dump() + "\n" +
           nlohmann::json{{"op", "install_job"}, {"job", {{"job_id", 8}, {"token", "x"}}}}.dump());
  Save("control_handler", "malformed",
       "{\"op\":1}\n[]\n{\"op\":\"install_job\"}\n{\"op\":\"x\"}\nnot json");
}

void HotSetFileSeeds() {
  const std::string path = dir + "/../hot-set.tmp";
  hot::WriteHotSetFile(*fuzz::FuzzHotSet(), path);
  Bytes file = ReadAll(path);
  std::remove(path.c_str());
  Bytes whole = {0};
  whole.insert(whole.end(), file.begin(), file.end());
  Save("hot_set_file", "fixture_whole", whole);
  Bytes body = {1};
  body.insert(body.end(), file.begin(), file.end() - 8);
  Save("hot_set_file", "fixture_body", body);
  Bytes empty_set = {1};  // a file with no keys: header only
  empty_set.insert(empty_set.end(), file.begin(), file.begin() + 48);
  for (int i = 32; i < 48; ++i) empty_set[1 + i] = 0;
  Save("hot_set_file", "no_keys_body", empty_set);
  Save("hot_set_file", "truncated", Bytes(whole.begin(), whole.begin() + 40));
}

void DataSeeds() {
  const std::string libsvm = "1 3:0.5 7:1 12:-2.25\n-1 1:1e-3 # comment\n+1 qid:4 2:3\n\n0\n";
  std::string criteo = "1";
  for (int i = 0; i < 13; ++i) criteo += "\t" + std::to_string(i * 7);
  for (int i = 0; i < 26; ++i) criteo += i % 5 == 0 ? "\t" : "\t68fd1e64";
  Save("text_parsers", "libsvm", libsvm);
  Save("text_parsers", "criteo", criteo + "\n0" + std::string(39, '\t') + "\n");
  Save("text_parsers", "bad_lines",
       "2 1:1\n1 x:1\n1 1:y\n1\t2\n1 18446744073709551616:1\n1 1:1e999\n");

  train::Dataset data;
  std::string error;
  std::size_t at = 0;
  while (at < libsvm.size()) {
    const std::size_t end = libsvm.find('\n', at);
    train::ParseLibsvmLine(std::string_view(libsvm).substr(at, end - at), data, &error);
    at = end + 1;
  }
  data.num_fields = 1;
  train::CacheInfo info;
  info.source_bytes = libsvm.size();
  info.source_mtime_ns = 1700000000123456789;
  info.lines = 5;
  info.bad_lines = 1;
  info.first_bad_line = "data.txt:4: label '' is not 0/1";
  const std::string path = dir + "/../cache.tmp";
  train::WriteDatasetCache(path, data, info);
  Save("dataset_cache", "libsvm_rows", ReadAll(path));
  train::WriteDatasetCache(path, train::Dataset{}, train::CacheInfo{});
  const Bytes empty = ReadAll(path);
  Save("dataset_cache", "empty", empty);
  Save("dataset_cache", "header_only_truncated", Bytes(empty.begin(), empty.begin() + 40));
  std::remove(path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds tests/fuzz/corpus\n");
    return 2;
  }
  dir = argv[1];
  HotPathSeeds();
  CodecSeeds();
  ControlMessageSeeds();
  SwitchdSeeds();
  HotSetFileSeeds();
  DataSeeds();
  return 0;
}
