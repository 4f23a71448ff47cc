#include "dataplane/counters.h"

#include <numeric>

namespace libra::dataplane {

std::string_view DropReasonName(DropReason reason) {
  switch (reason) {
    case DropReason::kTruncated:
      return "truncated";
    case DropReason::kOversized:
      return "oversized";
    case DropReason::kBadVersion:
      return "bad_version";
    case DropReason::kUnknownType:
      return "unknown_type";
    case DropReason::kTooManySlots:
      return "too_many_slots";
    case DropReason::kBadPayload:
      return "bad_payload";
    case DropReason::kNoJob:
      return "no_job";
    case DropReason::kWrongJob:
      return "wrong_job";
    case DropReason::kUnknownPeer:
      return "unknown_peer";
    case DropReason::kNodeIdMismatch:
      return "node_id_mismatch";
    case DropReason::kUnexpectedType:
      return "unexpected_type";
    case DropReason::kCellIndexOutOfRange:
      return "cell_index_out_of_range";
    case DropReason::kEpochOutOfRange:
      return "epoch_out_of_range";
    case DropReason::kFinCountMismatch:
      return "fin_count_mismatch";
    case DropReason::kStaleEpoch:
      return "stale_epoch";
    case DropReason::kCount:
      break;
  }
  return "unknown";
}

std::string_view EventName(Event event) {
  switch (event) {
    case Event::kPacketsIn:
      return "packets_in";
    case Event::kPacketsOut:
      return "packets_out";
    case Event::kDataPackets:
      return "data_packets";
    case Event::kDataDuplicates:
      return "data_duplicates";
    case Event::kRetransmissions:
      return "retransmissions";
    case Event::kValuesAggregated:
      return "values_aggregated";
    case Event::kValuesRejected:
      return "values_rejected_nan_inf";
    case Event::kValuesSaturated:
      return "values_saturated";
    case Event::kDataOneRow:
      return "data_one_row";
    case Event::kValuesStale:
      return "values_stale";
    case Event::kSaturatedCellUpdates:
      return "saturated_cell_updates";
    case Event::kAcks:
      return "acks";
    case Event::kFinPackets:
      return "fin_packets";
    case Event::kFinDuplicates:
      return "fin_duplicates";
    case Event::kEpochsReady:
      return "epochs_ready";
    case Event::kReadySent:
      return "ready_sent";
    case Event::kCollectPackets:
      return "collect_packets";
    case Event::kCollectNotReady:
      return "collect_not_ready";
    case Event::kResultsSent:
      return "results_sent";
    case Event::kResultsSaturated:
      return "results_saturated";
    case Event::kUpdatePackets:
      return "update_packets";
    case Event::kReplicasSent:
      return "replicas_sent";
    case Event::kProbes:
      return "probes";
    case Event::kCount:
      break;
  }
  return "unknown";
}

std::uint64_t ProgramCounters::TotalDrops() const {
  return std::accumulate(drops.begin(), drops.end(), std::uint64_t{0});
}

}  // namespace libra::dataplane
