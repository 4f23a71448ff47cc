#include "data/dataset.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "data/dataset_cache.h"
#include "data/line_reader.h"
#include "data/text_parsers.h"

namespace libra::train {
namespace {

// Parses a text file, keeping the valid rows whose index is `shard` modulo
// `num_shards`.
Dataset ParseText(const std::string& path, DataFormat format, const ReadOptions& options,
                  CacheInfo* info, uint64_t* total_rows) {
  Dataset data;
  data.num_fields = format == DataFormat::kCriteo ? kCriteoFields : 1;
  auto parse = format == DataFormat::kCriteo ? ParseCriteoLine : ParseLibsvmLine;
  LineReader reader(path);
  std::string error;
  uint64_t valid_rows = 0;
  std::string_view line;
  // Rows of other shards are parsed into a scratch set: the deal is by valid
  // row, so every line must be checked whoever keeps it.
  Dataset scratch;
  while (reader.Next(&line)) {
    const bool mine = valid_rows % options.num_shards == static_cast<uint64_t>(options.shard);
    Dataset& target = mine ? data : scratch;
    switch (parse(line, target, &error)) {
      case LineResult::kRow:
        ++valid_rows;
        if (!mine) scratch = Dataset();
        break;
      case LineResult::kBlank:
        break;
      case LineResult::kBad: {
        std::string where = path + ":" + std::to_string(reader.line_number()) + ": " + error;
        if (!options.skip_bad_lines) throw DataError(where);
        if (info->bad_lines++ == 0) info->first_bad_line = std::move(where);
        break;
      }
    }
  }
  info->lines = reader.line_number();
  *total_rows = valid_rows;
  return data;
}

Dataset TakeShard(Dataset&& full, int shard, int num_shards) {
  if (num_shards == 1) return std::move(full);
  Dataset part;
  part.num_fields = full.num_fields;
  for (size_t r = shard; r < full.rows(); r += num_shards) part.AppendRow(full, r);
  return part;
}

void CheckBadLinePolicy(const CacheInfo& info, const ReadOptions& options,
                        const std::string& path) {
  if (info.bad_lines > 0 && !options.skip_bad_lines) {
    throw DataError(info.first_bad_line.empty() ? path + ": has bad lines" : info.first_bad_line);
  }
}

void Report(ReadStats* stats, const CacheInfo& info, bool from_cache, uint64_t total_rows,
            const std::string& cache_problem = "") {
  if (stats == nullptr) return;
  stats->cache_problem = cache_problem;
  stats->rows = total_rows;
  stats->lines = info.lines;
  stats->bad_lines = info.bad_lines;
  stats->first_bad_line = info.first_bad_line;
  stats->from_cache = from_cache;
}

}  // namespace

void Dataset::AppendRow(const Dataset& other, size_t r) {
  const uint64_t begin = other.row_begin[r], end = other.row_begin[r + 1];
  keys.insert(keys.end(), other.keys.begin() + begin, other.keys.begin() + end);
  values.insert(values.end(), other.values.begin() + begin, other.values.begin() + end);
  fields.insert(fields.end(), other.fields.begin() + begin, other.fields.begin() + end);
  EndRow(other.labels[r]);
}

Dataset SliceRows(const Dataset& data, size_t begin, size_t end) {
  Dataset part;
  part.num_fields = data.num_fields;
  end = std::min(end, data.rows());
  for (size_t r = begin; r < end; ++r) part.AppendRow(data, r);
  return part;
}

DataFormat DetectFormat(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) throw DataError(path + ": cannot open: " + std::strerror(errno));
  char head[4096];
  const size_t got = std::fread(head, 1, sizeof(head), f.get());
  if (got >= sizeof(kCacheMagic) && std::memcmp(head, kCacheMagic, sizeof(kCacheMagic)) == 0) {
    return DataFormat::kBinaryCache;
  }
  const std::string_view text(head, got);
  const size_t first_line_end = text.find('\n');
  return text.substr(0, first_line_end).find('\t') != std::string_view::npos ? DataFormat::kCriteo
                                                                             : DataFormat::kLibsvm;
}

Dataset ReadDataset(const std::string& path, const ReadOptions& options, ReadStats* stats) {
  if (options.num_shards < 1 || options.shard < 0 || options.shard >= options.num_shards) {
    throw DataError(path + ": shard " + std::to_string(options.shard) + " of " +
                    std::to_string(options.num_shards) + " does not exist");
  }
  const DataFormat format = DetectFormat(path);
  CacheInfo info;
  if (format == DataFormat::kBinaryCache) {
    Dataset full;
    ReadDatasetCache(path, &full, &info);
    CheckBadLinePolicy(info, options, path);
    Report(stats, info, true, full.rows());
    return TakeShard(std::move(full), options.shard, options.num_shards);
  }
  if (!options.use_cache) {
    uint64_t total_rows = 0;
    Dataset part = ParseText(path, format, options, &info, &total_rows);
    Report(stats, info, false, total_rows);
    return part;
  }

  uint64_t source_bytes = 0;
  int64_t source_mtime = 0;
  StatSource(path, &source_bytes, &source_mtime);
  const std::string cache_path = CachePathFor(path);
  std::string cache_problem;
  if (HasCacheMagic(cache_path)) {
    try {
      Dataset full;
      ReadDatasetCache(cache_path, &full, &info);
      if (info.source_bytes == source_bytes && info.source_mtime_ns == source_mtime) {
        CheckBadLinePolicy(info, options, path);
        Report(stats, info, true, full.rows());
        return TakeShard(std::move(full), options.shard, options.num_shards);
      }
    } catch (const DataError& e) {
      // A damaged cache is rebuilt from the source below; the caller says so.
      cache_problem = e.what();
    }
    info = CacheInfo();
  }

  ReadOptions whole = options;
  whole.shard = 0;
  whole.num_shards = 1;
  uint64_t total_rows = 0;
  Dataset full = ParseText(path, format, whole, &info, &total_rows);
  info.source_bytes = source_bytes;
  info.source_mtime_ns = source_mtime;
  WriteDatasetCache(cache_path, full, info);  // best effort: a read-only directory is fine
  Report(stats, info, false, total_rows, cache_problem);
  return TakeShard(std::move(full), options.shard, options.num_shards);
}

}  // namespace libra::train
