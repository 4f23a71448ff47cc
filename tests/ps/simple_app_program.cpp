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
// empty body) once the node calls Finalize. Mode "subclass": an app that
// sets its handle before it creates its customer (as Libra's own control
// apps do) answers a parked request while its obj_ is still null.
// A failed check throws (the process exits non-zero); the scheduler exits 0
// only if every response was as expected.
#include <atomic>
#include <future>
#include <iostream>
#include <string>
#include <vector>

#include "ps/ps.h"

using namespace ps;

namespace {

// Its constructor holds obj_ back until the handle has answered a request,
// so that answer is given while obj_ is null.
class EarlyApp : public SimpleApp {
 public:
  explicit EarlyApp(int app_id) : SimpleApp() {
    set_request_handle([this](const SimpleData& req, SimpleApp* app) {
      ++handled;
      app->Response(req, "handled");
      if (!answered_.exchange(true)) first_answer_.set_value();
    });
    Customer* customer = new Customer(app_id, app_id, [this](const Message& m) { Process(m); });
    first_answer_.get_future().wait();
    obj_ = customer;
  }
  std::atomic<int> handled{0};

 private:
  std::promise<void> first_answer_;
  std::atomic<bool> answered_{false};
};

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "handle";
  CHECK(mode == "handle" || mode == "default" || mode == "subclass")
      << "usage: simple_app_program handle|default|subclass";
  const bool own_handle = mode != "default";
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
  if (mode == "subclass") {
    EarlyApp app(0);
    Postoffice::Get()->Barrier(0, everyone);
    Finalize(0, true);
    CHECK_EQ(app.handled.load(), 2 * batch);
    return 0;
  }
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
