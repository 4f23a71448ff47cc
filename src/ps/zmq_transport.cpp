#include "ps/zmq_transport.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "ps/internal/env.h"
#include "ps/internal/logging.h"
#include "ps/message_codec.h"
#include "ps/zmq_curve.h"

namespace ps {

namespace {

// How long queued messages may still be flushed when the transport stops.
constexpr int kLingerMs = 2000;

std::string Endpoint(const std::string& host, int port) {
  return "tcp://" + host + ":" + (port == Node::kEmpty ? std::string("*") : std::to_string(port));
}

// An abstract Unix-domain socket name (no file to clean up) per TCP endpoint.
std::string LocalEndpoint(const std::string& host, int port) {
  return "ipc://@libra-" + host + "-" + std::to_string(port);
}

// Received data arrays are read as 8-byte keys, floats, ints: this alignment
// serves them all.
constexpr uintptr_t kFrameAlignment = alignof(uint64_t);

SArray<char> AlignedCopy(const char* data, size_t size) {
  // operator new[] of uint64_t gives the alignment; the SArray owns it.
  auto* words = new uint64_t[(size + sizeof(uint64_t) - 1) / sizeof(uint64_t)];
  std::memcpy(words, data, size);
  SArray<char> array;
  array.reset(reinterpret_cast<char*>(words), size, [words](char*) { delete[] words; });
  return array;
}

// Frees a sent frame: drops the SArray reference that kept its memory alive.
void ReleaseSentArray(void* /*data*/, void* hint) { delete static_cast<SArray<char>*>(hint); }

}  // namespace

ZmqTransport::ZmqTransport(bool local)
    : context_(1),
      local_(local),
      // Below a few KiB not even a control message with its node list fits.
      max_frame_bytes_(Environment::Get()->IntOr("PS_MAX_MESSAGE_BYTES", kDefaultMaxFrameBytes,
                                                 4096, std::numeric_limits<int>::max())) {
  if (const char* secret = Environment::Get()->find("PS_JOB_SECRET")) secret_ = secret;
}

ZmqTransport::~ZmqTransport() {
  Stop();
  receiver_.reset();
  peers_.clear();
  context_.close();
}

int ZmqTransport::Bind(const Node& node) {
  receiver_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::router);
  receiver_->set(zmq::sockopt::rcvhwm, 0);
  receiver_->set(zmq::sockopt::linger, 0);
  receiver_->set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(max_frame_bytes_));
  if (!secret_.empty()) UseCurveAsServer(*receiver_, secret_);
  std::string endpoint = Endpoint(node.hostname, node.port);
  try {
    receiver_->bind(endpoint);
  } catch (const zmq::error_t& e) {
    LOG(FATAL) << "cannot bind " << endpoint << ": " << e.what();
  }
  std::string bound = receiver_->get(zmq::sockopt::last_endpoint);
  int port = std::stoi(bound.substr(bound.rfind(':') + 1));
  my_host_ = node.hostname;
  if (local_) {
    std::string ipc = LocalEndpoint(node.hostname, port);
    try {
      receiver_->bind(ipc);
    } catch (const zmq::error_t& e) {
      LOG(FATAL) << "cannot bind " << ipc << ": " << e.what();
    }
  }
  return port;
}

void ZmqTransport::Connect(const Node& node) {
  CHECK_NE(node.id, Node::kEmpty) << "connect to a node without id";
  auto peer = std::make_unique<Peer>();
  peer->socket = zmq::socket_t(context_, zmq::socket_type::dealer);
  peer->socket.set(zmq::sockopt::sndhwm, 0);
  peer->socket.set(zmq::sockopt::linger, kLingerMs);
  if (!secret_.empty()) UseCurveAsClient(peer->socket, secret_);
  bool same_host = local_ && node.hostname == my_host_;
  std::string endpoint =
      same_host ? LocalEndpoint(node.hostname, node.port) : Endpoint(node.hostname, node.port);
  try {
    peer->socket.connect(endpoint);
  } catch (const zmq::error_t& e) {
    LOG(FATAL) << "cannot connect to " << endpoint << ": " << e.what();
  }
  std::lock_guard<std::mutex> lock(peers_mu_);
  peers_[node.id] = std::move(peer);
}

