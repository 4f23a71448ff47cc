#include "xdp/xdp_program.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>

#include "wire/fixed_point.h"
#include "wire/wire.h"
#include "xdp/xdp_abi.h"
#include "xdp/xdp_switch.skel.h"

namespace libra::xdp {
namespace {

using dataplane::DropReason;
using dataplane::Event;

// The counter indices of xdp_abi.h are dataplane's enums: checked here, so
// that a counter added to one and not the other fails the build.
static_assert(static_cast<int>(DropReason::kCount) == LIBRA_XDP_DROP_COUNT);
static_assert(static_cast<int>(Event::kCount) == LIBRA_XDP_EVENT_COUNT);
static_assert(static_cast<int>(DropReason::kTruncated) == LIBRA_XDP_DROP_TRUNCATED);
static_assert(static_cast<int>(DropReason::kBadPayload) == LIBRA_XDP_DROP_BAD_PAYLOAD);
static_assert(static_cast<int>(DropReason::kNoJob) == LIBRA_XDP_DROP_NO_JOB);
static_assert(static_cast<int>(DropReason::kUnknownPeer) == LIBRA_XDP_DROP_UNKNOWN_PEER);
static_assert(static_cast<int>(DropReason::kCellIndexOutOfRange) ==
              LIBRA_XDP_DROP_CELL_INDEX_OUT_OF_RANGE);
static_assert(static_cast<int>(DropReason::kStaleEpoch) == LIBRA_XDP_DROP_STALE_EPOCH);
static_assert(LIBRA_XDP_EVENT(static_cast<int>(Event::kPacketsIn)) == LIBRA_XDP_PACKETS_IN);
static_assert(LIBRA_XDP_EVENT(static_cast<int>(Event::kDataOneRow)) == LIBRA_XDP_DATA_ONE_ROW);
static_assert(LIBRA_XDP_EVENT(static_cast<int>(Event::kSaturatedCellUpdates)) ==
              LIBRA_XDP_SATURATED_CELL_UPDATES);
static_assert(LIBRA_XDP_EVENT(static_cast<int>(Event::kEpochsReady)) == LIBRA_XDP_EPOCHS_READY);
static_assert(LIBRA_XDP_EVENT(static_cast<int>(Event::kResultsSaturated)) ==
              LIBRA_XDP_RESULTS_SATURATED);
static_assert(LIBRA_XDP_EVENT(static_cast<int>(Event::kProbes)) == LIBRA_XDP_PROBES);

constexpr std::size_t kEthernetBytes = 14;
constexpr std::size_t kIpv4Bytes = 20;
constexpr std::size_t kUdpBytes = 8;
constexpr std::size_t kPayloadAt = kEthernetBytes + kIpv4Bytes + kUdpBytes;

std::string Errno(const std::string& what, int error) {
  return what + ": " + std::strerror(error < 0 ? -error : error);
}

// A register map, mapped into this process (BPF_F_MMAPABLE).
struct MappedArray {
  std::uint64_t* cells = nullptr;
  std::size_t bytes = 0;
  std::size_t count = 0;

