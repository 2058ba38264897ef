// Arrays whose ranks span nodes (message_path.hpp): their creation, and
// their operations cut into the blocks they touch.

#include "array_impl.hpp"
#include "message_path.hpp"
#include "placement.hpp"

#include <rampart/task/errors.hpp>

#include <algorithm>
#include <cstring>
#include <string>

namespace rampart::pgas::detail {

bool spans_nodes(const pgas_service& svc) {
    std::uint64_t first = 0;
    for (auto n : svc.nodes()) {
        if (n == 0) continue;  // died before it told
        if (first != 0 && n != first) return true;
        first = n;
    }
    return false;
}

namespace {

// What a rank tells at creation: how many recoveries it has been through
// and which ranks it knows to be dead (alike on ranks that went through the
// same recoveries).
std::vector<char> my_view(const pgas_service& svc) {
    const auto alive = svc.alive();
    const std::uint64_t recoveries = svc.recoveries();
    std::vector<char> out(sizeof recoveries);
    std::memcpy(out.data(), &recoveries, sizeof recoveries);
    out.insert(out.end(), alive.begin(), alive.end());
    return out;
}

}  // namespace

// One attempt: the layout rests on the ranks alive after the recoveries
// every rank has been through; ranks that saw different ones try again,
// and a second exchange makes every rank that took part decide alike.
attempt try_create_messages(array_core::impl& a, const std::function<distribution(int)>& cut) {
    a.uid = arrays_created_next();
    const auto mine = my_view(a.svc);
    const auto views = a.svc.exchange(a.uid, mine);
    const bool same = std::all_of(views.begin(), views.end(), [&](const auto& v) { return v.empty() || v == mine; });
    const auto decisions = a.svc.exchange(arrays_created_next(), {same ? char{1} : char{0}});
    const bool all_same = std::all_of(decisions.begin(), decisions.end(),
                                      [](const auto& d) { return d.empty() || d == std::vector<char>{1}; });
    if (!all_same) return attempt::again;
    // The agreed view, not this rank's view now: a death learnt of since
    // would make this rank lay out differently (the dead rank's blocks are
    // promoted from their shadows right after, as after any death).
    const std::vector<char> alive(mine.begin() + sizeof(std::uint64_t), mine.end());
    a.dist = cut(static_cast<int>(std::count(alive.begin(), alive.end(), 1)));
    const int blocks = a.dist.blocks();
    for (int b = 0; b < blocks; ++b)
        if (a.block_bytes(b) > max_block_bytes_across_nodes)
            throw rampart::invalid_argument("rampart::pgas: array '" + a.name + "': block " + std::to_string(b) +
                                            " holds " + std::to_string(a.block_bytes(b)) +
                                            " bytes; across nodes a block holds at most 4 GiB - 1 MiB "
                                            "(use more blocks)");
    auto owners = block_owners(blocks, alive);
    if (owners.empty()) return attempt::too_few_ranks;
    std::vector<int> shadow(static_cast<std::size_t>(blocks), -1);
    if (a.shadows)
        for (int b = 0; b < blocks; ++b)
            shadow[static_cast<std::size_t>(b)] = shadow_host(owners[static_cast<std::size_t>(b)], a.svc.nodes(), alive);
    a.msg = std::make_shared<message_path>(a.name, a.uid, a.dist, a.ops, a.shadows, std::move(owners),
                                           std::move(shadow), a.svc);
    a.svc.add_array(a.uid, a.msg);
    a.svc.barrier();  // every rank has its copies before anyone asks for them
    return attempt::made;
}

namespace {
std::vector<char> pack(const patch& q, const patch& p, const void* data, std::size_t es) {
    std::vector<char> out(static_cast<std::size_t>(q.elements()) * es);
    copy_rows(q, p, static_cast<const char*>(data), q, out.data(), es);
    return out;
}
}  // namespace

void put_by_messages(const array_core::impl& a, const patch& p, const void* data) {
    for (int b : a.dist.blocks_of(p)) {
        const patch q = intersect(p, a.dist.block_patch(b));
        a.msg->put(b, p, q, pack(q, p, data, a.ops.bytes).data());
    }
}

void get_by_messages(const array_core::impl& a, const patch& p, void* out) {
    std::vector<char> part;
    for (int b : a.dist.blocks_of(p)) {
        const patch q = intersect(p, a.dist.block_patch(b));
        part.resize(static_cast<std::size_t>(q.elements()) * a.ops.bytes);
        a.msg->get(b, p, q, part.data());
        copy_rows(q, q, part.data(), p, static_cast<char*>(out), a.ops.bytes);
    }
}

void acc_by_messages(const array_core::impl& a, const patch& p, const void* data, const void* alpha) {
    for (int b : a.dist.blocks_of(p)) {
        const patch q = intersect(p, a.dist.block_patch(b));
        a.msg->acc(b, p, q, pack(q, p, data, a.ops.bytes).data(), alpha);
    }
}

}  // namespace rampart::pgas::detail