int ZmqTransport::SendMsg(const Message& msg) {
  Peer* peer;
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    if (stopped_) return -1;
    auto it = peers_.find(msg.meta.recver);
    CHECK(it != peers_.end()) << "no connection to node " << msg.meta.recver;
    peer = it->second.get();
  }
  // Checked before the first frame goes out: half a multipart message
  // cannot be taken back.
  for (const SArray<char>& array : msg.data) {
    if (array.size() > static_cast<size_t>(max_frame_bytes_)) {
      LOG(FATAL) << "a message to node " << msg.meta.recver << " holds an array of " << array.size()
                 << " bytes, more than PS_MAX_MESSAGE_BYTES=" << max_frame_bytes_
                 << " (the receiver would drop it); raise PS_MAX_MESSAGE_BYTES on every node";
    }
  }
  std::string header = EncodeMeta(msg.meta);
  int bytes = static_cast<int>(header.size());
  std::lock_guard<std::mutex> lock(peer->mu);
  try {
    auto more = msg.data.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore;
    peer->socket.send(zmq::buffer(header), more);
    for (size_t i = 0; i < msg.data.size(); ++i) {
      const SArray<char>& array = msg.data[i];
      zmq::message_t frame;
      if (!array.empty()) {
        auto* keep_alive = new SArray<char>(array);
        frame.rebuild(array.data(), array.size(), ReleaseSentArray, keep_alive);
      }
      more = i + 1 < msg.data.size() ? zmq::send_flags::sndmore : zmq::send_flags::none;
      peer->socket.send(frame, more);
      bytes += static_cast<int>(array.size());
    }
  } catch (const zmq::error_t& e) {
    if (e.num() == ETERM) return -1;
    LOG(FATAL) << "send to node " << msg.meta.recver << " failed: " << e.what();
  }
  return bytes;
}

int ZmqTransport::RecvMsg(Message* msg) {
  std::vector<zmq::message_t> frames;
  try {
    while (true) {
      zmq::message_t frame;
      if (!receiver_->recv(frame)) continue;
      bool more = frame.more();
      frames.push_back(std::move(frame));
      if (!more) break;
    }
  } catch (const zmq::error_t& e) {
    if (e.num() == ETERM) return -1;
    LOG(FATAL) << "receive failed: " << e.what();
  }
  // frames: [peer identity, header, data...]
  if (frames.size() < 2 || !DecodeMeta(frames[1].data<char>(), frames[1].size(), &msg->meta) ||
      msg->meta.data_type.size() != frames.size() - 2) {
    LOG(WARNING) << "dropped a malformed message of " << frames.size() << " frames";
    return 0;
  }
  int bytes = static_cast<int>(frames[1].size());
  msg->data.clear();
  for (size_t i = 2; i < frames.size(); ++i) {
    SArray<char> array;
    if (reinterpret_cast<uintptr_t>(frames[i].data()) % kFrameAlignment == 0) {
      auto* held = new zmq::message_t(std::move(frames[i]));
      array.reset(held->data<char>(), held->size(), [held](char*) { delete held; });
    } else {
      // ZeroMQ may hand a received frame as a slice of its receive buffer, at
      // any address; the arrays are read as keys and values, which must be
      // aligned, so such a frame is copied once.
      array = AlignedCopy(frames[i].data<char>(), frames[i].size());
    }
    bytes += static_cast<int>(array.size());
    msg->data.push_back(array);
  }
  return bytes;
}

void ZmqTransport::Stop() {
  {
    std::lock_guard<std::mutex> lock(peers_mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  context_.shutdown();  // a blocked RecvMsg returns -1
}

std::unique_ptr<Transport> CreateTransport(const std::string& type, bool local) {
  if (type == "zmq") return std::make_unique<ZmqTransport>(local);
  LOG(FATAL) << "DMLC_PS_VAN_TYPE='" << type << "' is not supported (only 'zmq')";
  return nullptr;
}

}  // namespace ps
