// The arrays' messages between ranks (see wire.hpp).

#include "wire.hpp"

#include <cstring>

namespace rampart::pgas::detail {

std::vector<char> encode(const head& h, const std::vector<char>& payload) {
    head copy = h;
    copy.payload = static_cast<std::uint32_t>(payload.size());
    std::vector<char> out(sizeof(head) + payload.size());
    std::memcpy(out.data(), &copy, sizeof(head));
    if (!payload.empty()) std::memcpy(out.data() + sizeof(head), payload.data(), payload.size());
    return out;
}

comm::wire_result<decoded> decode(const std::vector<char>& bytes, std::size_t offset) {
    using result = comm::wire_result<decoded>;
    if (offset > bytes.size() || bytes.size() - offset < sizeof(head)) return result::refused("truncated head");
    decoded d;
    std::memcpy(&d.h, bytes.data() + offset, sizeof(head));
    if (d.h.magic != head::magic_value) return result::refused("not an array message (magic)");
    if (d.h.what != kind::exchange && d.h.what != kind::barrier && d.h.what != kind::array)
        return result::refused("unknown kind");
    const std::size_t rest = bytes.size() - offset - sizeof(head);
    if (rest != d.h.payload) return result::refused("payload of " + std::to_string(rest) + " bytes, head says " +
                                                    std::to_string(d.h.payload));
    if (d.h.what == kind::barrier && (d.h.payload != 0 || d.h.step >= 64))
        return result::refused("a barrier step with a payload or a step past 63");
    d.payload.assign(bytes.begin() + static_cast<std::ptrdiff_t>(offset + sizeof(head)), bytes.end());
    return d;
}

}  // namespace rampart::pgas::detail
