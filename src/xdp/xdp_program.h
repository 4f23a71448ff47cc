// The XDP back end of the switch: the program of xdp_switch.bpf.c loaded into
// the kernel (libbpf, the generated skeleton), its maps written by the
// control plane, and the user-space part that sends what one XDP pass
// cannot (READY to every server, REPLICA to every worker; upcall.h).
//
// Process() runs a packet through the loaded program with BPF_PROG_TEST_RUN
// (no interface needed) and turns its verdict into output packets, which is
// how the scenario tests compare it with the model and how the benchmark
// drives it; switchd instead attaches the program to interfaces
// (Attach) and serves only the upcalls that reach its UDP socket.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/switch_backend.h"

struct bpf_link;

namespace libra::xdp {

// What only the XDP back end counts (xdp_abi.h).
struct XdpCounters {
  std::uint64_t upcalls = 0;                // packets XDP passed to the user-space part
  std::uint64_t not_switch_traffic = 0;     // frames for another address, passed untouched
  std::uint64_t cas_exhausted = 0;          // register updates that lost every retry
  std::uint64_t upcalls_refused = 0;        // packets at the socket that were no upcall
  std::uint64_t ingress_loss_injected = 0;  // dropped on arrival (SetFailureInjection)
  std::uint64_t egress_loss_injected = 0;   // answers dropped instead of sent
  std::uint64_t replies_grown_at_head = 0;  // answers longer than the tailroom allowed
  std::uint64_t replies_without_room = 0;   // answers that fitted nowhere, dropped
};

// The verdict of one pass, and the frame as the program left it.
struct TestRunResult {
  std::uint32_t verdict = 0;  // XDP_DROP, XDP_PASS, XDP_TX, ...
  std::vector<std::uint8_t> frame;
};

class XdpProgram final : public dataplane::SwitchBackend {
 public:
  // Loads the program (the kernel's verifier checks it) with value
  // registers for the profile's whole register budget, answering on
  // `switch_address` (IPv4 0: any). nullptr, with the reason in *error,
  // when the build has no XDP program, the kernel refuses it or the
  // process may not load BPF programs.
  static std::unique_ptr<XdpProgram> Load(const dataplane::PipelineProfile& profile,
                                          const UdpEndpoint& switch_address, std::string* error);
  ~XdpProgram() override;

  dataplane::InstallResult InstallJob(const SwitchJob& job) override;
  void RemoveJob() override;
  const SwitchJob* job() const override { return job_ ? &*job_ : nullptr; }
  const dataplane::PipelineProfile& profile() const override { return profile_; }
  dataplane::ProgramCounters Counters() const override;
  XdpCounters xdp_counters() const;
  std::vector<std::pair<std::string, std::uint64_t>> BackendCounters() const override;

  // The packet as the payload of an Ethernet/IPv4/UDP frame from `source`
  // to the switch, through the program (BPF_PROG_TEST_RUN), then through
  // the user-space part if the program passed it up.
  void Process(std::span<const std::uint8_t> packet, const UdpEndpoint& source,
               dataplane::OutputBatch& out) override;
  TestRunResult TestRun(std::span<const std::uint8_t> frame);

  // A packet that reached switchd's UDP socket: what XDP passed up (the
  // ACK of an epoch's last FIN, an UPDATE) is fanned out; anything else
  // is refused and counted.
  void HandleUpcall(std::span<const std::uint8_t> packet, const UdpEndpoint& source,
                    dataplane::OutputBatch& out);

  // Attaches to the interface (native XDP where the driver has it, else
  // generic) through a BPF link, which the kernel detaches when this
  // object goes or the process dies (a killed switchd leaves no program
  // answering behind); false with the reason in *error.
  bool Attach(const std::string& interface, std::string* error);

  // switchd's failure injection, done by the program: each packet for the
  // switch is dropped on arrival, and each answer it would send, with
  // probability `drop_rate`, decided by two splitmix64 sequences seeded by
  // `arrival_seed` and `answer_seed` (switchd's LossInjector's, so a seed
  // drops the same positions of each stream, run after run); the first
  // DATA of epoch `die_at_epoch` (negative: none) is passed up to switchd
  // instead of processed, for switchd to die on. Kept across jobs; a call
  // starts both sequences again.
  void SetFailureInjection(double drop_rate, std::uint64_t arrival_seed, std::uint64_t answer_seed,
                           std::int64_t die_at_epoch);

  int program_fd() const;
  std::uint64_t value_register_cells() const { return value_cells_; }

 private:
  struct Maps;
  XdpProgram(dataplane::PipelineProfile profile, UdpEndpoint address);
  void ClearRegisters();
  // Writes the job map: the job's parameters (none: no job) and the
  // failure injection.
  void WriteJobMap(const SwitchJob* job);

  dataplane::PipelineProfile profile_;
  UdpEndpoint address_;
  std::optional<SwitchJob> job_;
  std::unique_ptr<Maps> maps_;
  std::uint64_t value_cells_ = 0;
  dataplane::ProgramCounters user_counters_;  // what the user-space part sent
  std::uint64_t upcalls_refused_ = 0;
  std::uint64_t loss_threshold_ = 0;  // out of 2^64
  // Seeds for the loss streams that the next WriteJobMap installs.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> reseed_;
  std::uint32_t die_epoch_plus_one_ = 0;
  std::vector<bpf_link*> links_;  // one per attached interface
};

// Wraps a payload in the frame the program parses: Ethernet, IPv4 without
// options, UDP (checksum 0), from `source` to `destination`.
std::vector<std::uint8_t> UdpFrame(std::span<const std::uint8_t> payload, const UdpEndpoint& source,
                                   const UdpEndpoint& destination);

}  // namespace libra::xdp
