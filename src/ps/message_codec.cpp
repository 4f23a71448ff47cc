#include "ps/message_codec.h"

#include "wire/coding.h"

namespace ps {

namespace {

constexpr uint16_t kMagic = 0x504C;  // "LP"
constexpr uint8_t kVersion = 1;
constexpr size_t kMaxHostname = 255;
constexpr size_t kMaxNodes = 1 << 16;
constexpr size_t kMaxDataFrames = 64;

using libra::wire::ByteReader;
using libra::wire::ByteWriter;

}  // namespace

std::string EncodeMeta(const Meta& meta) {
  ByteWriter w;
  w.Put<uint16_t>(kMagic);
  w.Put<uint8_t>(kVersion);
  uint8_t flags = (meta.request ? 1 : 0) | (meta.push ? 2 : 0) | (meta.pull ? 4 : 0) |
                  (meta.simple_app ? 8 : 0) | (meta.keys_omitted ? 16 : 0);
  w.Put<uint8_t>(flags);
  for (int v : {meta.head, meta.app_id, meta.customer_id, meta.timestamp, meta.sender, meta.recver,
                meta.num_merged}) {
    w.Put<int32_t>(v);
  }
  w.Put<int32_t>(meta.control.cmd);
  w.Put<int32_t>(meta.control.barrier_group);
  w.Put<uint32_t>(static_cast<uint32_t>(meta.control.node.size()));
  for (const Node& n : meta.control.node) {
    w.Put<int32_t>(n.role);
    w.Put<int32_t>(n.id);
    w.Put<int32_t>(n.rank_hint);
    w.Put<int32_t>(n.port);
    w.PutString(n.hostname);
  }
  w.PutString(meta.body);
  w.Put<uint32_t>(static_cast<uint32_t>(meta.data_type.size()));
  for (DataType t : meta.data_type) w.Put<int8_t>(static_cast<int8_t>(t));
  return w.Take();
}

bool DecodeMeta(const char* bytes, size_t size, Meta* meta) {
  ByteReader r(std::string_view(bytes, size));
  uint16_t magic;
  uint8_t version, flags;
  if (!r.Get(&magic) || magic != kMagic || !r.Get(&version) || version != kVersion ||
      !r.Get(&flags)) {
    return false;
  }
  meta->request = flags & 1;
  meta->push = flags & 2;
  meta->pull = flags & 4;
  meta->simple_app = flags & 8;
  meta->keys_omitted = flags & 16;
  for (int* v : {&meta->head, &meta->app_id, &meta->customer_id, &meta->timestamp, &meta->sender,
                 &meta->recver, &meta->num_merged}) {
    int32_t x;
    if (!r.Get(&x)) return false;
    *v = x;
  }
  int32_t cmd, group;
  uint32_t num_nodes;
  if (!r.Get(&cmd) || cmd < Control::EMPTY || cmd > Control::ABORT || !r.Get(&group) ||
      !r.Get(&num_nodes) || num_nodes > kMaxNodes) {
    return false;
  }
  meta->control.cmd = static_cast<Control::Command>(cmd);
  meta->control.barrier_group = group;
  meta->control.node.resize(num_nodes);
  for (Node& n : meta->control.node) {
    int32_t role;
    if (!r.Get(&role) || role < Node::SERVER || role > Node::SCHEDULER) return false;
    n.role = static_cast<Node::Role>(role);
    int32_t id, hint, port;
    if (!r.Get(&id) || !r.Get(&hint) || !r.Get(&port)) return false;
    n.id = id;
    n.rank_hint = hint;
    n.port = port;
    if (!r.GetString(&n.hostname, kMaxHostname)) return false;
  }
  if (!r.GetString(&meta->body, size)) return false;
  uint32_t num_types;
  if (!r.Get(&num_types) || num_types > kMaxDataFrames) return false;
  meta->data_type.resize(num_types);
  for (DataType& t : meta->data_type) {
    int8_t x;
    if (!r.Get(&x) || x < 0 || x > static_cast<int8_t>(DataType::kOther)) return false;
    t = static_cast<DataType>(x);
  }
  return r.AtEnd();
}

}  // namespace ps
