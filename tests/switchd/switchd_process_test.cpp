// libra switchd as a real process on loopback, driven by scripted workers
// (threads) and a scripted server that retransmit on timeout. The sums must
// match, bit for bit, a reference computed here with the same conversion code,
// with and without injected loss.
#include "common/switchd_process.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "common/disconnect_monitor.h"
#include "common/result_slots.h"
#include "common/run_command.h"
#include "hotpath/controller/switch_control_client.h"
#include "net/udp_socket.h"
#include "switchd/control_handler.h"
#include "wire/fixed_point.h"
#include "wire/wire.h"

namespace libra::switchd {
namespace {

using net::UdpSocket;
using wire::MessageType;

constexpr int kWorkers = 3;
constexpr int kServers = 2;
constexpr int kSlots = 8;
constexpr std::uint32_t kCells = 24;
constexpr int kScale = 16;
constexpr std::uint32_t kJobId = 11;
constexpr int kEpochs = 4;
constexpr int kTimeoutMs = 15;

using libra::test_support::CommandResult;
using libra::test_support::RunCommand;
using libra::test_support::SwitchdProcess;

std::vector<std::uint8_t> Encode(const wire::Header& header,
                                 const std::array<wire::Slot, wire::kMaxSlots>& slots) {
  std::vector<std::uint8_t> bytes(wire::EncodedSize(header.slot_count));
  wire::Encode(header, slots, bytes);
  return bytes;
}

struct Packet {
  wire::Header header;
  std::array<wire::Slot, wire::kMaxSlots> slots{};
};

// values[epoch][worker][array][cell]; NaN marks "no value".
using Gradients = std::vector<std::vector<std::vector<std::vector<float>>>>;

Gradients MakeGradients(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  Gradients g(kEpochs, std::vector(kWorkers, std::vector(kSlots, std::vector<float>(kCells))));
  for (auto& epoch : g)
    for (auto& worker : epoch)
      for (auto& array : worker)
        for (float& x : array) {
          x = rng() % 5 < 3 ? value(rng) * std::ldexp(1.0f, -static_cast<int>(rng() % 12))
                            : std::nanf("");
        }
  return g;
}

// Layout-aware packing: slot j of packet k carries the k-th value of array j.
std::vector<Packet> Pack(const std::vector<std::vector<float>>& arrays, int worker, int epoch) {
  std::vector<std::vector<std::uint32_t>> queues(kSlots);
  for (int j = 0; j < kSlots; ++j)
    for (std::uint32_t c = 0; c < kCells; ++c)
      if (!std::isnan(arrays[j][c])) queues[j].push_back(c);
  std::vector<Packet> packets;
  for (std::size_t k = 0;; ++k) {
    Packet p;
    bool any = false;
    for (int j = 0; j < kSlots; ++j) {
      if (k < queues[j].size()) {
        const std::uint32_t c = queues[j][k];
        p.slots[j] = {true, false, c, std::bit_cast<std::uint32_t>(arrays[j][c])};
        any = true;
      }
    }
    if (!any) break;
    p.header.type = MessageType::kData;
    p.header.job_id = kJobId;
    p.header.node_id = static_cast<std::uint16_t>(worker);
    p.header.epoch = static_cast<std::uint32_t>(epoch);
    p.header.seq = static_cast<std::uint32_t>(packets.size());
    p.header.slot_count = kSlots;
    packets.push_back(p);
  }
  return packets;
}

// One worker's epoch: DATA until every packet is ACKed, then FIN until ACKed.
void RunWorker(UdpSocket& socket, const UdpEndpoint& sw, std::vector<Packet> packets, int epoch,
               int worker) {
  std::vector<bool> acked(packets.size(), false);
  std::size_t remaining = packets.size();
  std::array<std::uint8_t, wire::kMaxMessageBytes + 64> buffer;
  for (std::size_t k = 0; k < packets.size(); ++k) {
    socket.SendTo(Encode(packets[k].header, packets[k].slots), sw);
  }
  while (remaining > 0) {
    const int n = socket.ReceiveFrom(buffer, nullptr, kTimeoutMs);
    wire::Header h;
    if (n < 0) {
      for (std::size_t k = 0; k < packets.size(); ++k) {
        if (acked[k]) continue;
        packets[k].header.flags = wire::kFlagRetransmission;
        socket.SendTo(Encode(packets[k].header, packets[k].slots), sw);
      }
      continue;
    }
    if (wire::DecodeHeader({buffer.data(), static_cast<std::size_t>(n)}, &h) !=
            wire::DecodeError::kNone ||
        h.type != MessageType::kAck || (h.flags & wire::kFlagFin) != 0 ||
        h.epoch != static_cast<std::uint32_t>(epoch) || h.seq >= packets.size()) {
      continue;
    }
    if (!acked[h.seq]) {
      acked[h.seq] = true;
      --remaining;
    }
  }
  wire::Header fin;
  fin.type = MessageType::kFin;
  fin.job_id = kJobId;
  fin.node_id = static_cast<std::uint16_t>(worker);
  fin.epoch = static_cast<std::uint32_t>(epoch);
  fin.seq = static_cast<std::uint32_t>(packets.size());
  for (;;) {
    socket.SendTo(Encode(fin, {}), sw);
    const int n = socket.ReceiveFrom(buffer, nullptr, kTimeoutMs);
    wire::Header h;
    if (n > 0 &&
        wire::DecodeHeader({buffer.data(), static_cast<std::size_t>(n)}, &h) ==
            wire::DecodeError::kNone &&
        h.type == MessageType::kAck && (h.flags & wire::kFlagFin) != 0 &&
        h.epoch == static_cast<std::uint32_t>(epoch)) {
      return;
    }
    fin.flags = wire::kFlagRetransmission;
  }
}

// The server's COLLECT of one cell row (cell c of every array); retries until
// a RESULT that is not flagged not-ready.
wire::Message Collect(UdpSocket& socket, const UdpEndpoint& sw, int server, int epoch,
                      std::uint32_t cell, int* readies_seen) {
  wire::Header request;
  request.type = MessageType::kCollect;
  request.job_id = kJobId;
  request.node_id = static_cast<std::uint16_t>(server);
  request.epoch = static_cast<std::uint32_t>(epoch);
  request.seq = cell;
  request.slot_count = kSlots;
  std::array<wire::Slot, wire::kMaxSlots> slots{};
  for (int j = 0; j < kSlots; ++j) slots[j] = {true, false, cell, 0};
  std::array<std::uint8_t, wire::kMaxMessageBytes + 64> buffer;
  for (int attempt = 0; attempt < 2000; ++attempt) {
    socket.SendTo(Encode(request, slots), sw);
    request.flags = wire::kFlagRetransmission;
    int n;
    while ((n = socket.ReceiveFrom(buffer, nullptr, kTimeoutMs)) > 0) {
      wire::Message reply;
      if (wire::Decode({buffer.data(), static_cast<std::size_t>(n)}, &reply) !=
          wire::DecodeError::kNone) {
        continue;
      }
      if (reply.header.type == MessageType::kReady) ++*readies_seen;
      if (reply.header.type == MessageType::kResult && reply.header.seq == cell &&
          reply.header.epoch == request.epoch && (reply.header.flags & wire::kFlagNotReady) == 0) {
        return reply;
      }
    }
  }
  ADD_FAILURE() << "no RESULT for epoch " << epoch << " cell " << cell;
  return {};
}

class SwitchdProcessTest : public ::testing::TestWithParam<double> {};

TEST_P(SwitchdProcessTest, SumsMatchTheReferenceBitForBit) {
  const double loss = GetParam();
  std::vector<std::string> flags;
  if (loss > 0) flags = {"--drop-rate", std::to_string(loss), "--drop-seed", "42"};
  SwitchdProcess sw(flags);

  std::vector<std::unique_ptr<UdpSocket>> workers, servers;
  SwitchJob job;
  job.job_id = kJobId;
  job.token = "test-token";
  for (int w = 0; w < kWorkers; ++w) {
    workers.push_back(std::make_unique<UdpSocket>(UdpEndpoint{0x7f000001, 0}));
    job.workers.push_back(workers.back()->local());
  }
  for (int s = 0; s < kServers; ++s) {
    servers.push_back(std::make_unique<UdpSocket>(UdpEndpoint{0x7f000001, 0}));
    job.servers.push_back(servers.back()->local());
  }
  job.cells_per_array = kCells;
  job.scale_bits = kScale;
  job.slots_per_packet = kSlots;
  libra::hotpath::SwitchControlClient control(sw.control);
  const nlohmann::json fit = control.InstallJob(job);
  EXPECT_GT(fit["register_bits_used"].get<std::uint64_t>(), 0u);

  const Gradients gradients = MakeGradients(2024);
  const dataplane::FixedPointCodec codec(kScale);
  int readies = 0;
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    std::vector<std::thread> threads;
    for (int w = 0; w < kWorkers; ++w) {
      threads.emplace_back(RunWorker, std::ref(*workers[w]), sw.data,
                           Pack(gradients[epoch][w], w, epoch), epoch, w);
    }
    for (auto& t : threads) t.join();

    for (std::uint32_t cell = 0; cell < kCells; ++cell) {
      const int server = static_cast<int>(cell % kServers);
      const auto result = libra::testing::ResultBySlot(
          Collect(*servers[server], sw.data, server, epoch, cell, &readies));
      for (int j = 0; j < kSlots; ++j) {
        std::int32_t sum = 0;
        for (int w = 0; w < kWorkers; ++w) {
          const float x = gradients[epoch][w][j][cell];
          if (!std::isnan(x)) sum += codec.ToFixed(std::bit_cast<std::uint32_t>(x)).value;
        }
        ASSERT_EQ(static_cast<std::int32_t>(result[j].value), sum)
            << "epoch " << epoch << " array " << j << " cell " << cell;
        ASSERT_FALSE(result[j].saturated);
      }
    }
  }

