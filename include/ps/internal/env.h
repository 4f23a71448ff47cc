// Environment variables (DMLC_*, PS_*, LIBRA_*), with overrides for tests and
// for the launcher.
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

namespace ps {

class Environment {
 public:
  static Environment* Get();

  // The value of `name`, or nullptr if unset.
  const char* find(const char* name);
  // Overrides the process environment for this process.
  void set(const std::string& name, const std::string& value);

  // Typed readers that stop with an error naming the variable when it is
  // missing (Required*) or malformed.
  std::string RequiredString(const char* name);
  int RequiredInt(const char* name, int min_value, int max_value);
  int IntOr(const char* name, int default_value, int min_value, int max_value);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::string> overrides_;
};

}  // namespace ps
