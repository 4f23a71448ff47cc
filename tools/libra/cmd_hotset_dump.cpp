// `libra hotset-dump`: prints a hot-set file for people.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "commands.h"
#include "hot/hot_set.h"

namespace libra::tool {
namespace {

struct HotsetDumpOptions {
  std::string path;
  size_t limit = 20;
  bool all = false;
};

int RunHotsetDump(const HotsetDumpOptions& o) {
  hot::HotSet set;
  try {
    set = hot::ReadHotSetFile(o.path);
  } catch (const hot::HotSetFileError& e) {
    std::fprintf(stderr, "libra hotset-dump: %s\n", e.what());
    return 1;
  }
  const hot::SwitchLayout& layout = set.layout();
  uint64_t updates = 0;
  std::vector<uint64_t> cells_used(layout.num_arrays, 0), load(layout.num_arrays, 0);
  for (uint32_t k = 0; k < set.size(); ++k) {
    updates += set.keys()[k].frequency;
    for (const hot::CellAddress& cell : set.CellsOf(k)) {
      ++cells_used[cell.array];
      load[cell.array] += set.keys()[k].frequency;
    }
  }
  std::printf("hot-set file %s (format version %u)\n", o.path.c_str(), hot::kHotSetFileVersion);
  std::printf("placement    %s\n", std::string(hot::PlacementName(set.placement())).c_str());
  std::printf("switch       %u register arrays x %u cells x %u banks (%llu cells per bank)\n",
              layout.num_arrays, layout.cells_per_array, layout.num_banks,
              (unsigned long long)layout.capacity());
  std::printf("hot keys     %zu, values %zu (%.1f%% of the cells), sampled updates %llu\n",
              set.size(), set.num_values(),
              100.0 * double(set.num_values()) / double(layout.capacity()),
              (unsigned long long)updates);
  if (set.size() > 0) {
    const auto [least, most] = std::minmax_element(load.begin(), load.end());
    const auto [fewest, most_cells] = std::minmax_element(cells_used.begin(), cells_used.end());
    std::printf("per array    cells used %llu..%llu, expected load %llu..%llu updates\n",
                (unsigned long long)*fewest, (unsigned long long)*most_cells,
                (unsigned long long)*least, (unsigned long long)*most);
  }
  const size_t shown = o.all ? set.size() : std::min(o.limit, set.size());
  std::printf("\n%8s %20s %12s %6s  cells (array:index)\n", "rank", "key", "frequency", "values");
  for (uint32_t k = 0; k < shown; ++k) {
    const hot::HotKey& key = set.keys()[k];
    std::printf("%8u %20llu %12llu %6u ", k, (unsigned long long)key.key,
                (unsigned long long)key.frequency, key.value_len);
    for (const hot::CellAddress& cell : set.CellsOf(k))
      std::printf(" %u:%u", cell.array, cell.index);
    std::printf("\n");
  }
  if (shown < set.size()) std::printf("... %zu more (--all shows them)\n", set.size() - shown);
  return 0;
}

}  // namespace

void AddHotsetDumpCommand(CLI::App& parent, Runner& run) {
  auto opts = std::make_shared<HotsetDumpOptions>();
  CLI::App* sub = parent.add_subcommand("hotset-dump", "Print a hot-set file readably");
  sub->add_option("file", opts->path, "Hot-set file")->required();
  sub->add_option("--limit", opts->limit, "Keys to list")->capture_default_str();
  sub->add_flag("--all", opts->all, "List every key");
  sub->callback([&run, opts] { run = [opts] { return RunHotsetDump(*opts); }; });
}

}  // namespace libra::tool
