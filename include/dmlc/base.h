// The configuration names of dmlc-core that PS-lite programs test or use:
// DMLC_USE_CXX11, DMLC_USE_GLOG (0: logging is Libra's own, ps/internal/
// logging.h), DMLC_LOG_FATAL_THROW (1: LOG(FATAL) throws dmlc::Error),
// DISALLOW_COPY_AND_ASSIGN and dmlc::BeginPtr.
#pragma once

#include <string>
#include <vector>

#ifndef DMLC_USE_CXX11
#define DMLC_USE_CXX11 1
#endif
#ifndef DMLC_USE_GLOG
#define DMLC_USE_GLOG 0
#endif
#ifndef DMLC_LOG_FATAL_THROW
#define DMLC_LOG_FATAL_THROW 1
#endif
#ifndef DMLC_THROW_EXCEPTION
#define DMLC_THROW_EXCEPTION noexcept(false)
#endif

// Makes a class neither copyable nor assignable; put it in the class body.
#ifndef DISALLOW_COPY_AND_ASSIGN
#define DISALLOW_COPY_AND_ASSIGN(T) \
  T(const T&) = delete;             \
  T& operator=(const T&) = delete
#endif

namespace dmlc {

// The address of the first element, or nullptr for an empty container.
template <typename T>
inline T* BeginPtr(std::vector<T>& vec) {
  return vec.empty() ? nullptr : &vec[0];
}
template <typename T>
inline const T* BeginPtr(const std::vector<T>& vec) {
  return vec.empty() ? nullptr : &vec[0];
}
inline char* BeginPtr(std::string& str) { return str.empty() ? nullptr : &str[0]; }
inline const char* BeginPtr(const std::string& str) { return str.empty() ? nullptr : &str[0]; }

}  // namespace dmlc
