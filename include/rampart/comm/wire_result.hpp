#pragma once
// What a decoder of bytes from another process gives: the decoded value, or
// why the bytes were refused. A value, not an exception: malformed input is
// expected (it is counted and dropped), and decoders run on the engine thread
// in its hot path.

#include <optional>
#include <string>
#include <utility>

namespace rampart::comm {

/// A decoded T or the reason its bytes were refused.
///
///     wire_result<header> decode(const char* data, std::size_t size) {
///         if (size < sizeof(header)) return wire_result<header>::refused("truncated");
///         header h; std::memcpy(&h, data, sizeof h); return h;
///     }
///     if (auto h = decode(p, n)) use(*h); else drop(h.why());
template <class T>
class wire_result {
public:
    wire_result(T value) : value_(std::move(value)) {}  // NOLINT: implicit, as for std::optional
    static wire_result refused(std::string why) {
        wire_result r;
        r.why_ = std::move(why);
        return r;
    }

    explicit operator bool() const { return value_.has_value(); }
    T& operator*() { return *value_; }
    const T& operator*() const { return *value_; }
    T* operator->() { return &*value_; }
    const T* operator->() const { return &*value_; }
    /// Why the bytes were refused ("" when accepted).
    const std::string& why() const { return why_; }

private:
    wire_result() = default;
    std::optional<T> value_;
    std::string why_;
};

}  // namespace rampart::comm
