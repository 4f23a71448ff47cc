// How a node that cannot start ends (ps::Start, ps::StartAsync in ps/ps.h).
#include <cstdio>
#include <cstdlib>

#include "ps/internal/hot_path_hooks.h"
#include "ps/ps.h"

namespace ps::internal {

// A program written for PS-lite does not catch what Start throws, so an
// error in the settings would end in std::terminate (SIGABRT, "terminate
// called after throwing...") and a core dump instead of a message. The
// message has been printed (LOG(FATAL) prints before it throws); the node
// ends here, with _Exit rather than exit: the van's threads may be running,
// and the destructors of the runtime's singletons would wait for them.
void StartOrExit(int customer_id, const char* argv0, bool do_barrier) {
  try {
    // The LIBRA_* settings are otherwise first read after this node has
    // registered with the scheduler: a bad one would keep the job waiting for
    // a node that is about to fail. Read them first.
    hot_path_hooks::CheckSettings();
    Postoffice::Get()->Start(customer_id, argv0, do_barrier);
  } catch (const Error&) {
    std::fflush(nullptr);
    std::_Exit(kStartFailedExitStatus);
  }
}

}  // namespace ps::internal
