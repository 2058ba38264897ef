#pragma once
// The archive that reads cereal payloads of received messages. It reads the
// format of cereal::BinaryOutputArchive, from the received bytes, and trusts
// no size: a container announcing more elements than bytes are left is
// refused before anything is allocated (with BinaryInputArchive, a few bytes
// announcing 2^40 elements make the receiver allocate them first). The one
// cost: a container of empty elements (0 bytes each) with more elements than
// bytes are left is refused too.

#include <cereal/cereal.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

namespace rampart::comm::detail {

class bounded_input_archive : public cereal::InputArchive<bounded_input_archive, cereal::AllowEmptyClassElision> {
public:
    bounded_input_archive(const char* data, std::size_t bytes) : InputArchive(this), at_(data), left_(bytes) {}

    void loadBinary(void* out, std::size_t size) {
        if (size > left_)
            throw cereal::Exception("rampart: the payload ends: " + std::to_string(size) + " bytes needed, " +
                                    std::to_string(left_) + " left");
        if (size) std::memcpy(out, at_, size);
        at_ += size;
        left_ -= size;
    }
    /// Bytes not read yet.
    std::size_t left() const { return left_; }

private:
    const char* at_;
    std::size_t left_;
};

}  // namespace rampart::comm::detail

namespace cereal {

template <class T>
inline std::enable_if_t<std::is_arithmetic_v<T>> CEREAL_LOAD_FUNCTION_NAME(
    rampart::comm::detail::bounded_input_archive& ar, T& t) {
    ar.loadBinary(std::addressof(t), sizeof(t));
}

template <class T>
inline void CEREAL_SERIALIZE_FUNCTION_NAME(rampart::comm::detail::bounded_input_archive& ar, NameValuePair<T>& t) {
    ar(t.value);
}

// Every element takes at least one byte (but for empty ones, see above).
template <class T>
inline void CEREAL_SERIALIZE_FUNCTION_NAME(rampart::comm::detail::bounded_input_archive& ar, SizeTag<T>& t) {
    ar(t.size);
    if (static_cast<std::uint64_t>(t.size) > ar.left())
        throw Exception("rampart: a container of " + std::to_string(static_cast<std::uint64_t>(t.size)) +
                        " elements in " + std::to_string(ar.left()) + " bytes");
}

template <class T>
inline void CEREAL_LOAD_FUNCTION_NAME(rampart::comm::detail::bounded_input_archive& ar, BinaryData<T>& t) {
    ar.loadBinary(t.data, static_cast<std::size_t>(t.size));
}

}  // namespace cereal

CEREAL_REGISTER_ARCHIVE(rampart::comm::detail::bounded_input_archive)
