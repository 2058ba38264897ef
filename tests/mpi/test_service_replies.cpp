// Service replies that go straight into the asker's memory
// (engine::service_receive / service_reply), between real ranks: whole
// replies into one piece or several, replies sent from several pieces, empty
// replies, and replies longer than the memory given (malformed: reported,
// counted, and not written at all: MPI's single-copy transfer would write
// past the end of a receive posted into memory too small). Every rank asks the next rank and
// answers the one before it.
#include <rampart/comm/comm.hpp>
#include <rampart/comm/counters.hpp>
#include <rampart/comm/service.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <future>
#include <vector>

namespace {

enum class answer : std::uint64_t { one_piece = 1, three_pieces = 2, empty = 3 };

struct question {
    std::uint64_t reply = 0;
    answer how = answer::one_piece;
    std::uint64_t bytes = 0;
};

char pattern(std::uint64_t i) { return static_cast<char>((i * 7 + 3) & 0xff); }

struct outcome {
    bool ok = false;
    std::size_t bytes = 0;
};

// Answers every question with `bytes` bytes of pattern(), or with nothing;
// asks the next rank its questions.
class responder final : public rampart::comm::service {
public:
    responder() { attach(); }
    ~responder() override { detach(); }

    void on_message(int source, std::vector<char>&& bytes, std::size_t offset) override {
        question q;
        if (bytes.size() - offset != sizeof q) return;
        std::memcpy(&q, bytes.data() + offset, sizeof q);
        auto data = std::make_shared<std::vector<char>>(q.bytes);
        for (std::uint64_t i = 0; i < q.bytes; ++i) (*data)[i] = pattern(i);
        std::vector<rampart::comm::segment> pieces;
        if (q.how == answer::one_piece) {
            pieces.push_back({data->data(), data->size()});
        } else if (q.how == answer::three_pieces) {
            const std::size_t third = data->size() / 3;
            pieces = {{data->data(), third}, {data->data() + third, 0}, {data->data() + third, data->size() - third}};
        }
        reply(
            source, q.reply, std::move(pieces), [data](bool) {}, epoch());
    }
    void on_recovery(const std::vector<int>&, const std::vector<int>&, const std::vector<std::vector<char>>&) override {
    }

    // Asks the next rank for `bytes` bytes, received into `into`; waits for it.
    outcome ask(std::vector<rampart::comm::receive_segment> into, answer how, std::uint64_t bytes) {
        const int peer = (rampart::comm::rank() + 1) % rampart::comm::size();
        auto done = std::make_shared<std::promise<outcome>>();
        auto result = done->get_future();
        const question q{new_reply_number(), how, bytes};
        const auto now = epoch();
        expect_reply(
            peer, q.reply, std::move(into),
            [done](bool ok, std::size_t got) {
                done->set_value({ok, got});
            },
            now);
        std::vector<char> head(sizeof q);
        std::memcpy(head.data(), &q, sizeof q);
        send(
            peer, std::move(head), {}, [](bool) {}, now);
        return result.get();
    }
};

outcome ask(std::vector<rampart::comm::receive_segment> into, answer how, std::uint64_t bytes) {
    static responder r;  // lives until the process ends, as the engine may still call it
    return r.ask(std::move(into), how, bytes);
}

void expect_pattern(const char* at, std::size_t bytes, std::size_t from) {
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < bytes; ++i) wrong += at[i] != pattern(from + i);
    EXPECT_EQ(wrong, 0u);
}

}  // namespace

TEST(ServiceReplies, AWholeReplyLandsInOnePiece) {
    std::vector<char> out(1 << 20, 0);
    const outcome o = ask({{out.data(), out.size()}}, answer::one_piece, out.size());
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(o.bytes, out.size());
    expect_pattern(out.data(), out.size(), 0);
}

TEST(ServiceReplies, PiecesOnBothSidesNeedNotMatch) {
    // The reply leaves from three pieces (one empty) and lands in two apart,
    // with a gap between them that stays untouched.
    std::vector<char> out(3000, 'x');
    const outcome o = ask({{out.data(), 1000}, {out.data() + 1500, 1500}}, answer::three_pieces, 2500);
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(o.bytes, 2500u);
    expect_pattern(out.data(), 1000, 0);
    EXPECT_EQ(std::string(out.data() + 1000, 500), std::string(500, 'x'));
    expect_pattern(out.data() + 1500, 1500, 1000);
}

TEST(ServiceReplies, AnEmptyReplyWritesNothing) {
    std::vector<char> out(4096, 'x');
    const outcome o = ask({{out.data(), out.size()}}, answer::empty, 0);
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(o.bytes, 0u);
    EXPECT_EQ(std::string(out.begin(), out.end()), std::string(4096, 'x'));
}

TEST(ServiceReplies, AShorterReplySaysHowMuchCame) {
    std::vector<char> out(4096, 'x');
    const outcome o = ask({{out.data(), out.size()}}, answer::one_piece, 100);
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(o.bytes, 100u);
    expect_pattern(out.data(), 100, 0);
    EXPECT_EQ(std::string(out.data() + 100, 3996), std::string(3996, 'x'));
}

TEST(ServiceReplies, ATooLongReplyIsMalformedAndStaysInItsMemory) {
    // Guard bytes around the memory given: MPI must not write past it.
    std::vector<char> out(3 * 4096, 'g');
    const auto before = rampart::comm::counters().malformed;
    const outcome o = ask({{out.data() + 4096, 4096}}, answer::one_piece, 2 * 4096);
    EXPECT_TRUE(o.ok);
    EXPECT_EQ(o.bytes, 2u * 4096);
    EXPECT_EQ(rampart::comm::counters().malformed, before + 1);
    EXPECT_EQ(std::string(out.data(), 4096), std::string(4096, 'g'));
    EXPECT_EQ(std::string(out.data() + 8192, 4096), std::string(4096, 'g'));
    // The engine goes on: the next question is answered as usual.
    std::vector<char> next(512, 0);
    const outcome again = ask({{next.data(), next.size()}}, answer::one_piece, next.size());
    EXPECT_EQ(again.bytes, next.size());
    expect_pattern(next.data(), next.size(), 0);
}
