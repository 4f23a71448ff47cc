// A hot read that the servers answer (REPAIR): while the switch is down, or
// for the keys of a replica gap. Every server answers with the values of the
// asked keys it owns; this puts the answers back in the order asked.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "hot/hot_set.h"
#include "hotpath/messages/control_messages.h"
#include "ps/internal/hot_path_hooks.h"

namespace libra::hotpath {

// The values of hot `keys` from the servers' `answers` (each key after key,
// the hot set's lengths), in the order of `keys`, with lens. False, with
// `error` naming the key, when some key is in no answer or an answer is
// short.
bool ValuesFromAnswers(const hot::HotSet& hot_set, std::span<const hot::Key> keys,
                       const std::vector<Repair>& answers, ps::WorkerHotPath::Parts* out,
                       std::string* error);

}  // namespace libra::hotpath
