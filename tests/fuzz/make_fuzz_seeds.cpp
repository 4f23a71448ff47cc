// Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<name>/)
// with the real encoders, so that every seed is an input the system really
// produces, plus a few edge cases per target. Usage: make_fuzz_seeds DIR
// (DIR is tests/fuzz/corpus; the directories must exist). Rerun it when a
// format changes; inputs the fuzzers found live beside these seeds.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset_cache.h"
#include "data/text_parsers.h"
#include "fuzz_hot_fixture.h"
#include "fuzz_records.h"
#include "hot/hot_set.h"
#include "hotpath/messages/control_messages.h"
#include "hotpath/messages/hot_packets.h"
#include "ps/message_codec.h"
#include "wire/switch_job.h"
#include "wire/wire.h"

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

// A seed the encoder refuses is a mistake of this program.
Bytes Checked(Bytes out, std::size_t length) {
  if (length == 0) {
    std::fprintf(stderr, "make_fuzz_seeds: a message does not encode\n");
    std::exit(1);
  }
  out.resize(length);
  return out;
}

// A message of slots, or a RESULT of the values `slots` (see wire::Encode).
Bytes Encoded(wire::Header header, const std::vector<wire::Slot>& slots) {
  header.slot_count = static_cast<std::uint16_t>(slots.size());
  Bytes out(wire::kMaxMessageBytes);
  const std::size_t length = wire::Encode(header, slots, out);
  return Checked(std::move(out), length);
}

// An UPDATE or REPLICA of `cells`, sorted by row, then array.
Bytes EncodedUpdate(const wire::Header& header, const std::vector<wire::CellValue>& cells) {
  Bytes out(wire::kMaxMessageBytes);
  const std::size_t length = wire::EncodeUpdate(header, cells, out);
  return Checked(std::move(out), length);
}

// An UPDATE or REPLICA written block by block, as the encoder would not:
// rows in any order or repeated, masks and values as given (a well-formed
// block has one value per mask bit); slot_count counts the values.
struct RowBlock {
  std::uint32_t row;
  std::uint64_t mask;
  std::vector<float> values;
};
Bytes RawUpdate(const wire::Header& header, const std::vector<RowBlock>& blocks) {
  Bytes out = EncodedUpdate(header, {});
  out.resize(wire::kHeaderBytes);  // the blocks go before the tag
  std::size_t values = 0;
  for (const RowBlock& block : blocks) {
    const std::size_t at = out.size();
    out.resize(at + wire::kRowBlockHeaderBytes + block.values.size() * wire::kValueBytes);
    wire::StoreBig32(&out[at], block.row);
    wire::StoreBig64(&out[at + wire::kRowBlockMaskAt], block.mask);
    for (std::size_t v = 0; v < block.values.size(); ++v) {
      wire::StoreBig32(&out[at + wire::kRowBlockHeaderBytes + v * wire::kValueBytes],
                       std::bit_cast<std::uint32_t>(block.values[v]));
    }
    values += block.values.size();
  }
  out.resize(out.size() + wire::kUpdateTagBytes);  // unsigned: zero
  wire::SetSlotCount(out.data(), static_cast<std::uint16_t>(values));
  return out;
}

wire::Header HeaderOf(wire::MessageType type, std::uint16_t node, std::uint32_t epoch,
                      std::uint32_t seq, std::uint16_t flags = 0) {
  wire::Header h;
  h.type = type;
  h.job_id = fuzz::kFuzzJobId;
  h.node_id = node;
  h.epoch = epoch;
  h.seq = seq;
  h.flags = flags;
  return h;
}

// A message with no slots or values.
Bytes Header(wire::MessageType type, std::uint16_t node, std::uint32_t epoch, std::uint32_t seq,
             std::uint16_t flags = 0) {
  const wire::Header header = HeaderOf(type, node, epoch, seq, flags);
  return wire::PayloadOf(type) == wire::Payload::kRowBlocks ? EncodedUpdate(header, {})
                                                            : Encoded(header, {});
}