  const nlohmann::json counters = control.Counters();
  EXPECT_EQ(counters["events"]["epochs_ready"], kEpochs);
  EXPECT_EQ(counters["drops_total"], 0) << counters.dump();
  if (loss > 0) {
    EXPECT_GT(counters["io"]["ingress_loss_injected"].get<int>(), 0);
    EXPECT_GT(counters["io"]["egress_loss_injected"].get<int>(), 0);
    EXPECT_GT(counters["events"]["retransmissions"].get<int>(), 0);
  } else {
    EXPECT_EQ(readies, kEpochs * kServers);
    EXPECT_EQ(counters["events"]["data_duplicates"], 0);
    EXPECT_EQ(counters["events"]["ready_sent"], kEpochs * kServers);
  }
  control.RemoveJob(kJobId, job.token);
  EXPECT_EQ(sw.Stop(), 0);
}

INSTANTIATE_TEST_SUITE_P(Loss, SwitchdProcessTest, ::testing::Values(0.0, 0.1),
                         [](const auto& info) { return info.param > 0 ? "Lossy" : "Clean"; });

TEST(SwitchdProcess, ReplicatesUpdatesAndAnswersStats) {
  SwitchdProcess sw;
  UdpSocket worker_a(UdpEndpoint{0x7f000001, 0}), worker_b(UdpEndpoint{0x7f000001, 0});
  UdpSocket server(UdpEndpoint{0x7f000001, 0});
  SwitchJob job;
  job.job_id = 5;
  job.token = "t";
  job.workers = {worker_a.local(), worker_b.local()};
  job.servers = {server.local()};
  job.cells_per_array = 4;
  job.slots_per_packet = 2;
  libra::hotpath::SwitchControlClient control(sw.control);
  control.InstallJob(job);

  wire::Header update;
  update.type = MessageType::kUpdate;
  update.job_id = 5;
  update.epoch = 1;
  update.seq = 9;
  const wire::CellValue cell{1, 3, std::bit_cast<std::uint32_t>(0.75f)};
  std::vector<std::uint8_t> bytes(wire::UpdateSize({&cell, 1}));
  ASSERT_EQ(wire::EncodeUpdate(update, {&cell, 1}, bytes), bytes.size());
  ASSERT_TRUE(server.SendTo(bytes, sw.data));
  for (UdpSocket* worker : {&worker_a, &worker_b}) {
    std::array<std::uint8_t, wire::kMaxMessageBytes> buffer;
    const int n = worker->ReceiveFrom(buffer, nullptr, 2000);
    ASSERT_GT(n, 0);
    wire::Message replica;
    ASSERT_EQ(wire::Decode({buffer.data(), static_cast<std::size_t>(n)}, &replica),
              wire::DecodeError::kNone);
    EXPECT_EQ(replica.header.type, MessageType::kReplica);
    EXPECT_EQ(replica.header.seq, 9u);
    ASSERT_EQ(replica.header.slot_count, 1);
    EXPECT_EQ(replica.cells[0].array, 1u);
    EXPECT_EQ(replica.cells[0].index, 3u);
    EXPECT_EQ(std::bit_cast<float>(replica.cells[0].value), 0.75f);
  }

  // A malformed datagram is dropped and counted, and the switch carries on.
  const std::uint8_t junk[3] = {1, 2, 3};
  server.SendTo(junk, sw.data);
  EXPECT_TRUE(control.Probe());

  FILE* stats = popen((std::string(LIBRA_BIN) + " switchd-stats " + sw.control).c_str(), "r");
  ASSERT_NE(stats, nullptr);
  std::string text;
  char chunk[4096];
  while (std::size_t n = fread(chunk, 1, sizeof(chunk), stats)) text.append(chunk, n);
  EXPECT_EQ(pclose(stats), 0);
  const auto json = nlohmann::json::parse(text);
  EXPECT_EQ(json["events"]["replicas_sent"], 2);
  EXPECT_EQ(json["drops"]["truncated"], 1);
  EXPECT_EQ(json["job_id"], 5);
  EXPECT_EQ(sw.Stop(), 0);
}

// Sends `frames` as one ZeroMQ message on a fresh REQ socket connected to
// `control` ("tcp://IP:PORT") and returns the
// reply's text ("" if none came within two seconds).
std::string RawRequest(const std::string& control, const std::vector<std::string>& frames) {
  zmq::context_t context(1);
  zmq::socket_t socket(context, zmq::socket_type::req);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::rcvtimeo, 2000);
  socket.connect(control);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    socket.send(zmq::buffer(frames[i]),
                i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
  zmq::message_t reply;
  return socket.recv(reply) ? reply.to_string() : "";
}

// Each of these once stopped switchd (and every job on it): a request with
// invalid UTF-8 (the reply quoting it could not be serialised), a two-frame
// message (REP cannot answer half of one), raw bytes on the TCP port, and a
// request of 100 MB (buffered and parsed on the data-path thread).
TEST(SwitchdProcess, MalformedControlRequestsAreAnsweredCountedAndSurvived) {
  SwitchdProcess sw;
  const auto refused = [](const std::string& reply) {
    const auto json = nlohmann::json::parse(reply);
    return !json["ok"].get<bool>() && json["error"].is_string();
  };
  EXPECT_TRUE(refused(RawRequest(sw.control, {"{\"op\":\"\xb7\"}"})));
  EXPECT_TRUE(refused(RawRequest(sw.control, {"{\"op\":\"probe\"}", "second frame"})));
  EXPECT_TRUE(refused(RawRequest(sw.control, {"not json"})));
  {
    // "tcp://IP:PORT": the same IP:PORT form as a UDP endpoint after the scheme.
    const UdpEndpoint control_tcp =
        *UdpEndpoint::Parse(sw.control.substr(sw.control.rfind('/') + 1));
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(control_tcp.ipv4);
    to.sin_port = htons(control_tcp.port);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
    std::mt19937 random(7);
    std::string garbage(64 << 10, '\0');
    for (char& c : garbage) c = static_cast<char>(random());
    garbage[0] = '\xff';  // a ZMTP greeting starts so: the rest is the garbage
    EXPECT_GT(::write(fd, garbage.data(), garbage.size()), 0);
    ::close(fd);
  }
  // Larger than kMaxControlRequestBytes (and a valid probe otherwise): read,
  // refused unparsed, answered.
  {
    zmq::context_t context(1);
    zmq::socket_t socket(context, zmq::socket_type::req);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::rcvtimeo, 10000);
    socket.connect(sw.control);
    const std::string big =
        "{\"op\":\"probe\",\"pad\":\"" + std::string(kMaxControlRequestBytes, 'x') + "\"}";
    socket.send(zmq::buffer(big), zmq::send_flags::none);
    zmq::message_t answer;
    ASSERT_TRUE(socket.recv(answer)) << "no answer to a request over the cap";
    const auto reply = nlohmann::json::parse(answer.to_string());
    EXPECT_FALSE(reply.value("ok", true)) << reply.dump();
    EXPECT_NE(reply.value("error", "").find("larger than"), std::string::npos) << reply.dump();
  }
  // Larger than kMaxControlFrameBytes: ZeroMQ drops it at its size prefix
  // and disconnects the sender, which sees that.
  {
    zmq::context_t context(1);
    zmq::socket_t socket(context, zmq::socket_type::req);
    socket.set(zmq::sockopt::linger, 0);
    libra::test_support::DisconnectMonitor monitor(context, socket, "huge");
    socket.connect(sw.control);
    const std::string huge =
        "{\"op\":\"probe\",\"pad\":\"" + std::string(kMaxControlFrameBytes, 'x') + "\"}";
    socket.send(zmq::buffer(huge), zmq::send_flags::none);
    EXPECT_TRUE(monitor.Disconnected()) << "the switch read a request over the frame cap";
  }

  libra::hotpath::SwitchControlClient control(sw.control);
  EXPECT_TRUE(control.Probe());
  const CommandResult stats = RunCommand(std::string(LIBRA_BIN) + " switchd-stats " + sw.control);
  ASSERT_EQ(stats.status, 0) << stats.output;
  const auto counters = nlohmann::json::parse(stats.output)["control"];
  EXPECT_EQ(counters["malformed"], 3) << counters.dump();
  EXPECT_GE(counters["refused"], 3) << counters.dump();
  EXPECT_EQ(sw.Stop(), 0) << "switchd did not survive the requests";
}

TEST(SwitchdProcess, BadFlagsAreNamed) {
  const std::string command = std::string(LIBRA_BIN) + " switchd --listen nowhere 2>&1";
  FILE* out = popen(command.c_str(), "r");
  ASSERT_NE(out, nullptr);
  std::string text;
  char chunk[1024];
  while (std::size_t n = fread(chunk, 1, sizeof(chunk), out)) text.append(chunk, n);
  EXPECT_NE(pclose(out), 0);
  EXPECT_THAT(text, ::testing::HasSubstr("--listen"));
}

}  // namespace
}  // namespace libra::switchd
