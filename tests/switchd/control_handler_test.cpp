#include "switchd/control_handler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "wire/wire_format.h"

namespace libra::switchd {
namespace {

using nlohmann::json;

json JobJson(const std::string& token) {
  SwitchJob job;
  job.job_id = 3;
  job.token = token;
  job.workers = {{0x7f000001, 1000}, {0x7f000001, 1001}};
  job.servers = {{0x7f000001, 2000}};
  job.cells_per_array = 128;
  job.scale_bits = 20;
  job.slots_per_packet = 32;
  return ToJson(job);
}

class ControlHandlerTest : public ::testing::Test {
 protected:
  json Handle(const json& request) { return HandleControlRequest(request, program_, io_); }
  dataplane::Program program_;
  IoCounters io_;
};

TEST_F(ControlHandlerTest, InstallsAJobAndReportsRegisterMemory) {
  const json reply = Handle({{"op", "install_job"}, {"job", JobJson("t1")}});
  ASSERT_TRUE(reply["ok"].get<bool>()) << reply.dump();
  EXPECT_EQ(reply["fit"]["arrays"].size(), 36u);
  EXPECT_GT(reply["fit"]["register_share"].get<double>(), 0.0);
  ASSERT_NE(program_.job(), nullptr);
  EXPECT_EQ(program_.job()->scale_bits, 20);
  EXPECT_EQ(Handle({{"op", "probe"}})["job_id"], 3);
}

TEST_F(ControlHandlerTest, MutationsNeedTheJobToken) {
  ASSERT_TRUE(Handle({{"op", "install_job"}, {"job", JobJson("t1")}})["ok"].get<bool>());
  const json hijack = Handle({{"op", "install_job"}, {"job", JobJson("t2")}});
  EXPECT_FALSE(hijack["ok"].get<bool>());
  EXPECT_THAT(hijack["error"].get<std::string>(), ::testing::HasSubstr("token"));
  EXPECT_FALSE(Handle({{"op", "remove_job"}, {"job_id", 3}, {"token", "t2"}})["ok"].get<bool>());
  EXPECT_FALSE(Handle({{"op", "remove_job"}, {"job_id", 3}})["ok"].get<bool>());
  EXPECT_NE(program_.job(), nullptr);
  EXPECT_TRUE(Handle({{"op", "install_job"}, {"job", JobJson("t1")}})["ok"].get<bool>());
  EXPECT_TRUE(Handle({{"op", "remove_job"}, {"job_id", 3}, {"token", "t1"}})["ok"].get<bool>());
  EXPECT_EQ(program_.job(), nullptr);
}

// "libra" was the runtime's default token: anyone could remove or take over
// a job that named none.
TEST_F(ControlHandlerTest, AWellKnownDefaultTokenAuthorisesNothing) {
  const json reply = Handle({{"op", "install_job"}, {"job", JobJson("libra")}});
  EXPECT_FALSE(reply["ok"].get<bool>());
  EXPECT_THAT(reply["error"].get<std::string>(), ::testing::HasSubstr("well-known default"));
  EXPECT_EQ(program_.job(), nullptr);
}

TEST_F(ControlHandlerTest, ASecondJobIsRefusedWhileTheFirstIsInstalled) {
  ASSERT_TRUE(Handle({{"op", "install_job"}, {"job", JobJson("first")}})["ok"].get<bool>());
  const json second = Handle({{"op", "install_job"}, {"job", JobJson("second")}});
  EXPECT_FALSE(second["ok"].get<bool>());
  EXPECT_EQ(second["error"],
            "switchd holds one job at a time and job 3 (another token) is installed; remove it "
            "first or use another switchd");
  EXPECT_EQ(program_.job()->token, "first");
}

// The bytes of a request as they come off the socket: every one is answered
// with JSON, counted, and none throws.
TEST_F(ControlHandlerTest, EveryRequestIsAnsweredAndCounted) {
  IoCounters io;
  const auto serve = [&](std::string_view text, std::size_t frames = 1) {
    return json::parse(ServeControlRequest(text, frames, program_, io));
  };
  const json utf8 = serve("{\"op\":\"\xb7\"}");
  EXPECT_FALSE(utf8["ok"].get<bool>());
  EXPECT_THAT(utf8["error"].get<std::string>(), ::testing::HasSubstr("UTF-8"));
  EXPECT_FALSE(serve("{\"op\":\"probe\"}", 2)["ok"].get<bool>());
  EXPECT_FALSE(serve("\xff\x00garbage")["ok"].get<bool>());
  EXPECT_FALSE(serve("[1, 2]")["ok"].get<bool>());
  EXPECT_FALSE(serve("{\"op\":\"reboot\"}")["ok"].get<bool>());  // refused, well formed
  EXPECT_TRUE(serve("{\"op\":\"probe\"}")["ok"].get<bool>());
  EXPECT_EQ(io.control_requests, 6u);
  EXPECT_EQ(io.control_malformed, 4u);
  EXPECT_EQ(io.control_refused, 5u);
  const json counters = serve("{\"op\":\"counters\"}");
  EXPECT_EQ(counters["control"]["malformed"], 4);
  EXPECT_EQ(counters["control"]["requests"], 7);
}

// A request over kMaxControlRequestBytes is refused without being parsed,
// and says why; one at the cap is read.
TEST_F(ControlHandlerTest, ARequestOverTheCapIsAnsweredUnparsed) {
  IoCounters io;
  const std::string prefix = "{\"op\":\"probe\",\"pad\":\"";
  std::string at_cap =
      prefix + std::string(kMaxControlRequestBytes - prefix.size() - 2, 'x') + "\"}";
  ASSERT_EQ(at_cap.size(), kMaxControlRequestBytes);
  EXPECT_TRUE(json::parse(ServeControlRequest(at_cap, 1, program_, io))["ok"].get<bool>());
  const std::string over = prefix + std::string(kMaxControlRequestBytes, 'x') + "\"}";
  const json reply = json::parse(ServeControlRequest(over, 1, program_, io));
  EXPECT_FALSE(reply["ok"].get<bool>());
  EXPECT_THAT(reply["error"].get<std::string>(), ::testing::HasSubstr("larger than the 1048576"));
  EXPECT_EQ(io.control_requests, 2u);
  EXPECT_EQ(io.control_refused, 1u);
  EXPECT_EQ(io.control_malformed, 0u);
}

TEST_F(ControlHandlerTest, BadRequestsNameWhatIsWrong) {
  EXPECT_THAT(Handle(json::array())["error"].get<std::string>(), ::testing::HasSubstr("'op'"));
  EXPECT_THAT(Handle({{"op", "reboot"}})["error"].get<std::string>(),
              ::testing::HasSubstr("unknown op"));
  json job = JobJson("t");
  job["workers"][1] = "127.0.0.1";
  EXPECT_THAT(Handle({{"op", "install_job"}, {"job", job}})["error"].get<std::string>(),
              ::testing::HasSubstr("workers"));
  job = JobJson("t");
  job.erase("scale_bits");
  EXPECT_THAT(Handle({{"op", "install_job"}, {"job", job}})["error"].get<std::string>(),
              ::testing::HasSubstr("scale_bits"));
  job = JobJson("t");
  job["cells_per_array"] = 1 << 22;
  const json too_big = Handle({{"op", "install_job"}, {"job", job}});
  EXPECT_FALSE(too_big["ok"].get<bool>());
  EXPECT_THAT(too_big["error"].get<std::string>(), ::testing::HasSubstr("register bits"));
}

// A switch of another wire version would drop every packet of the job as
// malformed: it refuses the job and names both versions, and says its own
// in every answer that takes a job or probes.
TEST_F(ControlHandlerTest, AJobOfAnotherWireVersionIsRefused) {
  json job = JobJson("t");
  job["wire_version"] = LIBRA_WIRE_VERSION - 1;
  const json older = Handle({{"op", "install_job"}, {"job", job}});
  EXPECT_FALSE(older["ok"].get<bool>());
  EXPECT_THAT(older["error"].get<std::string>(),
              ::testing::HasSubstr("wire version " + std::to_string(LIBRA_WIRE_VERSION - 1) +
                                   ", this switch version " + std::to_string(LIBRA_WIRE_VERSION)));
  job.erase("wire_version");
  EXPECT_THAT(Handle({{"op", "install_job"}, {"job", job}})["error"].get<std::string>(),
              ::testing::HasSubstr("wire_version"));
  EXPECT_EQ(program_.job(), nullptr);

  const json taken = Handle({{"op", "install_job"}, {"job", JobJson("t")}});
  ASSERT_TRUE(taken["ok"].get<bool>()) << taken.dump();
  EXPECT_EQ(taken["wire_version"], LIBRA_WIRE_VERSION);
  EXPECT_EQ(Handle({{"op", "probe"}})["wire_version"], LIBRA_WIRE_VERSION);
}

TEST_F(ControlHandlerTest, CountersListEveryDropReason) {
  const json counters = Handle({{"op", "counters"}});
  EXPECT_TRUE(counters["job_id"].is_null());
  EXPECT_TRUE(counters["drops"].contains("truncated"));
  EXPECT_TRUE(counters["drops"].contains("stale_epoch"));
  EXPECT_TRUE(counters["events"].contains("values_aggregated"));
  EXPECT_EQ(counters["io"]["datagrams_received"], 0);
}

TEST(UdpEndpointTest, ParsesAndPrints) {
  const auto endpoint = UdpEndpoint::Parse("10.1.2.3:4567");
  ASSERT_TRUE(endpoint.has_value());
  EXPECT_EQ(endpoint->ipv4, 0x0a010203u);
  EXPECT_EQ(endpoint->port, 4567);
  EXPECT_EQ(endpoint->ToString(), "10.1.2.3:4567");
  for (const char* bad : {"", "1.2.3.4", "1.2.3:5", "1.2.3.4.5:6", "1.2.3.256:1", "1.2.3.4:70000",
                          "a.b.c.d:1", "1.2.3.4:"}) {
    EXPECT_FALSE(UdpEndpoint::Parse(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace libra::switchd