// What PackHotValues makes of `keys` (with `vals`, or zeros when empty).
hotpath::PackedValues Pack(const wire::Header& header, const std::vector<hot::Key>& keys,
                           const std::vector<float>& vals) {
  const auto hot_set = fuzz::FuzzHotSet();
  std::vector<float> zeros;
  for (const hot::Key key : keys)
    zeros.resize(zeros.size() + hot_set->keys()[hot_set->Find(key)].value_len);
  const auto first = hotpath::CheckHotValues(*hot_set, keys, vals.empty() ? zeros : vals, {});
  return hotpath::PackHotValues(*hot_set, header, keys, first, vals);
}

// One server's epoch as HotCollector::PublishUpdate sends it (as `type`,
// UPDATE or REPLICA): row-block packets (PackUpdate) numbered from 0, the
// last flagged LAST, one header-only LAST when nothing changed.
std::vector<Bytes> Stream(wire::MessageType type, std::uint16_t server, std::uint32_t epoch,
                          const std::vector<hot::Key>& keys, const std::vector<float>& vals) {
  const wire::Header header = HeaderOf(type, server, epoch, 0);
  const auto hot_set = fuzz::FuzzHotSet();
  const auto first = hotpath::CheckHotValues(*hot_set, keys, vals, {});
  std::vector<Bytes> out;
  for (const auto& p : hotpath::PackUpdate(*hot_set, header, keys, first, vals)) {
    out.emplace_back(p.view().begin(), p.view().end());
  }
  if (out.empty()) out.push_back(EncodedUpdate(header, {}));
  wire::SetFlags(out.back().data(), wire::kFlagLast);
  return out;
}
std::vector<Bytes> Replicas(std::uint16_t server, std::uint32_t epoch) {
  return Stream(wire::MessageType::kReplica, server, epoch, fuzz::FuzzKeysOf(server),
                fuzz::FuzzValuesOf(server));
}

// A repair as fuzz_hot_replica reads it from an UPDATE datagram: a value in
// row r names key index `r % keys` and carries its first value's bits; here
// one value (array 0) in row k for each key index k, ascending.
Bytes RepairDatagram(std::uint32_t epoch, std::vector<std::uint32_t> key_indices) {
  std::sort(key_indices.begin(), key_indices.end());
  std::vector<wire::CellValue> cells;
  for (const std::uint32_t k : key_indices) {
    cells.push_back({0, k, std::bit_cast<std::uint32_t>(100.0f + static_cast<float>(k))});
  }
  return EncodedUpdate(HeaderOf(wire::MessageType::kUpdate, 0, epoch, 0), cells);
}

