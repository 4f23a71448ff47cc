// dmlc-style logging and checks, as PS-lite programs use them:
//   LOG(INFO) << "..."; LL << "..."; CHECK(cond) << "..."; CHECK_EQ(a, b);
//   LOG_IF(WARNING, cond) << "..."; DCHECK_LT(a, b);
// LOG(FATAL) and failed checks throw dmlc::Error (ps::Error is the same type)
// after printing the message, so a failure names its place instead of
// hanging. dmlc/logging.h adds the rest of dmlc's logging names.
#pragma once

#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

namespace dmlc {

// Thrown by LOG(FATAL) and failed CHECKs, as in PS-lite.
struct Error : public std::runtime_error {
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace dmlc

namespace ps {

// One type under both names: code that catches either catches every error.
using Error = dmlc::Error;

namespace logging {

enum class Severity { kInfo, kWarning, kError, kFatal };

// One log line; the destructor writes it (and throws for kFatal).
class LogMessage {
 public:
  LogMessage(const char* file, int line, Severity severity);
  ~LogMessage() noexcept(false);
  std::ostream& stream() { return stream_; }

 private:
  Severity severity_;
  std::ostringstream stream_;
};

// Turns a streamed expression into void so it fits the ?: in the macros.
struct Voidify {
  void operator&(std::ostream&) {}
};

template <typename A, typename B>
std::string* CheckFailed(const char* expr, const A& a, const B& b) {
  std::ostringstream os;
  os << "Check failed: " << expr << " (" << a << " vs. " << b << ") ";
  return new std::string(os.str());
}

}  // namespace logging
}  // namespace ps

#define PS_LOG_SEVERITY_INFO ::ps::logging::Severity::kInfo
#define PS_LOG_SEVERITY_WARNING ::ps::logging::Severity::kWarning
#define PS_LOG_SEVERITY_ERROR ::ps::logging::Severity::kError
#define PS_LOG_SEVERITY_FATAL ::ps::logging::Severity::kFatal

#ifndef LOG
#define LOG(severity) \
  ::ps::logging::LogMessage(__FILE__, __LINE__, PS_LOG_SEVERITY_##severity).stream()
#endif
#ifndef LL
#define LL LOG(ERROR)
#endif
#ifndef LG
#define LG LOG(INFO)
#endif
// The message is built (and its operands evaluated) only when `cond` holds.
#ifndef LOG_IF
#define LOG_IF(severity, cond) !(cond) ? (void)0 : ::ps::logging::Voidify() & LOG(severity)
#endif

#ifndef CHECK
#define CHECK(cond)                                                                          \
  (cond) ? (void)0                                                                           \
         : ::ps::logging::Voidify() &                                                        \
               ::ps::logging::LogMessage(__FILE__, __LINE__, PS_LOG_SEVERITY_FATAL).stream() \
                   << "Check failed: " #cond " "

// The message lives in a unique_ptr so it is freed when LOG(FATAL) throws.
#define PS_CHECK_OP(a, b, op)                                                           \
  for (std::unique_ptr<std::string> ps_check_msg_(                                      \
           ((a)op(b)) ? nullptr : ::ps::logging::CheckFailed(#a " " #op " " #b, a, b)); \
       ps_check_msg_ != nullptr; ps_check_msg_.reset())                                 \
  ::ps::logging::LogMessage(__FILE__, __LINE__, PS_LOG_SEVERITY_FATAL).stream() << *ps_check_msg_

#define CHECK_EQ(a, b) PS_CHECK_OP(a, b, ==)
#define CHECK_NE(a, b) PS_CHECK_OP(a, b, !=)
#define CHECK_LT(a, b) PS_CHECK_OP(a, b, <)
#define CHECK_LE(a, b) PS_CHECK_OP(a, b, <=)
#define CHECK_GT(a, b) PS_CHECK_OP(a, b, >)
#define CHECK_GE(a, b) PS_CHECK_OP(a, b, >=)
#define CHECK_NOTNULL(x) \
  ((x) == nullptr ? (LOG(FATAL) << "Check failed: '" #x "' must not be null", (x)) : (x))
#endif

#ifndef DCHECK
#ifdef NDEBUG
#define DCHECK(cond) \
  while (false) CHECK(cond)
#define PS_DCHECK_OP(a, b, op) \
  while (false) PS_CHECK_OP(a, b, op)
#else
#define DCHECK(cond) CHECK(cond)
#define PS_DCHECK_OP(a, b, op) PS_CHECK_OP(a, b, op)
#endif
#define DCHECK_EQ(a, b) PS_DCHECK_OP(a, b, ==)
#define DCHECK_NE(a, b) PS_DCHECK_OP(a, b, !=)
#define DCHECK_LT(a, b) PS_DCHECK_OP(a, b, <)
#define DCHECK_LE(a, b) PS_DCHECK_OP(a, b, <=)
#define DCHECK_GT(a, b) PS_DCHECK_OP(a, b, >)
#define DCHECK_GE(a, b) PS_DCHECK_OP(a, b, >=)
#endif
