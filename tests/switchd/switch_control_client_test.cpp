// The controller's side of the control port against a scripted switch (a
// ZeroMQ REP socket on a thread): what it does with the switch's answer to
// install_job.
#include "hotpath/controller/switch_control_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <zmq.hpp>

#include "wire/wire_format.h"

namespace libra::hotpath {
namespace {

using nlohmann::json;

// Answers one request with `reply` and keeps the request it got.
class ScriptedSwitch {
 public:
  explicit ScriptedSwitch(json reply) : socket_(context_, zmq::socket_type::rep) {
    socket_.bind("tcp://127.0.0.1:*");
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
    thread_ = std::thread([this, reply = std::move(reply)] {
      zmq::message_t request;
      if (!socket_.recv(request)) return;
      request_ = json::parse(request.to_string());
      socket_.send(zmq::buffer(reply.dump()), zmq::send_flags::none);
    });
  }
  ~ScriptedSwitch() { thread_.join(); }
  const std::string& endpoint() const { return endpoint_; }
  const json& request() const { return request_; }  // once the client has its answer

 private:
  zmq::context_t context_{1};
  zmq::socket_t socket_;
  std::string endpoint_;
  json request_;
  std::thread thread_;
};

SwitchJob Job() {
  SwitchJob job;
  job.job_id = 3;
  job.token = "secret";
  job.workers = {{0x7f000001, 1000}};
  job.servers = {{0x7f000001, 2000}};
  job.cells_per_array = 16;
  return job;
}

TEST(SwitchControlClientTest, AJobTakenByASwitchOfThisWireVersionReturnsItsFit) {
  ScriptedSwitch sw(json{{"ok", true},
                         {"job_id", 3},
                         {"wire_version", LIBRA_WIRE_VERSION},
                         {"fit", {{"register_share", 0.25}}}});
  SwitchControlClient client(sw.endpoint());
  EXPECT_EQ(client.InstallJob(Job())["register_share"], 0.25);
  EXPECT_EQ(sw.request()["job"]["wire_version"], LIBRA_WIRE_VERSION) << "the job says its version";
}

// A switch from before the version check takes any job and then drops its
// packets: the controller must not use it.
TEST(SwitchControlClientTest, ASwitchOfAnotherOrNoWireVersionIsNotUsed) {
  {
    ScriptedSwitch older(json{{"ok", true}, {"job_id", 3}, {"fit", json::object()}});
    SwitchControlClient client(older.endpoint());
    try {
      client.InstallJob(Job());
      FAIL() << "a switch that names no wire version was used";
    } catch (const SwitchControlError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("speaks hot-path wire version 4 or older"));
    }
  }
  ScriptedSwitch newer(json{{"ok", true},
                            {"job_id", 3},
                            {"wire_version", LIBRA_WIRE_VERSION + 1},
                            {"fit", json::object()}});
  SwitchControlClient client(newer.endpoint());
  EXPECT_THROW(client.InstallJob(Job()), SwitchControlError);
}

}  // namespace
}  // namespace libra::hotpath
