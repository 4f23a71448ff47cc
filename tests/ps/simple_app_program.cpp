// SimpleApp requests that arrive before the receiving application has set
// its request handle (PS-lite's test_simple_app crashed on it about one run
// in ten). The scheduler sends two batches of requests to every server and
// worker, which hold them back with barriers so they arrive at the worst
// moments:
//   batch 1 before the node's SimpleApp exists: parked by the van and handed
//           to the app's customer inside its constructor;
//   batch 2 after the constructor, before set_request_handle.
// Mode "handle": every request must reach the application's handle (never
// the default one), which answers "handled". Mode "default": the nodes never
// set a handle, and the requests are answered by the default handle (an
// empty body) once the node calls Finalize.
// A failed check throws (the process exits non-zero); the scheduler exits 0
// only if every response was as expected.
#include <atomic>
#include <iostream>
#include <string>
#include <vector>

#include "ps/ps.h"

using namespace ps;

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "handle";
  CHECK(mode == "handle" || mode == "default") << "usage: simple_app_program handle|default";
  const bool own_handle = mode == "handle";
  const int batch = 50;
  const int everyone = kScheduler + kServerGroup + kWorkerGroup;

  Start(0);
  if (IsScheduler()) {
    SimpleApp app(0);
    std::atomic<int> expected_bodies{0}, other_bodies{0};
    app.set_response_handle([&](const SimpleData& res, SimpleApp*) {
      (res.body == (own_handle ? "handled" : "") ? expected_bodies : other_bodies)++;
    });
    std::vector<int> ts;
    for (int i = 0; i < batch; ++i)
      ts.push_back(app.Request(1, "batch 1", kServerGroup + kWorkerGroup));
    Postoffice::Get()->Barrier(0, everyone);  // the nodes create their apps after this
    for (int i = 0; i < batch; ++i)
      ts.push_back(app.Request(1, "batch 2", kServerGroup + kWorkerGroup));
    Postoffice::Get()->Barrier(0, everyone);  // the nodes set their handles after this
    // With the default handle the nodes answer once they call Finalize.
    for (int t : ts) app.Wait(t);
    Finalize(0, true);
    const int nodes = NumServers() + NumWorkers();
    CHECK_EQ(other_bodies.load(), 0) << "responses from the default handle";
    CHECK_EQ(expected_bodies.load(), 2 * batch * nodes);
    return 0;
  }

  Postoffice::Get()->Barrier(0, everyone);  // batch 1 has arrived: it is parked
  SimpleApp app(0);
  Postoffice::Get()->Barrier(0, everyone);  // batch 2 has arrived: it is queued
  std::atomic<int> handled{0};
  if (own_handle) {
    app.set_request_handle([&](const SimpleData& req, SimpleApp* a) {
      CHECK_EQ(req.head, 1);
      CHECK(req.body == "batch 1" || req.body == "batch 2") << req.body;
      ++handled;
      a->Response(req, "handled");
    });
  }
  Finalize(0, true);
  if (own_handle) CHECK_EQ(handled.load(), 2 * batch);
  return 0;
}
