#include "ps/internal/env.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "ps/internal/logging.h"

namespace ps {

Environment* Environment::Get() {
  static Environment env;
  return &env;
}

const char* Environment::find(const char* name) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = overrides_.find(name);
    if (it != overrides_.end()) return it->second.c_str();
  }
  return std::getenv(name);
}

void Environment::set(const std::string& name, const std::string& value) {
  std::lock_guard<std::mutex> lock(mu_);
  overrides_[name] = value;
}

std::string Environment::RequiredString(const char* name) {
  const char* value = find(name);
  if (value == nullptr || *value == '\0') {
    LOG(FATAL) << "environment variable " << name << " is not set";
  }
  return value;
}

namespace {
int ParseInt(const char* name, const char* text, int min_value, int max_value) {
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < min_value || value > max_value) {
    LOG(FATAL) << "environment variable " << name << "='" << text << "' is not an integer in ["
               << min_value << ", " << max_value << "]";
  }
  return static_cast<int>(value);
}
}  // namespace

int Environment::RequiredInt(const char* name, int min_value, int max_value) {
  std::string text = RequiredString(name);
  return ParseInt(name, text.c_str(), min_value, max_value);
}

int Environment::IntOr(const char* name, int default_value, int min_value, int max_value) {
  const char* text = find(name);
  if (text == nullptr || *text == '\0') return default_value;
  return ParseInt(name, text, min_value, max_value);
}

}  // namespace ps
