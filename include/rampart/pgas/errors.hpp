#pragma once
// The errors of the distributed arrays. Bad arguments (a patch out of
// bounds, data of the wrong size, arrays of different shapes, an array used
// after it was destroyed) are rampart::invalid_argument, thrown before
// anything is written.

#include <rampart/pgas/distribution.hpp>
#include <rampart/task/errors.hpp>

#include <string>

namespace rampart::pgas {

/// An operation touched data whose copies are all gone: the primary's and
/// the shadow's ranks died (or a rank died while it wrote the only other
/// copy). Names the patch asked for and the block lost.
///
///     try { a.get(p, out); } catch (const rampart::pgas::data_lost& e) { std::puts(e.what()); }
class data_lost : public rampart::error {
public:
    data_lost(const std::string& array, const patch& asked, int block, const patch& lost)
        : rampart::error("rampart::pgas: array '" + array + "': patch " + asked.text() +
                         " touches block " + std::to_string(block) + " " + lost.text() +
                         ", whose copies are all lost"),
          asked_(asked),
          block_(block),
          lost_(lost) {}
    const patch& asked() const noexcept { return asked_; }
    int block() const noexcept { return block_; }
    const patch& lost_patch() const noexcept { return lost_; }

private:
    patch asked_;
    int block_;
    patch lost_;
};

}  // namespace rampart::pgas
