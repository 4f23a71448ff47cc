// `libra profile`: chooses the hot set from a sample of a data file, places
// it, writes the hot-set file and reports coverage and packing.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "data/dataset.h"
#include "hot/file_sample.h"
#include "hot/hot_profiler.h"
#include "hot/hot_switch_layout.h"
#include "hot/placement.h"
#include "train/batch.h"
#include "wire/pipeline_profile.h"

namespace libra::tool {
namespace {

// Files up to this size are evaluated (a second, full pass) unless told not to.
constexpr uint64_t kEvaluateByDefaultBytes = uint64_t{512} << 20;

struct ProfileCommandOptions {
  std::string data;
  std::string out;
  std::string json;
  std::string placement = "heat";
  std::string pipeline = "tofino1";
  size_t counter_memory_mb = hot::UpdateCounter::kDefaultMemoryBudget >> 20;
  bool skip_bad_lines = false;
  std::string keys = "training";  // training: the keys `libra train` pushes; feature: as read
  bool evaluate = false;
  bool no_evaluate = false;
  // Register arrays and cells per array; 0: the most the pipeline holds.
  uint32_t arrays = 0;
  uint32_t cells_per_array = 0;
  hot::ProfileOptions profile;
};

// The switch layout: the pipeline's own unless --arrays / --cells-per-array
// say otherwise, and then it must still fit the pipeline (or --pipeline none).
hot::SwitchLayout ChooseLayout(const ProfileCommandOptions& o) {
  hot::SwitchLayout layout = o.profile.layout;
  const auto profile = dataplane::PipelineProfile::ByName(o.pipeline);
  const int workers = static_cast<int>(o.profile.workers);
  if (profile) {
    layout = hot::SwitchLayoutFor(*profile, workers);
    layout.num_banks = o.profile.layout.num_banks;
  }
  if (o.arrays != 0) layout.num_arrays = o.arrays;
  if (o.cells_per_array != 0) layout.cells_per_array = o.cells_per_array;
  if (profile) {
    const std::vector<std::string> problems = hot::LayoutProblems(layout, *profile, workers);
    if (!problems.empty()) {
      throw std::invalid_argument("--arrays " + std::to_string(layout.num_arrays) +
                                  " --cells-per-array " + std::to_string(layout.cells_per_array) +
                                  " does not fit pipeline " + o.pipeline + ": " + problems.front() +
                                  " (--pipeline none profiles for another switch)");
    }
  }
  return layout;
}

void PrintReplay(const char* name, const hot::ReplayMetrics& metrics) {
  std::printf("  %-22s %14.1f %12.3f %16.1f\n", name, metrics.packets_per_epoch(),
              metrics.total.utilisation(), metrics.conflicts_per_epoch());
}

void PrintReport(const ProfileCommandOptions& o, const hot::ProfileReport& r) {
  const hot::ProfileOptions& p = o.profile;
  std::printf("data        %s: %s%llu rows, %llu epochs of %u workers x %u rows\n", o.data.c_str(),
              r.rows_exact ? "" : "about ", (unsigned long long)r.rows,
              (unsigned long long)r.epochs, p.workers, p.batch_size);
  std::printf("read        %.1f of %.1f MB for the sample (%.2f s)\n", r.sample_bytes_read / 1e6,
              r.data_bytes / 1e6, r.seconds_sampling);
  std::printf("sample      %llu epochs, %llu rows, %llu updates, %llu keys, counter %s",
              (unsigned long long)r.sampled_epochs, (unsigned long long)r.sampled_rows,
              (unsigned long long)r.sampled_updates, (unsigned long long)r.sampled_distinct_keys,
              r.counter_exact ? "exact\n" : "sketch");
  if (!r.counter_exact)
    std::printf(" (error <= %llu)\n", (unsigned long long)r.counter_error_bound);
  std::printf(
      "hot set     %llu keys, %llu values in %llu cells of a %u x %u switch (chosen in %.2f s)\n",
      (unsigned long long)r.hot_keys, (unsigned long long)r.hot_values,
      (unsigned long long)r.capacity_cells, p.layout.num_arrays, p.layout.cells_per_array,
      r.seconds_profiling);
  if (r.evaluated) {
    std::printf(
        "coverage    sampled %.4f  optimal %.4f  ratio %.4f  recall %.4f (full pass, %.2f s)\n",
        r.sampled_coverage, r.optimal_coverage, r.coverage_ratio, r.recall, r.seconds_evaluating);
  } else {
    std::printf("coverage    not evaluated (needs a full pass: --evaluate)\n");
  }
  std::printf("replay of %llu sampled epochs:\n", (unsigned long long)r.heat_layout_aware.epochs);
  std::printf("  %-22s %14s %12s %16s\n", "", "packets/epoch", "utilisation", "conflicts/epoch");
  PrintReplay("heat + layout-aware", r.heat_layout_aware);
  PrintReplay("hash + naive", r.hash_naive);
  std::printf("  conflict reduction %.1f%%\n", 100.0 * r.conflict_reduction);
}

int RunProfile(ProfileCommandOptions o) {
  try {
    o.profile.counter_memory_budget = o.counter_memory_mb << 20;
    o.profile.layout = ChooseLayout(o);
    if (o.profile.capacity_cells > o.profile.layout.capacity()) {
      throw std::invalid_argument("--capacity " + std::to_string(o.profile.capacity_cells) +
                                  " exceeds the switch's " +
                                  std::to_string(o.profile.layout.capacity()) + " cells");
    }
    const hot::PlacementKind placement = hot::ParsePlacementKind(o.placement);

    hot::FileSampleOptions file_options;
    file_options.skip_bad_lines = o.skip_bad_lines;
    hot::EpochSample sample = hot::SampleDataFile(o.data, o.profile, file_options);
    // `libra train` pushes a feature under ParameterKeyOf(feature), not the
    // feature's own number: a hot set for it must hold those keys.
    const bool training_keys = o.keys == "training";
    if (training_keys) {
      std::transform(sample.keys.begin(), sample.keys.end(), sample.keys.begin(),
                     train::ParameterKeyOf);
    }
    if (sample.bad_lines > 0) {
      std::cerr << "skipped " << sample.bad_lines << " bad lines in the sampled part\n";
    }
    hot::ProfileResult result = hot::ProfileSample(sample, o.profile);

    const bool evaluate =
        o.evaluate || (!o.no_evaluate && sample.data_bytes <= kEvaluateByDefaultBytes);
    if (evaluate) {
      train::ReadOptions read_options;
      read_options.skip_bad_lines = o.skip_bad_lines;
      train::Dataset data = train::ReadDataset(o.data, read_options);
      if (training_keys) {
        std::transform(data.keys.begin(), data.keys.end(), data.keys.begin(),
                       train::ParameterKeyOf);
      }
      hot::EvaluateCoverage(hot::SparseRows{data.row_begin, data.keys}, o.profile, result.hot_set,
                            &result.report);
    }
    if (placement != result.hot_set.placement()) {
      std::vector<hot::HotKey> keys(result.hot_set.keys().begin(), result.hot_set.keys().end());
      result.hot_set =
          hot::PlaceHotSet(std::move(keys), o.profile.layout, *hot::MakePlacement(placement));
    }
    hot::WriteHotSetFile(result.hot_set, o.out);
    PrintReport(o, result.report);
    std::printf("wrote %s (%s placement)\n", o.out.c_str(),
                std::string(hot::PlacementName(placement)).c_str());

    if (!o.json.empty()) {
      nlohmann::json json = hot::ToJson(result.report);
      json["data"]["path"] = o.data;
      json["options"] = {{"sample", o.profile.sample_fraction},
                         {"batch", o.profile.batch_size},
                         {"workers", o.profile.workers},
                         {"value_len", o.profile.value_len},
                         {"min_frequency", o.profile.min_frequency},
                         {"arrays", o.profile.layout.num_arrays},
                         {"cells_per_array", o.profile.layout.cells_per_array},
                         {"banks", o.profile.layout.num_banks},
                         {"pipeline", o.pipeline},
                         {"capacity", o.profile.capacity_cells},
                         {"placement", o.placement},
                         {"seed", o.profile.seed}};
      json["hot_set"]["file"] = o.out;
      std::ofstream file(o.json);
      if (!(file << json.dump(2) << "\n")) {
        std::cerr << "libra profile: cannot write report " << o.json << "\n";
        return 1;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "libra profile: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

void AddProfileCommand(CLI::App& parent, Runner& run) {
  auto opts = std::make_shared<ProfileCommandOptions>();
  CLI::App* sub = parent.add_subcommand(
      "profile", "Choose the hot parameters from a sample of a data file and place them");
  sub->add_option("--data", opts->data, "Data file (libsvm, Criteo TSV or Libra cache)")
      ->required();
  sub->add_option("--out", opts->out, "Hot-set file to write")->required();
  sub->add_option("--json", opts->json, "Also write the report as JSON here");
  sub->add_option("--sample", opts->profile.sample_fraction,
                  "Share of the epochs to sample, spread over the whole file")
      ->capture_default_str()
      ->check(CLI::Range(1e-6, 1.0));
  opts->profile.capacity_cells = hot::kDefaultHotCapacityCells;
  sub->add_option("--capacity", opts->profile.capacity_cells,
                  "Switch cells for hot values (0: the whole switch); the default is the "
                  "paper's calibration")
      ->capture_default_str();
  sub->add_option("--min-frequency", opts->profile.min_frequency,
                  "Leave out keys with fewer sampled updates")
      ->capture_default_str();
  sub->add_option("--value-len", opts->profile.value_len, "Values per key (embedding dimension)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 20));
  sub->add_option("--batch", opts->profile.batch_size, "Rows per worker per epoch")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 30));
  sub->add_option("--workers", opts->profile.workers, "Workers")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 16));
  sub->add_option("--pipeline", opts->pipeline,
                  "Switch pipeline the hot set must fit (its layout is the default): tofino1, "
                  "or none for --arrays x --cells-per-array as given")
      ->capture_default_str()
      ->check(CLI::IsMember({"tofino1", "none"}));
  sub->add_option("--arrays", opts->arrays,
                  "Register arrays (= value slots per packet); default: the pipeline's")
      ->check(CLI::Range(1u, 1u << 16));
  sub->add_option("--cells-per-array", opts->cells_per_array,
                  "Cells per register array per bank; default: the most the pipeline holds")
      ->check(CLI::Range(1u, 1u << 24));
  sub->add_option("--banks", opts->profile.layout.num_banks, "Register banks (epoch parity)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 16u));
  sub->add_option("--placement", opts->placement, "Placement written to --out: heat or hash")
      ->capture_default_str()
      ->check(CLI::IsMember({"heat", "hash"}));
  sub->add_option("--counter-memory-mb", opts->counter_memory_mb,
                  "Memory for exact counting before the sketch takes over")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1} << 20));
  sub->add_option("--seed", opts->profile.seed, "Picks the sampled epochs")->capture_default_str();
  sub->add_option("--keys", opts->keys,
                  "Keys of the hot set: training (as `libra train` pushes them, the default) or "
                  "feature (the data's own feature numbers, for a program that pushes those)")
      ->check(CLI::IsMember({"training", "feature"}))
      ->capture_default_str();
  sub->add_flag("--skip-bad-lines", opts->skip_bad_lines,
                "Skip malformed lines instead of failing");
  CLI::Option* evaluate =
      sub->add_flag("--evaluate", opts->evaluate,
                    "Count the whole data for coverage and recall (a full pass; the default "
                    "for files up to 512 MB)");
  sub->add_flag("--no-evaluate", opts->no_evaluate, "Skip the full pass (no coverage or recall)")
      ->excludes(evaluate);
  sub->callback([&run, opts] { run = [opts] { return RunProfile(*opts); }; });
}

}  // namespace libra::tool
