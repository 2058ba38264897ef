// The send log with a base per channel (checkpoints trim it, a restored
// replacement starts it at its checkpoint's counts), and the byte form of the
// channel counts that a checkpoint keeps. No MPI needed.
#include "../../src/recovery/send_log.hpp"

#include <rampart/comm/detail/engine.hpp>
#include <rampart/resilience/errors.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using rampart::comm::detail::channel_state;
using rampart::comm::detail::envelope;
using rampart::comm::detail::outgoing_payload;
using rampart::recovery::detail::logged_message;
using rampart::recovery::detail::send_log;

namespace {

envelope env(int dest, int tag, std::uint64_t sequence, std::size_t bytes) {
    envelope e;
    e.destination = dest;
    e.tag = tag;
    e.sequence = sequence;
    e.payload_bytes = bytes;
    return e;
}

outgoing_payload payload(std::size_t bytes) {
    outgoing_payload p;
    auto owner = std::make_shared<std::vector<char>>(bytes, 'x');
    p.data = owner->data();
    p.bytes = bytes;
    p.owner = std::move(owner);
    return p;
}

void record(send_log& log, int dest, int tag, std::uint64_t sequence, std::size_t bytes = 8) {
    log.record(env(dest, tag, sequence, bytes), payload(bytes));
}

// The sequences for_each_unreceived gives for `dest` when the receiver holds
// `held` messages of every tag.
std::vector<std::uint64_t> unreceived(const send_log& log, int dest, std::uint64_t held) {
    std::vector<std::uint64_t> out;
    log.for_each_unreceived(
        dest, [held](int) { return held; }, [&](const logged_message& m) { out.push_back(m.env.sequence); });
    return out;
}

std::string what_of(const std::vector<char>& bytes) {
    try {
        channel_state::from_bytes(bytes);
    } catch (const rampart::invalid_argument& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST(SendLog, ChannelsStartAtZeroWithoutGaps) {
    send_log log;
    EXPECT_EQ(log.base(1, 7), 0u);
    EXPECT_EQ(log.next(1, 7), 0u);
    EXPECT_THROW(record(log, 1, 7, 1), std::logic_error);
    record(log, 1, 7, 0, 10);
    record(log, 1, 7, 1, 20);
    EXPECT_THROW(record(log, 1, 7, 1), std::logic_error);  // a repeat
    EXPECT_THROW(record(log, 1, 7, 3), std::logic_error);  // a gap
    EXPECT_EQ(log.next(1, 7), 2u);
    EXPECT_EQ(log.messages(), 2u);
    EXPECT_EQ(log.bytes(), 2 * sizeof(envelope) + 30);
}

TEST(SendLog, StartAtGivesTheFirstSequence) {
    send_log log;
    log.start_at(2, 5, 40);
    EXPECT_EQ(log.base(2, 5), 40u);
    EXPECT_EQ(log.next(2, 5), 40u);
    EXPECT_THROW(record(log, 2, 5, 0), std::logic_error);
    record(log, 2, 5, 40);
    record(log, 2, 5, 41);
    EXPECT_EQ(unreceived(log, 2, 0), (std::vector<std::uint64_t>{40, 41}));  // nothing below the base
    EXPECT_EQ(unreceived(log, 2, 41), (std::vector<std::uint64_t>{41}));
    EXPECT_THROW(log.start_at(2, 5, 7), std::logic_error);  // in use
    record(log, 3, 5, 0);
    EXPECT_THROW(log.start_at(3, 5, 7), std::logic_error);
    log.start_at(2, 6, 0);  // an unused channel may start at 0 too
    record(log, 2, 6, 0);
}

TEST(SendLog, TrimDropsMessagesBelowAndMovesTheBase) {
    send_log log;
    for (std::uint64_t s = 0; s < 10; ++s) record(log, 1, 3, s, 100);
    for (std::uint64_t s = 0; s < 4; ++s) record(log, 1, 4, s, 100);
    const std::uint64_t one = sizeof(envelope) + 100;
    EXPECT_EQ(log.bytes(), 14 * one);

    EXPECT_EQ(log.trim(1, 3, 6), 6u);
    EXPECT_EQ(log.base(1, 3), 6u);
    EXPECT_EQ(log.next(1, 3), 10u);
    EXPECT_EQ(log.messages(), 8u);
    EXPECT_EQ(log.bytes(), 8 * one);
    EXPECT_EQ(log.trimmed_messages(), 6u);
    EXPECT_EQ(log.trimmed_bytes(), 6 * one);
    // A receiver that holds less than the base gets the channel from its base.
    EXPECT_EQ(unreceived(log, 1, 2), (std::vector<std::uint64_t>{6, 7, 8, 9, 2, 3}));
    EXPECT_EQ(unreceived(log, 1, 8), (std::vector<std::uint64_t>{8, 9}));

    EXPECT_EQ(log.trim(1, 3, 4), 0u);  // below the base: nothing
    EXPECT_EQ(log.trim(1, 3, 6), 0u);  // again: nothing
    EXPECT_EQ(log.base(1, 3), 6u);
    EXPECT_THROW(log.trim(1, 3, 11), std::invalid_argument);  // not sent yet
    EXPECT_EQ(log.messages(), 8u);

    EXPECT_EQ(log.trim(1, 3, 10), 4u);  // everything: the channel goes on at 10
    EXPECT_EQ(log.base(1, 3), 10u);
    EXPECT_TRUE(unreceived(log, 1, 0) == (std::vector<std::uint64_t>{0, 1, 2, 3}));
    EXPECT_THROW(record(log, 1, 3, 0), std::logic_error);
    record(log, 1, 3, 10, 100);
    EXPECT_EQ(log.messages(), 5u);
    EXPECT_EQ(log.bytes(), 5 * one);
}

TEST(SendLog, TrimOfAnUnusedChannel) {
    send_log log;
    EXPECT_EQ(log.trim(4, 1, 0), 0u);
    EXPECT_THROW(log.trim(4, 1, 1), std::invalid_argument);
    log.start_at(5, 1, 20);
    EXPECT_EQ(log.trim(5, 1, 20), 0u);  // a restored channel with nothing sent since
    EXPECT_THROW(log.trim(5, 1, 21), std::invalid_argument);
}

TEST(SendLog, TrimKeepsOtherDestinationsAndTags) {
    send_log log;
    for (int dest : {0, 1, 2})
        for (std::uint64_t s = 0; s < 3; ++s) record(log, dest, 9, s);
    log.trim(1, 9, 3);
    EXPECT_EQ(unreceived(log, 0, 0).size(), 3u);
    EXPECT_EQ(unreceived(log, 1, 0).size(), 0u);
    EXPECT_EQ(unreceived(log, 2, 0).size(), 3u);
    EXPECT_EQ(log.messages(), 6u);
}

TEST(ChannelState, RoundTripThroughBytes) {
    channel_state s;
    s.rank = 3;
    s.sent = {{0, 1, 40}, {0, 2, 7}, {2, 1, std::numeric_limits<std::uint64_t>::max()}};
    s.received = {{1, 0, 1}, {4, 65000, 123456789012ull}};
    const auto bytes = s.to_bytes();
    EXPECT_EQ(bytes.size(), 32u + 16u * 5);
    EXPECT_EQ(channel_state::from_bytes(bytes), s);

    channel_state empty;
    empty.rank = 0;
    EXPECT_EQ(empty.to_bytes().size(), 32u);
    EXPECT_EQ(channel_state::from_bytes(empty.to_bytes()), empty);
}

TEST(ChannelState, BadBytesAreClearErrors) {
    channel_state s;
    s.rank = 1;
    s.sent = {{0, 1, 5}, {2, 1, 6}};
    s.received = {{0, 1, 5}};
    const auto good = s.to_bytes();

    EXPECT_NE(what_of({}).find("0 bytes, less than the 32-byte header"), std::string::npos) << what_of({});
    EXPECT_THROW(channel_state::from_bytes(nullptr, 0), rampart::invalid_argument);
    EXPECT_THROW(channel_state::from_bytes(nullptr, 64), rampart::invalid_argument);
    std::vector<char> b(good.begin(), good.begin() + 31);
    EXPECT_NE(what_of(b).find("less than the 32-byte header"), std::string::npos);

    b = good;
    b[0] ^= 1;
    EXPECT_NE(what_of(b).find("wrong magic"), std::string::npos) << what_of(b);

    b = good;
    b[4] = 9;
    EXPECT_NE(what_of(b).find("version 9"), std::string::npos) << what_of(b);

    b = good;
    b.pop_back();  // truncated entry
    EXPECT_NE(what_of(b).find("do not hold"), std::string::npos) << what_of(b);
    b = good;
    b.resize(good.size() + 16);  // one entry too many
    EXPECT_NE(what_of(b).find("do not hold"), std::string::npos) << what_of(b);

    // Counts that overflow when multiplied by the entry size.
    b = good;
    const std::uint64_t huge = std::numeric_limits<std::uint64_t>::max() / 8;
    std::memcpy(b.data() + 16, &huge, sizeof huge);
    EXPECT_NE(what_of(b).find("do not hold"), std::string::npos) << what_of(b);
    std::memcpy(b.data() + 24, &huge, sizeof huge);
    EXPECT_THROW(channel_state::from_bytes(b), rampart::invalid_argument);

    b = good;
    const std::int32_t minus = -2;
    std::memcpy(b.data() + 8, &minus, sizeof minus);  // the rank
    EXPECT_NE(what_of(b).find("rank -2"), std::string::npos) << what_of(b);

    b = good;
    std::memcpy(b.data() + 32 + 4, &minus, sizeof minus);  // the first entry's tag
    EXPECT_NE(what_of(b).find("entry 0 of `sent`"), std::string::npos) << what_of(b);

    channel_state unsorted = s;
    std::swap(unsorted.sent[0], unsorted.sent[1]);
    EXPECT_NE(what_of(unsorted.to_bytes()).find("`sent` is not sorted"), std::string::npos);
    channel_state repeated = s;
    repeated.received.push_back(repeated.received[0]);
    EXPECT_NE(what_of(repeated.to_bytes()).find("`received` is not sorted"), std::string::npos);

    b = good;
    b[6] = 1;  // reserved
    EXPECT_NE(what_of(b).find("reserved"), std::string::npos) << what_of(b);
}
