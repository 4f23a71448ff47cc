// The messages nodes exchange: a Meta header plus data arrays (keys, values,
// lengths for KV messages). Control messages carry no data and manage the
// cluster itself (registration, barriers, heartbeats, shutdown).
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "ps/sarray.h"

namespace ps {

// Element type tags of the data arrays, so a receiver can check what it got.
enum class DataType : int8_t {
  kChar,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat,
  kDouble,
  kOther
};

template <typename V>
constexpr DataType GetDataType() {
  if constexpr (std::is_same_v<V, char>)
    return DataType::kChar;
  else if constexpr (std::is_same_v<V, int8_t>)
    return DataType::kInt8;
  else if constexpr (std::is_same_v<V, int16_t>)
    return DataType::kInt16;
  else if constexpr (std::is_same_v<V, int32_t>)
    return DataType::kInt32;
  else if constexpr (std::is_same_v<V, int64_t>)
    return DataType::kInt64;
  else if constexpr (std::is_same_v<V, uint8_t>)
    return DataType::kUInt8;
  else if constexpr (std::is_same_v<V, uint16_t>)
    return DataType::kUInt16;
  else if constexpr (std::is_same_v<V, uint32_t>)
    return DataType::kUInt32;
  else if constexpr (std::is_same_v<V, uint64_t>)
    return DataType::kUInt64;
  else if constexpr (std::is_same_v<V, float>)
    return DataType::kFloat;
  else if constexpr (std::is_same_v<V, double>)
    return DataType::kDouble;
  else
    return DataType::kOther;
}

// A process of the job.
struct Node {
  enum Role : int { SERVER = 0, WORKER = 1, SCHEDULER = 2 };
  static constexpr int kEmpty = -1;

  Role role = SERVER;
  int id = kEmpty;         // assigned by the scheduler
  int rank_hint = kEmpty;  // LIBRA_RANK, set by `libra launch` to fix ranks
  std::string hostname;
  int port = kEmpty;

  std::string ShortDebugString() const;
};

const char* RoleName(Node::Role role);

// Cluster management carried by a message without data.
struct Control {
  enum Command : int {
    EMPTY = 0,  // not a control message
    TERMINATE,  // stop this node's receiving loop (sent to self)
    ADD_NODE,   // registration, and the scheduler's reply with all nodes
    BARRIER,    // barrier request (to the scheduler) and release
    HEARTBEAT,  // liveness, answered by the scheduler
    EXIT,       // a node finished cleanly; stop watching it
    ABORT,      // the scheduler stops the job; body says why
  };

  bool empty() const { return cmd == EMPTY; }

  Command cmd = EMPTY;
  std::vector<Node> node;
  int barrier_group = 0;
};

struct Meta {
  static constexpr int kEmpty = -1;

  int head = kEmpty;  // application-defined command (KV cmd, SimpleApp head)
  int app_id = kEmpty;
  int customer_id = kEmpty;
  int timestamp = kEmpty;  // request id, echoed by the response
  int sender = kEmpty;
  int recver = kEmpty;
  bool request = false;
  bool push = false;
  bool pull = false;
  bool simple_app = false;
  // A pull response whose keys are exactly the request's: the keys array is
  // not sent back (the worker still has it), which halves a pull's bytes.
  bool keys_omitted = false;
  int num_merged = 1;  // Libra: how many workers' gradients this push sums
  std::string body;    // SimpleApp payload, or a control message's text
  std::vector<DataType> data_type;
  Control control;
};

struct Message {
  Meta meta;
  std::vector<SArray<char>> data;

  template <typename V>
  void AddData(const SArray<V>& val) {
    meta.data_type.push_back(GetDataType<V>());
    data.push_back(SArray<char>(val));
  }

  std::string DebugString() const;
};

}  // namespace ps
