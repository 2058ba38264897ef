#pragma once
// The fuzz targets: every decoder of bytes from another process.

#include "mutator.hpp"

#include <vector>

namespace rampart::fuzz {

std::vector<target> comm_targets();   // the engine's messages (comm_targets.cpp)
std::vector<target> typed_targets();  // irecv<T> payloads (typed_targets.cpp)
std::vector<target> store_targets();  // the store's messages and states (store_targets.cpp)
std::vector<target> pgas_targets();   // the arrays' messages (pgas_targets.cpp)

}  // namespace rampart::fuzz