std::vector<Bytes> Concat(std::initializer_list<std::vector<Bytes>> parts) {
  std::vector<Bytes> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

Bytes Records(const std::vector<Bytes>& datagrams, std::uint8_t first = 0, bool lead = false) {
  Bytes out;
  if (lead) out.push_back(first);
  for (const Bytes& d : datagrams) fuzz::AppendRecord(out, d);
  return out;
}

void HotReplicaSeeds() {
  const std::uint16_t s0 = fuzz::kFuzzServerId, s1 = fuzz::kFuzzOtherServerId;
  const auto a0 = Replicas(s0, 0), b0 = Replicas(s1, 0);
  const auto a1 = Stream(wire::MessageType::kReplica, s0, 1, {12}, {9});
  const auto b1 = Stream(wire::MessageType::kReplica, s1, 1, {}, {});
  Save("hot_replica", "streams_first_epoch", Records(Concat({a0, b0})));
  Save("hot_replica", "streams_changed_and_empty", Records(Concat({a0, b0, a1, b1})));
  // Epoch 1 before epoch 0, LAST before the packets it counts.
  std::vector<Bytes> reversed = Concat({b1, a1, b0, a0});
  std::reverse(reversed.begin(), reversed.end());
  Save("hot_replica", "streams_out_of_order", Records(Concat({b1, a1, reversed})));
  // Rejected: a packet beyond the LAST count, a second LAST that disagrees,
  // a LAST below a packet seen, a server that publishes nothing, an epoch
  // too far ahead, a seq longer than any stream.
  Bytes beyond = b0.front();
  wire::SetSeq(beyond.data(), static_cast<std::uint32_t>(b0.size()));
  Bytes other_last = b0.back();
  wire::SetSeq(other_last.data(), static_cast<std::uint32_t>(b0.size() + 1));
  Bytes early_last = Header(wire::MessageType::kReplica, s0, 2, 0, wire::kFlagLast);
  Bytes seen_later = a1.front();
  wire::SetEpoch(seen_later.data(), 2);
  wire::SetSeq(seen_later.data(), 1);
  Bytes stranger = a0.front();
  wire::StoreBig16(&stranger[wire::kNodeIdAt], 5);
  Bytes far = a0.front();
  wire::SetEpoch(far.data(), 4);
  Bytes long_seq = a0.front();
  wire::SetSeq(long_seq.data(), 4);
  Save("hot_replica", "streams_rejected",
       Records(Concat(
           {b0, {beyond, other_last, seen_later, early_last, stranger, far, long_seq}, a0})));
  // Repairs (UPDATE datagrams, see fuzz_hot_replica's RepairOf): server 1's
  // keys at epoch 3 complete it up to 3; late replicas are stale.
  Save("hot_replica", "repair_then_stale",
       Records(Concat(
           {a0, {RepairDatagram(3, {1, 3}), RepairDatagram(0, {0, 2})}, b0, Replicas(s1, 4)})));
  Bytes unknown_cell = a0[0];
  unknown_cell[wire::kHeaderBytes + 3] = 6;  // the first block's row 0 -> 6: no value lives there
  Bytes truncated = a0.back();
  truncated.pop_back();
  Bytes bad_version = a0[0];
  bad_version[wire::kVersionAt] = 2;  // version 2: 8-byte slots
  // Malformed row blocks: an empty mask, a row past the cell index range,
  // one value more and one fewer than slot_count says.
  Bytes empty_mask = a0[0];
  wire::StoreBig64(&empty_mask[wire::kHeaderBytes + wire::kRowBlockMaskAt], 0);
  Bytes big_row = a0[0];
  big_row[wire::kHeaderBytes] = 0x40;
  Bytes more_values = a0[0], fewer_values = a0[0];
  wire::SetSlotCount(more_values.data(), wire::SlotCountOf(a0[0].data()) - 1);
  wire::SetSlotCount(fewer_values.data(), wire::SlotCountOf(a0[0].data()) + 1);
  Save("hot_replica", "replica_edges",
       Records({unknown_cell,
                truncated,
                bad_version,
                {},
                empty_mask,
                big_row,
                more_values,
                fewer_values}));
  // Well-formed REPLICAs no encoder writes, of server 1 (cells: row 0 arrays
  // 1 and 2, row 5 arrays 0 and 1, row 7 array 2): rows descending; row 0
  // in three blocks, naming one cell twice (the second stale); cells of no
  // key (arrays 9 and 63 of row 5) and of server 0 (row 0 array 0).
  const wire::Header s1_header = HeaderOf(wire::MessageType::kReplica, s1, 0, 0);
  Save("hot_replica", "replica_row_blocks",
       Records({RawUpdate(s1_header, {{7, 0b100, {1}}, {5, 0b11, {2, 3}}, {0, 0b110, {4, 5}}}),
                RawUpdate(HeaderOf(wire::MessageType::kReplica, s1, 0, 1, wire::kFlagLast),
                          {{0, 0b10, {6}}, {0, 0b100, {7}}, {0, 0b10, {8}}}),
                RawUpdate(HeaderOf(wire::MessageType::kReplica, s1, 1, 0, wire::kFlagLast),
                          {{5, (std::uint64_t{1} << 63) | (1u << 9) | 1u, {9, 10, 11}},
                           {0, 0b111, {12, 13, 14}}})}));
  // The third configuration: servers 0 and 2, first epoch 0xfffffffd, wrapping.
  std::vector<Bytes> wrap;
  for (std::uint32_t e = 0xfffffffdu; e != 1; ++e) {
    for (const std::uint16_t server : {std::uint16_t{0}, std::uint16_t{2}}) {
      auto stream = Stream(wire::MessageType::kReplica, server, e, {}, {});
      wrap.insert(wrap.end(), stream.begin(), stream.end());
    }
  }
  Save("hot_replica", "replica_epoch_wrap", Records(Concat({wrap, Replicas(s0, 0xffffffffu)})));
}

// RESULT packet `k` of the collector's plan (server 0 and its keys) for
// epoch `epoch`, compacted to the asked slots `written` (COLLECT slot j),
// each a fixed-point sum; `saturated` marks them all saturated.
Bytes Result(std::uint32_t k, std::uint32_t epoch, const std::vector<std::uint32_t>& written,
             bool saturated = false) {
  std::vector<wire::Slot> slots;
  for (const std::uint32_t j : written) {
    slots.push_back({true, saturated, j, static_cast<std::uint32_t>((2 * j + 1) << 15)});
  }
  wire::Header h = HeaderOf(wire::MessageType::kResult, fuzz::kFuzzServerId, epoch, k,
                            saturated ? wire::kFlagSaturated : 0);
  return Encoded(h, slots);
}

void HotPathReceiveSeeds() {
  // The plan: which COLLECT slots of which packet hold a value.
  const auto plan = Pack(HeaderOf(wire::MessageType::kCollect, 0, 0, 0),
                         fuzz::FuzzKeysOf(fuzz::kFuzzServerId), {});
  const std::uint32_t arrays = fuzz::FuzzHotSet()->layout().num_arrays;
  std::vector<std::vector<std::uint32_t>> asked(plan.packets.size());
  for (std::uint32_t k = 0; k < plan.packets.size(); ++k) {
    for (std::uint32_t j = 0; j < arrays; ++j) {
      if (plan.value_of_slot[k * arrays + j] != hotpath::kNoValue) asked[k].push_back(j);
    }
  }
  const std::uint32_t last = static_cast<std::uint32_t>(plan.packets.size() - 1);

  const auto ack = [](std::uint32_t seq, std::uint16_t flags = 0) {
    return Header(wire::MessageType::kAck, fuzz::kFuzzWorkerId, 0, seq, flags);
  };
  const Bytes ready = Header(wire::MessageType::kReady, fuzz::kFuzzServerId, 0, 0);
  Save("hotpath_receive", "push_acks_fin",
       Records({ack(0), ack(1), ack(1, wire::kFlagDuplicate), ack(2, wire::kFlagFin)}, 1, true));
  std::vector<Bytes> all_written = {ready};
  for (std::uint32_t k = 0; k <= last; ++k) all_written.push_back(Result(k, 0, asked[k]));
  all_written.push_back(Result(0, 0, asked[0]));  // a duplicate
  Save("hotpath_receive", "ready_results", Records(all_written, 0, true));
  // Epoch 0: only the first asked cell of packet 0 written, nothing in the
  // others; epoch 1: nothing written at all, then saturated sums.
  std::vector<Bytes> sparse = {ready, Result(0, 0, {asked[0].front()})};
  for (std::uint32_t k = 1; k <= last; ++k) sparse.push_back(Result(k, 0, {}));
  for (std::uint32_t k = 0; k <= last; ++k) sparse.push_back(Result(k, 1, {}));
  for (std::uint32_t k = 0; k <= last; ++k) sparse.push_back(Result(k, 2, asked[k], true));
  Save("hotpath_receive", "compact_and_empty_results", Records(sparse, 0, true));
  Save("hotpath_receive", "not_ready_then_result",
       Records({Header(wire::MessageType::kResult, fuzz::kFuzzServerId, 0, 0, wire::kFlagNotReady),
                Result(last, 0, asked[last]), Result(0, 0, asked[0])},
               0, true));
  // Rejected RESULTs: past the asked slots (4, and 63), a hole; malformed
  // ones: a written mask with a bit more than the values, a saturated bit
  // outside the written mask. Then the right ones, the first flagged
  // SATURATED with an empty saturated mask (nothing saturated).
  Bytes extra_bit = Result(0, 0, {asked[0].front()});
  extra_bit[wire::kHeaderBytes] |= 0x40;
  Bytes saturated_unwritten = Result(0, 0, {asked[0].front()}, true);
  saturated_unwritten[wire::kHeaderBytes + wire::kMaskBytes] |= 0x40;
  std::vector<Bytes> rejected = {Result(0, 0, {arrays - 1, arrays}),
                                 Result(0, 0, {asked[0].front(), 63}), extra_bit,
                                 saturated_unwritten};
  for (std::uint32_t k = 0; k < arrays; ++k) {
    if (std::find(asked[last].begin(), asked[last].end(), k) == asked[last].end()) {
      rejected.push_back(Result(last, 0, {k}));  // a hole of the last packet
      break;
    }
  }
  Bytes flag_only = Result(0, 0, asked[0], true);
  std::fill(&flag_only[wire::kHeaderBytes + wire::kMaskBytes],
            &flag_only[wire::kHeaderBytes + 2 * wire::kMaskBytes], 0);
  rejected.push_back(flag_only);
  for (std::uint32_t k = 1; k <= last; ++k) rejected.push_back(Result(k, 0, asked[k]));
  Save("hotpath_receive", "rejected_results", Records(rejected, 0, true));

  // The worker's replica: both servers' streams, an empty LAST, junk.
  const auto a0 = Replicas(fuzz::kFuzzServerId, 0), b0 = Replicas(fuzz::kFuzzOtherServerId, 0);
  Bytes unknown_cell = a0[0];
  unknown_cell[wire::kHeaderBytes + 3] = 6;  // row 6
  Bytes truncated = b0.back();
  truncated.pop_back();
  Bytes bad_version = a0[0];
  bad_version[wire::kVersionAt] = 2;
  const std::vector<Bytes> streams =
      Concat({a0,
              b0,
              Stream(wire::MessageType::kReplica, 0, 1, {}, {}),
              Stream(wire::MessageType::kReplica, 1, 1, {13}, {7, 8, 9}),
              {unknown_cell, truncated, bad_version}});
  // Mode 3: pushed, and the harness signs every REPLICA (the worker takes
  // them); mode 1: as they are, unsigned, so every REPLICA is a forgery.
  Save("hotpath_receive", "replica_streams", Records(streams, 3, true));
  Save("hotpath_receive", "replica_streams_unsigned", Records(streams, 1, true));
}

// fuzz_switch_program: byte 0 picks the sender (0-2 workers, 3-4 servers),
// the rest is one datagram for job 1 (16 cells per array, 8 slots).
void SwitchProgramSeeds() {
  const auto header = [](wire::MessageType type, std::uint16_t node, std::uint32_t seq,
                         std::uint16_t flags = 0) {
    wire::Header h = HeaderOf(type, node, 0, seq, flags);
    h.job_id = 1;
    return h;
  };
  const auto datagram = [](std::uint8_t sender, const Bytes& message) {
    Bytes out = {sender};
    out.insert(out.end(), message.begin(), message.end());
    return out;
  };
  const std::vector<wire::Slot> cells = {{true, false, 3, std::bit_cast<std::uint32_t>(1.5f)},
                                         {false, false, 0, 0},
                                         {true, false, 15, std::bit_cast<std::uint32_t>(-2.0f)}};
  // The cells the target's second switch has written in epoch 0 (array 0
  // cell 3, array 2 cell 15, array 5 cell 7 saturated) and one it has not
  // (array 1 cell 4): its RESULT answers slots 0, 2 and 5.
  const std::vector<wire::Slot> asked = {
      {true, false, 3, 0}, {true, false, 4, 0}, {true, false, 15, 0}, {}, {}, {true, false, 7, 0}};
  Save("switch_program", "seed_data",
       datagram(0, Encoded(header(wire::MessageType::kData, 0, 0), cells)));
  Save("switch_program", "seed_fin",
       datagram(0, Encoded(header(wire::MessageType::kFin, 0, 1), {})));
  Save("switch_program", "seed_collect",
       datagram(3, Encoded(header(wire::MessageType::kCollect, 0, 0), asked)));
  // A ROW request for row 3: the second switch answers array 0's cell 3.
  Save("switch_program", "seed_collect_row",
       datagram(3, Encoded(header(wire::MessageType::kCollect, 0, 1, wire::kFlagRow),
                           {{true, false, 3, 0}})));
  // UPDATEs, replicated to every worker as they are: as the server encodes
  // them, empty, rows in no order and a row in two blocks, and one with an
  // empty mask (dropped).
  Save("switch_program", "seed_update_last",
       datagram(4, EncodedUpdate(header(wire::MessageType::kUpdate, 1, 0, wire::kFlagLast),
                                 {{0, 3, std::bit_cast<std::uint32_t>(1.5f)},
                                  {2, 3, std::bit_cast<std::uint32_t>(0.25f)},
                                  {2, 15, std::bit_cast<std::uint32_t>(-2.0f)}})));
  Save("switch_program", "seed_update_empty_last",
       datagram(3, EncodedUpdate(header(wire::MessageType::kUpdate, 0, 0, wire::kFlagLast), {})));
  Save("switch_program", "seed_update_raw_blocks",
       datagram(4, RawUpdate(header(wire::MessageType::kUpdate, 1, 1),
                             {{15, 0b101, {1, 2}}, {3, 0b1, {3}}, {3, 0b10, {4}}})));
  Save("switch_program", "seed_update_empty_mask",
       datagram(4, RawUpdate(header(wire::MessageType::kUpdate, 1, 2), {{3, 0, {}}})));
  // A RESULT, which the switch only sends: the decoder's masks.
  Save("switch_program", "seed_result",
       datagram(3, Encoded(header(wire::MessageType::kResult, 0, 0),
                           {{true, false, 0, std::bit_cast<std::uint32_t>(1.5f)},
                            {true, true, 5, std::bit_cast<std::uint32_t>(3e38f)}})));
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
  libra::hotpath::JoinRequest join;
  join.rank = 2;
  join.address = {0x7f000001, 4000};
  join.max_abs_value = 3.5f;
  join.counted_pairs = 149;
  join.counted_values = 199;
  join.counts = {{10, 1, 99, 0}, {11, 2, 50, 1}};
  Save("hotpath_messages", "join", std::string(1, '\0') + libra::hotpath::Encode(join));
  join.counts.clear();
  join.max_abs_value = 0;
  join.scale_follows = true;
  Save("hotpath_messages", "join_scale_follows",
       std::string(1, '\0') + libra::hotpath::Encode(join));
  Save("hotpath_messages", "scale",
       "\x08" + libra::hotpath::Encode(libra::hotpath::ScaleReport{2, 0.1875f}));
  Save("hotpath_messages", "done",
       "\x09" + libra::hotpath::Encode(libra::hotpath::WorkerDone{1, 7}));
  libra::hotpath::Install install;
  install.enabled = true;
  install.job_id = 7;
  install.first_epoch = 3;
  install.num_workers = 2;
  install.scale_bits = 16;
  install.hot_set = fuzz::FuzzHotSet();
  install.owners = {0, 1, 0, 1, 0};
  Save("hotpath_messages", "install", "\x01" + libra::hotpath::Encode(install));
  install.owners.clear();
  Save("hotpath_messages", "install_no_owners", "\x01" + libra::hotpath::Encode(install));
  libra::hotpath::Install plain;
  plain.reason = "no key is hot enough";
  Save("hotpath_messages", "install_disabled", "\x01" + libra::hotpath::Encode(plain));
  libra::hotpath::Repair repair;
  repair.epoch = 5;
  repair.keys = {10, 13};
  repair.vals = {1, 4, 5, 6};
  Save("hotpath_messages", "repair", "\x02" + libra::hotpath::Encode(repair));
  Save("hotpath_messages", "repair_empty",
       "\x02" + libra::hotpath::Encode(libra::hotpath::Repair{}));
  Save("hotpath_messages", "switch_down",
       "\x03" + libra::hotpath::Encode(
                    libra::hotpath::SwitchDown{1, 40, "the switch did not take epoch 40"}));
  libra::hotpath::FallbackPush push;
  push.epoch = 9;
  push.worker = 1;
  const auto fuzz_set = fuzz::FuzzHotSet();
  std::size_t values = 0;
  for (const auto& key : fuzz_set->keys()) {
    push.keys.push_back(key.key);
    for (std::uint32_t v = 0; v < key.value_len; ++v, ++values) push.vals.push_back(0.25f * values);
  }
  Save("hotpath_messages", "fallback_push", "\x04" + libra::hotpath::Encode(push));
  Save("hotpath_messages", "fallback_push_empty",
       "\x04" + libra::hotpath::Encode(libra::hotpath::FallbackPush{}));
  Save("hotpath_messages", "resume",
       "\x05" + libra::hotpath::Encode(libra::hotpath::Resume{1, 65537, 42}));
  Save("hotpath_messages", "written_keys",
       "\x06" + libra::hotpath::Encode(libra::hotpath::WrittenKeys{
                    7, 1, {0x01, 0x03, 0x00, 0x81, 0x01}, 0x123456789abcdefULL}));
  libra::hotpath::PacketRepair packets;
  packets.epoch = 9;
  packets.seqs = {0, 3};
  packets.tail_from = 5;
  packets.packets = {std::string(32, '\x11'), std::string(20, '\x22')};
  Save("hotpath_messages", "packet_repair", "\x07" + libra::hotpath::Encode(packets));
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
  // fuzz_dataset_cache's first byte is its mode: 0, the file as is
  // (checksum included); 1, the harness appends the checksum.
  const auto as_is = [](Bytes file) {
    file.insert(file.begin(), 0);
    return file;
  };
  train::WriteDatasetCache(path, data, info);
  Save("dataset_cache", "libsvm_rows", as_is(ReadAll(path)));
  train::WriteDatasetCache(path, train::Dataset{}, train::CacheInfo{});
  const Bytes empty = ReadAll(path);
  Save("dataset_cache", "empty", as_is(empty));
  Save("dataset_cache", "header_only_truncated", as_is(Bytes(empty.begin(), empty.begin() + 40)));
  Bytes unsealed(empty.begin(), empty.end() - 8);  // the checksum left to the harness
  unsealed.insert(unsealed.begin(), 1);
  Save("dataset_cache", "empty_sealed_by_harness", unsealed);
  std::remove(path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds tests/fuzz/corpus\n");
    return 2;
  }
  dir = argv[1];
  HotReplicaSeeds();
  HotPathReceiveSeeds();
  SwitchProgramSeeds();
  CodecSeeds();
  ControlMessageSeeds();
  SwitchdSeeds();
  HotSetFileSeeds();
  DataSeeds();
  return 0;
}
