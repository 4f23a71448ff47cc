#include "ps/internal/logging.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <mutex>

namespace ps::logging {

namespace {
const char* SeverityLetter(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "I";
    case Severity::kWarning:
      return "W";
    case Severity::kError:
      return "E";
    case Severity::kFatal:
      return "F";
  }
  return "?";
}
}  // namespace

LogMessage::LogMessage(const char* file, int line, Severity severity) : severity_(severity) {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm_now;
  localtime_r(&now, &tm_now);
  char stamp[16];
  std::strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm_now);
  const char* base = file;
  for (const char* p = file; *p; ++p) {
    if (*p == '/') base = p + 1;
  }
  stream_ << "[" << stamp << "] " << SeverityLetter(severity) << " " << base << ":" << line << ": ";
}

LogMessage::~LogMessage() noexcept(false) {
  static std::mutex mu;
  {
    std::lock_guard<std::mutex> lock(mu);
    std::cerr << stream_.str() << std::endl;
  }
  if (severity_ == Severity::kFatal) throw Error(stream_.str());
}

}  // namespace ps::logging
