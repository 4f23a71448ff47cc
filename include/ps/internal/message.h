// The messages nodes exchange: a Meta header plus data arrays (keys, values,
// lengths for KV messages). Control messages carry no data and manage the
// cluster itself (registration, barriers, heartbeats, shutdown).
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
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

// The tag of element type V (kOther for any type not listed).
template <typename V>
struct DataTypeOf {
  static constexpr DataType value = DataType::kOther;
};
#define PS_DATA_TYPE_OF(type, tag)                   \
  template <>                                        \
  struct DataTypeOf<type> {                          \
    static constexpr DataType value = DataType::tag; \
  }
PS_DATA_TYPE_OF(char, kChar);
PS_DATA_TYPE_OF(int8_t, kInt8);
PS_DATA_TYPE_OF(int16_t, kInt16);
PS_DATA_TYPE_OF(int32_t, kInt32);
PS_DATA_TYPE_OF(int64_t, kInt64);
PS_DATA_TYPE_OF(uint8_t, kUInt8);
PS_DATA_TYPE_OF(uint16_t, kUInt16);
PS_DATA_TYPE_OF(uint32_t, kUInt32);
PS_DATA_TYPE_OF(uint64_t, kUInt64);
PS_DATA_TYPE_OF(float, kFloat);
PS_DATA_TYPE_OF(double, kDouble);
#undef PS_DATA_TYPE_OF

template <typename V>
constexpr DataType GetDataType() {
  return DataTypeOf<V>::value;
}

// A process of the job.
struct Node {
  enum Role : int { SERVER = 0, WORKER = 1, SCHEDULER = 2 };
  // An enumerator, not a static member: C++11 code may bind it to a
  // reference (CHECK_NE) without needing a definition.
  enum : int { kEmpty = -1 };

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
  enum : int { kEmpty = -1 };

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
  // The request's priority (KVPairs::priority), as in PS-lite; it orders a
  // ThreadsafePQueue. Not sent: Libra's van sends in the order of Send calls.
  int priority = 0;
  std::string body;  // SimpleApp payload, or a control message's text
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
