// Worker compute per model (samples/s of batch build + forward + backward +
// optimizer step, single process) and text parsing speed (MB/s).
//   build/bench/train/train_bench --benchmark_out=train.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "train/batch.h"
#include "train/dataset.h"
#include "train/local_trainer.h"
#include "train/synthetic_data.h"

namespace libra::train {
namespace {

const std::string& SyntheticFile(SyntheticFormat format) {
  static const std::string libsvm = [] {
    auto path = std::filesystem::temp_directory_path() / "libra-train-bench.svm";
    SyntheticWorkload({.rows = 200000, .keys = 1'000'000, .fields = 26}).Write(path);
    return path.string();
  }();
  static const std::string criteo = [] {
    auto path = std::filesystem::temp_directory_path() / "libra-train-bench.tsv";
    SyntheticWorkload({.rows = 200000, .format = SyntheticFormat::kCriteo}).Write(path);
    return path.string();
  }();
  return format == SyntheticFormat::kLibsvm ? libsvm : criteo;
}

void BM_TrainStep(benchmark::State& state) {
  const auto kind = static_cast<ModelKind>(state.range(0));
  const uint32_t batch_size = static_cast<uint32_t>(state.range(1));
  static const Dataset data =
      ReadDataset(SyntheticFile(SyntheticFormat::kLibsvm), {.use_cache = false});
  LocalTrainer trainer(
      {.kind = kind, .embedding_dim = 8, .hidden_units = {32, 16}, .num_fields = data.num_fields},
      {.kind = OptimizerKind::kAdagrad});
  const Model& model = trainer.model();
  Batch batch;
  std::vector<float> params, gradients, predictions(batch_size);
  size_t begin = 0;
  for (auto _ : state) {
    if (begin + batch_size > data.rows()) begin = 0;
    MakeBatch(data, begin, begin + batch_size, model.num_dense_keys(), &batch);
    params.resize(batch.keys.size() * model.value_length());
    gradients.resize(params.size());
    trainer.table().Pull(batch.keys.data(), batch.keys.size(), params.data());
    model.Evaluate(batch, params.data(), predictions.data(), gradients.data());
    trainer.table().Push(batch.keys.data(), batch.keys.size(), gradients.data(), 1);
    begin += batch_size;
  }
  state.SetItemsProcessed(state.iterations() * batch_size);
  state.SetLabel(ModelKindName(kind));
}
BENCHMARK(BM_TrainStep)
    ->ArgsProduct({{static_cast<int>(ModelKind::kLogisticRegression),
                    static_cast<int>(ModelKind::kFactorizationMachine),
                    static_cast<int>(ModelKind::kDeepFm)},
                   {1000}})
    ->Unit(benchmark::kMillisecond);

void BM_ParseText(benchmark::State& state) {
  const auto format = static_cast<SyntheticFormat>(state.range(0));
  const std::string& path = SyntheticFile(format);
  for (auto _ : state) {
    Dataset d = ReadDataset(path, {.use_cache = false});
    benchmark::DoNotOptimize(d.keys.data());
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(std::filesystem::file_size(path)));
  state.SetLabel(format == SyntheticFormat::kLibsvm ? "libsvm" : "criteo");
}
BENCHMARK(BM_ParseText)
    ->Arg(static_cast<int>(SyntheticFormat::kLibsvm))
    ->Arg(static_cast<int>(SyntheticFormat::kCriteo))
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace libra::train

BENCHMARK_MAIN();
