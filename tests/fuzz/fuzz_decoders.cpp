// fuzz_decoders TARGET [INPUTS [SEED]]: runs one fuzz target (or "all"), and
// "list" names them. Exit code 0 only when every valid encoding was accepted
// as it was, no input made a decoder misbehave, and some were refused.

#include "targets.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
    using namespace rampart::fuzz;
    if (argc < 2) {
        std::fprintf(stderr, "usage: fuzz_decoders TARGET|all|list [INPUTS [SEED]]\n");
        return 2;
    }
    const std::string which = argv[1];
    const std::uint64_t inputs = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
    const std::uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
    std::vector<target> all = comm_targets();
    for (auto* more : {&typed_targets, &store_targets, &pgas_targets})
        for (target& t : more()) all.push_back(std::move(t));
    int ran = 0;
    bool ok = true;
    for (const target& t : all) {
        if (which == "list") std::printf("%s\n", t.name.c_str());
        if (which != "all" && which != t.name) continue;
        ++ran;
        ok = run(t, inputs, seed) && ok;
    }
    if (which == "list") return 0;
    if (ran == 0) {
        std::fprintf(stderr, "fuzz_decoders: no target %s\n", which.c_str());
        return 2;
    }
    return ok ? 0 : 1;
}
