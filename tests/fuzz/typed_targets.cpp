// Fuzz targets of irecv<T>'s decoding: the payload goes through
// comm::detail::typed_target<T> as the engine hands it over (prepare, the
// bytes, deliver), and must give the value or a message_error.

#include "targets.hpp"

#include <rampart/comm/comm.hpp>

#include <cereal/types/map.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace rampart::fuzz {

namespace {

using namespace rampart::comm::detail;

struct record {
    std::vector<double> values;
    std::string name;
    std::map<int, std::string> notes;
    template <class Archive>
    void serialize(Archive& ar) {
        ar(values, name, notes);
    }
    friend bool operator==(const record&, const record&) = default;
};

template <class T>
verdict receive(const char* data, std::size_t size, const T* expected, std::string& why) {
    promise<T> p;
    future<T> f = p.get_future();
    typed_target<T> target(std::move(p));
    void* into = target.prepare(size);
    if (!into) return verdict::refused;  // the engine fails the receive with a message_error
    if (size) std::memcpy(into, data, size);
    envelope e;
    e.kind = static_cast<std::uint16_t>(zero_copy_v<T> ? payload_kind::bytes : payload_kind::cereal);
    e.type_hash = type_hash<T>();
    e.payload_bytes = size;
    target.deliver(e);
    if (!f.is_ready()) {
        why = "deliver() left the receive waiting";
        return verdict::wrong;
    }
    try {
        T v = f.get();
        if (expected && !(v == *expected)) {
            why = "the value changed";
            return verdict::wrong;
        }
        return verdict::accepted;
    } catch (const rampart::comm::message_error&) {
        return verdict::refused;
    } catch (const std::exception& x) {
        why = std::string("not a message_error: ") + x.what();
        return verdict::wrong;
    }
}

template <class T>
target typed(const char* name, std::vector<T> values) {
    target t{name, {}, {}};
    for (const T& v : values) {
        const outgoing_payload p = encode(T(v));
        const char* d = static_cast<const char*>(p.data);
        t.seeds.emplace_back(d, d + p.bytes);
    }
    t.decode = [values](const char* data, std::size_t size, int expected, std::string& why) {
        return receive<T>(data, size, expected >= 0 ? &values[static_cast<std::size_t>(expected)] : nullptr, why);
    };
    return t;
}

}  // namespace

std::vector<target> typed_targets() {
    return {typed<std::vector<double>>("irecv_vector_double", {{1.0, -2.5, 1e300}, {}, std::vector<double>(40, 0.5)}),
            typed<std::string>("irecv_string", {"hello", "", std::string(300, 'z')}),
            typed<record>("irecv_struct", {{{1, 2, 3}, "three", {{1, "a"}, {-4, "bc"}}}, {}, {{}, "x", {{0, ""}}}})};
}

}  // namespace rampart::fuzz
