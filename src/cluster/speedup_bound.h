// The speedup Libra can reach over the plain parameter server when links,
// not processors, are the bottleneck: a model of one iteration's traffic,
// counted in values (docs/PERFORMANCE.md "The bound").
//
// Every worker pushes one unit (its values of the iteration) and pulls one
// unit back. With the plain PS a server's link carries the pushes of all N
// workers for its 1/M of the keys: N/M units each way; a worker's link 1.
// With Libra a share h of the pushed values is hot: the switch adds up the
// N workers' hot values and hands the server one sum, so a server's link
// carries ((1 - h) N + h) / M units, at best (a hot key pushed by every
// worker); the workers' links still carry 1. An iteration lasts as long as
// its busiest link:
//
//   bound = max(N / M, 1) / max(((1 - h) N + h) / M, 1)
//
// "At best" assumes every worker pushes the same hot keys, so that their sum
// is no larger than one worker's push. The overlap U says how far from that a
// run was: the hot values the switch handed the servers in an epoch, over
// one worker's hot values in it (1 when all workers push the same hot keys,
// N when no two do). The server's link then carries ((1 - h) N + h U) / M;
// with U = 1 this is the bound above.
#pragma once

namespace libra::cluster {

struct SpeedupBound {
  double plain_link_units = 0;  // the busiest link of the plain PS
  double libra_link_units = 0;  // ... and with Libra
  double speedup = 1;           // their ratio
};

// `hot_share` is h in [0, 1], `overlap` U in [1, workers]. Throws
// std::invalid_argument for bad input.
SpeedupBound PredictSpeedup(int workers, int servers, double hot_share, double overlap = 1);

}  // namespace libra::cluster
