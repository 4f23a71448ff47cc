#include "hotpath/node/hot_path_config.h"

#include <cstdio>
#include <limits>
#include <random>

#include "hotpath/messages/control_messages.h"
#include "ps/internal/env.h"
#include "ps/internal/logging.h"

namespace libra::hotpath {
namespace {

libra::UdpEndpoint RequiredEndpoint(const char* name, const char* text) {
  auto endpoint = libra::UdpEndpoint::Parse(text);
  if (!endpoint) {
    LOG(FATAL) << "environment variable " << name << "='" << text
               << "' is not an IPv4 address:port";
  }
  return *endpoint;
}

uint64_t ParseCount(const char* name, const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') {
    LOG(FATAL) << "environment variable " << name << "='" << text
               << "' is not a non-negative integer";
  }
  return value;
}

// A job that names no token gets one nobody can guess (128 bits from the
// system's random source): the token is what lets a client remove or replace
// the job on the switch, and a fixed default would let anyone do so. Only the
// controller uses it, so each process drawing its own is harmless.
std::string RandomToken() {
  std::random_device random;
  std::string token;
  for (int i = 0; i < 4; ++i) {
    char word[9];
    std::snprintf(word, sizeof(word), "%08x", static_cast<unsigned>(random()));
    token += word;
  }
  return token;
}

HotPathConfig ReadConfig() {
  ps::Environment* env = ps::Environment::Get();
  HotPathConfig config;
  const char* data = env->find("LIBRA_SWITCH");
  if (data == nullptr || *data == '\0') return config;
  config.enabled = true;
  config.switch_data = RequiredEndpoint("LIBRA_SWITCH", data);
  if (const char* control = env->find("LIBRA_SWITCH_CONTROL")) config.switch_control = control;
  if (const char* path = env->find("LIBRA_HOT_SET")) config.hot_set_path = path;
  config.sample_epochs = static_cast<uint32_t>(
      env->IntOr("LIBRA_SAMPLE_EPOCHS", 40, 1, std::numeric_limits<int>::max()));
  if (const char* capacity = env->find("LIBRA_CAPACITY"); capacity && *capacity) {
    if (std::string_view(capacity) == "auto") {
      config.capacity_auto = true;
    } else {
      config.capacity_cells = ParseCount("LIBRA_CAPACITY", capacity);
    }
  }
  if (const char* rate = env->find("LIBRA_LINK_MBIT"); rate && *rate) {
    config.link_mbit = static_cast<double>(ParseCount("LIBRA_LINK_MBIT", rate));
  }
  if (const char* plain = env->find("LIBRA_PLAIN_EPOCH"); plain && *plain) {
    const std::string_view how(plain);
    if (how != "measured" && how != "predicted") {
      LOG(FATAL) << "environment variable LIBRA_PLAIN_EPOCH='" << plain
                 << "' is neither measured nor predicted";
    }
    config.plain_epoch_measured = how == "measured";
  }
  if (const char* cores = env->find("LIBRA_SHARED_CORES"); cores && *cores) {
    config.shared_cores = static_cast<double>(ParseCount("LIBRA_SHARED_CORES", cores));
  }
  config.job_id =
      static_cast<uint32_t>(env->IntOr("LIBRA_JOB_ID", 1, 1, std::numeric_limits<int>::max()));
  const char* token = env->find("LIBRA_JOB_TOKEN");
  config.job_token = token && *token ? std::string(token) : RandomToken();
  config.udp_segmentation = env->IntOr("LIBRA_UDP_SEGMENTATION", 1, 0, 1) == 1;
  const int scale = env->IntOr("LIBRA_SCALE_BITS", -1, 0, 30);
  if (scale >= 0) config.scale_bits = scale;
  if (const char* path = env->find("LIBRA_SAVE_INSTALL"); path && *path) {
    config.save_install_path = path;
  }
  if (const char* path = env->find("LIBRA_INSTALL_FILE"); path && *path) {
    config.install_path = path;
    const std::optional<Install> saved = ReadInstallFile(path);
    if (!saved || !saved->enabled) {
      LOG(FATAL) << "environment variable LIBRA_INSTALL_FILE='" << path
                 << "': not a readable INSTALL of an enabled hot path";
    }
    config.saved_first_epoch = saved->first_epoch;
  }
  return config;
}

}  // namespace

const HotPathConfig& Config() {
  static const HotPathConfig config = ReadConfig();
  return config;
}

}  // namespace libra::hotpath
