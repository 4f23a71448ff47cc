// `libra gen-data`: writes a reproducible synthetic CTR data set.
#include <chrono>
#include <iostream>
#include <map>
#include <memory>

#include "commands.h"
#include "train/synthetic_data.h"

namespace libra::tool {
namespace {

struct GenDataOptions {
  std::string out;
  train::SyntheticOptions synthetic;
  unsigned threads = 0;
};

int RunGenData(const GenDataOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  try {
    train::SyntheticWorkload workload(o.synthetic);
    const uint64_t bytes = workload.Write(o.out, o.threads);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "wrote " << o.synthetic.rows << " rows, " << bytes << " bytes to " << o.out
              << " in " << seconds << " s (" << bytes / seconds / 1e6 << " MB/s)\n"
              << "keys per field " << workload.keys_per_field() << ", expected share of updates "
              << "to the top 30000 keys: " << workload.ExpectedTopKeyShare(30000) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "libra gen-data: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

void AddGenDataCommand(CLI::App& parent, Runner& run) {
  auto opts = std::make_shared<GenDataOptions>();
  CLI::App* sub = parent.add_subcommand(
      "gen-data",
      "Write a synthetic CTR data set (Zipf keys per field, labels from a hidden model)");
  sub->add_option("--out", opts->out, "Output file")->required();
  sub->add_option("--rows", opts->synthetic.rows, "Rows")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  sub->add_option("--keys", opts->synthetic.keys, "Distinct keys over all fields")
      ->capture_default_str();
  sub->add_option("--fields", opts->synthetic.fields, "Categorical fields (one feature each)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  sub->add_option("--skew", opts->synthetic.skew, "Zipf exponent of key popularity per field")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  sub->add_option("--seed", opts->synthetic.seed, "Random seed (same seed, same bytes)")
      ->capture_default_str();
  const std::map<std::string, train::SyntheticFormat> formats{
      {"libsvm", train::SyntheticFormat::kLibsvm}, {"criteo", train::SyntheticFormat::kCriteo}};
  sub->add_option("--format", opts->synthetic.format, "libsvm or criteo")
      ->transform(CLI::CheckedTransformer(formats, CLI::ignore_case));
  sub->add_option("--threads", opts->threads, "Formatting threads (0: all cores)");
  sub->callback([&run, opts] { run = [opts] { return RunGenData(*opts); }; });
}

}  // namespace libra::tool