  bool Map(const bpf_map* map, std::string* error) {
    count = bpf_map__max_entries(map);
    bytes = count * sizeof(std::uint64_t);
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    bytes = (bytes + page - 1) / page * page;
    void* at = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
    if (at == MAP_FAILED) {
      *error = Errno(std::string("mmap of map ") + bpf_map__name(map), errno);
      return false;
    }
    cells = static_cast<std::uint64_t*>(at);
    return true;
  }
  void Clear() { std::memset(cells, 0, count * sizeof(std::uint64_t)); }
  ~MappedArray() {
    if (cells != nullptr) munmap(cells, bytes);
  }
};

libra_xdp_peer_key PeerKey(const UdpEndpoint& endpoint) {
  return libra_xdp_peer_key{htonl(endpoint.ipv4), htons(endpoint.port), 0};
}

UdpEndpoint SourceOf(std::span<const std::uint8_t> frame) {
  return {wire::LoadBig32(frame.data() + kEthernetBytes + 12),
          wire::LoadBig16(frame.data() + kEthernetBytes + kIpv4Bytes)};
}
UdpEndpoint DestinationOf(std::span<const std::uint8_t> frame) {
  return {wire::LoadBig32(frame.data() + kEthernetBytes + 16),
          wire::LoadBig16(frame.data() + kEthernetBytes + kIpv4Bytes + 2)};
}
// The UDP payload of a frame the program left, by the UDP header's length.
std::span<const std::uint8_t> PayloadOf(std::span<const std::uint8_t> frame) {
  if (frame.size() < kPayloadAt) return {};
  const std::size_t udp_length = wire::LoadBig16(frame.data() + kEthernetBytes + kIpv4Bytes + 4);
  if (udp_length < kUdpBytes || kPayloadAt + udp_length - kUdpBytes > frame.size()) return {};
  return frame.subspan(kPayloadAt, udp_length - kUdpBytes);
}

void Append(dataplane::OutputBatch& out, const UdpEndpoint& destination,
            std::span<const std::uint8_t> bytes) {
  dataplane::OutputPacket& packet = out.Append();
  packet.destination = destination;
  packet.length = static_cast<std::uint16_t>(std::min(bytes.size(), packet.bytes.size()));
  std::copy_n(bytes.begin(), packet.length, packet.bytes.begin());
}

}  // namespace

struct XdpProgram::Maps {
  libra_xdp_switch* skeleton = nullptr;
  MappedArray dedup_window, data_count, fin_seen, fin_count, values;
  ~Maps() {
    if (skeleton != nullptr) libra_xdp_switch__destroy(skeleton);
  }
};

XdpProgram::XdpProgram(dataplane::PipelineProfile profile, UdpEndpoint address)
    : profile_(std::move(profile)), address_(address), maps_(std::make_unique<Maps>()) {}

XdpProgram::~XdpProgram() {
  for (bpf_link* link : links_) bpf_link__destroy(link);
}

std::unique_ptr<XdpProgram> XdpProgram::Load(const dataplane::PipelineProfile& profile,
                                             const UdpEndpoint& switch_address,
                                             std::string* error) {
  // The program's fixed-size maps hold what the profile allows.
  if (profile.max_workers > LIBRA_XDP_MAX_WORKERS || profile.max_servers > LIBRA_XDP_MAX_SERVERS ||
      profile.dedup_window != LIBRA_XDP_DEDUP_WINDOW ||
      profile.max_slots_per_packet > LIBRA_XDP_MAX_JOB_SLOTS) {
    *error = "profile " + profile.name + " exceeds the XDP program's fixed limits";
    return nullptr;
  }
  std::unique_ptr<XdpProgram> program(new XdpProgram(profile, switch_address));
  Maps& maps = *program->maps_;
  libbpf_set_print([](libbpf_print_level, const char*, va_list) { return 0; });
  maps.skeleton = libra_xdp_switch__open();
  if (maps.skeleton == nullptr) {
    *error = Errno("opening the XDP program", errno);
    return nullptr;
  }
  // The value registers: the profile's whole register budget, in 64-bit cells.
  const std::uint64_t budget_bits =
      profile.register_bits_per_stage * static_cast<std::uint64_t>(profile.stages);
  program->value_cells_ = std::max<std::uint64_t>(budget_bits / 64, 1);
  bpf_map__set_max_entries(maps.skeleton->maps.values,
                           static_cast<std::uint32_t>(program->value_cells_));
  if (const int e = libra_xdp_switch__load(maps.skeleton); e != 0) {
    *error =
        Errno("loading the XDP program (needs root or CAP_BPF, and the verifier's consent)", e);
    return nullptr;
  }
  auto* skeleton = maps.skeleton;
  if (!maps.dedup_window.Map(skeleton->maps.dedup_window, error) ||
      !maps.data_count.Map(skeleton->maps.data_count, error) ||
      !maps.fin_seen.Map(skeleton->maps.fin_seen, error) ||
      !maps.fin_count.Map(skeleton->maps.fin_count, error) ||
      !maps.values.Map(skeleton->maps.values, error)) {
    return nullptr;
  }
  program->RemoveJob();
  return program;
}

int XdpProgram::program_fd() const { return bpf_program__fd(maps_->skeleton->progs.libra_switch); }

void XdpProgram::ClearRegisters() {
  maps_->dedup_window.Clear();
  maps_->data_count.Clear();
  maps_->fin_seen.Clear();
  maps_->fin_count.Clear();
  maps_->values.Clear();
}

void XdpProgram::WriteJobMap(const SwitchJob* job) {
  const std::uint32_t zero = 0;
  libra_xdp_job params{};
  if (job != nullptr) {
    params.installed = 1;
    params.job_id = job->job_id;
    params.workers = static_cast<std::uint32_t>(job->workers.size());
    params.servers = static_cast<std::uint32_t>(job->servers.size());
    params.cells_per_array = job->cells_per_array;
    params.slots_per_packet = static_cast<std::uint32_t>(job->slots_per_packet);
  }
  params.switch_ipv4 = htonl(address_.ipv4);
  params.switch_port = htons(address_.port);
  params.die_epoch_plus_one = die_epoch_plus_one_;
  params.loss_threshold = loss_threshold_;
  // The loss streams go on where the program left them, unless reseeded.
  const int fd = bpf_map__fd(maps_->skeleton->maps.job);
  if (reseed_) {
    params.loss_arrivals = reseed_->first;
    params.loss_answers = reseed_->second;
    reseed_.reset();
  } else {
    libra_xdp_job now{};
    if (bpf_map_lookup_elem(fd, &zero, &now) == 0) {
      params.loss_arrivals = now.loss_arrivals;
      params.loss_answers = now.loss_answers;
    }
  }
  bpf_map_update_elem(fd, &zero, &params, BPF_ANY);
}

void XdpProgram::SetFailureInjection(double drop_rate, std::uint64_t arrival_seed,
                                     std::uint64_t answer_seed, std::int64_t die_at_epoch) {
  // As switchd's LossInjector: out of 2^64, the generator's states the seeds.
  loss_threshold_ = drop_rate <= 0 ? 0
                    : drop_rate >= 1
                        ? UINT64_MAX
                        : static_cast<std::uint64_t>(drop_rate * 18446744073709551616.0);
  reseed_ = {arrival_seed, answer_seed};
  die_epoch_plus_one_ = die_at_epoch < 0 || die_at_epoch >= LIBRA_XDP_MAX_EPOCH
                            ? 0
                            : static_cast<std::uint32_t>(die_at_epoch + 1);
  WriteJobMap(job_ ? &*job_ : nullptr);
}

void XdpProgram::RemoveJob() {
  WriteJobMap(nullptr);
  const int peers = bpf_map__fd(maps_->skeleton->maps.peers);
  libra_xdp_peer_key key{};
  while (bpf_map_get_next_key(peers, nullptr, &key) == 0) bpf_map_delete_elem(peers, &key);
  const int addresses = bpf_map__fd(maps_->skeleton->maps.worker_addresses);
  const libra_xdp_worker_address none{};
  for (std::uint32_t w = 0; job_ && w < job_->workers.size(); ++w) {
    bpf_map_update_elem(addresses, &w, &none, BPF_ANY);
  }
  job_.reset();
}

dataplane::InstallResult XdpProgram::InstallJob(const SwitchJob& job) {
  dataplane::InstallResult result;
  const dataplane::JobShape shape{static_cast<int>(job.workers.size()),
                                  static_cast<int>(job.servers.size()), job.cells_per_array,
                                  job.slots_per_packet, job.scale_bits};
  result.fit = dataplane::PlaceRegisters(profile_, shape);
  if (!result.fit.fits) {
    result.error = "job does not fit profile " + profile_.name + ":";
    for (const auto& problem : result.fit.problems) result.error += " " + problem + ";";
    return result;
  }
  std::set<std::uint64_t> addresses;
  for (const auto* endpoints : {&job.workers, &job.servers}) {
    for (const UdpEndpoint& endpoint : *endpoints) {
      if (!addresses.insert(endpoint.Key()).second) {
        result.error = "address " + endpoint.ToString() + " appears twice in the job";
        return result;
      }
    }
  }
  const std::uint64_t cells =
      std::uint64_t{job.cells_per_array} * 2 * static_cast<std::uint64_t>(job.slots_per_packet);
  if (cells > value_cells_) {
    result.error = "job needs " + std::to_string(cells) + " value cells, the XDP program has " +
                   std::to_string(value_cells_);
    return result;
  }

  // No job while the tables change: packets meanwhile are dropped as no_job.
  RemoveJob();
  ClearRegisters();
  auto* skeleton = maps_->skeleton;
  const int peers = bpf_map__fd(skeleton->maps.peers);
  const int worker_addresses = bpf_map__fd(skeleton->maps.worker_addresses);
  for (std::size_t i = 0; i < job.workers.size(); ++i) {
    const libra_xdp_peer_key key = PeerKey(job.workers[i]);
    const libra_xdp_peer peer{LIBRA_XDP_ROLE_WORKER, static_cast<libra_u16>(i)};
    bpf_map_update_elem(peers, &key, &peer, BPF_ANY);
    const std::uint32_t w = static_cast<std::uint32_t>(i);
    const libra_xdp_worker_address address{key.ipv4, key.port, 1};
    bpf_map_update_elem(worker_addresses, &w, &address, BPF_ANY);
  }
  for (std::size_t i = 0; i < job.servers.size(); ++i) {
    const libra_xdp_peer_key key = PeerKey(job.servers[i]);
    const libra_xdp_peer peer{LIBRA_XDP_ROLE_SERVER, static_cast<libra_u16>(i)};
    bpf_map_update_elem(peers, &key, &peer, BPF_ANY);
  }
  // The conversion table for the job's F: the model's own entries.
  const dataplane::FixedPointCodec codec(job.scale_bits);
  const int to_fixed = bpf_map__fd(skeleton->maps.to_fixed);
  for (std::uint32_t e = 0; e < 256; ++e) {
    bpf_map_update_elem(to_fixed, &e, &codec.exponent_table()[e], BPF_ANY);
  }
  job_ = job;
  WriteJobMap(&*job_);
  result.ok = true;
  return result;
}

namespace {

// Every CPU's copy of the counters, summed.
std::vector<std::uint64_t> SumCounters(int fd) {
  const int cpus = libbpf_num_possible_cpus();
  std::vector<std::uint64_t> sums(LIBRA_XDP_COUNTER_COUNT, 0);
  std::vector<std::uint64_t> per_cpu(static_cast<std::size_t>(std::max(cpus, 1)));
  for (std::uint32_t i = 0; i < LIBRA_XDP_COUNTER_COUNT; ++i) {
    if (bpf_map_lookup_elem(fd, &i, per_cpu.data()) != 0) continue;
    for (std::uint64_t v : per_cpu) sums[i] += v;
  }
  return sums;
}

}  // namespace

dataplane::ProgramCounters XdpProgram::Counters() const {
  const std::vector<std::uint64_t> sums = SumCounters(bpf_map__fd(maps_->skeleton->maps.counters));
  dataplane::ProgramCounters counters = user_counters_;
  for (std::size_t i = 0; i < counters.drops.size(); ++i) counters.drops[i] += sums[i];
  for (std::size_t i = 0; i < counters.events.size(); ++i) {
    counters.events[i] += sums[LIBRA_XDP_EVENT(i)];
  }
  return counters;
}

XdpCounters XdpProgram::xdp_counters() const {
  const std::vector<std::uint64_t> sums = SumCounters(bpf_map__fd(maps_->skeleton->maps.counters));
  return {sums[LIBRA_XDP_UPCALLS],
          sums[LIBRA_XDP_NOT_SWITCH_TRAFFIC],
          sums[LIBRA_XDP_CAS_EXHAUSTED],
          upcalls_refused_,
          sums[LIBRA_XDP_INGRESS_LOSS_INJECTED],
          sums[LIBRA_XDP_EGRESS_LOSS_INJECTED],
          sums[LIBRA_XDP_REPLIES_GROWN_AT_HEAD],
          sums[LIBRA_XDP_REPLIES_WITHOUT_ROOM]};
}

std::vector<std::pair<std::string, std::uint64_t>> XdpProgram::BackendCounters() const {
  const XdpCounters c = xdp_counters();
  return {{"upcalls", c.upcalls},
          {"not_switch_traffic", c.not_switch_traffic},
          {"cas_exhausted", c.cas_exhausted},
          {"upcalls_refused", c.upcalls_refused},
          {"ingress_loss_injected", c.ingress_loss_injected},
          {"egress_loss_injected", c.egress_loss_injected},
          {"replies_grown_at_head", c.replies_grown_at_head},
          {"replies_without_room", c.replies_without_room}};
}

TestRunResult XdpProgram::TestRun(std::span<const std::uint8_t> frame) {
  TestRunResult result;
  result.frame.resize(4096);
  bpf_test_run_opts opts{};
  opts.sz = sizeof(opts);
  opts.data_in = frame.data();
  opts.data_size_in = static_cast<std::uint32_t>(frame.size());
  opts.data_out = result.frame.data();
  opts.data_size_out = static_cast<std::uint32_t>(result.frame.size());
  opts.repeat = 1;
  if (bpf_prog_test_run_opts(program_fd(), &opts) != 0) {
    result.verdict = XDP_ABORTED;
    result.frame.clear();
    return result;
  }
  result.verdict = opts.retval;
  result.frame.resize(opts.data_size_out);
  return result;
}

void XdpProgram::Process(std::span<const std::uint8_t> packet, const UdpEndpoint& source,
                         dataplane::OutputBatch& out) {
  const UdpEndpoint to{address_.ipv4 != 0 ? address_.ipv4 : 0x0afffffeu, address_.port};
  const TestRunResult run = TestRun(UdpFrame(packet, source, to));
  if (run.verdict == XDP_TX) {
    Append(out, DestinationOf(run.frame), PayloadOf(run.frame));
  } else if (run.verdict == XDP_PASS) {
    HandleUpcall(PayloadOf(run.frame), SourceOf(run.frame), out);
  }
}

void XdpProgram::HandleUpcall(std::span<const std::uint8_t> packet, const UdpEndpoint& source,
                              dataplane::OutputBatch& out) {
  wire::Header header;
  if (!job_ || wire::DecodeHeader(packet, &header) != wire::DecodeError::kNone) {
    ++upcalls_refused_;
    return;
  }
  const auto is = [&](const std::vector<UdpEndpoint>& peers) {
    return header.node_id < peers.size() && peers[header.node_id] == source;
  };
  if (header.type == wire::MessageType::kAck && (header.flags & wire::kFlagFin) != 0 &&
      is(job_->workers)) {
    // The ACK of the FIN that completed the epoch, then READY to every server.
    Append(out, source, packet);
    user_counters_.Count(Event::kPacketsOut);
    user_counters_.Count(Event::kAcks);
    wire::Header ready;
    ready.type = wire::MessageType::kReady;
    ready.job_id = header.job_id;
    ready.epoch = header.epoch;
    for (std::size_t s = 0; s < job_->servers.size(); ++s) {
      ready.node_id = static_cast<std::uint16_t>(s);
      dataplane::OutputPacket& packet_out = out.Append();
      packet_out.destination = job_->servers[s];
      packet_out.length = static_cast<std::uint16_t>(wire::Encode(ready, {}, packet_out.bytes));
      user_counters_.Count(Event::kPacketsOut);
      user_counters_.Count(Event::kReadySent);
    }
    return;
  }
  if (header.type == wire::MessageType::kUpdate && is(job_->servers)) {
    // A copy per worker, as it came but for its type (the payload is never
    // read: whatever follows the row blocks goes along), then the ACK.
    for (const UdpEndpoint& worker : job_->workers) {
      Append(out, worker, packet);
      wire::SetType(out[out.size() - 1].bytes.data(), wire::MessageType::kReplica);
    }
    user_counters_.Count(Event::kReplicasSent, job_->workers.size());
    user_counters_.Count(Event::kPacketsOut, job_->workers.size() + 1);
    user_counters_.Count(Event::kAcks);
    Append(out, source, packet.first(wire::kHeaderBytes));
    std::uint8_t* ack = out[out.size() - 1].bytes.data();
    wire::SetType(ack, wire::MessageType::kAck);
    wire::SetFlags(ack, header.flags & wire::kFlagRetransmission);  // as stage_replicate.cpp
    wire::SetSlotCount(ack, 0);
    return;
  }
  ++upcalls_refused_;
}

bool XdpProgram::Attach(const std::string& interface, std::string* error) {
  const int ifindex = static_cast<int>(if_nametoindex(interface.c_str()));
  if (ifindex == 0) {
    *error = Errno("interface " + interface, errno);
    return false;
  }
  // No mode flags: the kernel takes the driver's native mode if it has one.
  bpf_link* link = bpf_program__attach_xdp(maps_->skeleton->progs.libra_switch, ifindex);
  if (link == nullptr) {
    *error = Errno("attaching XDP to " + interface, errno);
    return false;
  }
  links_.push_back(link);
  return true;
}

std::vector<std::uint8_t> UdpFrame(std::span<const std::uint8_t> payload, const UdpEndpoint& source,
                                   const UdpEndpoint& destination) {
  std::vector<std::uint8_t> frame(kPayloadAt + payload.size(), 0);
  std::uint8_t* p = frame.data();
  const std::array<std::uint8_t, 6> switch_mac = {0x02, 0, 0, 0, 0, 0x01};
  const std::array<std::uint8_t, 6> peer_mac = {0x02, 0, 0, 0, 0, 0x02};
  std::copy(switch_mac.begin(), switch_mac.end(), p);
  std::copy(peer_mac.begin(), peer_mac.end(), p + 6);
  wire::StoreBig16(p + 12, 0x0800);
  std::uint8_t* ip = p + kEthernetBytes;
  ip[0] = 0x45;
  wire::StoreBig16(ip + 2, static_cast<std::uint16_t>(kIpv4Bytes + kUdpBytes + payload.size()));
  ip[8] = 64;
  ip[9] = 17;  // UDP
  wire::StoreBig32(ip + 12, source.ipv4);
  wire::StoreBig32(ip + 16, destination.ipv4);
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < kIpv4Bytes; i += 2) sum += wire::LoadBig16(ip + i);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
  wire::StoreBig16(ip + 10, static_cast<std::uint16_t>(~sum));
  std::uint8_t* udp = ip + kIpv4Bytes;
  wire::StoreBig16(udp, source.port);
  wire::StoreBig16(udp + 2, destination.port);
  wire::StoreBig16(udp + 4, static_cast<std::uint16_t>(kUdpBytes + payload.size()));
  std::copy(payload.begin(), payload.end(), frame.begin() + kPayloadAt);
  return frame;
}

}  // namespace libra::xdp
