// What the switch program counts: every drop by its reason, and the events of
// the protocol. Both are plain arrays indexed by enum so the data path only
// increments; names are for reports.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace libra::dataplane {

enum class DropReason : std::uint8_t {
  kTruncated,
  kOversized,
  kBadVersion,
  kUnknownType,
  kTooManySlots,  // more slots than the wire format or the job's P
  kBadPayload,    // masks or row blocks that contradict the header
  kNoJob,
  kWrongJob,
  kUnknownPeer,     // source address is not a worker or server of the job
  kNodeIdMismatch,  // node id does not belong to the source address
  kUnexpectedType,  // a message this sender never sends to the switch
  kCellIndexOutOfRange,
  kEpochOutOfRange,
  kFinCountMismatch,  // FIN counts other than the DATA packets the switch saw
  kStaleEpoch,        // the epoch's bank already holds a newer epoch
  kCount
};

enum class Event : std::uint8_t {
  kPacketsIn,
  kPacketsOut,
  kDataPackets,
  kDataDuplicates,
  kDataOneRow,       // DATA added by the one-row loop (all slots valid, clean, one row)
  kRetransmissions,  // packets flagged as resends by their sender
  kValuesAggregated,
  kValuesRejected,        // infinity or NaN
  kValuesSaturated,       // too large for 2^F, clamped
  kValuesStale,           // cell already holds a newer epoch
  kSaturatedCellUpdates,  // updates of a cell that carries the saturation flag
  kAcks,
  kFinPackets,
  kFinDuplicates,
  kEpochsReady,
  kReadySent,
  kCollectPackets,
  kCollectNotReady,
  kResultsSent,
  kResultsSaturated,
  kUpdatePackets,
  kReplicasSent,
  kProbes,
  kCount
};

std::string_view DropReasonName(DropReason reason);
std::string_view EventName(Event event);

struct ProgramCounters {
  std::array<std::uint64_t, static_cast<std::size_t>(DropReason::kCount)> drops{};
  std::array<std::uint64_t, static_cast<std::size_t>(Event::kCount)> events{};

  void Count(DropReason reason) { ++drops[static_cast<std::size_t>(reason)]; }
  void Count(Event event, std::uint64_t n = 1) { events[static_cast<std::size_t>(event)] += n; }
  std::uint64_t operator[](DropReason reason) const {
    return drops[static_cast<std::size_t>(reason)];
  }
  std::uint64_t operator[](Event event) const { return events[static_cast<std::size_t>(event)]; }
  std::uint64_t TotalDrops() const;
};

}  // namespace libra::dataplane
