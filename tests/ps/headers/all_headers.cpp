// Includes every public header and instantiates every class template of the
// API, compiled once per C++ standard (CMakeLists.txt here) with -Wall
// -Wextra -Werror: PS-lite programs are built as C++11 and must see no
// error or warning from these headers. main() checks the standard the file
// was really compiled under.
#include "ps/base.h"
#include "ps/internal/customer.h"
#include "ps/internal/env.h"
#include "ps/internal/hot_path_hooks.h"
#include "ps/internal/logging.h"
#include "ps/internal/message.h"
#include "ps/internal/postoffice.h"
#include "ps/internal/threadsafe_queue.h"
#include "ps/internal/transport.h"
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
  bool ok = ps::GetDataType<float>() == ps::DataType::kFloat;
  return ok && __cplusplus == LIBRA_EXPECTED_CPLUSPLUS ? 0 : 1;
}
