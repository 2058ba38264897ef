#pragma once
// How values travel: trivially copyable values and std::vectors of them go
// as their own bytes, without a copy (zero-copy); any other type goes through
// cereal's binary archive. A message is an envelope (fixed header) followed by
// the payload; the envelope names the type so that a receiver expecting
// another type gets a message_error, never garbage.

#include <rampart/comm/detail/bounded_archive.hpp>
#include <rampart/comm/errors.hpp>

#include <cereal/archives/binary.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rampart::comm::detail {

/// The fixed header of every rampart message.
struct envelope {
    static constexpr std::uint32_t magic_value = 0x504d4152;  // "RAMP"
    static constexpr std::uint16_t version_value = 1;

    std::uint32_t magic = magic_value;
    std::uint16_t version = version_value;
    std::uint16_t kind = 0;       // payload_kind
    std::uint64_t type_hash = 0;  // which C++ type the payload holds
    std::uint64_t sequence = 0;   // per (source, destination, tag) channel
    std::int32_t source = -1;     // logical ranks
    std::int32_t destination = -1;
    std::int32_t tag = 0;
    std::uint32_t reserved = 0;
    std::uint64_t payload_bytes = 0;
};
static_assert(std::is_trivially_copyable_v<envelope> && sizeof(envelope) == 48);

enum class payload_kind : std::uint16_t { bytes = 1, cereal = 2 };

/// A stable name-based hash of T, the same in every process of one build.
template <class T>
constexpr std::uint64_t type_hash() {
    std::string_view name = __PRETTY_FUNCTION__;  // contains T's spelled-out name
    std::uint64_t h = 0xcbf29ce484222325ULL;      // FNV-1a
    for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    return h;
}

template <class T>
struct is_byte_vector : std::false_type {};
template <class U, class A>
struct is_byte_vector<std::vector<U, A>> : std::bool_constant<std::is_trivially_copyable_v<U>> {};

/// Travels as its own bytes.
template <class T>
inline constexpr bool zero_copy_v =
    (std::is_trivially_copyable_v<T> && !std::is_pointer_v<T>) || is_byte_vector<T>::value;

/// What the sender hands to MPI: the envelope and a payload kept alive until
/// the send completes.
struct outgoing_payload {
    payload_kind kind = payload_kind::bytes;
    std::uint64_t type = 0;
    std::shared_ptr<void> owner;  // keeps `data` alive
    const void* data = nullptr;
    std::size_t bytes = 0;
};

template <class T>
outgoing_payload encode(T&& value) {
    using V = std::decay_t<T>;
    outgoing_payload p;
    p.type = type_hash<V>();
    if constexpr (is_byte_vector<V>::value) {
        auto v = std::make_shared<V>(std::forward<T>(value));
        p.data = v->data();
        p.bytes = v->size() * sizeof(typename V::value_type);
        p.owner = std::move(v);
    } else if constexpr (zero_copy_v<V>) {
        auto v = std::make_shared<V>(std::forward<T>(value));
        p.data = v.get();
        p.bytes = sizeof(V);
        p.owner = std::move(v);
    } else {
        p.kind = payload_kind::cereal;
        std::ostringstream os(std::ios::binary);
        {
            cereal::BinaryOutputArchive ar(os);
            ar(value);
        }
        auto s = std::make_shared<std::string>(std::move(os).str());
        p.data = s->data();
        p.bytes = s->size();
        p.owner = std::move(s);
    }
    return p;
}

/// The receiving side for one irecv<T>: where the payload goes, and how it
/// becomes a T (or a message_error).
class incoming_target {
public:
    virtual ~incoming_target() = default;
    /// Memory for a payload of `bytes` bytes, or nullptr when a T cannot have
    /// that size (the engine then receives into scratch memory and fails).
    virtual void* prepare(std::size_t bytes) = 0;
    /// The envelope arrived with the payload in prepared memory: deliver.
    virtual void deliver(const envelope& e) = 0;
    virtual void fail(std::exception_ptr e) = 0;
    /// What the receiver expects, for error messages.
    virtual std::uint64_t expected_type() const = 0;
};

std::string describe_mismatch(const envelope& e, std::uint64_t expected_type, std::size_t received_bytes);

/// A T from the cereal payload of a message: what BinaryOutputArchive wrote
/// for it, every byte. Throws (cereal::Exception, message_error) on bytes
/// that are not that.
template <class T>
T decode_cereal(const char* data, std::size_t bytes) {
    bounded_input_archive ar(data, bytes);
    T v{};
    ar(v);
    if (ar.left() != 0) throw message_error(std::to_string(ar.left()) + " bytes left over after the value");
    return v;
}

}  // namespace rampart::comm::detail
