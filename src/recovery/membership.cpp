#include "membership.hpp"

#include <algorithm>
#include <stdexcept>

namespace rampart::recovery::detail {

membership::membership(int world_size, int spares) {
    if (spares < 0 || spares >= world_size)
        throw std::invalid_argument("rampart: " + std::to_string(spares) + " spare ranks leave no working rank among " +
                                    std::to_string(world_size) + " MPI processes");
    const int n = world_size - spares;
    for (int r = 0; r < n; ++r) process_of_.push_back(r);
    incarnation_.assign(static_cast<std::size_t>(n), 0);
    for (int p = n; p < world_size; ++p) spares_.push_back(p);
}

int membership::logical_of(int process) const {
    auto it = std::find(process_of_.begin(), process_of_.end(), process);
    return it == process_of_.end() || process < 0 ? -1 : static_cast<int>(it - process_of_.begin());
}

std::vector<int> membership::lost() const {
    std::vector<int> out;
    for (int r = 0; r < logical_size(); ++r)
        if (process_of_[static_cast<std::size_t>(r)] < 0) out.push_back(r);
    return out;
}

std::vector<int> membership::alive_processes() const {
    std::vector<int> out;
    for (int p : process_of_)
        if (p >= 0) out.push_back(p);
    out.insert(out.end(), spares_.begin(), spares_.end());
    std::sort(out.begin(), out.end());
    return out;
}

membership::change membership::remove(const std::vector<int>& dead_processes) {
    change c;
    for (int p : dead_processes) {
        if (p < 0) continue;
        if (int l = logical_of(p); l >= 0) {
            c.dead_logical.push_back(l);
            process_of_[static_cast<std::size_t>(l)] = -1;
        } else if (auto it = std::find(spares_.begin(), spares_.end(), p); it != spares_.end()) {
            c.dead_spares.push_back(p);
            spares_.erase(it);
        }
    }
    std::sort(c.dead_logical.begin(), c.dead_logical.end());
    std::sort(c.dead_spares.begin(), c.dead_spares.end());
    for (int l : c.dead_logical) {
        if (spares_.empty()) {
            c.lost.push_back(l);
            continue;
        }
        const int spare = spares_.front();
        spares_.erase(spares_.begin());
        process_of_[static_cast<std::size_t>(l)] = spare;
        ++incarnation_[static_cast<std::size_t>(l)];
        c.replacements.emplace_back(l, spare);
    }
    return c;
}

std::string join_ranks(const std::vector<int>& ranks) {
    std::string s;
    for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
    return s;
}

}  // namespace rampart::recovery::detail
