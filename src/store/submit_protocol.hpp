#pragma once
// What a rank knows of each rank's part of a collective operation, and the
// rule that decides a submit from it (docs/store.md, "How a submit commits").
// The same parts give the same decision and the same error text on every
// rank: nothing here depends on the rank that computes it.

#include <rampart/store/store.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rampart::store::detail {

// Flags of a part: the rank's own arguments were invalid (it submitted nothing).
constexpr std::uint64_t part_invalid = 1;

/// One rank's part of an operation as this rank knows it.
struct part {
    bool known = false;  // its done ("stored") came, directly or in a recovery state
    bool ready = false;  // its ready came (submits)
    std::uint64_t total = 0;
    std::uint64_t flags = 0;
    std::vector<id_range> ids;  // sorted, merged
};

/// The parts of one operation, by logical rank.
struct op_record {
    std::vector<part> parts;
};

/// Why the known parts of a submit do not fit together ("" when they do),
/// and whether only ranks that failed caused it (ids left without a part,
/// with failed ranks in `without_part`) or the parts themselves are wrong.
struct parts_problem {
    std::string text;
    bool by_failures = false;
};

/// The problem is "" when all known parts declare the same number of
/// blocks, none had invalid arguments, and their ids cover [0, total)
/// exactly once. Else it names the first ids that no rank submitted and
/// the first ids submitted twice (with the two ranks). `without_part` lists
/// the ranks that gave none (failed before it was held).
parts_problem check_parts(const std::vector<part>& parts, const std::vector<int>& without_part);

/// The known parts of `records` as bytes for a recovery state, and back.
/// decode_records returns nothing when the bytes do not parse.
void encode_records(const std::map<std::uint64_t, op_record>& records, std::vector<char>& out);
std::optional<std::map<std::uint64_t, op_record>> decode_records(const char* bytes, std::size_t size, int ranks);

/// Ranges sorted and merged where they touch.
std::vector<id_range> merged(std::vector<id_range> rs);

}  // namespace rampart::store::detail
