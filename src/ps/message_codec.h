// Encoding of a Message's Meta into the first frame of a transport message.
// Data arrays travel as frames of their own, untouched. Decoding checks every
// length, so a malformed frame is rejected instead of read out of bounds.
#pragma once

#include <string>

#include "ps/internal/message.h"

namespace ps {

// Layout (little-endian):
//   u16 magic 'LP' | u8 version | u8 flags (request, push, pull, simple_app,
//       keys_omitted)
//   i32 head, app_id, customer_id, timestamp, sender, recver, num_merged
//   i32 control cmd | i32 barrier_group | u32 node count, then per node
//       i32 role, id, rank_hint, port | u32 length + hostname bytes
//   u32 length + body bytes | u32 count + one i8 DataType per data frame
std::string EncodeMeta(const Meta& meta);

// Returns false (and leaves *meta unspecified) if `bytes` is not a valid header.
bool DecodeMeta(const char* bytes, size_t size, Meta* meta);

}  // namespace ps
