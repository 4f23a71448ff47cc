// Sampling whole epochs straight from a data file, reading only what the
// sample needs, so that profiling time scales with the sample, not the file.
#pragma once

#include <cstdint>
#include <string>

#include "hot/hot_profiler.h"

namespace libra::hot {

struct FileSampleOptions {
  bool skip_bad_lines = false;  // otherwise the first bad line throws
  // Bytes read from the head of a text file to estimate its bytes per row
  // (and so its number of epochs) before sampling.
  uint64_t probe_bytes = 256 << 10;
  // Read size; a sampled epoch reads at most this much past its last line.
  uint64_t chunk_bytes = 64 << 10;
};

// The sampled epochs of the data file at `path`, in any format
// train::ReadDataset reads, with the keys as they are in the file.
//
// Text (libsvm, Criteo TSV): the number of epochs is estimated from the bytes
// per row of the file's head; the file is cut into as many equal byte ranges
// as epochs are to be sampled, and from a random point in each range (drawn
// from options.seed) the profiler reads the whole lines of one epoch. Only
// those bytes are read, and the data's rows are then estimated from the
// sample's bytes per row (EpochSample::data_rows_exact is false unless the
// whole file was read). An epoch starts at the first line after a random
// byte, which favours lines that follow long ones a little; over an epoch of
// thousands of rows that bias is negligible.
//
// Libra's binary cache is read whole and sampled in memory (train has no
// row-range reader for it yet; it loads at disk speed).
//
// Throws train::DataError naming the file (and for a bad line its byte
// offset) and std::invalid_argument for bad options.
EpochSample SampleDataFile(const std::string& path, const ProfileOptions& options,
                           const FileSampleOptions& file_options = {});

}  // namespace libra::hot
