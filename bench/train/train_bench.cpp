// Worker compute per model (samples/s of batch build + forward + backward +
// optimizer step, single process) and text parsing speed (MB/s).
//   build/bench/train/train_bench --benchmark_out=train.json --benchmark_out_format=json
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>

#include "data/dataset.h"
#include "train/batch.h"
#include "train/bsp_round.h"
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

const Dataset& BenchDataset() {
  static const Dataset data =
      ReadDataset(SyntheticFile(SyntheticFormat::kLibsvm), {.use_cache = false});
  return data;
}

ModelConfig BenchModelConfig(ModelKind kind, const Dataset& data) {
  return {
      .kind = kind, .embedding_dim = 8, .hidden_units = {32, 16}, .num_fields = data.num_fields};
}

// Steps of `state.range(0)` (a ModelKind) with batches of `state.range(1)`
// rows. A whole step (`whole_step`) starts from an empty table, so the first
// passes over the data mostly create keys; the worker's own compute alone (the
// batch: sorted unique keys and a slot per feature occurrence, then the model's
// forward and backward pass) pulls its parameters outside the timing, as a
// server would answer.
void RunSteps(benchmark::State& state, bool whole_step) {
  const auto kind = static_cast<ModelKind>(state.range(0));
  const uint32_t batch_size = static_cast<uint32_t>(state.range(1));
  const Dataset& data = BenchDataset();
  LocalTrainer trainer(BenchModelConfig(kind, data), {.kind = OptimizerKind::kAdagrad});
  const Model& model = trainer.model();
  Batch batch;
  std::vector<float> params, gradients, predictions(batch_size);
  size_t begin = 0;
  for (auto _ : state) {
    if (begin + batch_size > data.rows()) begin = 0;
    MakeBatch(data, begin, begin + batch_size, model.num_dense_keys(), &batch);
    if (!whole_step) state.PauseTiming();
    params.resize(batch.keys.size() * model.value_length());
    gradients.resize(params.size());
    trainer.table().Pull(batch.keys.data(), batch.keys.size(), params.data());
    if (!whole_step) state.ResumeTiming();
    model.Evaluate(batch, params.data(), predictions.data(), gradients.data());
    benchmark::DoNotOptimize(gradients.data());
    if (whole_step) trainer.table().Push(batch.keys.data(), batch.keys.size(), gradients.data(), 1);
    begin += batch_size;
  }
  state.SetItemsProcessed(state.iterations() * batch_size);
  state.SetLabel(ModelKindName(kind));
}

void BM_TrainStep(benchmark::State& state) { RunSteps(state, /*whole_step=*/true); }
void BM_WorkerCompute(benchmark::State& state) { RunSteps(state, /*whole_step=*/false); }
BENCHMARK(BM_TrainStep)
    ->ArgsProduct({{static_cast<int>(ModelKind::kLogisticRegression),
                    static_cast<int>(ModelKind::kFactorizationMachine),
                    static_cast<int>(ModelKind::kDeepFm)},
                   {1000}});
BENCHMARK(BM_WorkerCompute)
    ->ArgsProduct({{static_cast<int>(ModelKind::kLogisticRegression),
                    static_cast<int>(ModelKind::kFactorizationMachine),
                    static_cast<int>(ModelKind::kDeepFm)},
                   {1000}});

void BM_MakeBatch(benchmark::State& state) {
  const Dataset& data = BenchDataset();
  const uint32_t batch_size = static_cast<uint32_t>(state.range(0));
  Batch batch;
  size_t begin = 0;
  for (auto _ : state) {
    if (begin + batch_size > data.rows()) begin = 0;
    MakeBatch(data, begin, begin + batch_size, /*num_dense_keys=*/1, &batch);
    benchmark::DoNotOptimize(batch.slots.data());
    begin += batch_size;
  }
  state.SetItemsProcessed(state.iterations() * batch_size);
}
BENCHMARK(BM_MakeBatch)->Arg(1000);

// A server's per-key work in steady state: pull then push (Adagrad) of one
// batch's keys against a table that already holds every key of the data.
void BM_ServerTable(benchmark::State& state) {
  const auto kind = static_cast<ModelKind>(state.range(0));
  const uint32_t batch_size = 1000;
  const Dataset& data = BenchDataset();
  LocalTrainer trainer(BenchModelConfig(kind, data), {.kind = OptimizerKind::kAdagrad});
  const Model& model = trainer.model();
  std::vector<Batch> batches(data.rows() / batch_size);
  for (size_t b = 0; b < batches.size(); ++b)
    MakeBatch(data, b * batch_size, (b + 1) * batch_size, model.num_dense_keys(), &batches[b]);
  std::vector<float> params, gradients;
  for (const Batch& batch : batches) {  // every key created before the timing
    params.resize(batch.keys.size() * model.value_length());
    trainer.table().Pull(batch.keys.data(), batch.keys.size(), params.data());
  }
  size_t b = 0, keys = 0;
  for (auto _ : state) {
    const Batch& batch = batches[b++ % batches.size()];
    params.resize(batch.keys.size() * model.value_length());
    gradients.assign(params.size(), 0.001f);
    trainer.table().Pull(batch.keys.data(), batch.keys.size(), params.data());
    trainer.table().Push(batch.keys.data(), batch.keys.size(), gradients.data(), 1);
    keys += batch.keys.size();
  }
  state.SetItemsProcessed(keys);  // keys per second
  state.SetLabel(ModelKindName(kind));
}
BENCHMARK(BM_ServerTable)
    ->Arg(static_cast<int>(ModelKind::kLogisticRegression))
    ->Arg(static_cast<int>(ModelKind::kDeepFm))
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

// A server's merge of one BSP round: `workers` pushes of 2,400 keys each
// (drawn from 1M, so a few are shared), value length 1 (LR). Arg 1 = 1: the
// keys of every push ascend (merged by cursor); 0: each push shuffled
// (merged by hash table), the reference in the same run.
void BM_BspRoundMerge(benchmark::State& state) {
  const auto workers = static_cast<uint32_t>(state.range(0));
  const bool ascending = state.range(1) == 1;
  std::mt19937_64 rng(7);
  BspRound round(workers, 1);
  for (uint32_t w = 0; w < workers; ++w) {
    std::vector<ps::Key> keys;
    for (int i = 0; i < 2400; ++i) keys.push_back(rng() % 1'000'000);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    if (!ascending) std::shuffle(keys.begin(), keys.end(), rng);
    std::vector<float> grads(keys.size(), 0.25f);
    round.Add(static_cast<int>(w) * 2 + 9, 1, ps::SArray<ps::Key>(keys), ps::SArray<float>(grads));
  }
  std::vector<ps::Key> merged_keys;
  std::vector<float> sums;
  for (auto _ : state) {
    round.Merge(&merged_keys, &sums);
    benchmark::DoNotOptimize(sums.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 2400 * workers);
}
BENCHMARK(BM_BspRoundMerge)->ArgNames({"workers", "ascending"})->ArgsProduct({{1, 2, 4}, {0, 1}});

}  // namespace
}  // namespace libra::train

BENCHMARK_MAIN();
