#include "train/synthetic_data.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>

#include "data/text_parsers.h"
#include "train/random.h"

namespace libra::train {
namespace {

std::vector<double> ZipfPopularity(uint64_t n, double skew) {
  std::vector<double> p(n);
  double total = 0;
  for (uint64_t r = 0; r < n; ++r) total += p[r] = std::pow(static_cast<double>(r + 1), -skew);
  for (double& x : p) x /= total;
  return p;
}

const SyntheticOptions& Validated(const SyntheticOptions& o) {
  if (o.fields == 0) throw std::invalid_argument("--fields must be at least 1");
  if (o.keys < o.fields) throw std::invalid_argument("--keys must be at least --fields");
  if (o.keys / o.fields > 0xffffffffull) {
    throw std::invalid_argument("--keys / --fields must be below 2^32");
  }
  if (!(o.skew >= 0) || o.skew > 10) throw std::invalid_argument("--skew must be in [0, 10]");
  if (o.format == SyntheticFormat::kCriteo && o.fields > kCriteoCategoricalFields) {
    throw std::invalid_argument("--fields must be at most 26 for --format criteo");
  }
  return o;
}

// murmur3's finaliser: a bijection on 32 bits, so distinct ranks in a field
// get distinct Criteo tokens.
uint32_t Mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

void AppendUnsigned(uint64_t v, std::string* out) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), v);
  out->append(digits, end);
}

void AppendHex8(uint32_t v, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  char text[8];
  for (int i = 7; i >= 0; --i, v >>= 4) text[i] = kHex[v & 15];
  out->append(text, 8);
}

}  // namespace

SyntheticWorkload::SyntheticWorkload(const SyntheticOptions& options)
    : options_(Validated(options)),
      keys_per_field_(options.keys / options.fields),
      popularity_(ZipfPopularity(keys_per_field_, options.skew)),
      sampler_(popularity_) {
  // Scales chosen so that the linear part of the logit has a standard
  // deviation of about 1.5 and the interactions about 0.8, whatever F is.
  const uint64_t total = keys_per_field_ * options_.fields;
  const double f = options_.fields;
  const double weight_scale = 1.5 / std::sqrt(f);
  const double factor_scale =
      options_.fields > 1 ? std::sqrt(0.8 / std::sqrt(2.0 * f * (f - 1))) : 0.0;
  SplitMix64 rng(Mix64(options_.seed ^ 0x5eed0fda7aULL));
  hidden_weight_.resize(total);
  hidden_factors_.resize(total * kHiddenFactors);
  for (float& w : hidden_weight_) w = static_cast<float>(weight_scale * rng.Normal());
  for (float& v : hidden_factors_) v = static_cast<float>(factor_scale * rng.Normal());
  for (uint32_t field = 0; field < options_.fields; ++field) {
    token_salt_.push_back(static_cast<uint32_t>(rng.Next()));
  }
}

double SyntheticWorkload::ExpectedTopKeyShare(uint64_t top) const {
  // Every field has the same popularity curve, so the top keys overall are
  // the top top/F ranks of each field (the remainder split across fields).
  const uint64_t per_field = top / options_.fields, extra = top % options_.fields;
  if (per_field >= keys_per_field_) return 1.0;
  double head = 0;
  for (uint64_t r = 0; r < per_field; ++r) head += popularity_[r];
  const double partial = static_cast<double>(extra) / options_.fields * popularity_[per_field];
  return head + partial;
}

double SyntheticWorkload::Logit(const uint32_t* ranks) const {
  double linear = hidden_bias_;
  float sum[kHiddenFactors] = {}, sum_sq[kHiddenFactors] = {};
  for (uint32_t f = 0; f < options_.fields; ++f) {
    const uint64_t index = f * keys_per_field_ + ranks[f];
    linear += hidden_weight_[index];
    const float* v = &hidden_factors_[index * kHiddenFactors];
    for (int k = 0; k < kHiddenFactors; ++k) {
      sum[k] += v[k];
      sum_sq[k] += v[k] * v[k];
    }
  }
  double pairwise = 0;  // sum over pairs of <v_i, v_j>
  for (int k = 0; k < kHiddenFactors; ++k) pairwise += 0.5 * (sum[k] * sum[k] - sum_sq[k]);
  return linear + pairwise;
}

