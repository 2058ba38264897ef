#include <rampart/rampart.hpp>

#include <cstdio>

int main() {
    rampart::runtime rt(2);
    auto f = rampart::async_replay(3, [] { return 21; });
    auto g = rampart::dataflow_replicate_vote(
        3, rampart::majority_vote{}, [](auto x) { return 2 * x.get(); }, std::move(f));
    int v = g.get();
    std::printf("consumer: %d\n", v);
    return v == 42 ? 0 : 1;
}
