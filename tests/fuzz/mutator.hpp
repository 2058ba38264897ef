#pragma once
// A seeded mutation fuzzer for decoders of bytes from other processes. A
// target gives valid encodings (made by the real encoders) and a decoder;
// the runner checks that each valid encoding is accepted and decodes back
// equal, then feeds the decoder mutations of them: bit flips, byte changes,
// truncation, extension, splicing of two encodings, words set to extreme
// values (sizes and counts), chunks removed or repeated. Each input lies in
// a heap block of exactly its size, so that AddressSanitizer sees a read
// past its end. Same seed, same inputs.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rampart::fuzz {

using bytes = std::vector<char>;

/// What a decoder did with one input.
enum class verdict { accepted, refused, wrong };

struct target {
    std::string name;
    std::vector<bytes> seeds;
    /// Decodes; `expected` is the seed's index for a valid encoding (the
    /// value must then come back equal), -1 for a mutated input. `wrong`
    /// when it misbehaved (a seed refused or changed, an unexpected error);
    /// `why` says how.
    std::function<verdict(const char* data, std::size_t size, int expected, std::string& why)> decode;
};

class rng {
public:
    explicit rng(std::uint64_t seed) : s_(seed) {}
    std::uint64_t next() {  // splitmix64
        std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    std::size_t below(std::size_t n) { return n ? static_cast<std::size_t>(next() % n) : 0; }

private:
    std::uint64_t s_;
};

/// One mutation of `b` (spliced with `other` where it splices).
inline void mutate(bytes& b, const bytes& other, rng& r) {
    static constexpr std::uint64_t extremes[] = {0,
                                                 1,
                                                 2,
                                                 7,
                                                 8,
                                                 0x7f,
                                                 0xff,
                                                 0x7fff,
                                                 0xffff,
                                                 0x7fffffff,
                                                 0x80000000,
                                                 0xffffffff,
                                                 0x100000000ULL,
                                                 0x7fffffffffffffffULL,
                                                 0x8000000000000000ULL,
                                                 0xffffffffffffffffULL,
                                                 0xfffffffffffffff8ULL};
    switch (r.below(b.empty() ? 2 : 8)) {
        case 0:  // extend
            for (std::size_t n = 1 + r.below(64); n > 0; --n) b.push_back(static_cast<char>(r.next()));
            break;
        case 1:  // splice: a prefix of this, the rest of another
            if (!other.empty()) {
                const std::size_t keep = r.below(b.size() + 1), from = r.below(other.size() + 1);
                b.resize(keep);
                b.insert(b.end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
            }
            break;
        case 2:  // truncate
            b.resize(r.below(b.size()));
            break;
        case 3:  // flip a bit
            b[r.below(b.size())] ^= static_cast<char>(1 << r.below(8));
            break;
        case 4:  // a random byte
            b[r.below(b.size())] = static_cast<char>(r.next());
            break;
        case 5: {  // a word (4 or 8 bytes, aligned or not) set to an extreme value, or to the size +- 1
            const std::size_t width = r.below(2) ? 8 : 4;
            if (b.size() < width) break;
            std::size_t at = r.below(b.size() - width + 1);
            if (r.below(2)) at -= at % width;
            std::uint64_t v = r.below(4) ? extremes[r.below(std::size(extremes))] : b.size() + r.below(3) - 1;
            std::memcpy(b.data() + at, &v, width);  // little-endian: the low bytes of v
            break;
        }
        case 6: {  // remove a chunk
            const std::size_t at = r.below(b.size()), n = 1 + r.below(std::min<std::size_t>(b.size() - at, 16));
            b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
            break;
        }
        default: {  // repeat a chunk
            const std::size_t at = r.below(b.size()), n = 1 + r.below(std::min<std::size_t>(b.size() - at, 16));
            const bytes chunk(b.begin() + static_cast<std::ptrdiff_t>(at),
                              b.begin() + static_cast<std::ptrdiff_t>(at + n));
            b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), chunk.begin(), chunk.end());
            break;
        }
    }
}

/// Runs `inputs` mutated inputs through the target; prints its counts and
/// returns false when it misbehaved or refused nothing.
inline bool run(const target& t, std::uint64_t inputs, std::uint64_t seed) {
    auto decode = [&](const bytes& b, int expected, std::string& why) {
        std::unique_ptr<char[]> exact(new char[b.size()]);  // no slack past the end
        if (!b.empty()) std::memcpy(exact.get(), b.data(), b.size());
        return t.decode(exact.get(), b.size(), expected, why);
    };
    std::string why;
    for (std::size_t i = 0; i < t.seeds.size(); ++i)
        if (decode(t.seeds[i], static_cast<int>(i), why) != verdict::accepted) {
            std::printf("FAIL fuzz %s: valid encoding %zu not accepted as it was: %s\n", t.name.c_str(), i,
                        why.c_str());
            return false;
        }
    rng r(seed);
    std::uint64_t accepted = 0, refused = 0;
    bytes b;
    for (std::uint64_t n = 0; n < inputs; ++n) {
        b = t.seeds[r.below(t.seeds.size())];
        const bytes& other = t.seeds[r.below(t.seeds.size())];
        for (std::size_t k = 1 + r.below(4); k > 0; --k) mutate(b, other, r);
        switch (decode(b, -1, why)) {
            case verdict::accepted:
                ++accepted;
                break;
            case verdict::refused:
                ++refused;
                break;
            case verdict::wrong:
                std::printf("FAIL fuzz %s: input %llu (seed %llu): %s\n", t.name.c_str(),
                            static_cast<unsigned long long>(n), static_cast<unsigned long long>(seed), why.c_str());
                return false;
        }
    }
    std::printf("fuzz %s: %llu inputs, %llu accepted, %llu refused (%zu valid encodings accepted)\n", t.name.c_str(),
                static_cast<unsigned long long>(inputs), static_cast<unsigned long long>(accepted),
                static_cast<unsigned long long>(refused), t.seeds.size());
    if (refused == 0) std::printf("FAIL fuzz %s: no input refused\n", t.name.c_str());
    return refused > 0;
}

}  // namespace rampart::fuzz