void SyntheticWorkload::AppendLibsvmRow(float label, const uint32_t* ranks,
                                        std::string* out) const {
  out->push_back(label > 0 ? '1' : '0');
  for (uint32_t f = 0; f < options_.fields; ++f) {
    out->push_back(' ');
    AppendUnsigned(1 + f * keys_per_field_ + ranks[f], out);  // libsvm indices start at 1
    out->append(":1");
  }
  out->push_back('\n');
}

void SyntheticWorkload::AppendCriteoRow(float label, const uint32_t* ranks, uint64_t random,
                                        std::string* out) const {
  out->push_back(label > 0 ? '1' : '0');
  // Integer columns are noise here (counts, a fifth missing); the signal is
  // in the categorical ones.
  SplitMix64 counts(random);
  for (uint32_t i = 0; i < kCriteoIntegerFields; ++i) {
    out->push_back('\t');
    const uint64_t r = counts.Next();
    if ((r & 0xff) < 51) continue;
    AppendUnsigned(static_cast<uint64_t>(std::exp((r >> 40) * 0x1.0p-24 * 7.0)) - 1, out);
  }
  for (uint32_t f = 0; f < kCriteoCategoricalFields; ++f) {
    out->push_back('\t');
    if (f < options_.fields) AppendHex8(Mix32(ranks[f] ^ token_salt_[f]), out);
  }
  out->push_back('\n');
}

void SyntheticWorkload::FormatBlock(uint64_t block, std::string* out) const {
  out->clear();
  const uint64_t first = block * kBlockRows;
  const uint64_t last = std::min(options_.rows, first + kBlockRows);
  SplitMix64 rng(Mix64(options_.seed) ^ Mix64(block + 1));
  std::vector<uint32_t> ranks(options_.fields);
  for (uint64_t row = first; row < last; ++row) {
    for (uint32_t f = 0; f < options_.fields; ++f) ranks[f] = sampler_.Sample(rng.Next());
    const double p = 1.0 / (1.0 + std::exp(-Logit(ranks.data())));
    const float label = rng.Uniform() < p ? 1.0f : 0.0f;
    if (options_.format == SyntheticFormat::kLibsvm) {
      AppendLibsvmRow(label, ranks.data(), out);
    } else {
      AppendCriteoRow(label, ranks.data(), rng.Next(), out);
    }
  }
}

uint64_t SyntheticWorkload::Write(const std::string& path, unsigned threads) const {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!file) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  const uint64_t blocks = (options_.rows + kBlockRows - 1) / kBlockRows;
  std::vector<std::string> texts(threads);
  uint64_t written = 0;
  // Waves of `threads` blocks formatted in parallel, written in order.
  for (uint64_t wave = 0; wave < blocks; wave += threads) {
    const uint64_t count = std::min<uint64_t>(threads, blocks - wave);
    std::vector<std::future<void>> pending;
    for (uint64_t i = 1; i < count; ++i) {
      pending.push_back(std::async(std::launch::async,
                                   [this, &texts, wave, i] { FormatBlock(wave + i, &texts[i]); }));
    }
    FormatBlock(wave, &texts[0]);
    for (auto& p : pending) p.get();
    for (uint64_t i = 0; i < count; ++i) {
      if (std::fwrite(texts[i].data(), 1, texts[i].size(), file.get()) != texts[i].size()) {
        throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
      }
      written += texts[i].size();
    }
  }
  if (std::fclose(file.release()) != 0) {
    throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
  }
  return written;
}

}  // namespace libra::train
