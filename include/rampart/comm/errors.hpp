#pragma once

#include <rampart/resilience/errors.hpp>

namespace rampart::comm {

/// A message that cannot be what the receiver asked for: malformed, truncated,
/// of another type or size than the receiver expects. Set in the receiver's
/// future; the bytes are never handed over.
class message_error : public rampart::error {
public:
    using rampart::error::error;
};

/// MPI reported an error for an operation (for example a peer process that
/// died); the message names the MPI error.
class comm_error : public rampart::error {
public:
    using rampart::error::error;
};

}  // namespace rampart::comm
