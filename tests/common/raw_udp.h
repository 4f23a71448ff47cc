// A raw IPv4 UDP socket for tests that play an attacker on the data path:
// it sees every UDP datagram on loopback (the switch's traffic among them)
// and sends datagrams with any source port, so from a real node's address
// (spoofed). Needs CAP_NET_RAW (Available()).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace libra::test_support {

class RawUdp {
 public:
  static bool Available() {
    const int fd = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
    if (fd < 0) return false;
    close(fd);
    return true;
  }

  // Receives wait at most 1 ms, so that a caller's loop can also send.
  RawUdp() : fd_(socket(AF_INET, SOCK_RAW, IPPROTO_UDP)) {
    timeval wait{0, 1000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  }
  ~RawUdp() { close(fd_); }
  RawUdp(const RawUdp&) = delete;
  RawUdp& operator=(const RawUdp&) = delete;

  struct Datagram {
    std::uint16_t from_port = 0;
    std::uint16_t to_port = 0;
    std::span<const std::uint8_t> payload;  // valid until the next Receive
  };

  // The next UDP datagram seen, or false after the wait.
  bool Receive(Datagram* out) {
    const ssize_t n = recv(fd_, in_.data(), in_.size(), 0);
    if (n <= 0) return false;
    const std::size_t ip_bytes = std::size_t{in_[0] & 0x0fu} * 4;
    if (static_cast<std::size_t>(n) < ip_bytes + 8) return false;
    const std::uint8_t* udp = in_.data() + ip_bytes;
    out->from_port = static_cast<std::uint16_t>(udp[0] << 8 | udp[1]);
    out->to_port = static_cast<std::uint16_t>(udp[2] << 8 | udp[3]);
    out->payload =
        std::span<const std::uint8_t>(udp + 8, static_cast<std::size_t>(n) - ip_bytes - 8);
    return true;
  }

  // One datagram from port `from_port` to `to_ipv4`:`to_port` (the kernel
  // writes the IP header; UDP checksum 0: none). Returns whether it went.
  bool Send(std::uint16_t from_port, std::uint32_t to_ipv4, std::uint16_t to_port,
            std::span<const std::uint8_t> payload) {
    std::vector<std::uint8_t> datagram(8 + payload.size());
    const auto length = static_cast<std::uint16_t>(datagram.size());
    const std::uint8_t header[8] = {static_cast<std::uint8_t>(from_port >> 8),
                                    static_cast<std::uint8_t>(from_port),
                                    static_cast<std::uint8_t>(to_port >> 8),
                                    static_cast<std::uint8_t>(to_port),
                                    static_cast<std::uint8_t>(length >> 8),
                                    static_cast<std::uint8_t>(length),
                                    0,
                                    0};
    std::copy(std::begin(header), std::end(header), datagram.begin());
    std::copy(payload.begin(), payload.end(), datagram.begin() + 8);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(to_ipv4);
    return sendto(fd_, datagram.data(), datagram.size(), 0, reinterpret_cast<const sockaddr*>(&to),
                  sizeof(to)) == static_cast<ssize_t>(datagram.size());
  }

 private:
  int fd_;
  std::array<std::uint8_t, 2048> in_{};
};

}  // namespace libra::test_support
