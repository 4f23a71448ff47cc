// PS-lite's small utilities: GetEnv, DISALLOW_COPY_AND_ASSIGN, LL, and the
// dmlc logging names (ps/base.h includes this, as in PS-lite).
#pragma once

#include <cinttypes>
#include <sstream>
#include <string>
#include <type_traits>

#include "dmlc/logging.h"
#include "ps/internal/env.h"

namespace ps {

namespace internal {

// Text of an environment variable as a V: a string is taken as it is, a
// number must be one (anything else stops the program naming the variable).
template <typename V>
V ParseEnv(const char* key, const char* text, std::true_type /*arithmetic*/) {
  std::istringstream in(text);
  V value = V();
  in >> value;
  CHECK(!in.fail() && in.eof()) << "environment variable " << key << "='" << text
                                << "' is not a number";
  return value;
}
template <typename V>
V ParseEnv(const char*, const char* text, std::false_type /*arithmetic*/) {
  return V(text);
}

}  // namespace internal

// The environment variable `key` (or Environment's override of it) as a V,
// or `default_val` when it is unset.
template <typename V>
inline V GetEnv(const char* key, V default_val) {
  const char* text = Environment::Get()->find(key);
  if (text == nullptr) return default_val;
  return internal::ParseEnv<V>(key, text, std::is_arithmetic<V>());
}

}  // namespace ps
