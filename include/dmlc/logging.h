// dmlc-core's logging header as PS-lite programs include it. The macros
// (LOG, LOG_IF, LG, CHECK*, DCHECK*, CHECK_NOTNULL) and dmlc::Error come from
// ps/internal/logging.h, which is Libra's logging; this adds dmlc's names for
// the same things.
#pragma once

#include "dmlc/base.h"
#include "ps/internal/logging.h"

namespace dmlc {

// Nothing to set up: log lines go to stderr with a time stamp and place.
inline void InitLogging(const char*) {}

// One log line at INFO, or at FATAL (its destructor throws dmlc::Error).
class LogMessage : public ps::logging::LogMessage {
 public:
  LogMessage(const char* file, int line)
      : ps::logging::LogMessage(file, line, ps::logging::Severity::kInfo) {}
};
class LogMessageFatal : public ps::logging::LogMessage {
 public:
  LogMessageFatal(const char* file, int line)
      : ps::logging::LogMessage(file, line, ps::logging::Severity::kFatal) {}
};

using LogMessageVoidify = ps::logging::Voidify;

}  // namespace dmlc
