// Includes every public header and instantiates every class template of the
// API, compiled once per C++ standard (CMakeLists.txt here) with -Wall
// -Wextra -Werror: PS-lite programs are built as C++11 and must see no
// error or warning from these headers. main() checks the standard the file
// was really compiled under.
#include "dmlc/base.h"
#include "dmlc/logging.h"
#include "ps/base.h"
#include "ps/internal/assign_op.h"
#include "ps/internal/customer.h"
#include "ps/internal/env.h"
#include "ps/internal/hot_path_hooks.h"
#include "ps/internal/logging.h"
#include "ps/internal/merge_by_key.h"
#include "ps/internal/message.h"
#include "ps/internal/parallel_kv_match.h"
#include "ps/internal/parallel_sort.h"
#include "ps/internal/postoffice.h"
#include "ps/internal/slice_of_keys.h"
#include "ps/internal/threadsafe_pqueue.h"
#include "ps/internal/threadsafe_queue.h"
#include "ps/internal/transport.h"
#include "ps/internal/utils.h"
#include "ps/internal/van.h"
#include "ps/kv_app.h"
#include "ps/ps.h"
#include "ps/range.h"
#include "ps/sarray.h"
#include "ps/simple_app.h"

// Every member function of these is compiled, used or not.
template class ps::SArray<char>;
template class ps::SArray<float>;
template class ps::SArray<ps::Key>;
template class ps::KVWorker<float>;
template class ps::KVWorker<double>;
template class ps::KVWorker<int>;
template class ps::KVServer<float>;
template class ps::KVServer<double>;
template class ps::KVServer<int>;
template struct ps::KVServerDefaultHandle<float>;
template struct ps::KVServerDefaultHandle<double>;
template class ps::ThreadsafeQueue<ps::Message>;

int main() {
  // The function templates of the helper headers.
  ps::SArray<ps::Key> keys = {3, 1, 2};
  ps::ParallelSort(&keys, 2, std::greater<ps::Key>());
  ps::ParallelSort(&keys);
  ps::SArray<float> vals = {1, 2, 3};
  ps::SArray<float> dst;
  std::vector<int> dst_ints;
  size_t matched =
      ps::ParallelOrderedMatch(keys, vals, keys, &dst, 1, ps::PLUS, 2) +
      ps::ParallelOrderedMatch(keys, ps::SArray<int>({1, 2, 3}), keys, &dst_ints, 1, ps::XOR);
  float x = 1;
  ps::AssignFunc(2.0f, ps::PLUS, &x);
  bool ok = matched == 6 && x == 3 && ps::GetDataType<float>() == ps::DataType::kFloat &&
            ps::GetEnv("LIBRA_NO_SUCH_VARIABLE", 5) == 5;
  return ok && __cplusplus == LIBRA_EXPECTED_CPLUSPLUS ? 0 : 1;
}
