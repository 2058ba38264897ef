// Collectives inside each replica set (see set_collectives.hpp): this
// process's block, kept for pullers, and the gathering by MPI on the set's
// communicator while the set is whole.

#include "hashing.hpp"
#include "protocol.hpp"
#include "set_collectives.hpp"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace rampart::replica::detail {

namespace {
// The kept blocks are read only after a failure: they are written past the
// caches, where they would push out the program's own data (CG ran 15 %
// slower with the copies cached).
void copy_uncached(char* to, const char* from, std::size_t bytes) {
    if (bytes == 0) return;
#if defined(__SSE2__)
    const std::size_t head = std::min(bytes, (16 - reinterpret_cast<std::uintptr_t>(to) % 16) % 16);
    std::memcpy(to, from, head);
    std::size_t i = head;
    for (; i + 16 <= bytes; i += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(to + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i)));
    std::memcpy(to + i, from + i, bytes - i);
    _mm_sfence();
#else
    std::memcpy(to, from, bytes);
#endif
}
}  // namespace

// What this process sends: the program's block, or a copy with a bit
// flipped (fault injection: what this replica then believes it sent).
void set_collectives::keep_mine(const gathering& g, std::uint64_t index) {
    protocol& p = protocol::get();
    const auto bytes = static_cast<std::size_t>(g.bytes[static_cast<std::size_t>(p.rank())]);
    sent_ = g.mine;
    if (p.flip_now(bytes)) {
        outgoing_.assign(g.mine, g.mine + bytes);
        p.flip_one(outgoing_, g.type);
        sent_ = outgoing_.data();
    }
    kept_block& k = mine_[index % kept];
    if (k.capacity < bytes) {
        k.data = std::make_unique_for_overwrite<char[]>(bytes);
        k.capacity = bytes;
    }
    k.index = index;
    k.size = bytes;
    copy_uncached(k.data.get(), sent_, bytes);
    entered_ = index + 1;
}

// False when the set's gathering failed (a member died, or another left
// the set): this process leaves the set and pulls. MPI may return success
// from a gathering that a dead member never entered, its block unwritten:
// every other block ends with a mark that its sender overwrites (a block
// of fewer than 8 bytes travels with the collective's index instead).
bool set_collectives::gather_in_set(gathering& g) {
    // Every rank must take the same way: the test covers its own block too.
    const bool marked = std::all_of(g.bytes.begin(), g.bytes.end(),
                                    [](int b) { return b >= static_cast<int>(sizeof(std::uint64_t)); });
    const int rc = marked ? gather_marked(g) : gather_with_index(g);
    if (rc == MPI_SUCCESS) {
        ++gathered_in_set;
        return true;
    }
    protocol::get().note_failure(rc);
    leave_set();
    return false;
}

int set_collectives::gather_marked(gathering& g) {
    const auto me = static_cast<std::size_t>(protocol::get().rank());
    const std::uint64_t index = next_ - 1, mark = hash_bytes(&index, sizeof index) ^ 0x9e3779b97f4a7c15u;
    auto end_of = [&](std::size_t r) { return g.out + g.displs[r] + g.bytes[r] - sizeof mark; };
    for (std::size_t r = 0; r < g.bytes.size(); ++r)
        if (r != me) std::memcpy(end_of(r), &mark, sizeof mark);
    char* own = g.out + g.displs[me];
    const bool in_place = sent_ == own;
    if (!in_place && g.mine == own && g.bytes[me] > 0)  // in place, with a flipped copy to send
        std::memcpy(own, sent_, static_cast<std::size_t>(g.bytes[me]));
    int rc = wait_in_set(g.mine == own ? MPI_IN_PLACE : sent_, g.bytes[me], g.out, g.bytes.data(), g.displs.data());
    for (std::size_t r = 0; r < g.bytes.size() && rc == MPI_SUCCESS; ++r) {
        std::uint64_t end = 0;
        if (r != me) std::memcpy(&end, end_of(r), sizeof end);
        if (r != me && end == mark) rc = MPI_ERR_OTHER;  // unwritten (or, once in 2^64, the same bytes)
    }
    return rc;
}

int set_collectives::gather_with_index(gathering& g) {
    const std::size_t n = g.bytes.size(), me = static_cast<std::size_t>(protocol::get().rank());
    const std::uint64_t index = next_ - 1;
    const auto own = static_cast<std::size_t>(g.bytes[me]);
    outgoing_.resize(own + sizeof index);
    if (own > 0) std::memmove(outgoing_.data(), sent_, own);
    std::memcpy(outgoing_.data() + own, &index, sizeof index);
    std::vector<int> counts(n), at(n);
    std::size_t total = 0;
    for (std::size_t r = 0; r < n; ++r) {
        counts[r] = g.bytes[r] + static_cast<int>(sizeof index);
        at[r] = static_cast<int>(total);
        total += static_cast<std::size_t>(counts[r]);
    }
    if (staging_.size() < total) staging_.resize(total);
    for (std::size_t r = 0; r < n; ++r) std::memset(staging_.data() + at[r] + g.bytes[r], 0xff, sizeof index);
    int rc = wait_in_set(outgoing_.data(), counts[me], staging_.data(), counts.data(), at.data());
    for (std::size_t r = 0; r < n && rc == MPI_SUCCESS; ++r) {
        std::uint64_t came = 0;
        std::memcpy(&came, staging_.data() + at[r] + g.bytes[r], sizeof came);
        if (came != index) rc = MPI_ERR_OTHER;
    }
    for (std::size_t r = 0; r < n && rc == MPI_SUCCESS; ++r)
        if (g.bytes[r] > 0) std::memcpy(g.out + g.displs[r], staging_.data() + at[r], static_cast<std::size_t>(g.bytes[r]));
    return rc;
}

// The protocol moves on meanwhile: this process serves the blocks that the
// processes of a broken set pull while its own set gathers.
int set_collectives::wait_in_set(const void* send, int count, void* out, const int* counts, const int* displs) {
    protocol& p = protocol::get();
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = p.net().set_iallgatherv(send, count, out, counts, displs, &request);
    for (int done = 0, polls = 0; rc == MPI_SUCCESS && !done;)
        if ((rc = p.net().test(&request, &done)) == MPI_SUCCESS && !done && ++polls % 8 == 0) p.progress();
    return rc;
}

void set_collectives::leave_set() {
    if (!in_set_) return;
    in_set_ = false;
    protocol::get().net().revoke_set();  // its members waiting for this process in MPI return, and pull too
    tell_members();
}

}  // namespace rampart::replica::detail
